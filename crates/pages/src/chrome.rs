//! What every page has around its content: the title, the navigation,
//! the search box with the edition it searches, and the FHIR request that
//! reproduces the page.

/// A link as pages print it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub href: String,
    pub text: String,
}

/// One loaded SNOMED CT edition as the edition chooser shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditionChoice {
    /// The version URI (`http://snomed.info/sct/{module}/version/{date}`),
    /// which `version=` in a page's URL names.
    pub version: String,
    /// What a person reads: the edition's name and date.
    pub label: String,
    pub selected: bool,
    /// The edition that answers when a request names none.
    pub default: bool,
}

/// The frame of a page.
#[derive(Debug, Clone, Default)]
pub struct Chrome {
    pub title: String,
    /// The loaded editions; the search box searches the selected one.
    pub editions: Vec<EditionChoice>,
    /// What the search box holds.
    pub query: String,
    /// The FHIR request (method, path and query, relative to the server)
    /// that answers what the page shows, if there is one.
    pub fhir_request: Option<String>,
    /// The server's version, in the footer.
    pub server_version: String,
}

impl Chrome {
    /// The selected edition's version URI, empty when it is the server's
    /// default edition, so links stay short.
    pub fn version_param(&self) -> &str {
        match self.editions.iter().find(|e| e.selected) {
            Some(e) if !e.default => &e.version,
            _ => "",
        }
    }

    /// Whether there is more than one edition to choose from.
    pub fn has_choice(&self) -> bool {
        self.editions.len() > 1
    }
}

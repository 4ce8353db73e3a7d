//! Pages for people: what a terminology server looks like to someone with
//! a browser rather than a FHIR client.
//!
//! Every page is HTML rendered on the server from a typed template
//! (askama: checked at compile time, escaping everything it prints unless
//! told otherwise, which nothing here does). A page is a plain document:
//! links and GET forms, a URL for every state, no JavaScript needed. One
//! small hand-written script ([`assets::SCRIPT`], embedded, no CDN) adds
//! what a script can add: suggestions while typing in a search box,
//! keyboard choice among them, and the status page refreshing itself.
//!
//! The pages hold no knowledge of their own. Each is built from what the
//! engine and the store already answer — the status page from a snapshot
//! the server takes ([`status::StatusPage`]), the concept page from the
//! edition ([`concept`]), search, ECL and value set expansions from the
//! engine's own `$expand` answers ([`search`], [`ecl`], [`resource`]) —
//! so a page and the FHIR request it shows ("the FHIR request that
//! reproduces it", on every page) cannot disagree. No async, no HTTP: the
//! server's `pages` module is the transport.

pub mod assets;
pub mod chrome;
pub mod concept;
pub mod ecl;
pub mod resource;
pub mod search;
pub mod status;
mod url;

pub use chrome::{Chrome, EditionChoice, Link};
pub use url::{encode, query};

/// A page that could not be rendered as asked: the server answers it with
/// its status code and the message on a page of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageError {
    /// No such concept, resource or edition (404).
    NotFound(String),
    /// The request cannot be read (400).
    Invalid(String),
    /// The edition could not be read (500): a damaged file.
    Store(String),
}

impl std::fmt::Display for PageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PageError::NotFound(m) | PageError::Invalid(m) | PageError::Store(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for PageError {}

impl From<txmap_store::StoreError> for PageError {
    fn from(e: txmap_store::StoreError) -> PageError {
        PageError::Store(e.to_string())
    }
}

/// A page, as HTML text.
pub trait Page {
    fn html(&self) -> String;
}

impl<T: askama::Template> Page for T {
    /// askama's only failure is a formatting error of a value's
    /// `Display`, which ours never produce; it is shown as text.
    fn html(&self) -> String {
        self.render()
            .unwrap_or_else(|e| format!("<!doctype html><title>error</title><p>{e}</p>"))
    }
}

/// A page saying what went wrong, with the chrome around it.
pub fn error_page(chrome: Chrome, status: u16, message: &str) -> String {
    #[derive(askama::Template)]
    #[template(path = "error.html")]
    struct ErrorPage<'a> {
        chrome: Chrome,
        status: u16,
        message: &'a str,
    }
    ErrorPage {
        chrome,
        status,
        message,
    }
    .html()
}

//! The loaded editions as SNOMED CT sees them: which one a request's
//! `version` names, what each is called in messages, and each as a
//! CodeSystem resource.
//!
//! A version URI names one edition version, an edition URI the latest
//! loaded version of that edition, and none the default edition. The
//! messages name an edition as terminology servers do ("International
//! Edition"), worked out once per edition.

use serde_json::{Value, json};
use txmap_terminology::Error;

use crate::{SNOMED_CT, SnomedCt};

/// The edition `version` names in `list`, or the default one, if it is
/// in service ([`txmap_terminology::serving`]).
pub fn resolve<'a, B: AsRef<[u8]>>(
    list: &'a [SnomedCt<B>],
    version: Option<&str>,
) -> Result<&'a SnomedCt<B>, Error> {
    let e = named(list, version)?;
    e.check_serving()?;
    Ok(e)
}

fn named<'a, B: AsRef<[u8]>>(
    list: &'a [SnomedCt<B>],
    version: Option<&str>,
) -> Result<&'a SnomedCt<B>, Error> {
    let Some(version) = version.filter(|v| !v.is_empty()) else {
        return list
            .iter()
            .find(|e| e.is_default())
            .ok_or_else(|| Error::not_found("no SNOMED CT edition is loaded"));
    };
    if let Some(e) = list.iter().find(|e| e.version_uri == version) {
        return Ok(e);
    }
    let latest = list
        .iter()
        .filter(|e| e.edition_uri == version)
        .max_by(|a, b| {
            a.edition
                .identity()
                .effective_time
                .cmp(&b.edition.identity().effective_time)
                .then_with(|| a.version_uri.cmp(&b.version_uri))
        });
    latest.ok_or_else(|| {
        let valid: Vec<String> = versions(list).into_iter().map(|(v, _)| v).collect();
        Error::not_found(format!(
            "A definition for CodeSystem '{SNOMED_CT}' version '{version}' could not be found. Valid versions: {}",
            if valid.is_empty() {
                "(none)".to_owned()
            } else {
                valid.join(", ")
            }
        ))
    })
}

/// The loaded versions, each once, sorted by URI (the order the HL7 runner
/// sorts them in), with whether it is the default edition's.
pub fn versions<B: AsRef<[u8]>>(list: &[SnomedCt<B>]) -> Vec<(String, bool)> {
    let default = list
        .iter()
        .find(|e| e.is_default())
        .map(|e| e.version_uri());
    let mut uris: Vec<&str> = list
        .iter()
        .map(|e| e.version_uri())
        .filter(|u| !u.is_empty())
        .collect();
    uris.sort_unstable();
    uris.dedup();
    uris.into_iter()
        .map(|u| (u.to_owned(), Some(u) == default))
        .collect()
}

impl<B: AsRef<[u8]>> SnomedCt<B> {
    /// The edition's name as terminology servers word it in messages
    /// ("International Edition"): that of its module if it is a known
    /// edition, else that of the known edition module owning most of its
    /// concepts (an unpublished or derived edition, like the HL7 test
    /// edition, is named after the edition it extends), else
    /// "Edition {module}".
    pub fn edition_name(&self) -> &str {
        self.name.get_or_init(|| {
            let module = self.edition.identity().edition_module;
            if let Some(name) = known_edition_name(module) {
                return name.to_owned();
            }
            let mut owned: std::collections::HashMap<u64, u32> = std::collections::HashMap::new();
            for o in 0..self.edition.concept_count() {
                if let Ok(c) = self.edition.concept_at(o) {
                    *owned.entry(c.module).or_default() += 1;
                }
            }
            let mut by_count: Vec<(u32, u64)> = owned.into_iter().map(|(m, n)| (n, m)).collect();
            by_count.sort_unstable_by(|a, b| b.cmp(a));
            by_count
                .iter()
                .find_map(|&(_, m)| known_edition_name(m))
                .map_or_else(|| format!("Edition {module}"), str::to_owned)
        })
    }

    /// The resource id of the edition's CodeSystem:
    /// `sct-{module}-{effectiveTime}`.
    pub fn resource_id(&self) -> String {
        let identity = self.edition.identity();
        format!(
            "sct-{}-{}",
            identity.edition_module, identity.effective_time
        )
    }

    /// The edition as a CodeSystem resource: its content is not in the
    /// resource (`not-present`), its size is.
    pub fn resource_json(&self) -> Value {
        json!({
            "resourceType": "CodeSystem",
            "id": self.resource_id(),
            "url": SNOMED_CT,
            "version": self.version_uri,
            "name": "SNOMED_CT",
            "title": format!("SNOMED CT {}", self.edition_name()),
            "status": "active",
            "content": "not-present",
            "count": self.edition.concept_count(),
        })
    }

    /// The edition's concept model rules, read on first use.
    pub fn mrcm(&self) -> Result<&crate::mrcm::Rules, Error> {
        if let Some(rules) = self.mrcm.get() {
            return Ok(rules);
        }
        let rules = crate::mrcm::Rules::load(&self.edition)?;
        Ok(self.mrcm.get_or_init(|| rules))
    }

    /// Counts one call answered from this edition.
    pub fn count_use(&self) {
        self.uses.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Calls answered from this edition so far.
    pub fn uses(&self) -> u64 {
        self.uses.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// Names of the editions SNOMED International and national release centres
/// publish, by edition module.
pub fn known_edition_name(module: u64) -> Option<&'static str> {
    Some(match module {
        900000000000207008 => "International Edition",
        731000124108 => "US Edition",
        83821000000107 => "UK Edition",
        999000041000000102 => "UK Clinical Edition",
        999000021000000109 => "UK Drug Extension",
        32506021000036107 => "Australian Edition",
        20611000087101 => "Canadian Edition",
        11000146104 => "Netherlands Edition",
        45991000052106 => "Swedish Edition",
        554471000005108 => "Danish Edition",
        11000172109 => "Belgian Edition",
        51000202101 => "Norwegian Edition",
        21000210109 => "New Zealand Edition",
        11000220105 => "Irish Edition",
        2011000195101 => "Swiss Edition",
        11000221109 => "Argentinian Edition",
        11000181102 => "Estonian Edition",
        450829007 => "Spanish Language Edition",
        827022005 => "IPS Terminology",
        _ => return None,
    })
}

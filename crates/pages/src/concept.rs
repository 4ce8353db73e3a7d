//! A SNOMED CT concept's page, read from the edition: its terms by
//! language, every description with its acceptability, where it sits in
//! the hierarchy, its definition, what points at it, the refsets it is in
//! and, when inactive, what replaced it; for a refset concept, its
//! members a page at a time.
//!
//! Lists a concept can have without bound (children, inbound
//! relationships, members) are cut at [`LIST_LIMIT`] with their full
//! count shown, so the page costs the same for the root as for a leaf.

use askama::Template;
use txmap_store::{Edition, RefsetKind, sctid};

use crate::chrome::{Chrome, Link};
use crate::url::query;

/// The most children, inbound relationships or refset memberships one
/// page lists; the count says how many there are.
pub const LIST_LIMIT: usize = 200;

/// Refset members per page.
pub const MEMBERS_PER_PAGE: usize = 50;

/// How deep the ancestors' path may go before it stops (the hierarchy
/// is acyclic in a sound file; a damaged one must not loop).
const MAX_DEPTH: usize = 64;

/// How a concept page links to other concepts: its edition's version
/// (empty for the default edition).
#[derive(Debug, Clone, Copy)]
pub struct Linker<'a> {
    pub version: &'a str,
}

impl Linker<'_> {
    /// The URL of concept `id`'s page.
    pub fn concept(&self, id: u64) -> String {
        query(&format!("/concept/{id}"), &[("version", self.version)])
    }
}

#[derive(Debug)]
pub struct Description {
    pub id: u64,
    pub term: String,
    pub kind: &'static str,
    pub language: String,
    /// `Preferred in 900000000000509007`, … or empty.
    pub acceptability: Vec<String>,
    pub active: bool,
}

#[derive(Debug)]
pub struct Attribute {
    pub kind: Link,
    /// A concept, or a concrete value as text.
    pub value: Value,
}

#[derive(Debug)]
pub enum Value {
    Concept(Link),
    Concrete(String),
}

#[derive(Debug)]
pub struct Group {
    pub number: u16,
    pub attributes: Vec<Attribute>,
}

#[derive(Debug)]
pub struct Members {
    pub rows: Vec<(Link, String)>,
    pub total: usize,
    pub offset: usize,
    pub previous: Option<String>,
    pub next: Option<String>,
}

/// Everything the concept page shows.
#[derive(Template, Debug)]
#[template(path = "concept.html")]
pub struct ConceptPage {
    pub chrome: Chrome,
    pub id: u64,
    pub fsn: String,
    pub preferred: String,
    pub active: bool,
    pub defined: bool,
    pub module: Link,
    pub effective_time: String,
    /// (language refset, preferred synonym).
    pub terms_by_refset: Vec<(Link, String)>,
    pub descriptions: Vec<Description>,
    pub parents: Vec<Link>,
    pub children: Vec<Link>,
    pub children_count: usize,
    pub descendants_count: usize,
    /// The root first, down to the concept's first parent.
    pub path: Vec<Link>,
    pub groups: Vec<Group>,
    pub inbound: Vec<(Link, Link)>,
    pub inbound_count: usize,
    pub refsets: Vec<Link>,
    /// (association refset, target) for an inactive concept.
    pub associations: Vec<(Link, Link)>,
    pub members: Option<Members>,
}

/// Builds the page of concept `id` in `edition`; `offset` pages a refset
/// concept's members.
pub fn build<B: AsRef<[u8]>>(
    edition: &Edition<B>,
    mut chrome: Chrome,
    id: u64,
    offset: usize,
) -> Result<ConceptPage, crate::PageError> {
    let Some(concept) = edition.concept(id)? else {
        return Err(crate::PageError::NotFound(format!(
            "{id} is not a concept of this edition"
        )));
    };
    let version = chrome.version_param().to_owned();
    let linker = Linker { version: &version };
    let ord = concept.ordinal;
    let label = |o: u32| -> Result<Link, crate::PageError> {
        let id = edition.sctid(o)?;
        Ok(Link {
            href: linker.concept(id),
            text: format!("{} |{}|", id, edition.preferred_term(o)?.unwrap_or("")),
        })
    };
    let label_id = |id: u64| -> Result<Link, crate::PageError> {
        match edition.ordinal(id) {
            Some(o) => label(o),
            None => Ok(Link {
                href: linker.concept(id),
                text: id.to_string(),
            }),
        }
    };

    let descriptions = edition.descriptions(ord)?;
    let mut language_refsets: Vec<u64> = Vec::new();
    let mut rows = Vec::with_capacity(descriptions.len());
    for d in &descriptions {
        let mut acceptability = Vec::new();
        for (refset, a) in edition.acceptability(d.ordinal)? {
            if !language_refsets.contains(&refset) {
                language_refsets.push(refset);
            }
            let word = match a {
                sctid::PREFERRED => "Preferred",
                sctid::ACCEPTABLE => "Acceptable",
                _ => "Accepted",
            };
            acceptability.push(format!("{word} in {}", label_id(refset)?.text));
        }
        rows.push(Description {
            id: d.id,
            term: d.term.to_owned(),
            kind: match d.type_id {
                sctid::FSN => "FSN",
                sctid::SYNONYM => "Synonym",
                sctid::DEFINITION => "Definition",
                _ => "Other",
            },
            language: d.language.to_owned(),
            acceptability,
            active: d.active,
        });
    }
    // Active first, then FSN, synonyms, definitions; in SCTID order.
    rows.sort_by_key(|d| (!d.active, d.kind != "FSN", d.kind == "Definition", d.id));
    let mut terms_by_refset = Vec::new();
    for &refset in &language_refsets {
        if let Some(d) = edition.preferred_term_in(ord, &[refset])? {
            terms_by_refset.push((label_id(refset)?, d.term.to_owned()));
        }
    }
    let fsn = edition
        .fsn(ord, &language_refsets)?
        .map(|d| d.term.to_owned())
        .unwrap_or_default();
    let preferred = edition.preferred_term(ord)?.unwrap_or("").to_owned();

    let parents = edition
        .parents(ord)?
        .iter()
        .map(label)
        .collect::<Result<Vec<_>, _>>()?;
    let children_list = edition.children(ord)?;
    let children = children_list
        .iter()
        .take(LIST_LIMIT)
        .map(label)
        .collect::<Result<Vec<_>, _>>()?;
    let mut path = Vec::new();
    let mut at = edition.parents(ord)?.first();
    while let Some(o) = at {
        if path.len() >= MAX_DEPTH {
            break;
        }
        path.push(label(o)?);
        at = edition.parents(o)?.first();
    }
    path.reverse();

    let mut groups: Vec<Group> = Vec::new();
    let mut push = |group: u16, a: Attribute| match groups.iter_mut().find(|g| g.number == group) {
        Some(g) => g.attributes.push(a),
        None => groups.push(Group {
            number: group,
            attributes: vec![a],
        }),
    };
    for r in edition.attributes(ord)? {
        push(
            r.group,
            Attribute {
                kind: label(r.type_ord)?,
                value: Value::Concept(label(r.target_ord)?),
            },
        );
    }
    for c in edition.concrete_values(ord)? {
        push(
            c.group,
            Attribute {
                kind: label(c.type_ord)?,
                value: Value::Concrete(c.value.to_owned()),
            },
        );
    }
    groups.sort_by_key(|g| g.number);

    let inbound_all = edition.inbound(ord)?;
    let inbound = inbound_all
        .iter()
        .take(LIST_LIMIT)
        .map(|r| Ok((label(r.target_ord)?, label(r.type_ord)?)))
        .collect::<Result<Vec<_>, crate::PageError>>()?;

    let mut refsets = Vec::new();
    for m in edition.component_refsets(id)?.iter().take(LIST_LIMIT) {
        let l = label_id(m.refset)?;
        if !refsets.contains(&l) {
            refsets.push(l);
        }
    }
    let associations = if concept.active {
        Vec::new()
    } else {
        edition
            .associations(id)?
            .into_iter()
            .map(|a| Ok((label_id(a.refset)?, label_id(a.target)?)))
            .collect::<Result<Vec<_>, crate::PageError>>()?
    };

    let members = match edition.refset(id) {
        Some(info) if info.kind != RefsetKind::Other || info.member_count > 0 => {
            let total = info.member_count as usize;
            let offset = offset.min(total.saturating_sub(1) / MEMBERS_PER_PAGE * MEMBERS_PER_PAGE);
            let page = edition.members_page(id, offset, MEMBERS_PER_PAGE)?;
            let page_link = |o: usize| {
                let o = o.to_string();
                query(
                    &format!("/concept/{id}"),
                    &[("version", &version), ("offset", &o)],
                ) + "#members"
            };
            Some(Members {
                rows: page
                    .iter()
                    .map(|m| Ok((label_id(m.component)?, m.fields.replace('\t', " · "))))
                    .collect::<Result<Vec<_>, crate::PageError>>()?,
                total,
                offset,
                previous: (offset > 0).then(|| page_link(offset.saturating_sub(MEMBERS_PER_PAGE))),
                next: (offset + MEMBERS_PER_PAGE < total)
                    .then(|| page_link(offset + MEMBERS_PER_PAGE)),
            })
        }
        _ => None,
    };

    chrome.title = format!("{id} {preferred}");
    chrome.fhir_request = Some(query(
        "/r4/CodeSystem/$lookup",
        &[
            ("system", "http://snomed.info/sct"),
            ("code", &id.to_string()),
            ("version", &version),
        ],
    ));
    Ok(ConceptPage {
        chrome,
        id,
        fsn,
        preferred,
        active: concept.active,
        defined: concept.defined,
        module: label_id(concept.module)?,
        effective_time: date(concept.effective_time),
        terms_by_refset,
        descriptions: rows,
        parents,
        children,
        children_count: children_list.len(),
        descendants_count: edition.descendants(ord)?.len(),
        path,
        groups,
        inbound,
        inbound_count: inbound_all.len(),
        refsets,
        associations,
        members,
    })
}

/// `20250201` as `2025-02-01`.
fn date(yyyymmdd: u32) -> String {
    format!(
        "{:04}-{:02}-{:02}",
        yyyymmdd / 10000,
        yyyymmdd / 100 % 100,
        yyyymmdd % 100
    )
}

//! An Atom syndication feed with the NCTS extensions, read by namespace —
//! never by prefix, never by the order of elements or links.
//!
//! What is read of each entry: its `id` and `title`, every `category`
//! (term and scheme), every `link` (rel, href, type, `length` — commas
//! allowed, as some MLDS entries write it — `ncts:sha256Hash`,
//! `sct:md5Hash`), `ncts:contentItemIdentifier`,
//! `ncts:contentItemVersion` and the versions `sct:packageDependency`
//! names. Everything else is passed over.

use quick_xml::NsReader;
use quick_xml::events::{BytesStart, Event};
use quick_xml::name::{Namespace, ResolveResult};

/// Atom's namespace.
pub const ATOM: &str = "http://www.w3.org/2005/Atom";
/// The NCTS extensions' namespace.
pub const NCTS: &str = "http://ns.electronichealth.net.au/ncts/syndication/asf/extensions/1.0.0";
/// The SNOMED CT extensions' namespace (MD5, package dependencies).
pub const SCT: &str = "http://snomed.info/syndication/sct-extension/1.0.0";

/// A feed that could not be read.
#[derive(Debug, PartialEq, Eq)]
pub enum FeedError {
    /// The document's root is not Atom's `feed`.
    NotAtom(String),
    /// The XML is broken, at this byte.
    Xml { at: u64, message: String },
}

impl std::fmt::Display for FeedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FeedError::NotAtom(root) => write!(f, "not an Atom feed (its root is {root})"),
            FeedError::Xml { at, message } => write!(f, "broken XML at byte {at}: {message}"),
        }
    }
}

impl std::error::Error for FeedError {}

/// One `link` of an entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Link {
    /// `alternate` (the artefact; also when `rel` is absent) or `related`.
    pub rel: String,
    pub href: String,
    pub media_type: Option<String>,
    /// The declared length in bytes, if it is a number (commas dropped).
    pub length: Option<u64>,
    /// `ncts:sha256Hash`, lower-cased.
    pub sha256: Option<String>,
    /// `sct:md5Hash`, lower-cased.
    pub md5: Option<String>,
}

/// One `entry`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Entry {
    pub id: String,
    pub title: String,
    /// The category terms (`SCT_RF2_SNAPSHOT`, `FHIR_Package`, …).
    pub categories: Vec<String>,
    pub links: Vec<Link>,
    /// `ncts:contentItemIdentifier`.
    pub identifier: String,
    /// `ncts:contentItemVersion`.
    pub version: String,
    /// The versions `sct:packageDependency` names (edition and derivative
    /// dependencies), in document order.
    pub dependencies: Vec<String>,
}

impl Entry {
    /// The artefact: the `alternate` link (the first, if several).
    pub fn artefact(&self) -> Option<&Link> {
        self.links.iter().find(|l| l.rel == "alternate")
    }

    /// Whether the entry takes a release out (`*_RETRACT`).
    pub fn is_retraction(&self) -> bool {
        self.categories.iter().any(|c| c.ends_with("_RETRACT"))
    }
}

/// A feed's entries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Feed {
    pub title: String,
    pub entries: Vec<Entry>,
}

/// Which text element is being read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    FeedTitle,
    Id,
    Title,
    Identifier,
    Version,
    Dependency,
}

fn is(ns: &ResolveResult, want: &str) -> bool {
    matches!(ns, ResolveResult::Bound(Namespace(n)) if *n == want.as_bytes())
}

/// The namespaces read, as a value that does not borrow the reader.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ns {
    Atom,
    Ncts,
    Sct,
    Other,
}

impl Ns {
    fn of(ns: &ResolveResult) -> Ns {
        if is(ns, ATOM) {
            Ns::Atom
        } else if is(ns, NCTS) {
            Ns::Ncts
        } else if is(ns, SCT) {
            Ns::Sct
        } else {
            Ns::Other
        }
    }
}

/// Reads `xml` as an Atom feed.
pub fn parse(xml: &str) -> Result<Feed, FeedError> {
    let mut reader = NsReader::from_str(xml);
    let broken = |at: u64, e: quick_xml::Error| FeedError::Xml {
        at,
        message: e.to_string(),
    };
    let mut feed = Feed::default();
    let mut entry: Option<Entry> = None;
    let mut field: Option<Field> = None;
    let mut text = String::new();
    let mut depth = 0usize;
    let mut entry_depth = 0usize;
    let mut rooted = false;
    loop {
        let (ns, event) = match reader.read_resolved_event() {
            Ok((ns, event)) => (Ns::of(&ns), event),
            Err(e) => return Err(broken(reader.buffer_position(), e)),
        };
        match event {
            Event::Start(e) | Event::Empty(e) if !rooted => {
                let local = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
                if !(ns == Ns::Atom && local == "feed") {
                    return Err(FeedError::NotAtom(format!("<{local}>")));
                }
                rooted = true;
                depth = 1;
            }
            Event::Start(e) => {
                depth += 1;
                let local = e.local_name();
                let local = local.as_ref();
                field = None;
                // An entry's own elements are its children (a dependency
                // its grandchild, inside `sct:packageDependency`); the
                // same names deeper, inside foreign elements, are not.
                let child = depth == entry_depth + 1;
                match (&mut entry, ns, local) {
                    (None, Ns::Atom, b"entry") if depth == 2 => {
                        entry = Some(Entry::default());
                        entry_depth = depth;
                    }
                    (None, Ns::Atom, b"title") if depth == 2 => field = Some(Field::FeedTitle),
                    (Some(en), Ns::Atom, b"link") if child => en.links.push(link(&reader, &e)),
                    (Some(en), Ns::Atom, b"category") if child => en.categories.extend(term(&e)),
                    (Some(_), Ns::Atom, b"id") if child => field = Some(Field::Id),
                    (Some(_), Ns::Atom, b"title") if child => field = Some(Field::Title),
                    (Some(_), Ns::Ncts, b"contentItemIdentifier") if child => {
                        field = Some(Field::Identifier)
                    }
                    (Some(_), Ns::Ncts, b"contentItemVersion") if child => {
                        field = Some(Field::Version)
                    }
                    (Some(_), Ns::Sct, b"editionDependency" | b"derivativeDependency")
                        if depth == entry_depth + 2 =>
                    {
                        field = Some(Field::Dependency)
                    }
                    _ => {}
                }
                text.clear();
            }
            Event::Empty(e) => {
                if let Some(en) = &mut entry
                    && ns == Ns::Atom
                    && depth == entry_depth
                {
                    match e.local_name().as_ref() {
                        b"link" => en.links.push(link(&reader, &e)),
                        b"category" => en.categories.extend(term(&e)),
                        _ => {}
                    }
                }
            }
            Event::Text(t) if field.is_some() => {
                let at = reader.buffer_position();
                text.push_str(&t.decode().map_err(|e| broken(at, e.into()))?);
            }
            Event::CData(t) if field.is_some() => text.push_str(&String::from_utf8_lossy(&t)),
            Event::GeneralRef(r) if field.is_some() => {
                text.push_str(&entity(&String::from_utf8_lossy(&r)));
            }
            Event::End(e) => {
                depth = depth.saturating_sub(1);
                let value = text.trim().to_owned();
                match (field.take(), &mut entry) {
                    (Some(Field::FeedTitle), _) => feed.title = value,
                    (Some(Field::Id), Some(en)) => en.id = value,
                    (Some(Field::Title), Some(en)) => en.title = value,
                    (Some(Field::Identifier), Some(en)) => en.identifier = value,
                    (Some(Field::Version), Some(en)) => en.version = value,
                    (Some(Field::Dependency), Some(en)) => en.dependencies.push(value),
                    _ => {}
                }
                text.clear();
                if ns == Ns::Atom
                    && e.local_name().as_ref() == b"entry"
                    && let Some(done) = entry.take()
                {
                    feed.entries.push(done);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !rooted {
        return Err(FeedError::NotAtom("nothing".into()));
    }
    Ok(feed)
}

/// An XML entity reference's text: the five predefined ones and
/// character references.
fn entity(name: &str) -> String {
    match name {
        "amp" => "&".into(),
        "lt" => "<".into(),
        "gt" => ">".into(),
        "quot" => "\"".into(),
        "apos" => "'".into(),
        _ => {
            let code = name
                .strip_prefix("#x")
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .or_else(|| name.strip_prefix('#').and_then(|d| d.parse().ok()));
            code.and_then(char::from_u32)
                .map(String::from)
                .unwrap_or_default()
        }
    }
}

fn term(e: &BytesStart) -> Option<String> {
    e.attributes().flatten().find_map(|a| {
        (a.key.as_ref() == b"term")
            .then(|| a.unescape_value().ok().map(|v| v.trim().to_owned()))
            .flatten()
    })
}

fn link(reader: &NsReader<&[u8]>, e: &BytesStart) -> Link {
    let mut l = Link {
        rel: "alternate".into(),
        ..Link::default()
    };
    for a in e.attributes().flatten() {
        let Ok(value) = a.unescape_value() else {
            continue;
        };
        let value = value.trim().to_owned();
        let (ns, local) = reader.resolve_attribute(a.key);
        match (local.as_ref(), &ns) {
            (b"rel", ResolveResult::Unbound) => l.rel = value,
            (b"href", ResolveResult::Unbound) => l.href = value,
            (b"type", ResolveResult::Unbound) => l.media_type = Some(value),
            (b"length", ResolveResult::Unbound) => l.length = value.replace(',', "").parse().ok(),
            (b"sha256Hash", ns) if is(ns, NCTS) => l.sha256 = Some(value.to_ascii_lowercase()),
            (b"md5Hash", ns) if is(ns, SCT) => l.md5 = Some(value.to_ascii_lowercase()),
            _ => {}
        }
    }
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_read_by_namespace_whatever_the_prefixes_and_order() {
        // Other prefixes than the usual, Atom as a prefix not the default,
        // the related link first, a length with commas, an MD5 only.
        let xml = r#"<?xml version="1.0"?>
<a:feed xmlns:a="http://www.w3.org/2005/Atom"
        xmlns:n="http://ns.electronichealth.net.au/ncts/syndication/asf/extensions/1.0.0"
        xmlns:s="http://snomed.info/syndication/sct-extension/1.0.0">
  <a:title>Feed &amp; more</a:title>
  <a:entry>
    <n:contentItemVersion>http://snomed.info/sct/1/version/20260731</n:contentItemVersion>
    <a:link rel="related" href="https://x/notes.pdf" type="application/pdf"/>
    <a:category term="SCT_RF2_ALL" scheme="http://ns.electronichealth.net.au/ncts/syndication/asf/scheme/1.0.0"/>
    <a:link href="https://x/r.zip?a=1&amp;b=2" type="application/zip" length="1,234,567" s:md5Hash="ABCDEF"/>
    <a:id>urn:uuid:1</a:id>
    <a:title>Release <![CDATA[<one>]]></a:title>
    <n:contentItemIdentifier>http://snomed.info/sct/1</n:contentItemIdentifier>
    <s:packageDependency>
      <s:editionDependency>http://snomed.info/sct/900000000000207008/version/20260701</s:editionDependency>
    </s:packageDependency>
    <other:thing xmlns:other="urn:other"><a:title>not the entry's</a:title></other:thing>
  </a:entry>
</a:feed>"#;
        let feed = parse(xml).unwrap();
        assert_eq!(feed.title, "Feed & more");
        let e = &feed.entries[0];
        assert_eq!(e.id, "urn:uuid:1");
        assert_eq!(e.title, "Release <one>");
        assert_eq!(e.categories, ["SCT_RF2_ALL"]);
        assert_eq!(e.identifier, "http://snomed.info/sct/1");
        assert_eq!(e.version, "http://snomed.info/sct/1/version/20260731");
        assert_eq!(
            e.dependencies,
            ["http://snomed.info/sct/900000000000207008/version/20260701"]
        );
        let a = e.artefact().unwrap();
        assert_eq!(a.href, "https://x/r.zip?a=1&b=2");
        assert_eq!(a.length, Some(1_234_567));
        assert_eq!(a.md5.as_deref(), Some("abcdef"));
        assert_eq!(a.sha256, None);
        assert_eq!(e.links[0].rel, "related");
    }

    #[test]
    fn an_attribute_of_another_namespace_is_not_the_digest() {
        let xml = r#"<feed xmlns="http://www.w3.org/2005/Atom" xmlns:x="urn:x"><entry>
            <link href="h" x:sha256Hash="00"/></entry></feed>"#;
        let feed = parse(xml).unwrap();
        assert_eq!(feed.entries[0].links[0].sha256, None);
    }

    #[test]
    fn what_is_not_an_atom_feed_says_so() {
        for (doc, why) in [
            ("<html><body>Login</body></html>", "<html>"),
            ("<feed><entry/></feed>", "<feed>"),
            ("<rss version=\"2.0\"/>", "<rss>"),
            ("", "nothing"),
        ] {
            let e = parse(doc).unwrap_err();
            assert_eq!(e, FeedError::NotAtom(why.into()), "{doc}");
        }
        let e = parse("<feed xmlns=\"http://www.w3.org/2005/Atom\"><entry></feed>").unwrap_err();
        assert!(matches!(e, FeedError::Xml { .. }), "{e:?}");
    }
}

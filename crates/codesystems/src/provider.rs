//! A compiled code system file as a code system of the terminology
//! engine: url, version, name, language and case sensitivity from its
//! metadata, so one provider serves LOINC, RxNorm and NDC alike.
//!
//! Most of LOINC's value set filters are property filters (`STATUS`,
//! `CLASSTYPE`, `ORDER_OBS`, `copyright`): this provider compiles a rule's
//! filters itself ([`CodeSystemProvider::native_filters`]) and tests them
//! on the stored values in place, without building each concept's
//! [`CodeSystemProvider::properties`]; the hierarchy filters (`concept
//! is-a` over the multiaxial hierarchy) and properties no concept has are
//! the engine's generic ones. `parent = X` and `child = X` are the
//! hierarchy's links. In a LOINC file (metadata `source = loinc`) three
//! more need LOINC's knowledge:
//!
//! - a part property (`COMPONENT`, `SCALE_TYP`, `CLASS`...) matches its
//!   part's code *or its part's name*, as LOINC's users write both
//!   (`COMPONENT = LP14635-4`, `COMPONENT = Glucose`, `SCALE_TYP = Doc`,
//!   `CLASS regex 'CHEM|HEM.*'`); names compare ignoring case for `=`;
//! - `LIST = LL…` is the answers of an answer list (their `AnswerList`
//!   property);
//! - `answers-for = X` is the answers of list `X`, or of the lists of
//!   term `X`.
//!
//! A filter with no candidates of its own tests every concept once, under
//! the request's deadline.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use serde_json::{Value, json};
use txmap_format::schema::{CS_NO_NAME, CsPropertyRecord, cs_flags, cs_value};
use txmap_terminology::Error;
use txmap_terminology::filter::Filter;
use txmap_terminology::provider::{
    CodeSystemProvider, ConceptId, Content, Designation, Located, NativeFilters, PropertyValue,
    Status,
};
use txmap_terminology::serving::Serving;
use txmap_terminology::valueset::FilterDef;

use crate::file::CodeSystemFile;

/// The properties whose values are parts.
const PART_PROPERTIES: [&str; 7] = [
    "COMPONENT",
    "PROPERTY",
    "TIME_ASPCT",
    "SYSTEM",
    "SCALE_TYP",
    "METHOD_TYP",
    "CLASS",
];

/// A compiled code system file as a [`CodeSystemProvider`].
#[derive(Debug)]
pub struct Compiled<B> {
    file: Arc<CodeSystemFile<B>>,
    url: String,
    version: String,
    name: String,
    language: String,
    case_sensitive: bool,
    /// LOINC's filters (part names, `LIST`, `answers-for`) apply.
    loinc: bool,
    roots: OnceLock<Vec<ConceptId>>,
    /// Whether it may answer ([`txmap_terminology::serving`]).
    serving: Arc<Serving>,
}

impl<B: AsRef<[u8]>> Compiled<B> {
    /// The provider over an opened file, named by its metadata.
    pub fn new(file: Arc<CodeSystemFile<B>>) -> Compiled<B> {
        let meta = |k: &str| file.meta(k).to_owned();
        Compiled {
            url: meta("url"),
            version: meta("version"),
            name: meta("name"),
            language: meta("language"),
            case_sensitive: file.meta("case_sensitive") != "false",
            loinc: file.meta("source") == "loinc",
            roots: OnceLock::new(),
            serving: Arc::new(Serving::new("", true)),
            file,
        }
    }

    /// The same code system, served as `serving` says (verified first,
    /// unless trusted).
    pub fn with_serving(mut self, serving: Arc<Serving>) -> Compiled<B> {
        self.serving = serving;
        self
    }

    /// Whether it may answer, and why not.
    pub fn serving(&self) -> &Serving {
        &self.serving
    }

    pub fn file(&self) -> &Arc<CodeSystemFile<B>> {
        &self.file
    }

    fn texts(&self, id: ConceptId, property: &str) -> Vec<&str> {
        match self.file.name_index(property) {
            Some(index) => self.texts_at(id, index),
            None => Vec::new(),
        }
    }

    /// The values of the property at `index` of the name table.
    fn texts_at(&self, id: ConceptId, index: u16) -> Vec<&str> {
        self.file
            .properties(id)
            .unwrap_or_default()
            .iter()
            .filter(|p| p.property.get() == index)
            .filter_map(|p| self.file.text(p.value).ok())
            .collect()
    }

    fn value(&self, p: &CsPropertyRecord) -> Option<PropertyValue> {
        let code = self.file.name(p.property.get())?.to_owned();
        let text = self.file.text(p.value).ok()?;
        let (key, value) = match p.value_type {
            cs_value::CODE => ("valueCode", Value::String(text.to_owned())),
            cs_value::BOOLEAN => ("valueBoolean", Value::Bool(text == "true")),
            cs_value::INTEGER => match text.parse::<i64>() {
                Ok(n) => ("valueInteger", json!(n)),
                Err(_) => ("valueString", Value::String(text.to_owned())),
            },
            _ => ("valueString", Value::String(text.to_owned())),
        };
        Some(PropertyValue {
            code,
            key: key.to_owned(),
            value,
        })
    }
}

impl<B: AsRef<[u8]> + std::fmt::Debug + Send + Sync> CodeSystemProvider for Compiled<B> {
    fn url(&self) -> &str {
        &self.url
    }
    fn in_service(&self) -> Result<(), Error> {
        self.serving
            .check(&format!("the code system {}|{}", self.url, self.version))
    }
    fn version(&self) -> Option<&str> {
        Some(&self.version)
    }
    fn name(&self) -> Option<&str> {
        Some(&self.name)
    }
    fn content(&self) -> Content {
        Content::Complete
    }
    fn case_sensitive(&self) -> bool {
        self.case_sensitive
    }
    fn language(&self) -> Option<&str> {
        (!self.language.is_empty()).then_some(self.language.as_str())
    }
    fn resource_status(&self) -> Option<&str> {
        Some("active")
    }
    fn experimental(&self) -> bool {
        false
    }
    fn len(&self) -> usize {
        self.file.len() as usize
    }
    fn locate(&self, code: &str) -> Option<Located> {
        if let Ok(Some(id)) = self.file.locate(code) {
            return Some(Located {
                id,
                case_differs: false,
            });
        }
        // A case-insensitive system's codes are stored upper-case (LOINC:
        // digits, dashes and upper-case prefixes).
        let upper = code.to_ascii_uppercase();
        if !self.case_sensitive
            && upper != code
            && let Ok(Some(id)) = self.file.locate(&upper)
        {
            return Some(Located {
                id,
                case_differs: true,
            });
        }
        None
    }
    fn code(&self, id: ConceptId) -> Cow<'_, str> {
        Cow::Borrowed(self.file.code(id).unwrap_or_default())
    }
    fn display(&self, id: ConceptId) -> Option<&str> {
        self.file.display(id).ok().flatten()
    }
    fn definition(&self, id: ConceptId) -> Option<&str> {
        self.texts(id, "DefinitionDescription").into_iter().next()
    }
    fn designations(&self, id: ConceptId) -> Cow<'_, [Designation]> {
        let list = self.file.designations(id).unwrap_or_default();
        Cow::Owned(
            list.iter()
                .filter_map(|d| {
                    let value = self.file.text(d.value).ok()?.to_owned();
                    let use_ = self
                        .file
                        .name(d.use_.get())
                        .map(|u| json!({"system": self.url, "code": u, "display": u}));
                    Some(Designation {
                        language: self.file.name(d.language.get()).map(str::to_owned),
                        use_,
                        value,
                        source: None,
                        extensions: Vec::new(),
                    })
                })
                .collect(),
        )
    }
    fn properties(&self, id: ConceptId) -> Cow<'_, [PropertyValue]> {
        let mut out: Vec<PropertyValue> = self
            .file
            .properties(id)
            .unwrap_or_default()
            .iter()
            .filter_map(|p| self.value(p))
            .collect();
        let link = |code: &str, other: ConceptId| PropertyValue {
            code: code.to_owned(),
            key: "valueCode".to_owned(),
            value: Value::String(self.file.code(other).unwrap_or_default().to_owned()),
        };
        out.extend(self.parents(id).iter().map(|&p| link("parent", p)));
        out.extend(self.children(id).iter().map(|&c| link("child", c)));
        Cow::Owned(out)
    }
    fn status(&self, id: ConceptId) -> Status {
        let Ok(c) = self.file.concept(id) else {
            return Status::default();
        };
        Status {
            inactive: c.flags & cs_flags::INACTIVE != 0,
            deprecated: c.flags & cs_flags::DEPRECATED != 0,
            not_selectable: c.flags & cs_flags::NOT_SELECTABLE != 0,
            status: self.file.name(c.status.get()).map(str::to_owned),
        }
    }
    fn parents(&self, id: ConceptId) -> Cow<'_, [ConceptId]> {
        Cow::Owned(self.file.parents(id).unwrap_or_default())
    }
    fn children(&self, id: ConceptId) -> Cow<'_, [ConceptId]> {
        Cow::Owned(self.file.children(id).unwrap_or_default())
    }
    fn roots(&self) -> Cow<'_, [ConceptId]> {
        Cow::Borrowed(self.roots.get_or_init(|| {
            (0..self.file.len())
                .filter(|&c| !self.file.has_parents(c).unwrap_or(false))
                .collect()
        }))
    }
    fn property_def(&self, code: &str) -> Option<(Option<&str>, Option<&str>)> {
        let known = |c: &str| self.file.name_index(c).is_some();
        match code {
            "parent" | "child" => Some((None, Some("code"))),
            "answers-for" | "LIST" => Some((None, Some("code"))),
            c if self.loinc && PART_PROPERTIES.contains(&c) && known(c) => {
                Some((None, Some("Coding")))
            }
            c if known(c) => Some((None, Some("string"))),
            _ => None,
        }
    }
    fn all(&self) -> Vec<ConceptId> {
        (0..self.file.len()).collect()
    }
    fn native_filters(
        &self,
        filters: &[FilterDef],
        deadline: Option<Instant>,
    ) -> Option<Result<Box<dyn NativeFilters + '_>, Error>> {
        let compiled = filters
            .iter()
            .map(|f| self.compile(f))
            .collect::<Result<Vec<_>, _>>();
        Some(compiled.map(|filters| {
            Box::new(CompiledFilters {
                cs: self,
                filters,
                deadline,
            }) as Box<dyn NativeFilters + '_>
        }))
    }
}

/// One compiled filter of a rule.
#[derive(Debug)]
enum CompiledFilter {
    /// A stored property (its index in the name table) against a test;
    /// for a part property, a value's part name matches too.
    Property {
        property: u16,
        parts: bool,
        test: Test,
    },
    /// A fixed set of concepts (`answers-for`, `LIST`, `parent`, `child`).
    Set(HashSet<ConceptId>),
    /// The engine's filter (hierarchy, and properties no concept has).
    Generic(Filter),
}

#[derive(Debug)]
enum Test {
    /// Equal to one of these (`=`, `in`), or to none (`not-in`).
    Values(Vec<String>, bool),
    Regex(regex::Regex),
    /// Has a value (`exists true`) or none (`exists false`).
    Exists(bool),
}

impl<B: AsRef<[u8]> + std::fmt::Debug + Send + Sync> Compiled<B> {
    /// The answers `answers-for = value` means: of the list `value`, or of
    /// every list of the term `value`.
    fn answers_for(&self, value: &str) -> HashSet<ConceptId> {
        let Some(x) = self.locate(value).map(|l| l.id) else {
            return HashSet::new();
        };
        let lists: Vec<ConceptId> = if self.kind(x) == Some("answer-list") {
            vec![x]
        } else {
            self.texts(x, "answer-list")
                .into_iter()
                .filter_map(|l| self.locate(l).map(|l| l.id))
                .collect()
        };
        lists
            .into_iter()
            .flat_map(|l| self.texts(l, "Answer"))
            .filter_map(|a| self.locate(a).map(|l| l.id))
            .collect()
    }

    fn kind(&self, id: ConceptId) -> Option<&str> {
        let c = self.file.concept(id).ok()?;
        self.file.name(c.kind.get())
    }

    fn compile(&self, f: &FilterDef) -> Result<CompiledFilter, Error> {
        let value = f.value.as_deref().unwrap_or("");
        let set = |ids: Vec<ConceptId>| CompiledFilter::Set(ids.into_iter().collect());
        Ok(match (f.property.as_str(), f.op.as_str()) {
            ("answers-for", "=") if self.loinc => CompiledFilter::Set(self.answers_for(value)),
            ("LIST", "=") if self.loinc => match self.locate(value) {
                Some(l) => set(self
                    .texts(l.id, "Answer")
                    .into_iter()
                    .filter_map(|a| self.locate(a).map(|x| x.id))
                    .collect()),
                None => set(Vec::new()),
            },
            ("parent", "=") => match self.locate(value) {
                Some(l) => set(self.children(l.id).into_owned()),
                None => set(Vec::new()),
            },
            ("child", "=") => match self.locate(value) {
                Some(l) => set(self.parents(l.id).into_owned()),
                None => set(Vec::new()),
            },
            (p, op) if self.file.name_index(p).is_some() => {
                let test = match op {
                    "=" => Test::Values(vec![value.to_owned()], false),
                    "in" | "not-in" => Test::Values(
                        value.split(',').map(|s| s.trim().to_owned()).collect(),
                        op == "not-in",
                    ),
                    "regex" => {
                        Test::Regex(regex::Regex::new(&format!("^(?:{value})$")).map_err(|e| {
                            Error::Invalid(format!("The regex '{value}' is not valid: {e}"))
                        })?)
                    }
                    "exists" => Test::Exists(value == "true"),
                    _ => return Ok(CompiledFilter::Generic(Filter::compile(self, f)?)),
                };
                CompiledFilter::Property {
                    property: self.file.name_index(p).unwrap_or(CS_NO_NAME),
                    parts: self.loinc && PART_PROPERTIES.contains(&p),
                    test,
                }
            }
            _ => CompiledFilter::Generic(Filter::compile(self, f)?),
        })
    }

    fn passes(&self, filter: &CompiledFilter, id: ConceptId) -> bool {
        match filter {
            CompiledFilter::Set(s) => s.contains(&id),
            CompiledFilter::Generic(g) => g.matches(self, id),
            CompiledFilter::Property {
                property,
                parts,
                test,
            } => {
                let values = self.texts_at(id, *property);
                // A part's name, when the value is a part of this system.
                let names: Vec<&str> = if *parts {
                    values
                        .iter()
                        .filter_map(|v| self.file.locate(v).ok().flatten())
                        .filter_map(|p| self.file.display(p).ok().flatten())
                        .collect()
                } else {
                    Vec::new()
                };
                match test {
                    Test::Values(wanted, negate) => {
                        let found = wanted.iter().any(|w| {
                            values.iter().any(|v| v == w)
                                || (*parts
                                    && names
                                        .iter()
                                        .chain(&values)
                                        .any(|n| n.eq_ignore_ascii_case(w)))
                        });
                        found != *negate
                    }
                    Test::Regex(re) => values.iter().chain(&names).any(|v| re.is_match(v)),
                    Test::Exists(exists) => values.is_empty() != *exists,
                }
            }
        }
    }
}

struct CompiledFilters<'a, B> {
    cs: &'a Compiled<B>,
    filters: Vec<CompiledFilter>,
    deadline: Option<Instant>,
}

impl<B: AsRef<[u8]> + std::fmt::Debug + Send + Sync> NativeFilters for CompiledFilters<'_, B> {
    fn matches(&self, id: ConceptId) -> Result<bool, Error> {
        Ok(self.filters.iter().all(|f| self.cs.passes(f, id)))
    }

    fn members(&self) -> Result<Vec<ConceptId>, Error> {
        // The smallest candidate set any filter gives, else every concept.
        let candidates: Option<Vec<ConceptId>> = self
            .filters
            .iter()
            .filter_map(|f| match f {
                CompiledFilter::Set(s) => {
                    let mut v: Vec<ConceptId> = s.iter().copied().collect();
                    v.sort_unstable();
                    Some(v)
                }
                CompiledFilter::Generic(g) => g.candidates(self.cs).map(|mut v| {
                    v.sort_unstable();
                    v.dedup();
                    v
                }),
                CompiledFilter::Property { .. } => None,
            })
            .min_by_key(Vec::len);
        let all = || (0..self.cs.file.len()).collect::<Vec<_>>();
        let mut out = Vec::new();
        for (i, id) in candidates.unwrap_or_else(all).into_iter().enumerate() {
            if i % 4096 == 0 && self.deadline.is_some_and(|d| Instant::now() > d) {
                return Err(Error::OutOfTime);
            }
            if self.matches(id)? {
                out.push(id);
            }
        }
        Ok(out)
    }
}

//! Every value set filter on SNOMED CT means an ECL constraint, and is
//! kept as one ([`Constraint`]): `concept is-a X` is `<< X`,
//! `descendent-of` `< X`, `child-of` `<! X`, `generalizes` `>> X`, `=` `X`,
//! `in` `^ X`, `not-in` `* MINUS ^ X`, `is-not-a` `* MINUS << X`;
//! `constraint` and `expression` are ECL already; `parent` and `child` are
//! `<! X` and `>! X`; `inactive`, `moduleId` and `definitionStatus` are
//! concept filters on `*`; a property that is an SCTID is an attribute:
//! `* : P = X` (`is-a`: `= << X`, `descendent-of`: `= < X`, `in`: `= ^ X`).
//! So one evaluator ([`txmap_ecl_eval`]) answers every membership
//! question, whichever engine asks: a set for an expansion, a single test
//! for a validation, where a test never materialises a big set.

use std::fmt;
use std::sync::Arc;

use txmap_ecl_eval::{Budget, EvalError, Subject};
use txmap_store::{Edition, StoreError};

/// One filter, as the ECL constraint it means.
#[derive(Clone, Debug)]
pub struct Constraint {
    pub ecl: Arc<txmap_ecl::Expr>,
    /// As written: the ECL text, or `property op value`.
    pub written: String,
    /// Given as ECL (`constraint`, `expression`, `fhir_vs=ecl/`): its
    /// errors, unknown concepts included, are invalid ECL. Other filters
    /// naming an unknown concept match nothing.
    pub is_ecl: bool,
}

/// Why a filter cannot be compiled or evaluated.
#[derive(Debug)]
pub enum ConstraintError {
    /// ECL text that does not parse, or names what the edition lacks.
    InvalidEcl { text: String, why: String },
    /// A filter this code system does not define, or a construct the
    /// evaluator does not implement.
    NotSupported { text: String },
    /// A filter whose value is not of its property's kind.
    Invalid { text: String },
    /// The evaluation ran out of its budget (time or work).
    TooCostly { text: String },
    /// The edition file could not be read.
    Store(StoreError),
}

impl fmt::Display for ConstraintError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConstraintError::InvalidEcl { text, why } => {
                write!(f, "Invalid ECL expression '{text}': {why}")
            }
            ConstraintError::NotSupported { text }
            | ConstraintError::Invalid { text }
            | ConstraintError::TooCostly { text } => f.write_str(text),
            ConstraintError::Store(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ConstraintError {}

impl Constraint {
    /// A filter given as ECL text.
    pub fn ecl(text: &str) -> Result<Constraint, ConstraintError> {
        let expr = txmap_ecl::parse(text).map_err(|e| ConstraintError::InvalidEcl {
            text: text.to_owned(),
            why: e.to_string(),
        })?;
        Ok(Constraint {
            ecl: Arc::new(expr),
            written: text.to_owned(),
            is_ecl: true,
        })
    }

    /// A compose filter `property op value`, or why it is not supported.
    pub fn compose(property: &str, op: &str, value: &str) -> Result<Constraint, ConstraintError> {
        let written = format!("{property} {op} {value}");
        let not_supported = || ConstraintError::NotSupported {
            text: format!("the filter {written} is not supported"),
        };
        if matches!(property, "constraint" | "expression") {
            return match op {
                "=" => Constraint::ecl(value),
                _ => Err(not_supported()),
            };
        }
        let v = value.trim();
        let id = || -> Result<u64, ConstraintError> {
            v.parse::<u64>().map_err(|_| ConstraintError::Invalid {
                text: format!("the filter {written}: {v:?} is not an SCTID"),
            })
        };
        let flag = || match v {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(ConstraintError::Invalid {
                text: format!("the filter {written}: {v:?} is not true or false"),
            }),
        };
        let ecl = match (property, op) {
            ("concept", "is-a") => format!("<< {}", id()?),
            ("concept", "descendent-of" | "descendant-of") => format!("< {}", id()?),
            ("concept", "child-of") => format!("<! {}", id()?),
            ("concept", "generalizes") => format!(">> {}", id()?),
            ("concept", "=") => id()?.to_string(),
            ("concept", "in") => format!("^ {}", id()?),
            ("concept", "not-in") => format!("* MINUS ^ {}", id()?),
            ("concept", "is-not-a") => format!("* MINUS << {}", id()?),
            ("parent", "=") => format!("<! {}", id()?),
            ("child", "=") => format!(">! {}", id()?),
            ("inactive", "=") => format!(
                "* {{{{ C active = {} }}}}",
                if flag()? { "false" } else { "true" }
            ),
            ("moduleId", "=") => format!("* {{{{ C moduleId = {} }}}}", id()?),
            ("definitionStatus" | "definitionStatusId", "=") => match v {
                "900000000000074008" | "primitive" => {
                    "* {{ C definitionStatus = primitive }}".into()
                }
                "900000000000073002" | "defined" => "* {{ C definitionStatus = defined }}".into(),
                _ => return Err(not_supported()),
            },
            (p, op) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => match op {
                "=" => format!("* : {p} = {}", id()?),
                "is-a" => format!("* : {p} = << {}", id()?),
                "descendent-of" => format!("* : {p} = < {}", id()?),
                "in" => format!("* : {p} = ^ {}", id()?),
                _ => return Err(not_supported()),
            },
            _ => return Err(not_supported()),
        };
        let expr = txmap_ecl::parse(&ecl).map_err(|e| ConstraintError::Invalid {
            text: format!("the filter {written}: {e}"),
        })?;
        Ok(Constraint {
            ecl: Arc::new(expr),
            written,
            is_ecl: false,
        })
    }

    /// The concepts that pass, sorted by ordinal.
    pub fn evaluate<B: AsRef<[u8]>>(
        &self,
        ed: &Edition<B>,
        budget: &Budget,
    ) -> Result<Vec<u32>, ConstraintError> {
        match txmap_ecl_eval::evaluate(ed, &self.ecl, budget) {
            Err(EvalError::UnknownConcept { .. }) if !self.is_ecl => Ok(Vec::new()),
            other => other.map_err(|e| self.error(e)),
        }
    }

    /// Whether one concept or expression passes.
    pub fn matches<B: AsRef<[u8]>>(
        &self,
        ed: &Edition<B>,
        subject: &Subject,
        budget: &Budget,
    ) -> Result<bool, ConstraintError> {
        match txmap_ecl_eval::matches(ed, &self.ecl, subject, budget) {
            Err(EvalError::UnknownConcept { .. }) if !self.is_ecl => Ok(false),
            other => other.map_err(|e| self.error(e)),
        }
    }

    /// A tester of many concepts against this constraint, sharing what
    /// the tests learn ([`txmap_ecl_eval::Matcher`]).
    pub fn matcher<'a, B: AsRef<[u8]>>(
        &'a self,
        ed: &'a Edition<B>,
        budget: &'a Budget,
    ) -> Result<ConstraintMatcher<'a, B>, ConstraintError> {
        let inner = match txmap_ecl_eval::Matcher::new(ed, &self.ecl, budget) {
            Ok(m) => Some(m),
            // A filter naming an unknown concept matches nothing.
            Err(EvalError::UnknownConcept { .. }) if !self.is_ecl => None,
            Err(e) => return Err(self.error(e)),
        };
        Ok(ConstraintMatcher {
            constraint: self,
            inner,
        })
    }

    fn error(&self, e: EvalError) -> ConstraintError {
        match e {
            EvalError::TooCostly { why } => ConstraintError::TooCostly {
                text: format!(
                    "the constraint '{}' is too costly to evaluate: {why}",
                    self.written
                ),
            },
            EvalError::Store(e) => ConstraintError::Store(e),
            EvalError::UnknownConcept { .. } | EvalError::NotSupported { .. } if self.is_ecl => {
                ConstraintError::InvalidEcl {
                    text: self.written.clone(),
                    why: e.to_string(),
                }
            }
            other => ConstraintError::NotSupported {
                text: format!("the filter {} cannot be evaluated: {other}", self.written),
            },
        }
    }
}

/// [`Constraint::matches`] for concept after concept.
#[derive(Debug)]
pub struct ConstraintMatcher<'a, B: AsRef<[u8]>> {
    constraint: &'a Constraint,
    /// `None`: the constraint names an unknown concept, and is no ECL
    /// given as such, so nothing passes.
    inner: Option<txmap_ecl_eval::Matcher<'a, B>>,
}

impl<B: AsRef<[u8]>> ConstraintMatcher<'_, B> {
    /// Whether the concept at ordinal `o` passes.
    pub fn matches_concept(&mut self, o: u32) -> Result<bool, ConstraintError> {
        match &mut self.inner {
            Some(m) => m.matches_concept(o).map_err(|e| self.constraint.error(e)),
            None => Ok(false),
        }
    }
}

/// The concepts passing every constraint (all concepts when there are
/// none), sorted by ordinal.
pub fn evaluate_all<B: AsRef<[u8]>>(
    constraints: &[Constraint],
    ed: &Edition<B>,
    budget: &Budget,
) -> Result<Vec<u32>, ConstraintError> {
    let mut list = constraints.iter();
    let Some(first) = list.next() else {
        return Ok((0..ed.concept_count()).collect());
    };
    let mut set = first.evaluate(ed, budget)?;
    for c in list {
        let other = c.evaluate(ed, budget)?;
        set.retain(|o| other.binary_search(o).is_ok());
    }
    Ok(set)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compose_filters_are_the_ecl_the_module_doc_says() {
        for (p, op, v, ecl) in [
            ("concept", "is-a", "71388002", "<< 71388002"),
            ("concept", "descendent-of", "71388002", "< 71388002"),
            ("concept", "child-of", "71388002", "<! 71388002"),
            ("concept", "generalizes", "71388002", ">> 71388002"),
            ("concept", "=", "71388002", "71388002"),
            ("concept", "in", "734139008", "^ 734139008"),
            ("concept", "not-in", "734139008", "* MINUS ^ 734139008"),
            ("concept", "is-not-a", "71388002", "* MINUS << 71388002"),
            ("parent", "=", "71388002", "<! 71388002"),
            ("child", "=", "71388002", ">! 71388002"),
            (
                "363698007",
                "is-a",
                "71388002",
                "* : 363698007 = << 71388002",
            ),
            (
                "363698007",
                "in",
                "734139008",
                "* : 363698007 = ^ 734139008",
            ),
        ] {
            let f = Constraint::compose(p, op, v).unwrap();
            assert_eq!(*f.ecl, txmap_ecl::parse(ecl).unwrap(), "{p} {op} {v}");
            assert!(!f.is_ecl);
        }
        let f = Constraint::compose("constraint", "=", "<< 71388002 OR << 404684003").unwrap();
        assert!(f.is_ecl);
        for (p, op, v) in [
            ("concept", "regex", "x"),
            ("concept", "is-a", "abc"),
            ("constraint", "=", "<< 1 OR << 2 AND << 3"),
            ("inactive", "=", "maybe"),
        ] {
            let e = Constraint::compose(p, op, v).unwrap_err();
            assert!(
                !matches!(
                    e,
                    ConstraintError::Store(_) | ConstraintError::TooCostly { .. }
                ),
                "{p} {op} {v}: {e:?}"
            );
        }
        assert!(matches!(
            Constraint::compose("constraint", "=", "<< "),
            Err(ConstraintError::InvalidEcl { .. })
        ));
    }
}

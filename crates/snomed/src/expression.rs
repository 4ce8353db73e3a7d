//! Simple SNOMED CT post-coordinated expressions (compositional grammar),
//! as `$lookup` accepts them: one or more focus concepts, optionally
//! refined by attributes, ungrouped or in `{…}` groups, whose values are
//! concepts or concrete values (`#12`, `"text"`). Terms between pipes are
//! allowed and ignored; nested expressions are not supported.

/// A concept reference: its SCTID (the term in pipes is dropped).
pub type ConceptRef = u64;

/// An attribute's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttributeValue {
    Concept(ConceptRef),
    /// As written: `#12.5` or `"text"`.
    Concrete(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attribute {
    pub type_id: ConceptRef,
    pub value: AttributeValue,
}

/// One refinement item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refinement {
    Attribute(Attribute),
    Group(Vec<Attribute>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expression {
    /// `===` or `<<<` when given.
    pub definition_status: Option<&'static str>,
    pub focus: Vec<ConceptRef>,
    pub refinements: Vec<Refinement>,
}

impl Expression {
    /// Every attribute, grouped or not.
    pub fn attributes(&self) -> impl Iterator<Item = &Attribute> {
        self.refinements.iter().flat_map(|r| match r {
            Refinement::Attribute(a) => std::slice::from_ref(a).iter(),
            Refinement::Group(g) => g.iter(),
        })
    }

    /// Every concept the expression names.
    pub fn concepts(&self) -> Vec<ConceptRef> {
        let mut out = self.focus.clone();
        for a in self.attributes() {
            out.push(a.type_id);
            if let AttributeValue::Concept(c) = a.value {
                out.push(c);
            }
        }
        out
    }

    /// The expression written without spaces, each concept followed by
    /// the term `term` gives it in pipes (`id|term|`), or bare.
    pub fn render(&self, term: &dyn Fn(ConceptRef) -> Option<String>) -> String {
        let concept = |c: ConceptRef| match term(c) {
            Some(t) => format!("{c}|{t}|"),
            None => c.to_string(),
        };
        let attribute = |a: &Attribute| {
            let value = match &a.value {
                AttributeValue::Concept(c) => concept(*c),
                AttributeValue::Concrete(s) => s.clone(),
            };
            format!("{}={value}", concept(a.type_id))
        };
        let mut out = String::new();
        if let Some(s) = self.definition_status {
            out.push_str(s);
        }
        let focus: Vec<String> = self.focus.iter().map(|&c| concept(c)).collect();
        out.push_str(&focus.join("+"));
        if !self.refinements.is_empty() {
            out.push(':');
            let items: Vec<String> = self
                .refinements
                .iter()
                .map(|r| match r {
                    Refinement::Attribute(a) => attribute(a),
                    Refinement::Group(g) => {
                        let inner: Vec<String> = g.iter().map(attribute).collect();
                        format!("{{{}}}", inner.join(","))
                    }
                })
                .collect();
            out.push_str(&items.join(","));
        }
        out
    }
}

/// Parses an expression; the error says where it went wrong.
pub fn parse(text: &str) -> Result<Expression, String> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    p.ws();
    let definition_status = if p.eat_str("===") {
        Some("===")
    } else if p.eat_str("<<<") {
        Some("<<<")
    } else {
        None
    };
    let mut focus = vec![p.concept()?];
    while p.eat(b'+') {
        focus.push(p.concept()?);
    }
    let mut refinements = Vec::new();
    if p.eat(b':') {
        loop {
            if p.eat(b'{') {
                let mut group = vec![p.attribute()?];
                while p.eat(b',') {
                    group.push(p.attribute()?);
                }
                if !p.eat(b'}') {
                    return Err(p.error("'}' or ','"));
                }
                refinements.push(Refinement::Group(group));
            } else {
                refinements.push(Refinement::Attribute(p.attribute()?));
            }
            if !p.eat(b',') {
                break;
            }
        }
    }
    if p.i < p.s.len() {
        return Err(p.error("the end of the expression"));
    }
    Ok(Expression {
        definition_status,
        focus,
        refinements,
    })
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.s.get(self.i).is_some_and(|b| b.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    /// Skips whitespace, then `b` if it is next (and whitespace after it).
    fn eat(&mut self, b: u8) -> bool {
        self.ws();
        if self.s.get(self.i) == Some(&b) {
            self.i += 1;
            self.ws();
            true
        } else {
            false
        }
    }

    fn eat_str(&mut self, t: &str) -> bool {
        self.ws();
        if self
            .s
            .get(self.i..)
            .is_some_and(|r| r.starts_with(t.as_bytes()))
        {
            self.i += t.len();
            self.ws();
            true
        } else {
            false
        }
    }

    fn error(&self, wanted: &str) -> String {
        format!("expected {wanted} at character {}", self.i + 1)
    }

    fn concept(&mut self) -> Result<ConceptRef, String> {
        self.ws();
        let start = self.i;
        while self.s.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
        let digits = &self.s[start..self.i];
        if !(6..=18).contains(&digits.len()) {
            self.i = start;
            return Err(self.error("an SCTID"));
        }
        let id = std::str::from_utf8(digits)
            .ok()
            .and_then(|d| d.parse().ok())
            .ok_or_else(|| self.error("an SCTID"))?;
        self.ws();
        if self.s.get(self.i) == Some(&b'|') {
            self.i += 1;
            while self.s.get(self.i).is_some_and(|&b| b != b'|') {
                self.i += 1;
            }
            if self.s.get(self.i) != Some(&b'|') {
                return Err(self.error("'|' closing the term"));
            }
            self.i += 1;
        }
        self.ws();
        Ok(id)
    }

    fn attribute(&mut self) -> Result<Attribute, String> {
        let type_id = self.concept()?;
        if !self.eat(b'=') {
            return Err(self.error("'='"));
        }
        let value = match self.s.get(self.i) {
            Some(b'#') => {
                let start = self.i;
                self.i += 1;
                while self
                    .s
                    .get(self.i)
                    .is_some_and(|b| b.is_ascii_digit() || b"+-.eE".contains(b))
                {
                    self.i += 1;
                }
                if self.i == start + 1 {
                    return Err(self.error("a number"));
                }
                AttributeValue::Concrete(
                    String::from_utf8_lossy(&self.s[start..self.i]).into_owned(),
                )
            }
            Some(b'"') => {
                let start = self.i;
                self.i += 1;
                while self.s.get(self.i).is_some_and(|&b| b != b'"') {
                    self.i += 1;
                }
                if self.s.get(self.i) != Some(&b'"') {
                    return Err(self.error("'\"' closing the string"));
                }
                self.i += 1;
                AttributeValue::Concrete(
                    String::from_utf8_lossy(&self.s[start..self.i]).into_owned(),
                )
            }
            Some(b'(') => return Err("nested expressions are not supported".into()),
            _ => AttributeValue::Concept(self.concept()?),
        };
        self.ws();
        Ok(Attribute { type_id, value })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions_parse_and_render() {
        let e = parse("367430006:{272741003=24028007}").unwrap();
        assert_eq!(e.focus, [367430006]);
        assert_eq!(e.concepts(), [367430006, 272741003, 24028007]);
        let terms = |c: u64| match c {
            367430006 => Some("Repair of tendon of hand".to_owned()),
            272741003 => Some("Laterality".to_owned()),
            24028007 => Some("Right".to_owned()),
            _ => None,
        };
        assert_eq!(
            e.render(&terms),
            "367430006|Repair of tendon of hand|:{272741003|Laterality|=24028007|Right|}"
        );
        let e = parse(" === 1234567 |x| + 2345678 : 3456789 |y| = #12.5 , { 4567890 = \"a b\" } ")
            .unwrap();
        assert_eq!(e.definition_status, Some("==="));
        assert_eq!(
            e.render(&|_| None),
            "===1234567+2345678:3456789=#12.5,{4567890=\"a b\"}"
        );
        for bad in [
            "",
            "12",
            "1234567:",
            "1234567:{2345678=3456789",
            "1234567 x",
            "1234567:2345678=(3456789)",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}

//! `CodeSystem/$subsumes`: how two codes of one code system relate in
//! its hierarchy — `equivalent`, `subsumes` (A is an ancestor of B),
//! `subsumed-by` or `not-subsumed`.
//!
//! The codes come from `codeA`/`codeB` or `codingA`/`codingB`; the code
//! system from `system` or the codings (all that are given must agree),
//! its version from `version` or the codings.

use crate::error::Error;
use crate::parameters::{Param, Parameters};
use crate::params::{Params, merge};
use crate::request::Request;

/// The two codes, the system and the version a `$subsumes` names.
#[derive(Debug, PartialEq, Eq)]
pub struct Pair<'a> {
    pub code_a: &'a str,
    pub code_b: &'a str,
    /// Required by the generic engine; a code system may infer it.
    pub system: Option<&'a str>,
    pub version: Option<&'a str>,
}

/// Reads a `$subsumes` request: both codes are required; what is given
/// twice must agree.
pub fn pair(params: &Params) -> Result<Pair<'_>, Error> {
    let coding_a = params.coding("codingA")?;
    let coding_b = params.coding("codingB")?;
    let code_a = merge(
        "codeA",
        params.text("codeA")?,
        coding_a.and_then(|c| c.code.as_deref()),
    )?
    .ok_or(Error::Required("codeA"))?;
    let code_b = merge(
        "codeB",
        params.text("codeB")?,
        coding_b.and_then(|c| c.code.as_deref()),
    )?
    .ok_or(Error::Required("codeB"))?;
    let system = merge(
        "system",
        params.text("system")?,
        merge(
            "system",
            coding_a.and_then(|c| c.system.as_deref()),
            coding_b.and_then(|c| c.system.as_deref()),
        )?,
    )?;
    let version = merge(
        "version",
        params.text("version")?,
        merge(
            "version",
            coding_a.and_then(|c| c.version.as_deref()),
            coding_b.and_then(|c| c.version.as_deref()),
        )?,
    )?;
    Ok(Pair {
        code_a,
        code_b,
        system,
        version,
    })
}

/// `$subsumes` in any code system the request can see.
pub fn subsumes(req: &Request) -> Result<Parameters<'static>, Error> {
    let asked = pair(&req.params)?;
    let engine = crate::engine::Engine::new(&req.resolver, usize::MAX, false).with_stop(req.stop());
    let system = asked.system.ok_or(Error::Required("system"))?;
    let cs = engine.code_system(system, asked.version)?;
    let find = |code: &str| {
        cs.locate(code)
            .map(|l| l.id)
            .ok_or_else(|| Error::UnknownCode {
                system: cs.versioned_url(),
                code: code.to_owned(),
            })
    };
    answer(find(asked.code_a)?, find(asked.code_b)?, |x, y| {
        Ok(cs.subsumed_by(y, x))
    })
}

/// The answer for concepts `a` and `b` of one code system, given
/// `subsumes(x, y)`: whether `x` is a proper ancestor of `y`.
pub fn answer<C: PartialEq + Copy>(
    a: C,
    b: C,
    subsumes: impl Fn(C, C) -> Result<bool, Error>,
) -> Result<Parameters<'static>, Error> {
    let outcome = if a == b {
        "equivalent"
    } else if subsumes(a, b)? {
        "subsumes"
    } else if subsumes(b, a)? {
        "subsumed-by"
    } else {
        "not-subsumed"
    };
    Ok(Parameters(vec![Param::text(
        "outcome",
        "valueCode",
        outcome,
    )]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A code system with a → b → c (c is-a b is-a a) and a lone d.
    fn request(a: &str, b: &str) -> Request {
        Request::new(json!({"resourceType": "Parameters", "parameter": [
            {"name": "system", "valueUri": "http://example.org/cs"},
            {"name": "codeA", "valueCode": a},
            {"name": "codeB", "valueCode": b},
            {"name": "tx-resource", "resource": {
                "resourceType": "CodeSystem", "url": "http://example.org/cs", "status": "active",
                "content": "complete", "hierarchyMeaning": "is-a",
                "concept": [
                    {"code": "a", "concept": [{"code": "b", "concept": [{"code": "c"}]}]},
                    {"code": "d"},
                ]}},
        ]}))
    }

    fn outcome(a: &str, b: &str) -> Result<String, Error> {
        let p = subsumes(&request(a, b))?;
        Ok(p.get("outcome")
            .and_then(Param::text_value)
            .unwrap_or_default()
            .to_owned())
    }

    #[test]
    fn relations_follow_the_hierarchy() {
        assert_eq!(outcome("a", "a").unwrap(), "equivalent");
        assert_eq!(outcome("a", "c").unwrap(), "subsumes");
        assert_eq!(outcome("c", "a").unwrap(), "subsumed-by");
        assert_eq!(outcome("b", "d").unwrap(), "not-subsumed");
        assert!(matches!(
            outcome("a", "zz"),
            Err(Error::UnknownCode { code, .. }) if code == "zz"
        ));
    }

    #[test]
    fn the_system_is_required_and_must_agree() {
        let req = Request::new(json!({"resourceType": "Parameters", "parameter": [
            {"name": "codeA", "valueCode": "a"}, {"name": "codeB", "valueCode": "b"}]}));
        assert!(matches!(subsumes(&req), Err(Error::Required("system"))));
        let req = Request::new(json!({"resourceType": "Parameters", "parameter": [
            {"name": "system", "valueUri": "http://x"},
            {"name": "codingA", "valueCoding": {"system": "http://y", "code": "a"}},
            {"name": "codeB", "valueCode": "b"}]}));
        assert!(pair(&req.params).is_err());
    }
}

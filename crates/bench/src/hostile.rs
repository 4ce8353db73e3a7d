//! Hostile requests against a running server: a seeded generator of
//! requests meant to hurt — malformed and truncated JSON, wrong types,
//! huge parameter counts, invalid SCTIDs, deep and expensive ECL,
//! recursive and exponential imports, backtracking regexes, huge and
//! cyclic CodeSystems, huge bodies and URLs, bad percent-encoding, wrong
//! methods, incomplete requests — over every endpoint, and a judge of
//! each answer (issue 14).
//!
//! Each request goes on its own connection (`Connection: close`), written
//! as raw bytes so that broken HTTP can be sent too, and the answer is read
//! to the end. A request breaks the rules when the server answers 5xx
//! other than 503, answers a FHIR request's refusal with anything but an
//! `OperationOutcome`, takes longer than its budget plus a second, or when
//! a connection the client completed gets no answer at all. After the run
//! the server must still be alive, its memory guard's measure under its
//! limit, and `$lookup` must answer 200.
//!
//! Status and time are not enough (issue 31: padded codes validated as
//! true, damaged files answered "unknown", paging links wrapped, all with
//! 200s in time), so the categories whose right answer is known check the
//! answer itself ([`Expect`]): padded codes and SCTIDs with leading zeros
//! must be invalid (FHIR's `code` type); codes read from the edition's RF2
//! Snapshot (`--rf2`, read here independently of the server) must look up
//! and validate as the RF2 says; searches must page without wrapping and
//! list every resource under its own `fullUrl`; files the operator took
//! out of service (`--out-of-service`) must be 503 on every path; a
//! fresh connection must reach `/health` while many idle connections are
//! held; and the pages people read (`pages`: search, suggestions, the
//! ECL workbench, concept and resource pages) must show markup they are
//! given escaped, whatever their status, and answer deep or costly input
//! within their budget.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::BenchError;
use crate::http::Target;

/// What to run.
#[derive(Clone, Debug)]
pub struct HostileOptions {
    pub requests: usize,
    pub seed: u64,
    /// Client threads.
    pub connections: usize,
    /// The server's `request_seconds`: no answer may take longer than
    /// this plus a second.
    pub budget: Duration,
    /// A SNOMED CT code the server's default edition has.
    pub code: String,
    /// Concepts of the default edition and whether each is active, read
    /// from its RF2 Snapshot: the right answers of `known-codes`.
    pub known: Vec<(String, bool)>,
    /// Code systems whose files are out of service (damaged): every
    /// request that needs one must be a 503.
    pub out_of_service: Vec<OutOfService>,
}

/// A code system the server holds in a file that is out of service.
#[derive(Clone, Debug)]
pub struct OutOfService {
    pub system: String,
    /// The version to ask for (a second SNOMED CT edition), if any.
    pub version: Option<String>,
    /// A code of it.
    pub code: String,
}

impl OutOfService {
    /// `SYSTEM|CODE` or `SYSTEM|VERSION|CODE`.
    pub fn parse(s: &str) -> Option<OutOfService> {
        let parts: Vec<&str> = s.split('|').collect();
        match parts.as_slice() {
            [system, code] => Some(OutOfService {
                system: (*system).to_owned(),
                version: None,
                code: (*code).to_owned(),
            }),
            [system, version, code] => Some(OutOfService {
                system: (*system).to_owned(),
                version: Some((*version).to_owned()),
                code: (*code).to_owned(),
            }),
            _ => None,
        }
    }
}

/// The concepts of an RF2 Snapshot's concept file under `dir` (searched
/// recursively), with their active flags: read here, not through the
/// server, so that its answers can be checked.
pub fn known_concepts(dir: &std::path::Path) -> std::io::Result<Vec<(String, bool)>> {
    fn find(dir: &std::path::Path) -> Option<std::path::PathBuf> {
        for e in std::fs::read_dir(dir).ok()?.flatten() {
            let p = e.path();
            if p.is_dir() {
                if let Some(f) = find(&p) {
                    return Some(f);
                }
            } else if p
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("sct2_Concept_") && n.contains("Snapshot"))
            {
                return Some(p);
            }
        }
        None
    }
    let file = find(dir).ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("{}: no sct2_Concept_*Snapshot* file", dir.display()),
        )
    })?;
    let text = std::fs::read_to_string(&file)?;
    // The latest row of each concept wins (a Snapshot has one).
    let mut by_id = std::collections::BTreeMap::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() >= 3 {
            by_id.insert(f[0].to_owned(), f[2] == "1");
        }
    }
    Ok(by_id.into_iter().collect())
}

/// The categories of hostile requests, each a generator; `known-codes`
/// and `out-of-service` run only when their facts are given.
pub const CATEGORIES: [&str; 24] = [
    "padded-codes",
    "pages",
    "search-paging",
    "idle-connections",
    "known-codes",
    "out-of-service",
    "malformed-json",
    "truncated-json",
    "wrong-types",
    "many-parameters",
    "invalid-sctid",
    "deep-ecl",
    "expensive-ecl",
    "recursive-imports",
    "exponential-imports",
    "regex",
    "grammar-codes",
    "big-codesystem",
    "cyclic-codesystem",
    "huge-body",
    "huge-url",
    "bad-encoding",
    "wrong-method",
    "unauthorized-writes",
];

/// Raw-HTTP categories: incomplete requests, which have no answer to
/// judge; the server must only survive them.
pub const RAW: [&str; 3] = ["incomplete-headers", "short-body", "garbage"];

/// One broken rule.
#[derive(Clone, Debug)]
pub struct Violation {
    pub category: &'static str,
    pub request: String,
    pub what: String,
}

/// What a run found.
#[derive(Debug, Default)]
pub struct HostileReport {
    pub sent: usize,
    pub by_status: std::collections::BTreeMap<String, usize>,
    pub by_category: std::collections::BTreeMap<&'static str, usize>,
    pub violations: Vec<Violation>,
    pub slowest_ms: f64,
    pub seconds: f64,
    pub after: Value,
}

impl HostileReport {
    pub fn to_json(&self) -> Value {
        json!({
            "sent": self.sent,
            "byStatus": self.by_status,
            "byCategory": self.by_category,
            "violations": self.violations.iter().take(50).map(|v| json!({
                "category": v.category, "request": v.request, "what": v.what,
            })).collect::<Vec<_>>(),
            "violationCount": self.violations.len(),
            "slowestMs": self.slowest_ms,
            "seconds": self.seconds,
            "after": self.after,
        })
    }
}

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, list: &'a [T]) -> &'a T {
        &list[self.below(list.len())]
    }
}

const SCT: &str = "http://snomed.info/sct";

/// A request: method, path and query, body, and whether it is a FHIR
/// operation (whose refusals must be OperationOutcomes).
struct Req {
    method: &'static str,
    target: String,
    body: Option<Vec<u8>>,
    content_type: &'static str,
    /// What the answer must be, when that is known.
    expect: Expect,
}

/// The right answer to a request, where it is known.
#[derive(Clone, Debug, PartialEq)]
enum Expect {
    /// Only the general rules.
    Any,
    /// 200, and every `result` of the Parameters (a batch's too) is this.
    Result(bool),
    /// One of these statuses.
    Status(&'static [u16]),
    /// A 503 OperationOutcome (or, in a batch, each validation's
    /// `transient` OperationOutcome).
    Unavailable,
    /// A searchset that pages: unique `fullUrl`s, at most `count`
    /// entries, no link past the total or back to before itself.
    Paging { count: usize },
    /// A page: whatever its status, the input it was given appears only
    /// escaped (this raw text never).
    Escaped(&'static str),
}

fn get(target: String) -> Req {
    Req {
        method: "GET",
        target,
        body: None,
        content_type: "",
        expect: Expect::Any,
    }
}

fn post(path: &str, body: Vec<u8>) -> Req {
    Req {
        method: "POST",
        target: path.to_owned(),
        body: Some(body),
        content_type: "application/fhir+json",
        expect: Expect::Any,
    }
}

impl Req {
    fn expect(mut self, e: Expect) -> Req {
        self.expect = e;
        self
    }
}

/// Every `result` of an answer (a batch's validations' too).
fn results(v: &Value, out: &mut Vec<bool>) {
    for p in v["parameter"].as_array().into_iter().flatten() {
        if p["name"] == "result" {
            out.extend(p["valueBoolean"].as_bool());
        }
        if let Some(r) = p.get("resource") {
            results(r, out);
        }
    }
}

/// Why an answer is not the right one, if it is not.
fn judge(expect: &Expect, status: u16, body: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let short = || {
        String::from_utf8_lossy(body)
            .chars()
            .take(300)
            .collect::<String>()
    };
    // Refused for load — the time budget spent waiting (422 too-costly),
    // the memory guard (503 transient) — is not an answer, so not a wrong
    // one; a 200 must be right.
    let issue = v["issue"][0]["code"].as_str();
    let refused = (status == 422 && issue == Some("too-costly"))
        || (status == 503 && issue == Some("transient") && *expect != Expect::Unavailable);
    if refused {
        return None;
    }
    match expect {
        Expect::Any => None,
        Expect::Result(want) => {
            if status != 200 {
                return Some(format!(
                    "status {status}, wanted 200 with result {want}: {}",
                    short()
                ));
            }
            let mut got = Vec::new();
            results(&v, &mut got);
            (got.is_empty() || got.iter().any(|r| r != want))
                .then(|| format!("result {got:?}, wanted {want}: {}", short()))
        }
        Expect::Escaped(raw) => String::from_utf8_lossy(body)
            .contains(raw)
            .then(|| format!("status {status}: the page shows {raw:?} unescaped")),
        Expect::Status(list) => (!list.contains(&status))
            .then(|| format!("status {status}, wanted one of {list:?}: {}", short())),
        Expect::Unavailable => {
            let batch = v["resourceType"] == "Parameters";
            let ok = if batch {
                status == 200
                    && v["parameter"].as_array().is_some_and(|ps| {
                        ps.iter()
                            .all(|p| p["resource"]["issue"][0]["code"] == "transient")
                    })
            } else {
                status == 503 && v["resourceType"] == "OperationOutcome"
            };
            (!ok).then(|| format!("status {status}, wanted 503 (out of service): {}", short()))
        }
        Expect::Paging { count } => {
            if status == 400 {
                return None;
            }
            if status != 200 || v["resourceType"] != "Bundle" {
                return Some(format!("status {status}, wanted a Bundle: {}", short()));
            }
            let total = v["total"].as_u64();
            let entries = v["entry"].as_array().map_or(0, Vec::len);
            if entries > *count {
                return Some(format!("{entries} entries for _count={count}"));
            }
            let urls: Vec<&str> = v["entry"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| e["fullUrl"].as_str())
                .collect();
            let unique: std::collections::HashSet<&&str> = urls.iter().collect();
            if unique.len() != urls.len() {
                return Some("two entries share a fullUrl".into());
            }
            let offset = |rel: &str| {
                v["link"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|l| l["relation"] == rel)
                    .map(|l| {
                        l["url"]
                            .as_str()
                            .unwrap_or_default()
                            .split(['?', '&'])
                            .find_map(|p| p.strip_prefix("_offset="))
                            .and_then(|o| o.parse::<u64>().ok())
                            .unwrap_or(0)
                    })
            };
            let this = offset("self").unwrap_or(0);
            match (offset("next"), total) {
                (Some(n), _) if n <= this => Some(format!("next link at {n}, not after {this}")),
                (Some(n), Some(t)) if n >= t => {
                    Some(format!("next link at {n}, past the total {t}"))
                }
                _ => None,
            }
        }
    }
}

fn parameters(list: Vec<Value>) -> Vec<u8> {
    json!({"resourceType": "Parameters", "parameter": list})
        .to_string()
        .into_bytes()
}

/// The operation endpoints, under `/r4` or `/r5`.
const OPS: [&str; 8] = [
    "CodeSystem/$lookup",
    "CodeSystem/$subsumes",
    "CodeSystem/$validate-code",
    "ValueSet/$validate-code",
    "ValueSet/$expand",
    "ValueSet/$batch-validate-code",
    "ValueSet/$compare",
    "ConceptMap/$translate",
];

fn base(rng: &mut Rng) -> &'static str {
    if rng.below(2) == 0 { "/r4" } else { "/r5" }
}

/// A chain of `n` value sets, each importing the next.
fn import_chain(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let compose = if i + 1 < n {
                json!({"include": [{"valueSet": [format!("http://example.org/vs{}", i + 1)]}]})
            } else {
                json!({"include": [{"system": SCT, "concept": [{"code": "138875005"}]}]})
            };
            json!({"name": "tx-resource", "resource": {"resourceType": "ValueSet",
                "url": format!("http://example.org/vs{i}"), "status": "active", "compose": compose}})
        })
        .collect()
}

/// A value set importing two value sets at each of `depth` levels, each
/// level the same two: 2^depth paths to the bottom.
fn import_diamond(depth: usize) -> Vec<Value> {
    let mut out = Vec::new();
    for level in 0..depth {
        for side in 0..2 {
            let compose = if level + 1 < depth {
                json!({"include": [{"valueSet": [
                    format!("http://example.org/d{}a", level + 1),
                    format!("http://example.org/d{}b", level + 1)]}]})
            } else {
                json!({"include": [{"system": SCT, "filter": [{"property": "concept", "op": "is-a", "value": "138875005"}]}]})
            };
            let name = format!("http://example.org/d{level}{}", ["a", "b"][side]);
            out.push(
                json!({"name": "tx-resource", "resource": {"resourceType": "ValueSet",
                "url": name, "status": "active", "compose": compose}}),
            );
        }
    }
    out
}

fn codesystem(concepts: Vec<Value>) -> Value {
    json!({"resourceType": "CodeSystem", "url": "http://example.org/hostile", "status": "active",
        "content": "complete", "hierarchyMeaning": "is-a",
        "property": [{"code": "parent", "type": "code"}], "concept": concepts})
}

/// A code padded as a careless client or an attacker pads it, or an
/// SCTID with leading zeros: never a code (FHIR's `code` type).
fn padded(rng: &mut Rng, code: &str, sctid: bool) -> String {
    let n = if sctid { 7 } else { 5 };
    match rng.below(n) {
        0 => format!(" {code}"),
        1 => format!("{code}\n"),
        2 => format!("\t{code}"),
        3 => format!("\u{a0}{code}"),
        4 => format!("{code} "),
        5 => format!("0{code}"),
        _ => format!("000{code}"),
    }
}

/// The request of one category.
fn make(category: &str, rng: &mut Rng, options: &HostileOptions) -> Req {
    let code = options.code.as_str();
    let b = base(rng);
    let op = |rng: &mut Rng| format!("{b}/{}", rng.pick(&OPS));
    let lookup = json!([{"name": "system", "valueUri": SCT}, {"name": "code", "valueCode": code}]);
    match category {
        "padded-codes" => {
            let systems = [
                (SCT, code),
                ("http://unitsofmeasure.org", "mg"),
                ("urn:ietf:bcp:47", "en"),
                ("urn:iso:std:iso:3166", "NZ"),
            ];
            let (system, plain) = *rng.pick(&systems);
            let bad = padded(rng, plain, system == SCT);
            let whitespace =
                bad.starts_with(char::is_whitespace) || bad.ends_with(char::is_whitespace);
            match rng.below(4) {
                0 => post(
                    &format!("{b}/CodeSystem/$validate-code"),
                    parameters(vec![
                        json!({"name": "url", "valueUri": system}),
                        json!({"name": "code", "valueCode": bad}),
                    ]),
                )
                .expect(Expect::Result(false)),
                1 => post(
                    &format!("{b}/ValueSet/$validate-code"),
                    parameters(vec![
                        json!({"name": "valueSet", "resource": {"resourceType": "ValueSet", "status": "active",
                            "compose": {"include": [{"system": system}]}}}),
                        json!({"name": "coding", "valueCoding": {"system": system, "code": bad}}),
                    ]),
                )
                .expect(Expect::Result(false)),
                2 => post(
                    &format!("{b}/ValueSet/$batch-validate-code"),
                    parameters(vec![
                        json!({"name": "valueSet", "resource": {"resourceType": "ValueSet", "status": "active",
                            "compose": {"include": [{"system": system}]}}}),
                        json!({"name": "validation", "resource": {"resourceType": "Parameters", "parameter": [
                            {"name": "coding", "valueCoding": {"system": system, "code": bad}}]}}),
                    ]),
                )
                .expect(Expect::Result(false)),
                _ => post(
                    &format!("{b}/CodeSystem/$lookup"),
                    parameters(vec![
                        json!({"name": "system", "valueUri": system}),
                        json!({"name": "code", "valueCode": bad}),
                    ]),
                )
                // White space: not a code (400); leading zeros: no such
                // SCTID (404).
                .expect(Expect::Status(if whitespace { &[400] } else { &[404] })),
            }
        }
        "search-paging" => {
            let kind = rng.pick(&["CodeSystem", "ValueSet", "ConceptMap"]);
            let offsets = [
                "18446744073709551615".to_owned(),
                "18446744073709551611".to_owned(),
                "9223372036854775808".to_owned(),
                rng.below(5000).to_string(),
                "0".to_owned(),
            ];
            let offset = rng.pick(&offsets).clone();
            let count = *rng.pick(&[0usize, 1, 5, 100, 1000, 5000]);
            let extra = rng.pick(&[
                "",
                "&_summary=true",
                "&_elements=url",
                "&_total=none",
                "&name=a",
            ]);
            get(format!("{b}/{kind}?_offset={offset}&_count={count}{extra}")).expect(
                Expect::Paging {
                    count: count.min(1000),
                },
            )
        }
        "known-codes" if !options.known.is_empty() => {
            let (known, active) = rng.pick(&options.known).clone();
            match rng.below(3) {
                // Every concept of the release looks up.
                0 => get(format!("{b}/CodeSystem/$lookup?system={SCT}&code={known}"))
                    .expect(Expect::Status(&[200])),
                // An active concept is in the implicit value set of all
                // concepts; an inactive one is a code all the same.
                1 if active => get(format!(
                    "{b}/ValueSet/$validate-code?url={SCT}%3Ffhir_vs&system={SCT}&code={known}"
                ))
                .expect(Expect::Result(true)),
                1 => get(format!(
                    "{b}/CodeSystem/$validate-code?url={SCT}&code={known}"
                ))
                .expect(Expect::Result(true)),
                // The last digit changed: the Verhoeff check fails, so it
                // is no SCTID.
                _ => {
                    let (head, last) = known.split_at(known.len() - 1);
                    let other = (last.parse::<u8>().unwrap_or(0) + 1) % 10;
                    get(format!(
                        "{b}/CodeSystem/$validate-code?url={SCT}&code={head}{other}"
                    ))
                    .expect(Expect::Result(false))
                }
            }
        }
        "out-of-service" if !options.out_of_service.is_empty() => {
            let f = rng.pick(&options.out_of_service).clone();
            let version = f.version.clone();
            let vs = json!({"resourceType": "ValueSet", "status": "active", "url": "http://example.org/oos",
                "compose": {"include": [{"system": f.system, "version": version}]}});
            let coding = json!({"system": f.system, "version": version, "code": f.code});
            let req = match rng.below(5) {
                0 => post(
                    &format!("{b}/CodeSystem/$lookup"),
                    parameters(vec![json!({"name": "coding", "valueCoding": coding})]),
                ),
                1 => post(
                    &format!("{b}/CodeSystem/$validate-code"),
                    parameters(vec![json!({"name": "coding", "valueCoding": coding})]),
                ),
                2 => post(
                    &format!("{b}/ValueSet/$validate-code"),
                    parameters(vec![
                        json!({"name": "valueSet", "resource": vs}),
                        json!({"name": "coding", "valueCoding": coding}),
                    ]),
                ),
                3 => post(
                    &format!("{b}/ValueSet/$expand"),
                    parameters(vec![
                        json!({"name": "valueSet", "resource": vs}),
                        json!({"name": "count", "valueInteger": 5}),
                    ]),
                ),
                _ => post(
                    &format!("{b}/ValueSet/$batch-validate-code"),
                    parameters(vec![
                        json!({"name": "valueSet", "resource": vs}),
                        json!({"name": "validation", "resource": {"resourceType": "Parameters",
                            "parameter": [{"name": "coding", "valueCoding": coding}]}}),
                    ]),
                ),
            };
            req.expect(Expect::Unavailable)
        }
        "malformed-json" => {
            let bodies: [&[u8]; 8] = [
                b"{",
                b"{\"resourceType\":\"Parameters\",\"parameter\":[{]}",
                b"null",
                b"[1,2,3]",
                b"\"Parameters\"",
                b"{\"resourceType\":\"Patient\"}",
                b"\xff\xfe\x00garbage",
                b"{\"resourceType\":\"Parameters\",\"parameter\":[{\"name\":\"code\",\"valueCode\":\"\\ud800\"}]}",
            ];
            post(&op(rng), rng.pick(&bodies).to_vec())
        }
        "truncated-json" => {
            let full = parameters(vec![
                json!({"name": "url", "valueUri": format!("{SCT}?fhir_vs=isa/{code}")}),
                json!({"name": "system", "valueUri": SCT}),
                json!({"name": "code", "valueCode": code}),
            ]);
            let cut = 1 + rng.below(full.len() - 1);
            post(&op(rng), full[..cut].to_vec())
        }
        "wrong-types" => {
            let bodies = [
                json!({"resourceType": "Parameters", "parameter": {"name": "code"}}),
                json!({"resourceType": "Parameters", "parameter": [{"valueCode": "x"}]}),
                json!({"resourceType": "Parameters", "parameter": [{"name": 7, "valueCode": "x"}]}),
                json!({"resourceType": "Parameters", "parameter": [{"name": "coding", "valueCoding": "not a coding"}]}),
                json!({"resourceType": "Parameters", "parameter": [{"name": "codeableConcept", "valueCodeableConcept": {"coding": "x"}}]}),
                json!({"resourceType": "Parameters", "parameter": [{"name": "valueSet", "resource": {"resourceType": "ValueSet", "compose": {"include": "all"}}}]}),
                json!({"resourceType": "Parameters", "parameter": [{"name": "count", "valueInteger": -5}, {"name": "url", "valueUri": SCT}]}),
                json!({"resourceType": "Parameters", "parameter": [{"name": "tx-resource", "resource": {"resourceType": "CodeSystem", "url": 5, "concept": [{"code": {"x": 1}}]}}]}),
            ];
            post(&op(rng), rng.pick(&bodies).to_string().into_bytes())
        }
        "many-parameters" => {
            let n = 1000 + rng.below(40_000);
            let list: Vec<Value> = (0..n)
                .map(|i| json!({"name": if i % 2 == 0 { "property" } else { "code" }, "valueCode": i.to_string()}))
                .chain(lookup.as_array().cloned().unwrap_or_default())
                .collect();
            post(&op(rng), parameters(list))
        }
        "invalid-sctid" => {
            let codes = [
                "0",
                "-1",
                "12345678901234567890123",
                "1234567",
                "abc",
                "138875005 ",
                "%00",
                "138875005|x|",
                "999999999999999999",
                "1e9",
            ];
            let c = rng.pick(&codes);
            let enc: String = c
                .bytes()
                .map(|b| {
                    if b.is_ascii_alphanumeric() {
                        (b as char).to_string()
                    } else {
                        format!("%{b:02X}")
                    }
                })
                .collect();
            get(format!(
                "{b}/{}?system={SCT}&code={enc}&codeA={enc}&codeB={code}&url={SCT}%3Ffhir_vs",
                rng.pick(&OPS[..5])
            ))
        }
        "grammar-codes" => {
            // Codes that a grammar must refuse at once, however deep or
            // long: UCUM, BCP-47, media types, HGVS (and ISO 3166's list).
            let systems = [
                "http://unitsofmeasure.org",
                "urn:ietf:bcp:47",
                "urn:ietf:bcp:13",
                "http://varnomen.hgvs.org",
                "urn:iso:std:iso:3166",
            ];
            let system = rng.pick(&systems);
            let n = 1 + rng.below(30_000);
            let codes = [
                format!("{}m{}", "(".repeat(n), ")".repeat(n)),
                "m.".repeat(n) + "m",
                "[".repeat(n),
                format!("{{{}}}", "x".repeat(n)),
                format!("en{}", "-x".repeat(n)),
                format!("text/plain{}", "; a=b".repeat(n % 5000)),
                "10*".repeat(n),
                format!("NM_004006.2:c.{}", "[76A>C;".repeat(n % 5000)),
                format!("NC_000023.11:g.{}", "(".repeat(n)),
                "\u{0}".repeat(n % 100 + 1),
            ];
            let code = rng.pick(&codes).clone();
            let vs = json!({"resourceType": "ValueSet", "status": "active",
                "compose": {"include": [{"system": system}]}});
            match rng.below(3) {
                0 => post(
                    &format!("{b}/CodeSystem/$validate-code"),
                    parameters(vec![
                        json!({"name": "url", "valueUri": system}),
                        json!({"name": "code", "valueCode": code}),
                    ]),
                ),
                1 => post(
                    &format!("{b}/ValueSet/$validate-code"),
                    parameters(vec![
                        json!({"name": "valueSet", "resource": vs}),
                        json!({"name": "system", "valueUri": system}),
                        json!({"name": "code", "valueCode": code}),
                    ]),
                ),
                _ => post(
                    &format!("{b}/ValueSet/$expand"),
                    parameters(vec![json!({"name": "valueSet", "resource": vs})]),
                ),
            }
        }
        "deep-ecl" => {
            let depth = 100 + rng.below(20_000);
            let ecl = format!("{}{code}{}", "(".repeat(depth), ")".repeat(depth));
            let url = format!("{SCT}?fhir_vs=ecl/{ecl}");
            post(
                &format!("{b}/ValueSet/$expand"),
                parameters(vec![
                    json!({"name": "url", "valueUri": url}),
                    json!({"name": "count", "valueInteger": 1}),
                ]),
            )
        }
        "expensive-ecl" => {
            let ecls = [
                "< 138875005 : * = *".to_owned(),
                "(< 138875005 OR << 138875005) MINUS (<< 404684003 AND < 138875005)".to_owned(),
                "<< 138875005 : [0..*] * = (<< 138875005 : * = << 138875005)".to_owned(),
                "< 138875005 {{ term = wild:\"*a*a*a*a*a*a*\" }}".to_owned(),
                (0..200)
                    .map(|_| "<< 138875005")
                    .collect::<Vec<_>>()
                    .join(" OR "),
            ];
            let url = format!("{SCT}?fhir_vs=ecl/{}", rng.pick(&ecls));
            post(
                &format!("{b}/ValueSet/$expand"),
                parameters(vec![json!({"name": "url", "valueUri": url})]),
            )
        }
        "recursive-imports" => {
            let n = *rng.pick(&[65, 300, 1200, 2000]);
            let mut list = vec![json!({"name": "url", "valueUri": "http://example.org/vs0"})];
            list.extend(import_chain(n));
            if rng.below(2) == 0 {
                list.push(json!({"name": "system", "valueUri": SCT}));
                list.push(json!({"name": "code", "valueCode": code}));
                post(&format!("{b}/ValueSet/$validate-code"), parameters(list))
            } else {
                post(&format!("{b}/ValueSet/$expand"), parameters(list))
            }
        }
        "exponential-imports" => {
            let depth = 20 + rng.below(30);
            let mut list = vec![json!({"name": "url", "valueUri": "http://example.org/d0a"})];
            list.extend(import_diamond(depth));
            post(&format!("{b}/ValueSet/$expand"), parameters(list))
        }
        "regex" => {
            let patterns = [
                "(a+)+$",
                "(a|aa)+b",
                "([a-z]+)*[0-9]",
                "(.*a){20}",
                "[",
                "(?<x>a)\\k<x>",
                "a{100000}",
            ];
            let concepts: Vec<Value> = (0..2000)
                .map(|i| json!({"code": format!("{}{i}", "a".repeat(30))}))
                .collect();
            let vs = json!({"resourceType": "ValueSet", "url": "http://example.org/rx", "status": "active",
                "compose": {"include": [{"system": "http://example.org/hostile",
                    "filter": [{"property": "code", "op": "regex", "value": rng.pick(&patterns)}]}]}});
            post(
                &format!("{b}/ValueSet/$expand"),
                parameters(vec![
                    json!({"name": "url", "valueUri": "http://example.org/rx"}),
                    json!({"name": "tx-resource", "resource": codesystem(concepts)}),
                    json!({"name": "tx-resource", "resource": vs}),
                ]),
            )
        }
        "big-codesystem" => {
            let n = 50_000 + rng.below(150_000);
            let concepts: Vec<Value> = (0..n).map(|i| json!({"code": format!("c{i}")})).collect();
            let vs = json!({"resourceType": "ValueSet", "url": "http://example.org/big", "status": "active",
                "compose": {"include": [{"system": "http://example.org/hostile"}]}});
            post(
                &format!("{b}/ValueSet/{}", rng.pick(&["$expand", "$validate-code"])),
                parameters(vec![
                    json!({"name": "url", "valueUri": "http://example.org/big"}),
                    json!({"name": "system", "valueUri": "http://example.org/hostile"}),
                    json!({"name": "code", "valueCode": "c7"}),
                    json!({"name": "tx-resource", "resource": codesystem(concepts)}),
                    json!({"name": "tx-resource", "resource": vs}),
                ]),
            )
        }
        "cyclic-codesystem" => {
            // a → b → c → a by `parent`, and nested concepts that say the
            // same, with an is-a filter over the cycle.
            let n = 3 + rng.below(2000);
            let concepts: Vec<Value> = (0..n)
                .map(|i| json!({"code": format!("k{i}"), "property": [{"code": "parent", "valueCode": format!("k{}", (i + 1) % n)}]}))
                .collect();
            let vs = json!({"resourceType": "ValueSet", "url": "http://example.org/cyc", "status": "active",
                "compose": {"include": [{"system": "http://example.org/hostile",
                    "filter": [{"property": "concept", "op": "is-a", "value": "k0"}]}]}});
            let op = rng.pick(&[
                "ValueSet/$expand",
                "CodeSystem/$subsumes",
                "CodeSystem/$lookup",
            ]);
            post(
                &format!("{b}/{op}"),
                parameters(vec![
                    json!({"name": "url", "valueUri": "http://example.org/cyc"}),
                    json!({"name": "system", "valueUri": "http://example.org/hostile"}),
                    json!({"name": "code", "valueCode": "k1"}),
                    json!({"name": "codeA", "valueCode": "k0"}),
                    json!({"name": "codeB", "valueCode": format!("k{}", n - 1)}),
                    json!({"name": "tx-resource", "resource": codesystem(concepts)}),
                    json!({"name": "tx-resource", "resource": vs}),
                ]),
            )
        }
        "huge-body" => {
            let mut body = parameters(vec![lookup.clone()]);
            body.truncate(body.len() - 2);
            body.extend(std::iter::repeat_n(b' ', (9 << 20) + rng.below(8 << 20)));
            body.extend_from_slice(b"]}");
            post(&format!("{b}/CodeSystem/$lookup"), body)
        }
        "huge-url" => {
            let n = 10_000 + rng.below(200_000);
            get(format!(
                "{b}/CodeSystem/$lookup?system={SCT}&code={}",
                "1".repeat(n)
            ))
        }
        "bad-encoding" => {
            let queries = [
                "system=%ZZ&code=1",
                "system=http://snomed.info/sct&code=%",
                "code=%E9%80",
                "system=%F0%28%8C%28&code=1",
                "url=%u0041",
                "&&&==&",
                "code=1&code=2&code=3",
            ];
            get(format!("{}?{}", op(rng), rng.pick(&queries)))
        }
        "pages" => {
            // Text a page prints back, hostile: markup, quotes, a long
            // string, deep ECL; every page must answer in its budget and
            // show the text escaped.
            const RAW: &str = "<script>alert(1)</script>";
            let enc = crate::pools::encode;
            let evil = format!("{RAW}\"'><img src=x onerror=alert(2)>");
            let deep = format!("{}<< 138875005{}", "(".repeat(400), ")".repeat(400));
            let long = "a".repeat(1500 + rng.below(3000));
            let pick = [
                format!("/browse?q={}", enc(&evil)),
                format!("/browse?q=fr&within={}", enc(&evil)),
                format!("/browse?q=fr&within={}", enc(&deep)),
                format!("/browse?q={}", enc(&long)),
                "/browse?q=a%20b%20c%20d%20e%20f%20g%20h%20i%20j&inactive=true&count=200"
                    .to_owned(),
                format!("/suggest?q={}", enc(&evil)),
                "/suggest?q=s&count=100000".to_owned(),
                format!("/ecl?expression={}", enc(&evil)),
                format!("/ecl?expression={}", enc(&deep)),
                "/ecl?expression=%3C%3C%20138875005&offset=18446744073709551615".to_owned(),
                "/browse?q=fr&offset=18446744073709551615&count=200".to_owned(),
                format!("/concept/{}", enc(&evil)),
                "/concept/138875005?offset=18446744073709551615".to_owned(),
                format!("/lookup?system={}&code={}", enc(&evil), enc(&long)),
                format!("/r4/ValueSet?_format=html&title={}", enc(&evil)),
                format!("/r4/CodeSystem/{}?_format=html", enc(&evil)),
                format!("/?q={}", enc(&evil)),
            ];
            get(rng.pick(&pick).clone()).expect(Expect::Escaped(RAW))
        }
        "wrong-method" => {
            let mut r = get(op(rng));
            r.method = *rng.pick(&["PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"]);
            r
        }
        // Writes with no token, whatever their body: 401 where the server
        // stores resources, 405 where it does not — never stored, never
        // a 5xx.
        "unauthorized-writes" => {
            let ty = *rng.pick(&["CodeSystem", "ValueSet", "ConceptMap"]);
            let body = match rng.below(3) {
                0 => json!({"resourceType": ty, "url": "http://example.org/hostile", "status": "active"})
                    .to_string()
                    .into_bytes(),
                1 => b"{\"resourceType\": ".to_vec(),
                _ => vec![b'['; 5000],
            };
            let (method, target) = match rng.below(3) {
                0 => ("POST", format!("{b}/{ty}")),
                1 => ("PUT", format!("{b}/{ty}/hostile-{}", rng.below(1000))),
                _ => ("DELETE", format!("{b}/{ty}/hostile-{}", rng.below(1000))),
            };
            let mut r = post(&target, body);
            r.method = method;
            r.expect(Expect::Status(&[401, 405]))
        }
        _ => get(format!("{b}/metadata")),
    }
}

fn http_bytes(r: &Req, host: &str) -> Vec<u8> {
    let mut out = format!(
        "{} {} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n",
        r.method, r.target
    )
    .into_bytes();
    if let Some(body) = &r.body {
        out.extend_from_slice(
            format!(
                "Content-Type: {}\r\nContent-Length: {}\r\n",
                r.content_type,
                body.len()
            )
            .as_bytes(),
        );
    }
    out.extend_from_slice(b"\r\n");
    if let Some(body) = &r.body {
        out.extend_from_slice(body);
    }
    out
}

/// An answer: status, whether the body is an OperationOutcome, or why
/// none came.
fn exchange(addr: SocketAddr, bytes: &[u8], wait: Duration) -> Result<(u16, Vec<u8>), String> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
        .map_err(|e| format!("connect: {e}"))?;
    s.set_read_timeout(Some(wait)).map_err(|e| e.to_string())?;
    // A server that refuses early may close while the body is still
    // going out; what it answered is still to be read.
    let _ = s.write_all(bytes);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    if out.is_empty() {
        return Err("no answer".into());
    }
    let head_end = out
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("no end of headers")?;
    let head = String::from_utf8_lossy(&out[..head_end]).into_owned();
    let status: u16 = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("bad status line {head:?}"))?;
    let mut body = out[head_end + 4..].to_vec();
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        body = dechunk(&body);
    }
    Ok((status, body))
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = b.windows(2).position(|w| w == b"\r\n") {
        let n = usize::from_str_radix(String::from_utf8_lossy(&b[..eol]).trim(), 16).unwrap_or(0);
        if n == 0 || b.len() < eol + 2 + n {
            break;
        }
        out.extend_from_slice(&b[eol + 2..eol + 2 + n]);
        b = &b[(eol + 4 + n).min(b.len())..];
    }
    out
}

/// Sends incomplete or broken HTTP; the server must only live through it.
fn raw(addr: SocketAddr, kind: &str, host: &str) {
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_secs(5)) else {
        return;
    };
    let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
    let bytes: Vec<u8> = match kind {
        "incomplete-headers" => format!("GET /r4/metadata HTTP/1.1\r\nHost: {host}\r\nX-Half: ").into_bytes(),
        "short-body" => format!("POST /r4/CodeSystem/$lookup HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/fhir+json\r\nContent-Length: 5000\r\n\r\n{{\"resourceType\"").into_bytes(),
        _ => b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 not http at all\r\n\r\n".to_vec(),
    };
    let _ = s.write_all(&bytes);
    let mut sink = [0u8; 512];
    let _ = s.read(&mut sink);
    // Then go away without finishing.
}

/// Holds 20–200 connections that send half a request and stop, then
/// asks `/health` on a fresh connection: it must be answered 200 within a
/// second, however many slots the idle ones hold.
fn idle_connections(target: &Target, rng: &mut Rng, wait: Duration) -> Option<String> {
    let n = 20 + rng.below(180);
    let idle: Vec<TcpStream> = (0..n)
        .filter_map(|_| {
            let mut s = TcpStream::connect_timeout(&target.addr, Duration::from_secs(2)).ok()?;
            let _ = s.write_all(
                format!("GET /health HTTP/1.1\r\nHost: {}\r\nX-Half: ", target.host).as_bytes(),
            );
            Some(s)
        })
        .collect();
    // Long enough that they count as idle.
    std::thread::sleep(Duration::from_millis(200));
    let t0 = Instant::now();
    let answer = exchange(
        target.addr,
        format!(
            "GET /health HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            target.host
        )
        .as_bytes(),
        wait,
    );
    let took = t0.elapsed();
    drop(idle);
    match answer {
        Ok((200, _)) if took <= Duration::from_secs(1) => None,
        Ok((200, _)) => Some(format!(
            "/health answered after {:.2} s beside {n} idle connections",
            took.as_secs_f64()
        )),
        other => Some(format!("/health beside {n} idle connections: {other:?}")),
    }
}

/// Whether the request reaches the FHIR layer (whose refusals are
/// OperationOutcomes), rather than being refused by HTTP itself.
fn fhir_layer(category: &str, status: u16) -> bool {
    // hyper answers an oversized request line or header block itself, and
    // a page's refusal is a page.
    !(category == "huge-url" && matches!(status, 400 | 414 | 431)) && category != "pages"
}

/// Runs the suite against `target`.
pub fn run(target: &Target, options: &HostileOptions) -> Result<HostileReport, BenchError> {
    let started = Instant::now();
    let report = Mutex::new(HostileReport::default());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let wait = options.budget + Duration::from_secs(5);
    std::thread::scope(|scope| {
        for t in 0..options.connections.max(1) {
            let report = &report;
            let next = &next;
            scope.spawn(move || {
                let mut rng =
                    Rng(options.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (t as u64 + 1) | 1);
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= options.requests {
                        break;
                    }
                    // One in twenty is broken HTTP.
                    if i % 20 == 19 {
                        let kind = *rng.pick(&RAW);
                        raw(target.addr, kind, &target.host);
                        let mut r = report.lock().unwrap();
                        r.sent += 1;
                        *r.by_category.entry(kind).or_default() += 1;
                        continue;
                    }
                    let category = CATEGORIES[i % CATEGORIES.len()];
                    if category == "idle-connections" {
                        let found = idle_connections(target, &mut rng, wait);
                        let mut r = report.lock().unwrap();
                        r.sent += 1;
                        *r.by_category.entry(category).or_default() += 1;
                        if let Some(what) = found {
                            r.violations.push(Violation {
                                category,
                                request: "GET /health beside idle connections".into(),
                                what,
                            });
                        }
                        continue;
                    }
                    let req = make(category, &mut rng, options);
                    let shown = format!(
                        "{} {}",
                        req.method,
                        req.target.chars().take(160).collect::<String>()
                    );
                    let t0 = Instant::now();
                    let answer = exchange(target.addr, &http_bytes(&req, &target.host), wait);
                    let took = t0.elapsed();
                    let mut found = Vec::new();
                    let mut violate = |what: String| found.push(what);
                    if took > options.budget + Duration::from_secs(1) {
                        violate(format!("answered after {:.1} s", took.as_secs_f64()));
                    }
                    let shown_status = match &answer {
                        Err(_) => "none".to_owned(),
                        Ok((status, _)) => status.to_string(),
                    };
                    match answer {
                        Err(e) => violate(format!("no answer: {e}")),
                        Ok((status, body)) => {
                            if let Some(what) = judge(&req.expect, status, &body) {
                                violate(format!("wrong answer: {what}"));
                            }
                            if status >= 500 && status != 503 {
                                violate(format!(
                                    "status {status}: {}",
                                    String::from_utf8_lossy(&body)
                                        .chars()
                                        .take(200)
                                        .collect::<String>()
                                ));
                            }
                            if status >= 400 && fhir_layer(category, status) {
                                let v: Option<Value> = serde_json::from_slice(&body).ok();
                                if v.as_ref()
                                    .and_then(|v| v.get("resourceType"))
                                    .and_then(Value::as_str)
                                    != Some("OperationOutcome")
                                {
                                    violate(format!(
                                        "status {status} without an OperationOutcome: {}",
                                        String::from_utf8_lossy(&body)
                                            .chars()
                                            .take(200)
                                            .collect::<String>()
                                    ));
                                }
                            }
                        }
                    }
                    let mut r = report.lock().unwrap();
                    r.sent += 1;
                    *r.by_category.entry(category).or_default() += 1;
                    *r.by_status.entry(shown_status).or_default() += 1;
                    r.slowest_ms = r.slowest_ms.max(took.as_secs_f64() * 1e3);
                    for what in found {
                        r.violations.push(Violation {
                            category,
                            request: shown.clone(),
                            what,
                        });
                    }
                }
            });
        }
    });
    let mut report = report.into_inner().unwrap();
    report.seconds = started.elapsed().as_secs_f64();
    // Afterwards: alive, the guard under its limit, a lookup answered.
    std::thread::sleep(Duration::from_secs(3));
    let status = exchange(
        target.addr,
        format!(
            "GET /status HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            target.host
        )
        .as_bytes(),
        wait,
    );
    let lookup = exchange(
        target.addr,
        format!("GET /r4/CodeSystem/$lookup?system={SCT}&code={} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", options.code, target.host).as_bytes(),
        wait,
    );
    let status_json: Value = match &status {
        Ok((200, b)) => serde_json::from_slice(b).unwrap_or(Value::Null),
        _ => Value::Null,
    };
    let measured = status_json["memory"]["measured"].as_u64();
    let limit = status_json["memory"]["limit"].as_u64();
    let lookup_status = lookup.as_ref().map(|(s, _)| *s).ok();
    let mut after_violation = |what: String| {
        report.violations.push(Violation {
            category: "after",
            request: String::new(),
            what,
        });
    };
    if status_json.is_null() {
        after_violation(format!("/status did not answer: {status:?}"));
    }
    if let (Some(m), Some(l)) = (measured, limit)
        && m >= l
    {
        after_violation(format!(
            "the guard's measure {m} is not under the limit {l}"
        ));
    }
    if lookup_status != Some(200) {
        after_violation(format!("$lookup answered {lookup_status:?} after the run"));
    }
    report.after = json!({"measuredBytes": measured, "limitBytes": limit, "lookupStatus": lookup_status,
        "guard": status_json["guard"]});
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_category_makes_a_request_for_an_endpoint() {
        let mut rng = Rng(7);
        let options = HostileOptions {
            requests: 1,
            seed: 1,
            connections: 1,
            budget: Duration::from_secs(1),
            code: "138875005".into(),
            known: vec![("138875005".into(), true), ("404684003".into(), false)],
            out_of_service: vec![OutOfService::parse("http://loinc.org|8867-4").unwrap()],
        };
        for c in CATEGORIES.into_iter().filter(|c| *c != "idle-connections") {
            let r = make(c, &mut rng, &options);
            // Pages are at the root; everything else is FHIR.
            let fhir = r.target.starts_with("/r4/") || r.target.starts_with("/r5/");
            assert!(fhir || c == "pages", "{c}: {}", r.target);
            let bytes = http_bytes(&r, "x");
            assert!(bytes.starts_with(r.method.as_bytes()), "{c}");
        }
        // The import chain really is a chain, ending in SNOMED CT.
        let chain = import_chain(3);
        assert_eq!(
            chain[0]["resource"]["compose"]["include"][0]["valueSet"][0],
            "http://example.org/vs1"
        );
        assert!(chain[2]["resource"]["compose"]["include"][0]["system"] == SCT);
        assert_eq!(import_diamond(4).len(), 8);
        assert_eq!(dechunk(b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"), b"abcde");
    }

    #[test]
    fn the_judge_knows_a_wrong_answer() {
        let ok = br#"{"resourceType":"Parameters","parameter":[{"name":"result","valueBoolean":false}]}"#;
        assert_eq!(judge(&Expect::Result(false), 200, ok), None);
        assert!(judge(&Expect::Result(true), 200, ok).is_some());
        assert!(judge(&Expect::Result(false), 400, ok).is_some());
        let wrapped = br#"{"resourceType":"Bundle","total":3,"link":[{"relation":"self","url":"x?_offset=18446744073709551615"},{"relation":"next","url":"x?_offset=4"}],"entry":[]}"#;
        assert!(judge(&Expect::Paging { count: 5 }, 200, wrapped).is_some());
        let fine = br#"{"resourceType":"Bundle","total":3,"link":[{"relation":"self","url":"x?_offset=0"},{"relation":"next","url":"x?_offset=2"}],"entry":[{"fullUrl":"a"},{"fullUrl":"b"}]}"#;
        assert_eq!(judge(&Expect::Paging { count: 2 }, 200, fine), None);
        let shared = br#"{"resourceType":"Bundle","total":2,"link":[],"entry":[{"fullUrl":"a"},{"fullUrl":"a"}]}"#;
        assert!(judge(&Expect::Paging { count: 2 }, 200, shared).is_some());
        let unknown = br#"{"resourceType":"OperationOutcome","issue":[{"code":"not-found"}]}"#;
        assert!(judge(&Expect::Unavailable, 404, unknown).is_some());
        let out = br#"{"resourceType":"OperationOutcome","issue":[{"code":"transient"}]}"#;
        assert_eq!(judge(&Expect::Unavailable, 503, out), None);
        // Refused for load: no answer, so not a wrong one.
        let late = br#"{"resourceType":"OperationOutcome","issue":[{"code":"too-costly"}]}"#;
        assert_eq!(judge(&Expect::Result(true), 422, late), None);
        assert_eq!(judge(&Expect::Result(true), 503, out), None);
    }
}

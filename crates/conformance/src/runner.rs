//! One run: one endpoint, one FHIR version, the selected tests in file
//! order, as `TxTester` runs them.
//!
//! Start-up decides the FHIR version (`$versions`, else `metadata`'s
//! `fhirVersion`, else R4) and fetches the CapabilityStatement and the
//! TerminologyCapabilities once; if either fetch fails the whole run
//! fails. Each test's request is the request file, then every setup file
//! of its suite as a `tx-resource` parameter (the suite expects code
//! systems on the fly), then the profile's parameters; R5 resources are
//! converted for an R4 endpoint. The answer goes through the same steps as
//! in the Java client and tester: parse by content type, error outcome or
//! resource, R4→R5, model round trip (empty properties vanish), scrub,
//! sort, compare, then the HTTP status class.

use std::collections::BTreeSet;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::compare::{Comparator, Difference, LenientMatch};
use crate::convert;
use crate::http::{HttpRequest, HttpResponse, Transport, form_encode};
use crate::json::{Json, Object};
use crate::scrub;
use crate::sort;
use crate::suite::{Selection, Suite, Test, TestCases};

/// How a run is set up.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub selection: Selection,
    /// Turn off the lenient (Base64) string rule.
    pub strict_strings: bool,
    /// An externals file (`messages-*.json`): response file → N → text.
    pub externals: Option<Json>,
    /// The prefix of test ids; default `r4` or `r5` from the detected
    /// version.
    pub label: Option<String>,
    /// Skip `$cache-control` even when the server offers it.
    pub no_cache_control: bool,
}

/// How a test ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Pass,
    /// The first difference, or the wrong HTTP status class.
    Fail(Difference),
    /// The test could not be judged (as an exception in Java): a missing
    /// file, no response, an unknown template, a missing sort key, …
    Error(String),
}

/// The result of one test.
#[derive(Clone, Debug)]
pub struct TestResult {
    /// `label/suite/test`: the ratchet's id.
    pub id: String,
    pub suite: String,
    pub test: String,
    /// The test's mode, else its suite's, else `(none)`.
    pub mode: String,
    pub operation: String,
    pub outcome: Outcome,
    /// The expected class: `2xx`, `4xx`, …
    pub expected_http: String,
    /// The code the runner recorded (200 for any success).
    pub http_status: Option<u16>,
    pub warnings: Vec<String>,
    /// Strings that matched only by the lenient rule (a passing test with
    /// any of these passes only because of it).
    pub lenient: Vec<LenientMatch>,
    /// The expected response file.
    pub response_file: String,
    /// Kept for tests that did not pass.
    pub expected: Option<Json>,
    pub actual: Option<Json>,
    pub millis: u64,
}

impl TestResult {
    pub fn passed(&self) -> bool {
        self.outcome == Outcome::Pass
    }

    /// Passed, but only thanks to the lenient string rule.
    pub fn lenient_only(&self) -> bool {
        self.passed() && !self.lenient.is_empty()
    }
}

/// Everything one run found.
#[derive(Clone, Debug)]
pub struct RunReport {
    pub label: String,
    pub endpoint: String,
    /// `4.0.1` or `5.0.0`, when start-up got that far.
    pub fhir_version: Option<String>,
    pub modes: Vec<String>,
    /// Why the run could not start; every selected test then errors.
    pub startup_error: Option<String>,
    /// Things worth knowing that are not test results.
    pub notes: Vec<String>,
    pub results: Vec<TestResult>,
}

impl RunReport {
    pub fn passed(&self) -> usize {
        self.results.iter().filter(|r| r.passed()).count()
    }

    pub fn failed(&self) -> usize {
        self.results.len() - self.passed()
    }
}

/// The FHIR version `$versions` or `metadata` reported, mapped to the
/// client the runner would pick: `4.0.1` (R4, R4B) or `5.0.0` (R5 and
/// later).
pub fn client_version(reported: &str) -> Option<&'static str> {
    let major: u32 = reported.trim().split('.').next()?.parse().ok()?;
    match major {
        4 => Some("4.0.1"),
        5.. => Some("5.0.0"),
        _ => None,
    }
}

fn is_2xx(status: u16) -> bool {
    (200..300).contains(&status)
}

/// Whether a status is in a test's `http-code` class (`4xx`), or equals
/// an exact code.
pub fn status_in_class(class: &str, status: u16) -> bool {
    let c = class.trim().to_ascii_lowercase();
    match c.strip_suffix("xx").and_then(|d| d.parse::<u16>().ok()) {
        Some(d) => status / 100 == d,
        None => c.parse::<u16>().ok() == Some(status),
    }
}

fn now_millis() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0)
}

fn parse_body(resp: &HttpResponse) -> Result<Json, String> {
    let text = String::from_utf8_lossy(&resp.body);
    Json::parse(&text).map_err(|e| format!("HTTP {}: body is not JSON ({e})", resp.status))
}

/// A synthetic OperationOutcome for a body that is not FHIR JSON.
fn wrap_text(body: &str) -> Json {
    let issue = Object::new()
        .with("severity", "error")
        .with("code", "exception")
        .with("details", Object::new().with("text", body));
    Json::Object(
        Object::new()
            .with("resourceType", "OperationOutcome")
            .with("issue", vec![Json::Object(issue)]),
    )
}

/// The resource in a response, by content type, as the Java client reads
/// it.
pub fn read_resource(resp: &HttpResponse) -> Result<Json, String> {
    match resp.media_type().as_deref() {
        Some("application/json" | "application/fhir+json") => parse_body(resp),
        Some("application/xml" | "application/fhir+xml" | "text/xml") => Err(format!(
            "HTTP {}: XML responses are not supported by this runner",
            resp.status
        )),
        Some(_) => Ok(wrap_text(&String::from_utf8_lossy(&resp.body))),
        None if !is_2xx(resp.status) => Ok(wrap_text(&String::from_utf8_lossy(&resp.body))),
        None => parse_body(resp),
    }
}

fn has_error_issue(oo: &Json) -> bool {
    oo.get("issue")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .any(|i| {
            matches!(
                i.get("severity").and_then(Json::as_str),
                Some("error" | "fatal")
            )
        })
}

/// Removes what the object model would not serialise: null and empty
/// values, empty objects and arrays.
pub fn prune_empty(v: &mut Json) {
    match v {
        Json::Object(o) => {
            o.retain(|_, x| {
                prune_empty(x);
                !is_empty(x)
            });
        }
        Json::Array(a) => {
            a.iter_mut().for_each(prune_empty);
            a.retain(|x| !matches!(x, Json::Object(o) if o.is_empty()));
        }
        _ => {}
    }
}

fn is_empty(v: &Json) -> bool {
    match v {
        Json::Null => true,
        Json::String(s) => s.is_empty(),
        Json::Array(a) => a.is_empty(),
        Json::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// FHIR primitive type names, as the suffix of `value[x]`.
const PRIMITIVE_TYPES: &[&str] = &[
    "Base64Binary",
    "Boolean",
    "Canonical",
    "Code",
    "Date",
    "DateTime",
    "Decimal",
    "Id",
    "Instant",
    "Integer",
    "Integer64",
    "Markdown",
    "Oid",
    "PositiveInt",
    "String",
    "Time",
    "UnsignedInt",
    "Uri",
    "Url",
    "Uuid",
];

/// The primitive value of a parameter, if it has one (else the runner
/// POSTs).
fn primitive_parameter(p: &Json) -> Option<(String, String)> {
    let o = p.as_object()?;
    if o.contains_key("resource") {
        return None;
    }
    let name = o.get("name")?.as_str()?.to_string();
    let (k, v) = sort::value_x(o)?;
    let ty = k.strip_prefix("value")?;
    if !PRIMITIVE_TYPES.contains(&ty) || !v.is_primitive() {
        return None;
    }
    Some((name, v.primitive_text()?))
}

/// The GET query for Parameters whose every parameter is primitive:
/// `a=1&b=x+y&` (form-encoded, trailing `&`). `None` means POST.
pub fn get_query(params: &Json) -> Option<String> {
    let list = params
        .get("parameter")
        .and_then(Json::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let mut q = String::new();
    for p in list {
        let (n, v) = primitive_parameter(p)?;
        q.push_str(&form_encode(&n));
        q.push('=');
        q.push_str(&form_encode(&v));
        q.push('&');
    }
    Some(q)
}

/// The URL path and whether GET is allowed, for an operation.
pub fn operation_endpoint(operation: &str) -> Option<(&'static str, bool)> {
    Some(match operation {
        "expand" => ("ValueSet/$expand", false),
        "validate-code" => ("ValueSet/$validate-code", true),
        "cs-validate-code" => ("CodeSystem/$validate-code", true),
        "batch-validate" => ("ValueSet/$batch-validate-code", true),
        "lookup" => ("CodeSystem/$lookup", false),
        "translate" => ("ConceptMap/$translate", false),
        "compare" => ("ValueSet/$compare", false),
        "batch" => ("", false),
        _ => return None,
    })
}

fn param(name: &str, key: &str, value: Json) -> Json {
    Json::Object(Object::new().with("name", name).with(key, value))
}

fn parameters_of(v: &mut Json) -> Option<&mut Vec<Json>> {
    let o = v.as_object_mut()?;
    if !o.contains_key("parameter") {
        o.insert("parameter", Json::Array(Vec::new()));
    }
    o.get_mut("parameter")?.as_array_mut()
}

/// What start-up found.
struct Server<'a> {
    transport: &'a dyn Transport,
    /// `4.0.1` or `5.0.0`.
    version: String,
    r4: bool,
    capabilities: Json,
    terminology: Json,
    cache_control: bool,
}

/// Decides the FHIR version as the runner does, with a note on how.
fn detect_version(t: &dyn Transport, notes: &mut Vec<String>) -> Result<String, String> {
    let req = HttpRequest::get(format!("$versions?_format=json&nocache={}", now_millis()))
        .header("Accept", "application/json, application/fhir+json");
    let mut reported = None;
    match t.send(&req) {
        Ok(resp) if is_2xx(resp.status) => {
            if let Ok(v) = parse_body(&resp) {
                let from_param = v
                    .get("parameter")
                    .and_then(Json::as_array)
                    .into_iter()
                    .flatten()
                    .find(|p| p.get("name").and_then(Json::as_str) == Some("default"))
                    .and_then(|p| {
                        p.as_object()
                            .and_then(sort::value_x)
                            .and_then(|(_, x)| x.primitive_text())
                    });
                reported = from_param.or_else(|| v.get("default").and_then(Json::primitive_text));
            }
        }
        Ok(resp) => notes.push(format!("$versions: HTTP {}", resp.status)),
        Err(e) => notes.push(format!("$versions: {e}")),
    }
    if reported.is_none() {
        let req =
            HttpRequest::get("metadata?_format=json").header("Accept", "application/fhir+json");
        if let Ok(resp) = t.send(&req)
            && is_2xx(resp.status)
            && let Ok(v) = parse_body(&resp)
        {
            reported = v.get("fhirVersion").and_then(Json::primitive_text);
        }
        if reported.is_some() {
            notes.push("FHIR version taken from metadata (no usable $versions)".into());
        }
    }
    let Some(reported) = reported else {
        notes.push("FHIR version not reported: R4 assumed".into());
        return Ok("4.0.1".into());
    };
    client_version(&reported)
        .map(str::to_string)
        .ok_or_else(|| format!("unsupported FHIR version {reported:?}"))
}

fn fetch(t: &dyn Transport, path: &str, resource_type: &str) -> Result<Json, String> {
    let resp = t.send(&HttpRequest::get(path).header("Accept", "application/fhir+json"))?;
    if !is_2xx(resp.status) {
        return Err(format!("GET {path}: HTTP {}", resp.status));
    }
    let v = read_resource(&resp).map_err(|e| format!("GET {path}: {e}"))?;
    match v.resource_type() {
        Some(rt) if rt == resource_type => Ok(v),
        other => Err(format!(
            "GET {path}: expected a {resource_type}, got {}",
            other.unwrap_or("non-resource")
        )),
    }
}

fn startup<'a>(
    t: &'a dyn Transport,
    options: &RunOptions,
    notes: &mut Vec<String>,
) -> Result<Server<'a>, String> {
    let version = detect_version(t, notes)?;
    let r4 = version.starts_with('4');
    let mut capabilities = fetch(t, "metadata", "CapabilityStatement")?;
    let mut terminology = fetch(t, "metadata?mode=terminology", "TerminologyCapabilities")?;
    for v in [&mut capabilities, &mut terminology] {
        if r4 {
            convert::r4_to_r5(v);
        }
        prune_empty(v);
    }
    let cache_control = !options.no_cache_control
        && capabilities
            .get("rest")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .filter_map(|r| r.get("operation").and_then(Json::as_array))
            .flatten()
            .any(|o| o.get("name").and_then(Json::as_str) == Some("cache-control"));
    Ok(Server {
        transport: t,
        version,
        r4,
        capabilities,
        terminology,
        cache_control,
    })
}

/// Runs the selected tests of `cases` against one endpoint. `on_result`
/// sees each result as it is decided (for streaming output).
pub fn run(
    cases: &TestCases,
    transport: &dyn Transport,
    options: &RunOptions,
    on_result: &mut dyn FnMut(&TestResult),
) -> RunReport {
    let mut notes = Vec::new();
    let server = startup(transport, options, &mut notes);
    let (label, fhir_version) = match &server {
        Ok(s) => (
            options
                .label
                .clone()
                .unwrap_or_else(|| if s.r4 { "r4".into() } else { "r5".into() }),
            Some(s.version.clone()),
        ),
        Err(_) => (options.label.clone().unwrap_or_else(|| "fhir".into()), None),
    };
    let mut report = RunReport {
        label: label.clone(),
        endpoint: transport.describe(),
        fhir_version,
        modes: options.selection.modes.clone(),
        startup_error: server.as_ref().err().cloned(),
        notes: Vec::new(),
        results: Vec::new(),
    };
    let sel = &options.selection;
    for suite in &cases.suites {
        let tests: Vec<&Test> = suite
            .tests
            .iter()
            .filter(|t| sel.selects_test(suite, t))
            .collect();
        if tests.is_empty() {
            continue;
        }
        let mut ctx = SuiteRun {
            cases,
            options,
            label: &label,
            suite,
            setup: Vec::new(),
            setup_error: None,
            cache_id: None,
        };
        match &server {
            Err(e) => ctx.setup_error = Some(format!("start-up failed: {e}")),
            Ok(s) => ctx.prepare(s, &mut notes),
        }
        for t in tests {
            let started = Instant::now();
            let mut r = match &server {
                Ok(s) => ctx.run_test(s, t),
                Err(_) => ctx.result(
                    t,
                    Outcome::Error(ctx.setup_error.clone().unwrap_or_default()),
                ),
            };
            r.millis = started.elapsed().as_millis() as u64;
            if r.passed() {
                r.expected = None;
                r.actual = None;
            }
            on_result(&r);
            report.results.push(r);
        }
        if let Ok(s) = &server {
            ctx.finish(s, &mut notes);
        }
    }
    report.notes = notes;
    report
}

struct SuiteRun<'a> {
    cases: &'a TestCases,
    options: &'a RunOptions,
    label: &'a str,
    suite: &'a Suite,
    setup: Vec<Json>,
    setup_error: Option<String>,
    cache_id: Option<String>,
}

fn tx_resources(setup: &[Json]) -> Vec<Json> {
    setup
        .iter()
        .map(|r| param("tx-resource", "resource", r.clone()))
        .collect()
}

impl SuiteRun<'_> {
    /// Loads the setup files, and registers them with `$cache-control`
    /// when the server offers it.
    fn prepare(&mut self, s: &Server, notes: &mut Vec<String>) {
        for f in &self.suite.setup {
            match self.cases.load_json(f) {
                Ok(r) => self.setup.push(r),
                Err(e) => {
                    self.setup_error = Some(format!("setup: {e}"));
                    return;
                }
            }
        }
        if !s.cache_control || self.setup.is_empty() {
            return;
        }
        let mut body = Json::Object(
            Object::new()
                .with("resourceType", "Parameters")
                .with("parameter", tx_resources(&self.setup)),
        );
        if s.r4 {
            convert::r5_to_r4(&mut body);
        }
        let req = HttpRequest::post("$cache-control?mode=start", body.to_compact().into_bytes())
            .header("Accept", "application/fhir+json")
            .header("Content-Type", "application/fhir+json;charset=UTF-8")
            .header("User-Agent", "Tools/Java");
        let id = s
            .transport
            .send(&req)
            .ok()
            .filter(|r| is_2xx(r.status))
            .and_then(|r| parse_body(&r).ok())
            .and_then(|v| {
                v.get("parameter")?
                    .as_array()?
                    .iter()
                    .find(|p| p.get("name").and_then(Json::as_str) == Some("cache-id"))
                    .and_then(|p| {
                        p.as_object()
                            .and_then(sort::value_x)
                            .and_then(|(_, x)| x.primitive_text())
                    })
            });
        match id {
            Some(id) => self.cache_id = Some(id),
            None => notes.push(format!(
                "{}: $cache-control start gave no cache-id; setup sent inline",
                self.suite.name
            )),
        }
    }

    fn finish(&mut self, s: &Server, notes: &mut Vec<String>) {
        let Some(id) = self.cache_id.take() else {
            return;
        };
        let body = Json::Object(Object::new().with("resourceType", "Parameters"));
        let req = HttpRequest::post("$cache-control?mode=end", body.to_compact().into_bytes())
            .header("Accept", "application/fhir+json")
            .header("Content-Type", "application/fhir+json;charset=UTF-8")
            .header("User-Agent", "Tools/Java")
            .header("X-Cache-Id", &id);
        if let Err(e) = s.transport.send(&req) {
            notes.push(format!("{}: $cache-control end: {e}", self.suite.name));
        }
    }

    fn result(&self, t: &Test, outcome: Outcome) -> TestResult {
        TestResult {
            id: format!("{}/{}/{}", self.label, self.suite.name, t.name),
            suite: self.suite.name.clone(),
            test: t.name.clone(),
            mode: Selection::effective_mode(self.suite, t),
            operation: t.operation.clone(),
            outcome,
            expected_http: t.http_code.clone(),
            http_status: None,
            warnings: Vec::new(),
            lenient: Vec::new(),
            response_file: self.options.selection.response_file(t).to_string(),
            expected: None,
            actual: None,
            millis: 0,
        }
    }

    fn comparator(&self, s: &Server, response_file: &str, pattern: bool) -> Comparator {
        Comparator {
            modes: self
                .options
                .selection
                .modes
                .iter()
                .cloned()
                .collect::<BTreeSet<_>>(),
            version: Some(s.version.clone()),
            externals: self
                .options
                .externals
                .as_ref()
                .and_then(|x| x.get(response_file))
                .and_then(Json::as_object)
                .cloned(),
            strict_strings: self.options.strict_strings,
            pattern,
        }
    }

    fn run_test(&self, s: &Server, t: &Test) -> TestResult {
        let mut r = self.result(t, Outcome::Pass);
        if let Some(e) = &self.setup_error {
            r.outcome = Outcome::Error(e.clone());
            return r;
        }
        let expected = match self.cases.load_json(&r.response_file) {
            Ok(e) => e,
            Err(e) => {
                r.outcome = Outcome::Error(format!("expected response: {e}"));
                return r;
            }
        };
        let (actual, status, pattern) = match self.actual(s, t) {
            Ok(x) => x,
            Err(e) => {
                r.outcome = Outcome::Error(e);
                r.expected = Some(expected);
                return r;
            }
        };
        r.http_status = Some(status);
        let cmp = self.comparator(s, &r.response_file, pattern);
        r.outcome = match cmp.compare(&expected, &actual) {
            Err(e) => Outcome::Error(e.to_string()),
            Ok(c) => {
                r.warnings = c.warnings;
                r.lenient = c.lenient;
                match c.difference {
                    Some(d) => Outcome::Fail(d),
                    None if !status_in_class(&t.http_code, status) => Outcome::Fail(Difference {
                        path: "(http status)".into(),
                        message: format!(
                            "Response Code fail: should be '{}' but is '{status}'",
                            t.http_code
                        ),
                        expected: Some(t.http_code.clone()),
                        actual: Some(status.to_string()),
                    }),
                    None => Outcome::Pass,
                }
            }
        };
        r.expected = Some(expected);
        r.actual = Some(actual);
        r
    }

    /// Builds the request Parameters: request file, setup, profile.
    fn request(&self, s: &Server, t: &Test) -> Result<Json, String> {
        let sel = &self.options.selection;
        let file = sel.request_file(t).ok_or("the test has no request")?;
        let mut req = self
            .cases
            .load_json(file)
            .map_err(|e| format!("request: {e}"))?;
        if t.operation == "batch" {
            return Ok(req);
        }
        if req.resource_type() != Some("Parameters") {
            return Err(format!("request {file}: not a Parameters resource"));
        }
        let profile = self
            .cases
            .load_json(t.profile.as_deref().unwrap_or("parameters-default.json"))
            .map_err(|e| format!("profile: {e}"))?;
        let params = parameters_of(&mut req).ok_or("request: bad Parameters")?;
        if self.cache_id.is_none() {
            params.extend(tx_resources(&self.setup));
        }
        params.extend(
            profile
                .get("parameter")
                .and_then(Json::as_array)
                .cloned()
                .unwrap_or_default(),
        );
        if s.r4 {
            convert::r5_to_r4(&mut req);
        }
        Ok(req)
    }

    fn headers(&self, t: &Test, mut req: HttpRequest) -> HttpRequest {
        req = req
            .header("Accept", "application/fhir+json")
            .header("User-Agent", "Tools/Java")
            .header(
                "X-Request-Id",
                &format!("txTests:{}/{}", self.suite.name, t.name),
            );
        if let Some(l) = &t.accept_language {
            req = req.header("Accept-Language", l);
        }
        if let Some(h) = &t.header
            && h.mode
                .as_deref()
                .is_none_or(|m| self.options.selection.mode_on(m))
        {
            req = req.header(&h.name, &h.value);
        }
        if let Some(id) = &self.cache_id {
            req = req.header("X-Cache-Id", id);
        }
        req
    }

    /// Sends the test's request and builds the actual resource, with the
    /// recorded status, and whether to compare in pattern mode.
    fn actual(&self, s: &Server, t: &Test) -> Result<(Json, u16, bool), String> {
        match t.operation.as_str() {
            "metadata" => {
                let mut cs = s.capabilities.clone();
                sort::sort_capability_statement(&mut cs).map_err(|e| e.to_string())?;
                return Ok((cs, 200, true));
            }
            "term-caps" => {
                let mut tc = s.terminology.clone();
                sort::sort_terminology_capabilities(&mut tc).map_err(|e| e.to_string())?;
                return Ok((tc, 200, true));
            }
            _ => {}
        }
        let (path, get_ok) = operation_endpoint(&t.operation)
            .ok_or_else(|| format!("Unknown Operation {}", t.operation))?;
        let params = self.request(s, t)?;
        let query = if get_ok { get_query(&params) } else { None };
        let req = match query {
            Some(q) => HttpRequest::get(format!("{path}?{q}")),
            None => HttpRequest::post(path, params.to_compact().into_bytes())
                .header("Content-Type", "application/fhir+json;charset=UTF-8"),
        };
        let req = self.headers(t, req);
        let resp = s.transport.send(&req)?;
        let (mut actual, status) = interpret(&t.operation, &resp)?;
        if s.r4 {
            convert::r4_to_r5(&mut actual);
        }
        prune_empty(&mut actual);
        let error = actual.resource_type() == Some("OperationOutcome");
        match (t.operation.as_str(), error) {
            ("expand", false) => {
                scrub::scrub_value_set(&mut actual);
                sort::sort_value_set(&mut actual).map_err(|e| e.to_string())?;
            }
            (_, false) => {
                scrub::scrub_parameters(&mut actual);
                sort::sort_parameters(&mut actual).map_err(|e| e.to_string())?;
            }
            ("cs-validate-code", true) => scrub::remove_text(&mut actual),
            (_, true) => scrub::scrub_operation_outcome(&mut actual),
        }
        prune_empty(&mut actual);
        Ok((actual, status, false))
    }
}

/// The actual resource and recorded status of a response, as the Java
/// client and tester build them (before R4→R5, scrubbing and sorting).
pub fn interpret(operation: &str, resp: &HttpResponse) -> Result<(Json, u16), String> {
    let resource = read_resource(resp)?;
    let is_oo = resource.resource_type() == Some("OperationOutcome");
    if !is_2xx(resp.status) || (is_oo && has_error_issue(&resource)) {
        if !is_oo {
            return Err(format!(
                "HTTP {}: error response without an OperationOutcome ({})",
                resp.status,
                resource.resource_type().unwrap_or("no resource")
            ));
        }
        return Ok((resource, resp.status));
    }
    if is_oo {
        return Err(format!(
            "HTTP {}: an OperationOutcome without errors instead of a resource",
            resp.status
        ));
    }
    match (operation, resource.resource_type()) {
        ("expand", Some("ValueSet")) => Ok((resource, 200)),
        ("expand", other) => Err(format!(
            "expected a ValueSet, got {}",
            other.unwrap_or("no resource")
        )),
        (_, Some("Parameters")) => Ok((resource, 200)),
        (_, Some(_)) => Ok((
            Json::Object(
                Object::new()
                    .with("resourceType", "Parameters")
                    .with("parameter", vec![param("return", "resource", resource)]),
            ),
            200,
        )),
        (_, None) => Err("the response is not a resource".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resp(status: u16, ct: Option<&str>, body: &str) -> HttpResponse {
        HttpResponse {
            status,
            headers: ct
                .map(|c| vec![("Content-Type".to_string(), c.to_string())])
                .unwrap_or_default(),
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn status_classes() {
        assert!(status_in_class("2xx", 200) && status_in_class("2xx", 299));
        assert!(!status_in_class("2xx", 400));
        assert!(status_in_class("4xx", 422) && !status_in_class("4xx", 500));
        assert!(status_in_class("404", 404) && !status_in_class("404", 400));
    }

    #[test]
    fn versions() {
        assert_eq!(client_version("4.0"), Some("4.0.1"));
        assert_eq!(client_version("4.3.0"), Some("4.0.1"));
        assert_eq!(client_version("5.0.0"), Some("5.0.0"));
        assert_eq!(client_version("6.0.0-ballot"), Some("5.0.0"));
        assert_eq!(client_version("3.0.2"), None);
    }

    #[test]
    fn get_or_post() {
        let p = Json::parse(r#"{"parameter":[{"name":"url","valueUri":"http://x/y z"},{"name":"n","valueInteger":3},{"name":"b","valueBoolean":true}]}"#).unwrap();
        assert_eq!(
            get_query(&p).as_deref(),
            Some("url=http%3A%2F%2Fx%2Fy+z&n=3&b=true&")
        );
        let coding =
            Json::parse(r#"{"parameter":[{"name":"coding","valueCoding":{"code":"a"}}]}"#).unwrap();
        assert_eq!(get_query(&coding), None);
        let res = Json::parse(r#"{"parameter":[{"name":"tx-resource","resource":{}}]}"#).unwrap();
        assert_eq!(get_query(&res), None);
    }

    #[test]
    fn interpreting_responses() {
        let oo_err =
            r#"{"resourceType":"OperationOutcome","issue":[{"severity":"error","code":"x"}]}"#;
        let oo_info = r#"{"resourceType":"OperationOutcome","issue":[{"severity":"information","code":"x"}]}"#;
        let (_, code) =
            interpret("expand", &resp(422, Some("application/fhir+json"), oo_err)).unwrap();
        assert_eq!(code, 422);
        let (_, code) = interpret("expand", &resp(200, Some("application/json"), oo_err)).unwrap();
        assert_eq!(code, 200);
        assert!(interpret("expand", &resp(200, Some("application/fhir+json"), oo_info)).is_err());
        assert!(
            interpret(
                "expand",
                &resp(
                    500,
                    Some("application/fhir+json"),
                    r#"{"resourceType":"Parameters"}"#
                )
            )
            .is_err()
        );
        let (v, code) = interpret("lookup", &resp(500, Some("text/plain"), "boom")).unwrap();
        assert_eq!(
            (code, v["issue"][0]["details"]["text"].as_str()),
            (500, Some("boom"))
        );
        let (v, code) = interpret(
            "lookup",
            &resp(
                201,
                Some("application/fhir+json"),
                r#"{"resourceType":"CodeSystem"}"#,
            ),
        )
        .unwrap();
        assert_eq!(code, 200);
        assert_eq!(v["parameter"][0]["name"].as_str(), Some("return"));
        assert!(interpret("expand", &resp(200, Some("application/fhir+xml"), "<x/>")).is_err());
    }

    #[test]
    fn pruning() {
        let mut v =
            Json::parse(r#"{"a":"","b":[],"c":{"d":null,"e":[{}]},"f":[1,null],"g":0}"#).unwrap();
        prune_empty(&mut v);
        assert_eq!(v.to_compact(), r#"{"f":[1,null],"g":0}"#);
    }
}

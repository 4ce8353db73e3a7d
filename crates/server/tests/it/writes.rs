//! Stored resources over a real socket: every write path and its errors,
//! the history, and stored content taking part in operations beside a
//! package's (a stored value set importing a package's, and a package's
//! importing a stored one). Expected codes are the ones these tests write.

use crate::common;

use std::net::SocketAddr;
use std::path::Path;

use common::{Answer, exchange};
use serde_json::{Value, json};
use txmap_server::state::Live;

const WRITER: &str = "a-writer-token-0123456789";
const ADMIN: &str = "an-admin-token-0123456789";

/// A package with a code system, a value set of it, and a value set that
/// imports `http://example.org/vs/stored-colors`, which only a write
/// will make.
fn package(dir: &Path) {
    let tgz = txmap_packages::pack_json(&[
        (
            "package/package.json",
            json!({"name": "example.pkg", "version": "1.0.0", "fhirVersions": ["4.0.1"]}),
        ),
        (
            "package/CodeSystem-shapes.json",
            json!({"resourceType": "CodeSystem", "id": "shapes", "url": "http://example.org/cs/shapes",
                "version": "1", "status": "active", "content": "complete",
                "concept": [{"code": "circle"}, {"code": "square"}]}),
        ),
        (
            "package/ValueSet-shapes.json",
            json!({"resourceType": "ValueSet", "id": "shapes", "url": "http://example.org/vs/shapes",
                "version": "1", "status": "active",
                "compose": {"include": [{"system": "http://example.org/cs/shapes"}]}}),
        ),
        (
            "package/ValueSet-imports-stored.json",
            json!({"resourceType": "ValueSet", "id": "imports-stored",
                "url": "http://example.org/vs/imports-stored", "version": "1", "status": "active",
                "compose": {"include": [{"valueSet": ["http://example.org/vs/stored-colors"]}]}}),
        ),
    ])
    .unwrap();
    std::fs::write(dir.join("pkg.tgz"), tgz).unwrap();
}

fn config(store: bool) -> String {
    let mut c = format!(
        "packages = [\"pkg.tgz\"]\n[auth]\ntokens = [\n  {{ name = \"ci\", sha256 = \"{}\", scopes = [\"write\"] }},\n  {{ name = \"ops\", sha256 = \"{}\", scopes = [\"admin\"] }},\n]\n",
        txmap_server::auth::hash(WRITER),
        txmap_server::auth::hash(ADMIN)
    );
    if store {
        c.push_str("[store]\npath = \"data/resources.sqlite\"\n");
    }
    c
}

struct Server {
    addr: SocketAddr,
    _stop: tokio::sync::oneshot::Sender<()>,
}

fn start(dir: &Path, store: bool) -> Server {
    let state = common::serve(dir, &config(store));
    let (addr, stop, _) = common::listen(Live::new(state, txmap_server::app::router));
    Server { addr, _stop: stop }
}

impl Server {
    fn call(&self, method: &str, path: &str, token: Option<&str>, body: Option<&Value>) -> Answer {
        self.with(method, path, token, &[], body)
    }

    fn with(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        extra: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Answer {
        let auth = token.map(|t| format!("Bearer {t}"));
        let mut headers: Vec<(&str, &str)> = extra.to_vec();
        if let Some(a) = &auth {
            headers.push(("Authorization", a));
        }
        let text = body.map(Value::to_string);
        exchange(self.addr, method, path, &headers, text.as_deref())
    }

    /// The codes `$expand` of `url` lists, sorted.
    fn expand(&self, url: &str) -> Vec<String> {
        let a = self.call(
            "GET",
            &format!("/r4/ValueSet/$expand?url={url}"),
            None,
            None,
        );
        assert_eq!(a.status, 200, "{}", a.body);
        let mut codes: Vec<String> = a.json()["expansion"]["contains"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| c["code"].as_str().unwrap().to_owned())
            .collect();
        codes.sort();
        codes
    }

    /// How many ValueSets a search by `url` finds.
    fn found(&self, url: &str) -> u64 {
        let a = self.call("GET", &format!("/r4/ValueSet?url={url}"), None, None);
        a.json()["total"].as_u64().unwrap()
    }
}

fn colors_code_system() -> Value {
    json!({"resourceType": "CodeSystem", "url": "http://example.org/cs/colors", "version": "1",
        "status": "active", "content": "complete",
        "concept": [{"code": "red", "display": "Red"}, {"code": "green", "display": "Green"}]})
}

fn stored_colors(title: &str) -> Value {
    json!({"resourceType": "ValueSet", "url": "http://example.org/vs/stored-colors", "version": "1",
    "status": "active", "title": title,
    "compose": {"include": [
        {"system": "http://example.org/cs/colors"},
        {"valueSet": ["http://example.org/vs/shapes"]}
    ]}})
}

fn issue(a: &Answer) -> String {
    a.json()["issue"][0]["details"]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn stored_resources_are_written_read_versioned_and_take_part_in_operations() {
    let dir = tempfile::tempdir().unwrap();
    package(dir.path());
    let server = start(dir.path(), true);

    // Writes need the write scope; nothing is stored without it.
    let cs = colors_code_system();
    let a = server.call("POST", "/r4/CodeSystem", None, Some(&cs));
    assert_eq!(a.status, 401, "{}", a.body);
    assert!(
        a.header("www-authenticate")
            .is_some_and(|h| h.starts_with("Bearer"))
    );
    assert_eq!(
        server
            .call("POST", "/r4/CodeSystem", Some("not-a-token"), Some(&cs))
            .status,
        401
    );
    let a = server.call("POST", "/r4/CodeSystem", Some(ADMIN), Some(&cs));
    assert_eq!(a.status, 403, "{}", a.body);
    assert!(issue(&a).contains("write"), "{}", a.body);
    let a = server.call(
        "GET",
        "/r4/CodeSystem?url=http://example.org/cs/colors",
        None,
        None,
    );
    assert_eq!(a.json()["total"], 0);

    // Create: 201, Location, ETag, the server's id and meta.
    let a = server.call("POST", "/r4/CodeSystem", Some(WRITER), Some(&cs));
    assert_eq!(a.status, 201, "{}", a.body);
    let made = a.json();
    let cs_id = made["id"].as_str().unwrap().to_owned();
    assert_eq!(made["meta"]["versionId"], "1");
    assert_eq!(a.header("etag"), Some("W/\"1\""));
    assert!(
        a.header("location")
            .is_some_and(|l| l.ends_with(&format!("/r4/CodeSystem/{cs_id}/_history/1"))),
        "{:?}",
        a.headers
    );
    let a = server.call("GET", &format!("/r4/CodeSystem/{cs_id}"), None, None);
    assert_eq!(a.status, 200);
    assert_eq!(a.header("etag"), Some("W/\"1\""));
    assert_eq!(a.json()["concept"][1]["code"], "green");

    // The stored code system answers operations at once.
    let a = server.call(
        "GET",
        "/r4/CodeSystem/$validate-code?url=http://example.org/cs/colors&code=green",
        None,
        None,
    );
    assert!(common::result(&a.json()), "{}", a.body);

    // A stored value set imports a package's, and a package's value set
    // imports the stored one.
    assert_eq!(
        server
            .call(
                "GET",
                "/r4/ValueSet/$expand?url=http://example.org/vs/imports-stored",
                None,
                None
            )
            .status,
        404
    );
    let a = server.with(
        "PUT",
        "/r4/ValueSet/stored-colors",
        Some(WRITER),
        &[],
        Some(&{
            let mut v = stored_colors("First");
            v["id"] = json!("stored-colors");
            v
        }),
    );
    assert_eq!(a.status, 201, "{}", a.body);
    let all = ["circle", "green", "red", "square"];
    assert_eq!(server.expand("http://example.org/vs/stored-colors"), all);
    assert_eq!(server.expand("http://example.org/vs/imports-stored"), all);

    // Update: If-Match must name the current version.
    let mut second = stored_colors("Second");
    second["id"] = json!("stored-colors");
    let a = server.with(
        "PUT",
        "/r4/ValueSet/stored-colors",
        Some(WRITER),
        &[("If-Match", "W/\"7\"")],
        Some(&second),
    );
    assert_eq!(a.status, 412, "{}", a.body);
    let a = server.call("GET", "/r4/ValueSet/stored-colors", None, None);
    assert_eq!(
        a.json()["title"],
        "First",
        "a refused update changes nothing"
    );
    let a = server.with(
        "PUT",
        "/r4/ValueSet/stored-colors",
        Some(WRITER),
        &[("If-Match", "W/\"1\"")],
        Some(&second),
    );
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.header("etag"), Some("W/\"2\""));
    assert_eq!(
        server
            .call("GET", "/r4/ValueSet/stored-colors", None, None)
            .json()["title"],
        "Second"
    );

    // History and vread.
    let a = server.call("GET", "/r4/ValueSet/stored-colors/_history", None, None);
    assert_eq!(a.status, 200, "{}", a.body);
    let h = a.json();
    assert_eq!(h["type"], "history");
    assert_eq!(h["total"], 2);
    assert_eq!(h["entry"][0]["resource"]["title"], "Second");
    assert_eq!(h["entry"][0]["response"]["status"], "200 OK");
    assert_eq!(h["entry"][1]["response"]["status"], "201 Created");
    let a = server.call("GET", "/r4/ValueSet/stored-colors/_history/1", None, None);
    assert_eq!(a.status, 200);
    assert_eq!(a.json()["title"], "First");
    assert_eq!(
        server
            .call("GET", "/r4/ValueSet/stored-colors/_history/9", None, None)
            .status,
        404
    );
    assert_eq!(
        server
            .call("GET", "/r4/ValueSet/shapes/_history", None, None)
            .status,
        404
    );

    // Conditional create: a match is answered, nothing new is stored.
    let a = server.with(
        "POST",
        "/r4/ValueSet",
        Some(WRITER),
        &[(
            "If-None-Exist",
            "url=http://example.org/vs/stored-colors&version=1",
        )],
        Some(&stored_colors("Third")),
    );
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.json()["title"], "Second");
    assert_eq!(server.found("http://example.org/vs/stored-colors"), 1);

    // Package content cannot be replaced or shadowed: 409 naming it.
    let mut shadow = stored_colors("Shadow");
    shadow["url"] = json!("http://example.org/vs/shapes");
    let a = server.call("POST", "/r4/ValueSet", Some(WRITER), Some(&shadow));
    assert_eq!(a.status, 409, "{}", a.body);
    assert!(issue(&a).contains("example.pkg#1.0.0"), "{}", a.body);
    let mut by_id = stored_colors("By id");
    by_id["id"] = json!("shapes");
    by_id["url"] = json!("http://example.org/vs/other");
    let a = server.call("PUT", "/r4/ValueSet/shapes", Some(WRITER), Some(&by_id));
    assert_eq!(a.status, 409, "{}", a.body);
    assert_eq!(
        server
            .call("DELETE", "/r4/ValueSet/shapes", Some(WRITER), None)
            .status,
        409
    );
    assert_eq!(
        server.expand("http://example.org/vs/shapes"),
        ["circle", "square"]
    );
    // Nor can two stored resources share url and version.
    let a = server.call(
        "POST",
        "/r4/ValueSet",
        Some(WRITER),
        Some(&stored_colors("Twin")),
    );
    assert_eq!(a.status, 409, "{}", a.body);
    assert!(issue(&a).contains("stored-colors"), "{}", a.body);

    // What cannot be stored is refused, and nothing is.
    for (body, status) in [
        ("{not json", 400),
        (
            "{\"resourceType\": \"CodeSystem\", \"url\": \"http://x\", \"status\": \"active\", \"content\": \"complete\"}",
            400,
        ),
        (
            "{\"resourceType\": \"ValueSet\", \"status\": \"active\"}",
            422,
        ),
        (
            "{\"resourceType\": \"ValueSet\", \"url\": \"http://example.org/vs/bad\", \"status\": \"active\", \"compose\": {\"include\": [{\"concept\": [{\"code\": \"a\"}]}]}}",
            422,
        ),
    ] {
        let a = exchange(
            server.addr,
            "POST",
            "/r4/ValueSet",
            &[("Authorization", &format!("Bearer {WRITER}"))],
            Some(body),
        );
        assert_eq!(a.status, status, "{body}: {}", a.body);
        assert_eq!(a.json()["resourceType"], "OperationOutcome", "{body}");
    }
    assert_eq!(server.found("http://example.org/vs/bad"), 0);
    let a = server.call(
        "PUT",
        "/r4/ValueSet/has%20space",
        Some(WRITER),
        Some(&stored_colors("x")),
    );
    assert_eq!(a.status, 400, "{}", a.body);
    for (method, path) in [
        ("PUT", "/r4/ValueSet/%FF"),
        ("DELETE", "/r4/ValueSet/%FF"),
        ("GET", "/r4/ValueSet/%FF/_history"),
        ("GET", "/r4/ValueSet/%FF/_history/1"),
    ] {
        let a = server.call(method, path, Some(WRITER), Some(&stored_colors("x")));
        assert_eq!(a.status, 400, "{method} {path}: {}", a.body);
        assert_eq!(
            a.json()["resourceType"],
            "OperationOutcome",
            "{method} {path}"
        );
    }

    // Delete: 204, then 410 on read, gone from operations; again: 204.
    let a = server.with(
        "DELETE",
        "/r4/ValueSet/stored-colors",
        Some(WRITER),
        &[("If-Match", "W/\"1\"")],
        None,
    );
    assert_eq!(a.status, 412);
    assert_eq!(
        server
            .call("DELETE", "/r4/ValueSet/stored-colors", None, None)
            .status,
        401
    );
    let a = server.call("DELETE", "/r4/ValueSet/stored-colors", Some(WRITER), None);
    assert_eq!(a.status, 204, "{}", a.body);
    assert_eq!(a.header("etag"), Some("W/\"3\""));
    assert_eq!(
        server
            .call("GET", "/r4/ValueSet/stored-colors", None, None)
            .status,
        410
    );
    assert_eq!(
        server
            .call(
                "GET",
                "/r4/ValueSet/$expand?url=http://example.org/vs/stored-colors",
                None,
                None
            )
            .status,
        404
    );
    assert_eq!(
        server
            .call("DELETE", "/r4/ValueSet/stored-colors", Some(WRITER), None)
            .status,
        204
    );
    assert_eq!(
        server
            .call("DELETE", "/r4/ValueSet/never-was", Some(WRITER), None)
            .status,
        404
    );
    let a = server.call("GET", "/r4/ValueSet/stored-colors/_history/3", None, None);
    assert_eq!(a.status, 410);

    // The metadata declares what is honoured.
    let cs = server.call("GET", "/r4/metadata", None, None).json();
    let interactions: Vec<&str> = cs["rest"][0]["resource"][2]["interaction"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["code"].as_str().unwrap())
        .collect();
    for want in [
        "read",
        "search-type",
        "create",
        "update",
        "delete",
        "vread",
        "history-instance",
    ] {
        assert!(interactions.contains(&want), "{interactions:?}");
    }

    let status = server.call("GET", "/status", None, None).json();
    assert_eq!(
        status["served"]["storedResources"], 1,
        "the code system; the value set is deleted"
    );

    // A new server on the same file serves what was written.
    drop(server);
    let again = start(dir.path(), true);
    let a = again.call("GET", &format!("/r4/CodeSystem/{cs_id}"), None, None);
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.header("etag"), Some("W/\"1\""));
    assert_eq!(
        again
            .call("GET", "/r4/ValueSet/stored-colors", None, None)
            .status,
        410
    );
}

#[test]
fn without_a_store_writes_are_not_offered() {
    let dir = tempfile::tempdir().unwrap();
    package(dir.path());
    let server = start(dir.path(), false);
    let a = server.call(
        "POST",
        "/r4/CodeSystem",
        Some(WRITER),
        Some(&colors_code_system()),
    );
    assert_eq!(a.status, 405, "{}", a.body);
    let cs = server.call("GET", "/r4/metadata", None, None).json();
    let interactions: Vec<&str> = cs["rest"][0]["resource"][0]["interaction"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["code"].as_str().unwrap())
        .collect();
    assert_eq!(interactions, ["read", "search-type"]);
    assert!(!dir.path().join("data/resources.sqlite").exists());
}

#[test]
fn closed_reads_need_a_token() {
    let dir = tempfile::tempdir().unwrap();
    package(dir.path());
    let config = format!("{}\n", config(false)).replace("[auth]\n", "[auth]\nread = \"token\"\n");
    let state = common::serve(dir.path(), &config);
    let (addr, _stop, _) = common::listen(Live::new(state, txmap_server::app::router));
    let a = exchange(
        addr,
        "GET",
        "/r4/ValueSet?url=http://example.org/vs/shapes",
        &[],
        None,
    );
    assert_eq!(a.status, 401, "{}", a.body);
    let auth = format!("Bearer {WRITER}");
    let a = exchange(
        addr,
        "GET",
        "/r4/ValueSet?url=http://example.org/vs/shapes",
        &[("Authorization", &auth)],
        None,
    );
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.json()["total"], 1);
    // Diagnostics stay open.
    assert_eq!(exchange(addr, "GET", "/livez", &[], None).status, 200);
}

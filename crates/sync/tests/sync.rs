//! The sync against a feed and releases served by the test itself on
//! 127.0.0.1: a good release (an RF2 edition, a FHIR package, a LOINC
//! release) installed once and retracted, a wrong digest, a truncated
//! download, a feed that is not Atom, an entry without a digest, a
//! missing dependency, an expired OAuth2 token renewed and one that
//! cannot be. Expected files are made independently: the same RF2 imported
//! directly, the package's own bytes.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::json;
use sha2::{Digest, Sha256};
use txmap_sync::config::{Credentials, FeedConfig, SyncConfig};
use txmap_sync::fetch::Client;
use txmap_sync::{SyncError, sync};

/// What a route answers.
#[derive(Clone)]
struct Answer {
    status: u16,
    body: Vec<u8>,
    /// Send only this many bytes of the body (the declared length stays).
    cut_at: Option<usize>,
}

type Route = Arc<dyn Fn(&HashMap<String, String>) -> Answer + Send + Sync>;

/// A tiny HTTP/1.1 server: one request per connection.
struct Server {
    addr: SocketAddr,
    routes: Arc<Mutex<HashMap<String, Route>>>,
    hits: Arc<Mutex<HashMap<String, usize>>>,
}

impl Server {
    fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let routes: Arc<Mutex<HashMap<String, Route>>> = Arc::default();
        let hits: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
        let (r, h) = (Arc::clone(&routes), Arc::clone(&hits));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    continue;
                }
                let path = line.split(' ').nth(1).unwrap_or("/").to_owned();
                let mut headers = HashMap::new();
                loop {
                    let mut l = String::new();
                    if reader.read_line(&mut l).unwrap_or(0) == 0 || l == "\r\n" {
                        break;
                    }
                    if let Some((k, v)) = l.split_once(':') {
                        headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
                    }
                }
                let length: usize = headers
                    .get("content-length")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                *h.lock().unwrap().entry(path.clone()).or_default() += 1;
                let route = r.lock().unwrap().get(&path).cloned();
                let answer = match route {
                    Some(f) => f(&headers),
                    None => Answer {
                        status: 404,
                        body: b"not here".to_vec(),
                        cut_at: None,
                    },
                };
                let sent = &answer.body[..answer.cut_at.unwrap_or(answer.body.len())];
                let _ = write!(
                    stream,
                    "HTTP/1.1 {} X\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    answer.status,
                    answer.body.len()
                );
                let _ = stream.write_all(sent);
            }
        });
        Server { addr, routes, hits }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn serve(&self, path: &str, body: Vec<u8>) {
        self.route(path, move |_| Answer {
            status: 200,
            body: body.clone(),
            cut_at: None,
        });
    }

    fn route(
        &self,
        path: &str,
        f: impl Fn(&HashMap<String, String>) -> Answer + Send + Sync + 'static,
    ) {
        self.routes
            .lock()
            .unwrap()
            .insert(path.to_owned(), Arc::new(f));
    }

    fn hits(&self, path: &str) -> usize {
        self.hits.lock().unwrap().get(path).copied().unwrap_or(0)
    }
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn md5(bytes: &[u8]) -> String {
    use md5::Md5;
    Md5::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// One feed entry, as NCTS writes them (`digest` is the link's digest
/// attributes, `length` its length attribute).
fn entry(
    category: &str,
    identifier: &str,
    version: &str,
    link: Option<(&str, &str, &str)>,
    deps: &[&str],
) -> String {
    let link = link
        .map(|(href, length, digest)| {
            format!(r#"<link rel="alternate" type="application/octet-stream" href="{href}" length="{length}" {digest}/>"#)
        })
        .unwrap_or_default();
    let deps = if deps.is_empty() {
        String::new()
    } else {
        format!(
            "<sct:packageDependency>{}</sct:packageDependency>",
            deps.iter()
                .map(|d| format!("<sct:editionDependency>{d}</sct:editionDependency>"))
                .collect::<String>()
        )
    };
    format!(
        r#"<entry><id>urn:uuid:{version}</id><title>{version}</title><updated>2026-08-01T00:00:00Z</updated>
  <category scheme="http://ns.electronichealth.net.au/ncts/syndication/asf/scheme/1.0.0" term="{category}"/>
  {link}
  <ncts:contentItemIdentifier>{identifier}</ncts:contentItemIdentifier>
  <ncts:contentItemVersion>{version}</ncts:contentItemVersion>{deps}</entry>"#
    )
}

fn feed(entries: &[String]) -> Vec<u8> {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"
      xmlns:ncts="http://ns.electronichealth.net.au/ncts/syndication/asf/extensions/1.0.0"
      xmlns:sct="http://snomed.info/syndication/sct-extension/1.0.0">
  <id>urn:uuid:feed</id><title>Test feed</title><updated>2026-08-01T00:00:00Z</updated>
  {}
</feed>"#,
        entries.join("\n")
    )
    .into_bytes()
}

fn config(root: &Path, server: &Server) -> SyncConfig {
    SyncConfig {
        editions: root.join("editions"),
        packages: None,
        state: None,
        reload: None,
        feeds: vec![FeedConfig {
            url: server.url("/feed.xml"),
            categories: vec![
                "SCT_RF2_SNAPSHOT".into(),
                "FHIR_Package".into(),
                "LOINC".into(),
            ],
            identifiers: Vec::new(),
        }],
        credentials: Vec::new(),
    }
}

/// The files in `dir` (not its sub-folders), by name.
fn files(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// Zips a folder, paths relative to it.
fn zip_dir(dir: &Path, to: &Path) {
    fn add(w: &mut zip::ZipWriter<std::fs::File>, root: &Path, dir: &Path) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for p in entries {
            let name = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                add(w, root, &p);
            } else {
                w.start_file(name, zip::write::SimpleFileOptions::default())
                    .unwrap();
                w.write_all(&std::fs::read(&p).unwrap()).unwrap();
            }
        }
    }
    let mut w = zip::ZipWriter::new(std::fs::File::create(to).unwrap());
    add(&mut w, dir, dir);
    w.finish().unwrap();
}

const SCT: &str = "http://snomed.info/sct/900000000000207008";
const SCT_V: &str = "http://snomed.info/sct/900000000000207008/version/20260131";

/// A synthetic RF2 release, zipped: its bytes.
fn rf2_zip(root: &Path) -> Vec<u8> {
    let zip = root.join("release.zip");
    let mut config = txmap_synth::SynthConfig::new(300, 7);
    config.effective_time = 20260131; // the version SCT_V says
    txmap_synth::generate(&config, &zip).unwrap();
    std::fs::read(&zip).unwrap()
}

fn package_tgz() -> Vec<u8> {
    txmap_packages::pack_json(&[
        (
            "package/package.json",
            json!({"name": "example.feed", "version": "1.2.0", "fhirVersions": ["4.0.1"]}),
        ),
        (
            "package/CodeSystem-x.json",
            json!({"resourceType": "CodeSystem", "url": "http://example.org/cs", "status": "active",
                "content": "complete", "concept": [{"code": "a"}]}),
        ),
    ])
    .unwrap()
}

#[test]
fn a_good_release_is_installed_once_and_a_retraction_takes_it_out() {
    let root = tempfile::tempdir().unwrap();
    let server = Server::start();
    let rf2 = rf2_zip(root.path());
    let tgz = package_tgz();
    let loinc_src = root.path().join("loinc-src");
    txmap_codesystems::synth::write_release(
        &loinc_src.join("Loinc_2.82"),
        txmap_codesystems::synth::Shape { terms: 40 },
    )
    .unwrap();
    let loinc_zip = root.path().join("loinc.zip");
    zip_dir(&loinc_src, &loinc_zip);
    let loinc = std::fs::read(&loinc_zip).unwrap();
    server.serve("/rf2.zip", rf2.clone());
    server.serve("/pkg.tgz", tgz.clone());
    server.serve("/loinc.zip", loinc.clone());
    // The RF2 with SHA-256; the package with MD5 only and a length with
    // commas, as MLDS writes, its link after a related one.
    let with_commas = {
        let digits = tgz.len().to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    };
    let entries = good_feed(&server, &rf2, &tgz, &loinc, &with_commas);
    server.serve("/feed.xml", feed(&entries));
    let cfg = config(root.path(), &server);
    let mut client = Client::new(Vec::new());
    let mut log = |_: &str| {};
    let report = sync(&cfg, None, &mut client, &mut log).unwrap();
    assert_eq!(report.installed.len(), 3, "{report:?}");
    assert_eq!(
        files(&cfg.editions),
        ["loinc-2.82.txmap", "sct-900000000000207008-20260131.txmap"]
    );
    assert_eq!(files(&cfg.packages_dir()), ["example.feed-1.2.0.tgz"]);
    assert_eq!(
        std::fs::read(cfg.packages_dir().join("example.feed-1.2.0.tgz")).unwrap(),
        tgz
    );
    // The edition is what importing the same release directly makes (a
    // file records its release's name: the same name here).
    let same_name = root.path().join("sct-900000000000207008-20260131.zip");
    std::fs::copy(root.path().join("release.zip"), &same_name).unwrap();
    let direct = root.path().join("direct.txmap");
    txmap_import::import(
        &txmap_import::ImportOptions::new(vec![same_name], direct.clone()),
        &txmap_import::Quiet,
    )
    .unwrap();
    let synced = std::fs::read(cfg.editions.join("sct-900000000000207008-20260131.txmap")).unwrap();
    assert!(
        synced == std::fs::read(&direct).unwrap(),
        "the synced edition differs from a direct import"
    );
    assert!(files(&cfg.work_dir().join("staging")).is_empty());

    // Again: nothing is downloaded.
    let report = sync(&cfg, None, &mut client, &mut log).unwrap();
    assert!(!report.changed(), "{report:?}");
    assert_eq!(report.unchanged, 3);
    assert_eq!(server.hits("/rf2.zip"), 1);
    assert_eq!(server.hits("/pkg.tgz"), 1);
    assert_eq!(server.hits("/old.tgz"), 0, "the older version is not taken");

    // A retraction of the edition takes it out of the served folder.
    let mut with_retraction = entries.clone();
    with_retraction.push(entry("BINARY_RETRACT", SCT, SCT_V, None, &[]));
    server.serve("/feed.xml", feed(&with_retraction));
    let report = sync(&cfg, None, &mut client, &mut log).unwrap();
    assert_eq!(report.retracted, [SCT_V]);
    assert_eq!(files(&cfg.editions), ["loinc-2.82.txmap"]);
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(cfg.state_file()).unwrap()).unwrap();
    assert!(state["installed"].get(SCT_V).is_none());
    assert!(state["installed"].get("example.feed|1.2.0").is_some());
}

/// The feed of the good release: the three entries, and an older version
/// of the package (1.1.0), which is not taken.
fn good_feed(
    server: &Server,
    rf2: &[u8],
    tgz: &[u8],
    loinc: &[u8],
    with_commas: &str,
) -> Vec<String> {
    vec![
        entry(
            "SCT_RF2_SNAPSHOT",
            SCT,
            SCT_V,
            Some((
                &server.url("/rf2.zip"),
                &rf2.len().to_string(),
                &format!("ncts:sha256Hash=\"{}\"", sha256(rf2)),
            )),
            &[],
        ),
        entry(
            "FHIR_Package",
            "example.feed",
            "example.feed|1.2.0",
            Some((
                &server.url("/pkg.tgz"),
                with_commas,
                &format!("sct:md5Hash=\"{}\"", md5(tgz)),
            )),
            &[],
        )
        .replace(
            "<link rel=\"alternate\"",
            "<link rel=\"related\" href=\"http://x/notes\"/><link rel=\"alternate\"",
        ),
        entry(
            "LOINC",
            "http://loinc.org",
            "http://loinc.org|2.82",
            Some((
                &server.url("/loinc.zip"),
                &loinc.len().to_string(),
                &format!("ncts:sha256Hash=\"{}\"", sha256(loinc)),
            )),
            &[],
        ),
        entry(
            "FHIR_Package",
            "example.feed",
            "example.feed|1.1.0",
            Some((&server.url("/old.tgz"), "1", "ncts:sha256Hash=\"00\"")),
            &[],
        ),
    ]
}

/// A feed of one package entry whose link is `link`, and a run of it:
/// the error, and the served folders afterwards (which must be empty).
fn one_entry_fails(
    link: impl Fn(&Server, &[u8]) -> (String, String, String),
    serve: impl Fn(&Server, Vec<u8>),
) -> String {
    let root = tempfile::tempdir().unwrap();
    let server = Server::start();
    let tgz = package_tgz();
    serve(&server, tgz.clone());
    let (href, length, digest) = link(&server, &tgz);
    server.serve(
        "/feed.xml",
        feed(&[entry(
            "FHIR_Package",
            "example.feed",
            "example.feed|1.2.0",
            Some((&href, &length, &digest)),
            &[],
        )]),
    );
    let cfg = config(root.path(), &server);
    let e = sync(&cfg, None, &mut Client::new(Vec::new()), &mut |_| {}).unwrap_err();
    assert!(files(&cfg.packages_dir()).is_empty(), "{e}");
    assert!(files(&cfg.editions).is_empty(), "{e}");
    assert!(files(&cfg.work_dir().join("downloads")).is_empty(), "{e}");
    assert!(files(&cfg.work_dir().join("staging")).is_empty(), "{e}");
    e.to_string()
}

#[test]
fn a_wrong_digest_changes_nothing() {
    let e = one_entry_fails(
        |s, tgz| {
            let mut wrong = sha256(tgz);
            wrong.replace_range(0..1, if wrong.starts_with('0') { "1" } else { "0" });
            (
                s.url("/pkg.tgz"),
                tgz.len().to_string(),
                format!("ncts:sha256Hash=\"{wrong}\""),
            )
        },
        |s, tgz| s.serve("/pkg.tgz", tgz),
    );
    assert!(
        e.contains("example.feed|1.2.0") && e.contains("SHA-256"),
        "{e}"
    );
    let e = one_entry_fails(
        |s, tgz| {
            (
                s.url("/pkg.tgz"),
                tgz.len().to_string(),
                "sct:md5Hash=\"0123456789abcdef0123456789abcdef\"".into(),
            )
        },
        |s, tgz| s.serve("/pkg.tgz", tgz),
    );
    assert!(e.contains("MD5"), "{e}");
    let e = one_entry_fails(
        |s, tgz| (s.url("/pkg.tgz"), tgz.len().to_string(), String::new()),
        |s, tgz| s.serve("/pkg.tgz", tgz),
    );
    assert!(e.contains("no digest"), "{e}");
}

#[test]
fn a_truncated_download_changes_nothing() {
    let e = one_entry_fails(
        |s, tgz| {
            (
                s.url("/pkg.tgz"),
                tgz.len().to_string(),
                format!("ncts:sha256Hash=\"{}\"", sha256(tgz)),
            )
        },
        |s, tgz| {
            let half = tgz.len() / 2;
            s.route("/pkg.tgz", move |_| Answer {
                status: 200,
                body: tgz.clone(),
                cut_at: Some(half),
            })
        },
    );
    assert!(e.contains("example.feed|1.2.0"), "{e}");
    // A length that is not the bytes' is refused too, even when the
    // digest would pass.
    let e = one_entry_fails(
        |s, tgz| {
            (
                s.url("/pkg.tgz"),
                (tgz.len() + 1).to_string(),
                format!("ncts:sha256Hash=\"{}\"", sha256(tgz)),
            )
        },
        |s, tgz| s.serve("/pkg.tgz", tgz),
    );
    assert!(e.contains("bytes, and the feed says"), "{e}");
}

#[test]
fn a_feed_that_is_not_atom_is_an_error_naming_it() {
    let root = tempfile::tempdir().unwrap();
    let server = Server::start();
    server.serve(
        "/feed.xml",
        b"<html><body>Please log in</body></html>".to_vec(),
    );
    let cfg = config(root.path(), &server);
    let e = sync(&cfg, None, &mut Client::new(Vec::new()), &mut |_| {}).unwrap_err();
    assert!(matches!(e, SyncError::Feed { .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("/feed.xml") && text.contains("not an Atom feed"),
        "{text}"
    );
    // A feed that answers 404: an error naming its URL and the status.
    let e = sync(
        &cfg,
        Some(&server.url("/nothing.xml")),
        &mut Client::new(Vec::new()),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("/nothing.xml: answered 404"), "{e}");
}

#[test]
fn a_missing_dependency_is_named() {
    let root = tempfile::tempdir().unwrap();
    let server = Server::start();
    let rf2 = rf2_zip(root.path());
    server.serve("/rf2.zip", rf2.clone());
    let base = "http://snomed.info/sct/900000000000207008/version/20250131";
    server.serve(
        "/feed.xml",
        feed(&[entry(
            "SCT_RF2_SNAPSHOT",
            "http://snomed.info/sct/45991000052106",
            "http://snomed.info/sct/45991000052106/version/20260131",
            Some((
                &server.url("/rf2.zip"),
                &rf2.len().to_string(),
                &format!("ncts:sha256Hash=\"{}\"", sha256(&rf2)),
            )),
            &[base],
        )]),
    );
    let cfg = config(root.path(), &server);
    let e = sync(&cfg, None, &mut Client::new(Vec::new()), &mut |_| {}).unwrap_err();
    assert!(
        matches!(&e, SyncError::Dependency { missing, .. } if missing == base),
        "{e}"
    );
    assert!(files(&cfg.editions).is_empty());
}

/// A feed behind OAuth2: tokens are numbered; the server takes only the
/// one named `good`.
fn behind_oauth(good: &'static str) -> (tempfile::TempDir, Server, SyncConfig, Arc<Mutex<u32>>) {
    let root = tempfile::tempdir().unwrap();
    let server = Server::start();
    let issued = Arc::new(Mutex::new(0u32));
    let counter = Arc::clone(&issued);
    server.route("/token", move |_| {
        let mut n = counter.lock().unwrap();
        *n += 1;
        Answer {
            status: 200,
            body: format!(r#"{{"access_token": "t{n}", "expires_in": 300}}"#).into_bytes(),
            cut_at: None,
        }
    });
    let tgz = package_tgz();
    let sha = sha256(&tgz);
    let len = tgz.len();
    let guarded = move |body: Vec<u8>| {
        move |h: &HashMap<String, String>| {
            if h.get("authorization").map(String::as_str) == Some(&format!("Bearer {good}")[..]) {
                Answer {
                    status: 200,
                    body: body.clone(),
                    cut_at: None,
                }
            } else {
                Answer {
                    status: 401,
                    body: b"expired".to_vec(),
                    cut_at: None,
                }
            }
        }
    };
    server.route("/pkg.tgz", guarded(tgz));
    let feed_body = feed(&[entry(
        "FHIR_Package",
        "example.feed",
        "example.feed|1.2.0",
        Some((
            &server.url("/pkg.tgz"),
            &len.to_string(),
            &format!("ncts:sha256Hash=\"{sha}\""),
        )),
        &[],
    )]);
    server.route("/feed.xml", guarded(feed_body));
    let secret = root.path().join("secret");
    std::fs::write(&secret, "s3cret\n").unwrap();
    let mut cfg = config(root.path(), &server);
    cfg.credentials = vec![Credentials {
        host: server.addr.to_string(),
        kind: "oauth2".into(),
        username: None,
        password_env: None,
        password_file: None,
        token_env: None,
        token_file: None,
        token_url: Some(server.url("/token")),
        client_id: Some("me".into()),
        client_secret_env: None,
        client_secret_file: Some(secret),
    }];
    cfg.check().unwrap();
    (root, server, cfg, issued)
}

#[test]
fn an_expired_token_is_renewed_once() {
    // The first token (t1) is refused as expired; the second works.
    let (_root, server, cfg, issued) = behind_oauth("t2");
    let mut client = Client::new(cfg.credentials.clone());
    let report = sync(&cfg, None, &mut client, &mut |_| {}).unwrap();
    assert_eq!(report.installed.len(), 1);
    assert_eq!(*issued.lock().unwrap(), 2);
    assert_eq!(server.hits("/feed.xml"), 2);
    // The credentials never show their secret.
    assert!(!format!("{:?}", cfg.credentials).contains("s3cret"));
}

#[test]
fn a_token_that_stays_refused_is_an_error() {
    let (_root, server, cfg, issued) = behind_oauth("never");
    let mut client = Client::new(cfg.credentials.clone());
    let e = sync(&cfg, None, &mut client, &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("/feed.xml: answered 401"), "{e}");
    assert_eq!(*issued.lock().unwrap(), 2, "renewed once, not in a loop");
    assert_eq!(server.hits("/pkg.tgz"), 0);
}

#[test]
fn a_release_that_is_not_what_the_feed_says_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let server = Server::start();
    let rf2 = rf2_zip(root.path());
    server.serve("/rf2.zip", rf2.clone());
    // The feed calls the 2026-01-31 release 2027-01-31.
    let claimed = "http://snomed.info/sct/900000000000207008/version/20270131";
    server.serve(
        "/feed.xml",
        feed(&[entry(
            "SCT_RF2_SNAPSHOT",
            SCT,
            claimed,
            Some((
                &server.url("/rf2.zip"),
                &rf2.len().to_string(),
                &format!("ncts:sha256Hash=\"{}\"", sha256(&rf2)),
            )),
            &[],
        )]),
    );
    let cfg = config(root.path(), &server);
    let e = sync(&cfg, None, &mut Client::new(Vec::new()), &mut |_| {}).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("version/20260131") && text.contains(claimed),
        "{text}"
    );
    assert!(files(&cfg.editions).is_empty());
    assert!(files(&cfg.work_dir().join("staging")).is_empty());

    // A package under another package's name, the same.
    let tgz = package_tgz();
    server.serve("/pkg.tgz", tgz.clone());
    server.serve(
        "/feed.xml",
        feed(&[entry(
            "FHIR_Package",
            "other.pkg",
            "other.pkg|9.9.9",
            Some((
                &server.url("/pkg.tgz"),
                &tgz.len().to_string(),
                &format!("ncts:sha256Hash=\"{}\"", sha256(&tgz)),
            )),
            &[],
        )]),
    );
    let e = sync(&cfg, None, &mut Client::new(Vec::new()), &mut |_| {}).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("example.feed#1.2.0") && text.contains("other.pkg#9.9.9"),
        "{text}"
    );
    assert!(files(&cfg.packages_dir()).is_empty());
}

/// The version URI an edition file records.
fn version_uri(file: &Path) -> String {
    let f = std::fs::File::open(file).unwrap();
    txmap_format::peek_metadata(&f).unwrap()["version_uri"].clone()
}

#[test]
fn a_derivative_is_imported_over_the_edition_it_depends_on() {
    let root = tempfile::tempdir().unwrap();
    let server = Server::start();
    let base = rf2_zip(root.path());
    let ext_zip = root.path().join("ext.zip");
    let mut ext_config = txmap_synth::SynthConfig::new(40, 9);
    ext_config.effective_time = 20260301;
    let mut over = txmap_synth::ExtensionConfig::new(300, 7, 1000124);
    over.base_effective_time = 20260131;
    ext_config.extension = Some(over);
    txmap_synth::generate(&ext_config, &ext_zip).unwrap();
    let ext = std::fs::read(&ext_zip).unwrap();

    // The extension's own version URI, from an import of it over its base.
    let probe = root.path().join("probe.txmap");
    txmap_import::import(
        &txmap_import::ImportOptions::new(
            vec![root.path().join("release.zip"), ext_zip.clone()],
            probe.clone(),
        ),
        &txmap_import::Quiet,
    )
    .unwrap();
    let ext_version = version_uri(&probe).replace("/xsct/", "/sct/");
    let (ext_module, _) = ext_version
        .trim_start_matches("http://snomed.info/sct/")
        .split_once('/')
        .unwrap();
    let ext_identifier = format!("http://snomed.info/sct/{ext_module}");

    server.serve("/base.zip", base.clone());
    server.serve("/ext.zip", ext.clone());
    // The derivative first in the feed: its dependency is found anyway.
    server.serve(
        "/feed.xml",
        feed(&[
            entry(
                "SCT_RF2_SNAPSHOT",
                &ext_identifier,
                &ext_version,
                Some((
                    &server.url("/ext.zip"),
                    &ext.len().to_string(),
                    &format!("ncts:sha256Hash=\"{}\"", sha256(&ext)),
                )),
                &[SCT_V],
            ),
            entry(
                "SCT_RF2_SNAPSHOT",
                SCT,
                SCT_V,
                Some((
                    &server.url("/base.zip"),
                    &base.len().to_string(),
                    &format!("ncts:sha256Hash=\"{}\"", sha256(&base)),
                )),
                &[],
            ),
        ]),
    );
    let cfg = config(root.path(), &server);
    let report = sync(&cfg, None, &mut Client::new(Vec::new()), &mut |_| {}).unwrap();
    let installed: Vec<&str> = report.installed.iter().map(|(v, _)| v.as_str()).collect();
    assert_eq!(installed.len(), 2, "{installed:?}");
    assert_eq!(server.hits("/base.zip"), 1, "the base is downloaded once");

    // What `txmap import --rf2 base --rf2 ext` makes of the same releases
    // under the names the sync gives them.
    let date = ext_version.rsplit('/').next().unwrap();
    let names = [
        root.path().join("sct-900000000000207008-20260131.zip"),
        root.path().join(format!("sct-{ext_module}-{date}.zip")),
    ];
    std::fs::copy(root.path().join("release.zip"), &names[0]).unwrap();
    std::fs::copy(&ext_zip, &names[1]).unwrap();
    let direct = root.path().join("direct.txmap");
    txmap_import::import(
        &txmap_import::ImportOptions::new(names.to_vec(), direct.clone()),
        &txmap_import::Quiet,
    )
    .unwrap();
    let synced =
        std::fs::read(cfg.editions.join(format!("sct-{ext_module}-{date}.txmap"))).unwrap();
    assert!(
        synced == std::fs::read(&direct).unwrap(),
        "the derivative is not its import over its base"
    );
}

//! A write answered is a write kept: `txmap serve` is killed (`SIGKILL`)
//! while clients stream writes to it, started again on the same files,
//! and every write it acknowledged is there, and no write is there in
//! part (every stored resource is whole JSON, and its history has exactly
//! as many versions as its `meta.versionId` says).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const TOKEN: &str = "a-writer-token-for-the-crash-test";

/// One exchange: status and body (0 and empty if the server is gone).
fn exchange(addr: SocketAddr, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_secs(2)) else {
        return (0, String::new());
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(20)));
    let body = body.unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/fhir+json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    if s.write_all(request.as_bytes()).is_err() {
        return (0, String::new());
    }
    let mut out = Vec::new();
    if s.read_to_end(&mut out).is_err() {
        return (0, String::new());
    }
    let text = String::from_utf8_lossy(&out).into_owned();
    let Some((head, body)) = text.split_once("\r\n\r\n") else {
        return (0, String::new());
    };
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    // A status line without its whole body is not an answer.
    let length = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse::<usize>().unwrap_or(usize::MAX))
        })
        .unwrap_or(0);
    if body.len() != length {
        return (0, String::new());
    }
    (status, body.to_owned())
}

fn start(config: &Path, addr: SocketAddr) -> Child {
    let child = Command::new(env!("CARGO_BIN_EXE_txmap"))
        .args(["serve", "--config", config.to_str().unwrap()])
        .args(["--listen", &addr.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while exchange(addr, "GET", "/livez", None).0 != 200 {
        assert!(Instant::now() < deadline, "the server did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}

fn value_set(id: &str, n: usize) -> String {
    // Big enough that a write takes a while to store.
    let concepts: Vec<Value> = (0..200)
        .map(|i| json!({"code": format!("c{i}"), "display": format!("Concept {i} of {id}")}))
        .collect();
    json!({"resourceType": "ValueSet", "id": id, "url": format!("http://example.org/vs/{id}"),
        "version": "1", "status": "active", "title": format!("write {n}"),
        "compose": {"include": [{"system": "http://example.org/cs", "concept": concepts}]}})
    .to_string()
}

#[test]
fn every_acknowledged_write_survives_a_kill_and_none_is_half_there() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("txmap.toml");
    std::fs::write(
        &config,
        format!(
            "[store]\npath = \"data/resources.sqlite\"\n[auth]\ntokens = [{{ name = \"crash\", sha256 = \"{}\", scopes = [\"write\"] }}]\n",
            txmap_server::auth::hash(TOKEN)
        ),
    )
    .unwrap();
    let addr = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap()
    };
    let mut server = start(&config, addr);

    // Two writers: new resources, and updates of each one's first.
    let acked: Arc<Mutex<Vec<(String, u64)>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let (acked, stop) = (Arc::clone(&acked), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    let id = if n % 3 == 2 {
                        format!("w{w}-0")
                    } else {
                        format!("w{w}-{n}")
                    };
                    let (status, body) = exchange(
                        addr,
                        "PUT",
                        &format!("/r4/ValueSet/{id}"),
                        Some(&value_set(&id, n)),
                    );
                    if status == 200 || status == 201 {
                        let v: Value = serde_json::from_str(&body).unwrap();
                        let version = v["meta"]["versionId"].as_str().unwrap().parse().unwrap();
                        acked.lock().unwrap().push((id, version));
                    } else if status == 0 {
                        return;
                    } else {
                        panic!("a write was refused: {status} {body}");
                    }
                    n += 1;
                }
            })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    while acked.lock().unwrap().len() < 60 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    server.kill().unwrap(); // SIGKILL, in the middle of the stream
    server.wait().unwrap();
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    assert!(
        acked.len() >= 60,
        "only {} writes before the deadline",
        acked.len()
    );

    let mut server = start(&config, addr);
    for (id, version) in &acked {
        let (status, body) = exchange(addr, "GET", &format!("/r4/ValueSet/{id}"), None);
        assert_eq!(status, 200, "{id}: acknowledged, then lost");
        let v: Value = serde_json::from_str(&body).unwrap();
        let have: u64 = v["meta"]["versionId"].as_str().unwrap().parse().unwrap();
        assert!(
            have >= *version,
            "{id}: acknowledged version {version}, found {have}"
        );
    }
    let (status, body) = exchange(addr, "GET", "/r4/ValueSet?_count=1000", None);
    assert_eq!(status, 200);
    let bundle: Value = serde_json::from_str(&body).unwrap();
    let entries = bundle["entry"].as_array().unwrap();
    assert!(entries.len() >= acked.iter().filter(|(_, v)| *v == 1).count());
    for e in entries {
        let r = &e["resource"];
        let id = r["id"].as_str().unwrap();
        assert_eq!(
            r["compose"]["include"][0]["concept"]
                .as_array()
                .map(Vec::len),
            Some(200),
            "{id} is not whole"
        );
        let version: u64 = r["meta"]["versionId"].as_str().unwrap().parse().unwrap();
        let (status, body) = exchange(addr, "GET", &format!("/r4/ValueSet/{id}/_history"), None);
        assert_eq!(status, 200);
        let history: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            history["total"], version,
            "{id}: a version without its history, or the reverse"
        );
    }
    server.kill().unwrap();
    server.wait().unwrap();
}

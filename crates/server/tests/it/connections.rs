//! The connection layer over real sockets on loopback: incomplete
//! headers and slow bodies are cut off, oversized bodies are drained and
//! answered 413 (the client reads the answer, not a reset), the number of
//! connections is capped, and shutdown ends within its grace period.

use crate::common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use txmap_server::app::AppState;

/// A server on an ephemeral port with tight limits, and the means to stop
/// it; the runtime lives on its own thread.
struct Running {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: std::sync::mpsc::Receiver<Instant>,
    _dir: tempfile::TempDir,
}

const LIMITS: &str = "[limits]\nheader_seconds = 1\nbody_seconds = 1\nmax_connections = 4\nmax_body = \"64KiB\"\nshutdown_grace_seconds = 1\n";

fn start() -> Running {
    start_with(LIMITS)
}

fn start_with(limits: &str) -> Running {
    let dir = tempfile::tempdir().unwrap();
    common::edition(dir.path(), "ed", 300, 1, 20250131);
    let state: Arc<AppState> =
        common::serve(dir.path(), &format!("editions = [\"ed.txmap\"]\n{limits}"));
    let (addr, stop, done) = common::listen(txmap_server::state::Live::new(
        state,
        txmap_server::app::router,
    ));
    Running {
        addr,
        stop: Some(stop),
        done,
        _dir: dir,
    }
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// Everything the server sends until it closes the connection.
fn read_all(s: &mut TcpStream) -> std::io::Result<String> {
    let mut out = Vec::new();
    s.read_to_end(&mut out)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

fn status_line(response: &str) -> &str {
    response.lines().next().unwrap_or_default()
}

#[test]
fn incomplete_headers_are_cut_off() {
    let server = start();
    let mut s = connect(server.addr);
    let started = Instant::now();
    s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        .unwrap();
    // The server closes the connection (whatever it says first).
    let _ = read_all(&mut s);
    let waited = started.elapsed();
    assert!(
        waited < Duration::from_secs(5),
        "the connection stayed open {waited:?}"
    );
    // A complete request is still answered.
    let mut s = connect(server.addr);
    s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let r = read_all(&mut s).unwrap();
    assert!(status_line(&r).contains(" 200 "), "{r}");
}

#[test]
fn an_oversized_body_is_drained_and_answered_413() {
    let server = start();
    let body = vec![b' '; 4 << 20];
    let mut s = connect(server.addr);
    write!(
        s,
        "POST /r4/ValueSet/$expand HTTP/1.1\r\nHost: x\r\nContent-Type: application/fhir+json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    // The whole body goes out: a server that closed early would make this
    // write fail or the read below see a reset.
    s.write_all(&body).unwrap();
    let r = read_all(&mut s).expect("the 413 is read, not a reset");
    assert!(status_line(&r).contains(" 413 "), "{}", status_line(&r));
    assert!(r.contains("\"OperationOutcome\""), "{r}");
    assert!(r.contains("max_body"), "{r}");

    // The same without a length (chunked): found too large as it comes.
    let mut s = connect(server.addr);
    s.write_all(b"POST /r4/ValueSet/$expand HTTP/1.1\r\nHost: x\r\nContent-Type: application/fhir+json\r\nTransfer-Encoding: chunked\r\n\r\n")
        .unwrap();
    for _ in 0..64 {
        s.write_all(format!("{:x}\r\n", 8192).as_bytes()).unwrap();
        s.write_all(&body[..8192]).unwrap();
        s.write_all(b"\r\n").unwrap();
    }
    s.write_all(b"0\r\n\r\n").unwrap();
    let r = read_all(&mut s).expect("the 413 is read, not a reset");
    assert!(status_line(&r).contains(" 413 "), "{}", status_line(&r));
}

#[test]
fn a_slow_body_is_answered_408() {
    let server = start();
    let mut s = connect(server.addr);
    s.write_all(b"POST /r4/ValueSet/$expand HTTP/1.1\r\nHost: x\r\nContent-Type: application/fhir+json\r\nContent-Length: 100\r\n\r\n{\"resourceType\"")
        .unwrap();
    let started = Instant::now();
    let r = read_all(&mut s).unwrap();
    assert!(status_line(&r).contains(" 408 "), "{r}");
    assert!(r.contains("body_seconds"), "{r}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn connections_past_the_cap_wait_for_a_free_one() {
    let server = start();
    // Four connections whose requests are being answered (their bodies
    // are awaited) hold every slot until the body timeout answers them;
    // none is idle, so none is closed to make room.
    let idle: Vec<TcpStream> = (0..4)
        .map(|_| {
            let mut s = connect(server.addr);
            s.write_all(b"POST /r4/ValueSet/$expand HTTP/1.1\r\nHost: x\r\nContent-Type: application/fhir+json\r\nContent-Length: 100\r\n\r\n{")
                .unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    let mut s = connect(server.addr);
    s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let r = read_all(&mut s).unwrap();
    let waited = started.elapsed();
    assert!(status_line(&r).contains(" 200 "), "{r}");
    assert!(
        waited >= Duration::from_millis(500),
        "answered after {waited:?}: the fifth connection was not held back"
    );
    drop(idle);
}

#[test]
fn shutdown_ends_within_its_grace_period() {
    let mut server = start();
    // An idle keep-alive connection and one mid-headers.
    let _a = connect(server.addr);
    let mut b = connect(server.addr);
    b.write_all(b"GET /health HTTP/1.1\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let asked = Instant::now();
    server.stop.take().unwrap().send(()).unwrap();
    let done = server
        .done
        .recv_timeout(Duration::from_secs(5))
        .expect("serve returned");
    // Grace is 1 s; the connections close sooner or are cut then.
    assert!(done.duration_since(asked) < Duration::from_secs(3));
    // No new connection is served.
    let refused = TcpStream::connect(server.addr).and_then(|mut s| {
        s.set_read_timeout(Some(Duration::from_secs(2)))?;
        s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")?;
        let mut buf = [0u8; 64];
        s.read(&mut buf)
    });
    assert!(matches!(refused, Err(_) | Ok(0)), "{refused:?}");
}

/// What hyper refuses before any handler runs — a URI over 64 KiB, too
/// many headers, a NUL in a header — is answered with its status and an
/// OperationOutcome, like every other refusal.
#[test]
fn requests_hyper_cannot_read_are_answered_with_an_operation_outcome() {
    let server = start();
    let many: String = (0..200).map(|i| format!("X-{i}: y\r\n")).collect();
    let cases: [(Vec<u8>, &str, &str); 3] = [
        (
            format!(
                "GET /r4/metadata?x={} HTTP/1.1\r\nHost: x\r\n\r\n",
                "a".repeat(70_000)
            )
            .into_bytes(),
            " 414 ",
            "too-long",
        ),
        (
            format!("GET /health HTTP/1.1\r\nHost: x\r\n{many}\r\n").into_bytes(),
            " 431 ",
            "too-long",
        ),
        (
            b"GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n".to_vec(),
            " 400 ",
            "invalid",
        ),
    ];
    for (request, status, code) in cases {
        let mut s = connect(server.addr);
        s.write_all(&request).unwrap();
        let r = read_all(&mut s).unwrap();
        assert!(status_line(&r).contains(status), "{r}");
        let (head, body) = r.split_once("\r\n\r\n").unwrap();
        assert!(
            head.contains("content-type: application/fhir+json"),
            "{head}"
        );
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["resourceType"], "OperationOutcome", "{body}");
        assert_eq!(v["issue"][0]["code"], code, "{body}");
    }
    // The server goes on answering.
    let mut s = connect(server.addr);
    s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    assert!(status_line(&read_all(&mut s).unwrap()).contains(" 200 "));
}

/// Over a real connection, links name the address the client reached,
/// whatever `Host` it sent.
#[test]
fn links_name_the_address_reached() {
    let server = start();
    let mut s = connect(server.addr);
    s.write_all(b"GET /r4/CodeSystem?_count=1 HTTP/1.1\r\nHost: evil.example\r\nX-Forwarded-Proto: https\r\nConnection: close\r\n\r\n")
        .unwrap();
    let r = read_all(&mut s).unwrap();
    assert!(status_line(&r).contains(" 200 "), "{r}");
    assert!(!r.contains("evil.example"), "{r}");
    assert!(
        r.contains(&format!("http://{}/r4/CodeSystem", server.addr)),
        "{r}"
    );
}

/// Connections that hold a slot and say nothing — half a request, or a
/// keep-alive with nothing to ask — give way: at the cap the one idle
/// longest is closed for a new one, so a health check from a fresh
/// connection is answered at once, not after the idle ones time out; and
/// one client holds at most its share.
#[test]
fn idle_connections_give_way_to_new_ones() {
    let server = start_with(
        "[limits]\nheader_seconds = 60\nmax_connections = 4\nmax_connections_per_client = 3\n",
    );
    let mut idle = Vec::new();
    for _ in 0..3 {
        let mut s = connect(server.addr);
        s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            .unwrap();
        idle.push(s);
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    // A fourth from the same client: its first idle one is closed.
    let mut fourth = connect(server.addr);
    fourth
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        .unwrap();
    idle[0]
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut buf = [0u8; 1];
    // Closed (0 bytes, or reset), not held until header_seconds (60 s)
    // is over (the read would time out).
    let closed = idle[0].read(&mut buf);
    assert!(
        matches!(&closed, Ok(0))
            || closed
                .as_ref()
                .is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset),
        "{closed:?}"
    );
    // Every slot is taken by a silent connection; a health check is
    // answered anyway, well before any of them times out.
    let started = Instant::now();
    let mut s = connect(server.addr);
    s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let r = read_all(&mut s).unwrap();
    assert!(status_line(&r).contains(" 200 "), "{r}");
    assert!(started.elapsed() < Duration::from_secs(30));
    drop(idle);
}

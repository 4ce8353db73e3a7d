//! Connections: how sockets become requests, and how many, for how long.
//!
//! `axum::serve` accepts every connection and waits on each forever: a
//! client that sends half a request line holds its socket and its task
//! (5,000 such connections added 130 MB that stayed), and shutdown waits
//! for whatever is running. Here the accept loop is ours, over hyper's
//! HTTP/1.1 connection:
//!
//! * at most `max_connections` at once, `max_connections_per_client` for
//!   one client: at the cap a new connection takes the place of the one
//!   idle longest (`Open`), and when every one is busy the loop waits
//!   and the kernel's backlog holds the rest;
//! * a request's headers must arrive within `header_seconds` (hyper's
//!   header read timeout, which also closes a keep-alive connection idle
//!   that long); its body within `body_seconds` ([`read_body`]);
//! * a body larger than `max_body_bytes`, or one the memory guard refuses,
//!   is read and thrown away ([`drain`], up to [`DRAIN_MAX`]) before the
//!   4xx/503 is sent, so the client reads the answer instead of a reset;
//! * a request hyper cannot parse — a URI over 64 KiB (414), too many or
//!   too large headers (431), a NUL or another byte a request line or
//!   header may not hold (400) — is answered by hyper itself, before any
//!   handler, with an empty body; [`Refusals`] puts an OperationOutcome
//!   in it, as every other refusal has;
//! * on shutdown the loop stops accepting, open connections finish their
//!   requests and close, and after `shutdown_grace_seconds` whatever is
//!   still running is told to stop ([`crate::state::AppState::stopping`]) and
//!   the process exits.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, header};
use http_body_util::BodyExt;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};

use crate::state::{Limits, Live};

/// The most bytes of an unwanted body read and thrown away so that the
/// refusal reaches the client; past it the connection is closed.
pub const DRAIN_MAX: u64 = 64 << 20;

/// Serves the set `live` serves on `listener` until `shutdown` resolves,
/// then drains: see the module doc. Each request is answered by the
/// router of the set current when it arrives.
pub async fn serve(listener: TcpListener, live: Arc<Live>, shutdown: impl Future<Output = ()>) {
    let limits = live.current().limits;
    let max = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
    let permits = Arc::new(Semaphore::new(max as usize));
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    let builder = Arc::new(builder);
    let open = Arc::new(Open::default());
    tokio::pin!(shutdown);
    loop {
        let (stream, remote) = tokio::select! {
            r = listener.accept() => match r {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors, or the peer gave up before we
                    // took it: wait a moment rather than spin.
                    tracing::warn!("accepting a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // A slot for it: a free one, or one made by closing the connection
        // that has sat idle longest (a keep-alive with nothing to ask, a
        // request that never finishes its headers), so idle connections
        // cannot keep a new one — a health check's — waiting. When every
        // connection is busy, it waits for one to finish.
        let permit = loop {
            if let Ok(p) = Arc::clone(&permits).try_acquire_owned() {
                break Some(p);
            }
            open.shed_idle(None);
            // None idle long enough yet: look again in a moment.
            tokio::select! {
                p = Arc::clone(&permits).acquire_owned() => break p.ok(),
                () = tokio::time::sleep(IDLE_FOR) => {}
                () = &mut shutdown => break None,
            }
        };
        let Some(permit) = permit else { break };
        let _ = stream.set_nodelay(true);
        // One client holds at most its share of the connections: past it,
        // its own idle connection that waited longest goes.
        if open.count(remote.ip()) >= limits.max_connections_per_client {
            open.shed_idle(Some(remote.ip()));
        }
        let tracked = open.add(remote.ip());
        // Each request knows the connection's addresses: links come from
        // the address reached, proxies are believed by theirs
        // ([`crate::public`]).
        let conn = crate::public::Connection {
            remote,
            local: stream.local_addr().unwrap_or(remote),
        };
        let busy = Arc::clone(&tracked);
        let live = Arc::clone(&live);
        // A write publishes the next set through the served one
        // (`fhir::writes`): each request can reach it.
        let app = tower::service_fn(move |mut r: axum::http::Request<hyper::body::Incoming>| {
            r.extensions_mut().insert(Arc::clone(&live));
            tower::ServiceExt::oneshot(live.router(), r)
        });
        let service = tower::ServiceExt::map_request(
            app,
            move |mut r: axum::http::Request<hyper::body::Incoming>| {
                r.extensions_mut().insert(conn);
                r
            },
        );
        // Busy from a request's arrival until its answer's last byte is
        // out: such a connection is never closed to make room.
        let service =
            TowerToHyperService::new(tower::ServiceExt::map_future(service, move |answer| {
                let guard = Busy::new(Arc::clone(&busy));
                async move {
                    let r: Result<axum::response::Response, std::convert::Infallible> =
                        answer.await;
                    r.map(|r| r.map(|body| Body::new(Holding::new(body, guard))))
                }
            }));
        let builder = Arc::clone(&builder);
        let mut stop = stop_rx.clone();
        let open = Arc::clone(&open);
        tokio::spawn(async move {
            let _permit = permit;
            let conn = builder.serve_connection(Refusals::new(TokioIo::new(stream)), service);
            tokio::pin!(conn);
            tokio::select! {
                r = conn.as_mut() => {
                    if let Err(e) = r {
                        tracing::debug!("connection closed: {e}");
                    }
                }
                _ = stop.changed() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
                () = tracked.shed.notified() => {
                    // Chosen while idle; if a request came in since, it
                    // is answered first.
                    if tracked.in_flight.load(Ordering::Relaxed) > 0 {
                        conn.as_mut().graceful_shutdown();
                        let _ = conn.await;
                    }
                    tracing::debug!("closed an idle connection to make room");
                }
            }
            open.remove(&tracked);
        });
    }
    let open = max as usize - permits.available_permits();
    tracing::info!(
        "shutting down: no new connections; {open} open, {:.0} s to finish",
        limits.shutdown_grace.as_secs_f64()
    );
    let _ = stop_tx.send(true);
    let all_closed = tokio::time::timeout(limits.shutdown_grace, permits.acquire_many(max)).await;
    if all_closed.is_err() {
        let open = max as usize - permits.available_permits();
        tracing::warn!(
            "shutdown grace period over: {open} connections still open; their work is stopped"
        );
    }
    live.current().stopping.store(true, Ordering::Relaxed);
}

/// Why a request's body was not read.
#[derive(Debug, PartialEq)]
pub enum BodyError {
    /// Larger than `max_body_bytes`.
    TooLarge { limit: usize },
    /// Not all there within `body_seconds`.
    TooSlow { seconds: f64 },
    /// The connection failed while reading it.
    Broken(String),
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyError::TooLarge { limit } => write!(
                f,
                "the request body is larger than this server accepts ({limit} bytes, [limits] max_body_bytes)"
            ),
            BodyError::TooSlow { seconds } => write!(
                f,
                "the request body did not arrive within {seconds:.0} s ([limits] body_seconds)"
            ),
            BodyError::Broken(e) => write!(f, "the request body could not be read: {e}"),
        }
    }
}

/// Reads a whole body of at most `max_body_bytes` within `body_seconds`.
/// One declared larger, or found larger, is drained before the error, so
/// that the client reads the 413.
pub async fn read_body(
    headers: &HeaderMap,
    body: Body,
    limits: &Limits,
) -> Result<Bytes, BodyError> {
    let limit = limits.max_body;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        drain(body, limits.body_timeout).await;
        return Err(BodyError::TooLarge { limit });
    }
    let work = async {
        let mut body = body;
        let mut out: Vec<u8> = Vec::with_capacity(declared.unwrap_or(0) as usize);
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| BodyError::Broken(e.to_string()))?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            if out.len() + data.len() > limit {
                drain(body, limits.body_timeout).await;
                return Err(BodyError::TooLarge { limit });
            }
            out.extend_from_slice(&data);
        }
        Ok(Bytes::from(out))
    };
    match tokio::time::timeout(limits.body_timeout, work).await {
        Ok(r) => r,
        Err(_) => Err(BodyError::TooSlow {
            seconds: limits.body_timeout.as_secs_f64(),
        }),
    }
}

/// Reads and throws away a body, up to [`DRAIN_MAX`] bytes and `timeout`:
/// a refused upload then ends with the refusal on the wire rather than a
/// reset. True if the body was read to its end.
pub async fn drain(body: Body, timeout: Duration) -> bool {
    let work = async {
        let mut body = body;
        let mut seen = 0u64;
        while let Some(frame) = body.frame().await {
            let Ok(frame) = frame else { return false };
            if let Ok(data) = frame.into_data() {
                seen += data.len() as u64;
                if seen > DRAIN_MAX {
                    return false;
                }
            }
        }
        true
    };
    tokio::time::timeout(timeout, work).await.unwrap_or(false)
}

/// A connection whose automatic refusals carry an OperationOutcome.
///
/// hyper answers a request it cannot parse by itself (`on_error`): a
/// status line, `connection: close`, `content-length: 0`, a date, and
/// nothing else — no handler runs, so no middleware can add a body. This
/// wrapper recognises that head as it is written (a 400, 414 or 431 with
/// `content-length: 0`: no response of the application is one — each of
/// its refusals has an OperationOutcome) and writes in its place the same
/// status with an OperationOutcome that says what was wrong.
#[derive(Debug)]
pub struct Refusals<T> {
    inner: T,
    /// The response written in place of hyper's, and how much of it is
    /// out.
    pending: Option<(Vec<u8>, usize)>,
}

impl<T> Refusals<T> {
    pub fn new(inner: T) -> Refusals<T> {
        Refusals {
            inner,
            pending: None,
        }
    }
}

/// The response to write in place of hyper's automatic one in `head`, if
/// `head` is one.
pub fn refusal_for(head: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(head).ok()?;
    let status = text.strip_prefix("HTTP/1.1 ")?.get(..3)?;
    if !text.ends_with("\r\n\r\n") || !text.contains("\r\ncontent-length: 0\r\n") {
        return None;
    }
    let (reason, code, why) = match status {
        "400" => (
            "Bad Request",
            "invalid",
            "the request could not be read as HTTP/1.1: its request line or a header is malformed (a NUL or another control character, a header without a name, a bad method or version)",
        ),
        "414" => (
            "URI Too Long",
            "too-long",
            "the request's URI is longer than this server reads (64 KiB): send the parameters in a POST body",
        ),
        "431" => (
            "Request Header Fields Too Large",
            "too-long",
            "the request's headers are too many (at most 100) or too large in all (about 400 KiB)",
        ),
        _ => return None,
    };
    let body = crate::outcome::to_fhir_json(&txmap_terminology::error::outcome(&[
        crate::outcome::error_issue(code, why),
    ]));
    let mut out = format!(
        "HTTP/1.1 {status} {reason}\r\nconnection: close\r\ncontent-type: {}\r\ncontent-length: {}\r\n\r\n",
        crate::outcome::FHIR_JSON,
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body.as_bytes());
    Some(out)
}

impl<T: hyper::rt::Write + Unpin> Refusals<T> {
    /// Writes what is left of the response written in hyper's place.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        while let Some((bytes, done)) = &mut self.pending {
            if *done == bytes.len() {
                self.pending = None;
                break;
            }
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &bytes[*done..]))?;
            if n == 0 {
                return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
            }
            *done += n;
        }
        Poll::Ready(Ok(()))
    }

    /// Takes `head` (hyper's whole write) in place of an automatic
    /// refusal: true if it was one.
    fn replace(&mut self, cx: &mut Context<'_>, head: &[u8]) -> bool {
        let Some(ours) = refusal_for(head) else {
            return false;
        };
        self.pending = Some((ours, 0));
        // What is not out yet goes with the next write, flush or shutdown.
        let _ = self.drain(cx);
        true
    }
}

impl<T: hyper::rt::Read + Unpin> hyper::rt::Read for Refusals<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<T: hyper::rt::Write + Unpin> hyper::rt::Write for Refusals<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.drain(cx))?;
        if this.replace(cx, buf) {
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.drain(cx))?;
        // hyper writes an automatic refusal's head as its only buffer.
        if let [head] = bufs
            && this.replace(cx, head)
        {
            return Poll::Ready(Ok(head.len()));
        }
        Pin::new(&mut this.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        ready!(this.drain(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        ready!(this.drain(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_hyper_s_empty_refusals_are_replaced() {
        let hyper = b"HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\ncontent-length: 0\r\ndate: Sun, 06 Dec 2026 18:29:59 GMT\r\n\r\n";
        let ours = String::from_utf8(refusal_for(hyper).unwrap()).unwrap();
        assert!(ours.starts_with("HTTP/1.1 431 "), "{ours}");
        let (head, body) = ours.split_once("\r\n\r\n").unwrap();
        assert!(
            head.contains(&format!("content-length: {}", body.len())),
            "{head}"
        );
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["resourceType"], "OperationOutcome");
        assert_eq!(v["issue"][0]["code"], "too-long");
        // An answer of the application, or another status, is left alone.
        assert!(refusal_for(b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/fhir+json\r\ncontent-length: 120\r\n\r\n").is_none());
        assert!(refusal_for(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").is_none());
    }
}

/// How long a connection must have said nothing before it may be closed
/// to make room.
const IDLE_FOR: Duration = Duration::from_millis(100);

/// One open connection, as the accept loop sees it.
#[derive(Debug)]
struct Tracked {
    client: std::net::IpAddr,
    /// Requests of it being answered now.
    in_flight: std::sync::atomic::AtomicUsize,
    /// When it last started or finished a request (or opened).
    active: std::sync::Mutex<std::time::Instant>,
    /// Told to close.
    shed: tokio::sync::Notify,
}

impl Tracked {
    fn touch(&self) {
        if let Ok(mut at) = self.active.lock() {
            *at = std::time::Instant::now();
        }
    }
}

/// Marks a connection busy while one of its requests is being answered
/// ([`Holding`] carries it with the answer's body).
#[derive(Debug)]
struct Busy(Arc<Tracked>);

impl Busy {
    fn new(t: Arc<Tracked>) -> Busy {
        t.in_flight.fetch_add(1, Ordering::Relaxed);
        t.touch();
        Busy(t)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
        self.0.touch();
    }
}

/// An answer's body holding `T` until it is sent: its connection marked
/// busy ([`Busy`]), the memory it takes reserved with the guard.
#[derive(Debug)]
pub struct Holding<T> {
    inner: Body,
    _held: T,
}

impl<T> Holding<T> {
    pub fn new(inner: Body, held: T) -> Holding<T> {
        Holding { inner, _held: held }
    }
}

impl<T: Unpin + Send + 'static> hyper::body::Body for Holding<T> {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        hyper::body::Body::is_end_stream(&self.inner)
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        hyper::body::Body::size_hint(&self.inner)
    }
}

/// The open connections: how many each client has, and which has sat
/// idle longest.
#[derive(Debug, Default)]
struct Open(std::sync::Mutex<Vec<Arc<Tracked>>>);

impl Open {
    fn add(&self, client: std::net::IpAddr) -> Arc<Tracked> {
        let t = Arc::new(Tracked {
            client,
            in_flight: Default::default(),
            active: std::sync::Mutex::new(std::time::Instant::now()),
            shed: tokio::sync::Notify::new(),
        });
        if let Ok(mut list) = self.0.lock() {
            list.push(Arc::clone(&t));
        }
        t
    }

    fn remove(&self, t: &Arc<Tracked>) {
        if let Ok(mut list) = self.0.lock() {
            list.retain(|x| !Arc::ptr_eq(x, t));
        }
    }

    fn count(&self, client: std::net::IpAddr) -> usize {
        self.0
            .lock()
            .map_or(0, |list| list.iter().filter(|t| t.client == client).count())
    }

    /// Closes the connection (of `client`, or anyone's) that has been
    /// idle longest, if one has been idle a moment ([`IDLE_FOR`]: one just
    /// opened has not had the time to send its request).
    fn shed_idle(&self, client: Option<std::net::IpAddr>) {
        let Ok(list) = self.0.lock() else { return };
        let now = std::time::Instant::now();
        let idle = list
            .iter()
            .filter(|t| client.is_none_or(|c| t.client == c))
            .filter(|t| t.in_flight.load(Ordering::Relaxed) == 0)
            .filter(|t| {
                t.active
                    .lock()
                    .is_ok_and(|a| now.duration_since(*a) >= IDLE_FOR)
            })
            .min_by_key(|t| {
                t.active
                    .lock()
                    .map_or_else(|_| std::time::Instant::now(), |a| *a)
            });
        if let Some(t) = idle {
            t.shed.notify_one();
        }
    }
}

//! A closed-loop HTTP load generator.
//!
//! Each of C threads holds one keep-alive HTTP/1.1 connection and sends its
//! next request as soon as the previous answer has been read, cycling
//! through the operation's request pool (each thread from its own place in
//! it). Calls during the warm-up are made but not counted; afterwards every
//! call started before the end is counted and its latency — from the
//! first byte written to the last byte of the body read — kept.
//!
//! The client is a few dozen lines over `std::net::TcpStream`: requests are
//! formatted once, responses are parsed in one reusable buffer and their
//! bodies skipped, not copied. On a small machine the generator shares
//! the CPU with the server, so the less it costs per call the more the
//! numbers say about the server. It understands `Content-Length` and
//! chunked bodies and reconnects when the server closes. Plain `http://`
//! only.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::BenchError;
use crate::pools::Op;
use crate::report::{Mode, Summary};

/// Connections, warm-up and duration of one run.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    pub connections: usize,
    pub warmup: Duration,
    pub duration: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            connections: 1,
            warmup: Duration::from_secs(1),
            duration: Duration::from_secs(10),
        }
    }
}

/// A server's address, from `http://host:port`.
#[derive(Clone, Debug)]
pub struct Target {
    pub(crate) host: String,
    pub(crate) addr: std::net::SocketAddr,
}

impl Target {
    pub fn parse(url: &str) -> Result<Target, BenchError> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| BenchError::new(format!("{url}: only http:// URLs are supported")))?;
        let authority = rest.split('/').next().unwrap_or("");
        let with_port = if authority.contains(':') {
            authority.to_owned()
        } else {
            format!("{authority}:80")
        };
        let addr = with_port
            .to_socket_addrs()
            .map_err(|e| BenchError::new(format!("{url}: {e}")))?
            .next()
            .ok_or_else(|| BenchError::new(format!("{url}: no address")))?;
        Ok(Target {
            host: authority.to_owned(),
            addr,
        })
    }
}

/// Runs `op` with `requests` (targets like `/r4/CodeSystem/$lookup?...`)
/// against `target`.
pub fn run(
    target: &Target,
    op: Op,
    requests: &[String],
    options: &HttpOptions,
) -> Result<Summary, BenchError> {
    if requests.is_empty() {
        return Err(BenchError::new(format!("{}: no requests", op.name())));
    }
    // Fail early, with the reason, if the server is not there.
    Conn::open(target.addr).map_err(|e| BenchError::new(format!("http://{}: {e}", target.host)))?;
    let wire: Arc<Vec<Vec<u8>>> = Arc::new(
        requests
            .iter()
            .map(|r| {
                format!(
                    "GET {r} HTTP/1.1\r\nHost: {}\r\nAccept: application/fhir+json\r\nConnection: keep-alive\r\n\r\n",
                    target.host
                )
                .into_bytes()
            })
            .collect(),
    );
    let connections = options.connections.max(1);
    let start = Instant::now();
    let measure_from = start + options.warmup;
    let end = measure_from + options.duration;
    let threads: Vec<_> = (0..connections)
        .map(|t| {
            let wire = wire.clone();
            let addr = target.addr;
            let first = t * wire.len() / connections;
            std::thread::spawn(move || client(addr, &wire, first, measure_from, end))
        })
        .collect();
    let mut latencies = Vec::new();
    let mut errors = BTreeMap::new();
    for t in threads {
        let (l, e) = t
            .join()
            .map_err(|_| BenchError::new("a client thread panicked"))?;
        latencies.extend(l);
        for (k, v) in e {
            *errors.entry(k).or_insert(0) += v;
        }
    }
    let seconds = options.duration.as_secs_f64();
    Ok(Summary::new(
        op,
        Mode::Http(connections),
        latencies,
        errors,
        seconds,
    ))
}

type Counts = BTreeMap<String, u64>;

/// One connection's loop: latencies (ns) and errors of the counted calls.
fn client(
    addr: std::net::SocketAddr,
    wire: &[Vec<u8>],
    first: usize,
    measure_from: Instant,
    end: Instant,
) -> (Vec<u64>, Counts) {
    let mut latencies = Vec::with_capacity(1 << 16);
    let mut errors = Counts::new();
    let mut conn: Option<Conn> = None;
    let mut i = first;
    loop {
        let t = Instant::now();
        if t >= end {
            break;
        }
        let counted = t >= measure_from;
        let c = match conn.as_mut() {
            Some(c) => c,
            None => match Conn::open(addr) {
                Ok(c) => conn.insert(c),
                Err(_) => {
                    if counted {
                        *errors.entry("io".to_owned()).or_insert(0) += 1;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                }
            },
        };
        let request = &wire[i % wire.len()];
        i += 1;
        let t = Instant::now();
        let result = c.call(request);
        let ns = t.elapsed().as_nanos() as u64;
        let status = match result {
            Ok((status, keep_alive)) => {
                if !keep_alive {
                    conn = None;
                }
                Some(status)
            }
            Err(_) => {
                conn = None;
                None
            }
        };
        if t >= measure_from {
            latencies.push(ns);
            match status {
                Some(200) => {}
                Some(s) => *errors.entry(s.to_string()).or_insert(0) += 1,
                None => *errors.entry("io".to_owned()).or_insert(0) += 1,
            }
        }
    }
    (latencies, errors)
}

/// One keep-alive connection and its read buffer.
pub(crate) struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    /// Unread bytes are `buf[pos..len]`.
    pos: usize,
    len: usize,
}

fn bad(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.to_owned())
}

impl Conn {
    pub(crate) fn open(addr: std::net::SocketAddr) -> io::Result<Conn> {
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(60)))?;
        Ok(Conn {
            stream,
            buf: vec![0; 64 * 1024],
            pos: 0,
            len: 0,
        })
    }

    /// Sends a request and reads the whole response: its status, and
    /// whether the connection stays open.
    pub(crate) fn call(&mut self, request: &[u8]) -> io::Result<(u16, bool)> {
        self.stream.write_all(request)?;
        // Status line.
        let (s, e) = self.line()?;
        let line = &self.buf[s..e];
        let status = line
            .split(|&b| b == b' ')
            .nth(1)
            .and_then(|c| std::str::from_utf8(c).ok())
            .and_then(|c| c.parse::<u16>().ok())
            .ok_or_else(|| bad("bad status line"))?;
        let http10 = line.starts_with(b"HTTP/1.0");
        let mut length = None;
        let mut chunked = false;
        let mut close = http10;
        loop {
            let (s, e) = self.line()?;
            if s == e {
                break;
            }
            let h = &self.buf[s..e];
            let Some(colon) = h.iter().position(|&b| b == b':') else {
                continue;
            };
            let (name, value) = (&h[..colon], h[colon + 1..].trim_ascii());
            if name.eq_ignore_ascii_case(b"content-length") {
                length = std::str::from_utf8(value)
                    .ok()
                    .and_then(|v| v.parse::<usize>().ok());
            } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
                chunked = value.eq_ignore_ascii_case(b"chunked");
            } else if name.eq_ignore_ascii_case(b"connection") {
                close = value.eq_ignore_ascii_case(b"close");
            }
        }
        if chunked {
            loop {
                let (s, e) = self.line()?;
                let size = self.buf[s..e]
                    .split(|&b| b == b';')
                    .next()
                    .and_then(|v| std::str::from_utf8(v).ok())
                    .and_then(|v| usize::from_str_radix(v.trim(), 16).ok())
                    .ok_or_else(|| bad("bad chunk size"))?;
                if size == 0 {
                    // Trailers, up to the empty line.
                    while {
                        let (s, e) = self.line()?;
                        s != e
                    } {}
                    break;
                }
                self.skip(size + 2)?;
            }
        } else if let Some(n) = length {
            self.skip(n)?;
        } else if !(status == 204 || status == 304) {
            // Delimited by the close: read to the end.
            while self.fill().is_ok() {
                self.pos = self.len;
            }
            return Ok((status, false));
        }
        Ok((status, !close))
    }

    /// The next line, without its CRLF, as a range of `buf`, valid until
    /// the next read.
    fn line(&mut self) -> io::Result<(usize, usize)> {
        let mut from = self.pos;
        loop {
            if let Some(i) = self.buf[from..self.len].iter().position(|&b| b == b'\n') {
                let start = self.pos;
                let mut end = from + i;
                self.pos = end + 1;
                if end > start && self.buf[end - 1] == b'\r' {
                    end -= 1;
                }
                return Ok((start, end));
            }
            let scanned = self.len - self.pos;
            self.fill()?;
            from = self.pos + scanned;
        }
    }

    /// Consumes `n` bytes.
    fn skip(&mut self, mut n: usize) -> io::Result<()> {
        loop {
            let take = n.min(self.len - self.pos);
            self.pos += take;
            n -= take;
            if n == 0 {
                return Ok(());
            }
            self.fill()?;
        }
    }

    /// Reads more bytes after the unread ones, moving those to the front
    /// (and growing the buffer if a line fills it).
    fn fill(&mut self) -> io::Result<()> {
        if self.pos == self.len {
            self.pos = 0;
            self.len = 0;
        } else if self.len == self.buf.len() {
            if self.pos > 0 {
                self.buf.copy_within(self.pos..self.len, 0);
                self.len -= self.pos;
                self.pos = 0;
            } else {
                let more = self.buf.len();
                self.buf.resize(more * 2, 0);
            }
        }
        let n = self.stream.read(&mut self.buf[self.len..])?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed",
            ));
        }
        self.len += n;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader};
    use std::net::TcpListener;

    /// A server that answers each request with the next canned response.
    fn canned(responses: Vec<&'static [u8]>) -> std::net::SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let (s, _) = listener.accept().unwrap();
            let mut r = BufReader::new(s.try_clone().unwrap());
            let mut s = s;
            for resp in responses {
                loop {
                    let mut l = String::new();
                    if r.read_line(&mut l).unwrap() == 0 {
                        return;
                    }
                    if l == "\r\n" {
                        break;
                    }
                }
                s.write_all(resp).unwrap();
            }
        });
        addr
    }

    #[test]
    fn reads_length_and_chunked_bodies_on_one_connection() {
        let addr = canned(vec![
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
            b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3;x\r\nabc\r\n2\r\nde\r\n0\r\nT: 1\r\n\r\n",
            b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok",
        ]);
        let mut c = Conn::open(addr).unwrap();
        let get = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        assert_eq!(c.call(get).unwrap(), (200, true));
        assert_eq!(c.call(get).unwrap(), (404, true));
        assert_eq!(c.call(get).unwrap(), (200, false));
    }

    #[test]
    fn long_headers_grow_the_buffer() {
        let mut big = b"HTTP/1.1 200 OK\r\nX-Big: ".to_vec();
        big.extend(std::iter::repeat_n(b'a', 200_000));
        big.extend_from_slice(b"\r\nContent-Length: 0\r\n\r\n");
        let addr = canned(vec![Box::leak(big.into_boxed_slice())]);
        let mut c = Conn::open(addr).unwrap();
        assert_eq!(c.call(b"GET / HTTP/1.1\r\n\r\n").unwrap(), (200, true));
    }

    #[test]
    fn targets_need_http() {
        assert!(Target::parse("https://127.0.0.1:1").is_err());
        assert_eq!(
            Target::parse("http://127.0.0.1:8080/").unwrap().addr.port(),
            8080
        );
    }
}

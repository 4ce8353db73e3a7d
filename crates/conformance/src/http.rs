//! How requests reach a server: the [`Transport`] trait, and
//! [`HttpTransport`], a small blocking HTTP/1.1 client over
//! `std::net::TcpStream`.
//!
//! The runner sends one request at a time and waits for the answer, so a
//! blocking client is all it needs; it sends `Connection: close` and reads
//! `Content-Length`, chunked or read-to-end bodies. Keeping it to std keeps
//! this crate free of an async runtime and of an HTTP stack, and keeping it
//! behind a trait lets tests run the suite against an in-process app (or a
//! canned one) instead of a socket. Plain `http://` only: no TLS.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// GET or POST: the only methods the runner uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
        }
    }
}

/// A request, its path relative to the endpoint's base URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpRequest {
    pub method: Method,
    /// Relative to the base, with any query: `ValueSet/$expand`,
    /// `metadata?mode=terminology`.
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpRequest {
    pub fn get(path: impl Into<String>) -> HttpRequest {
        HttpRequest {
            method: Method::Get,
            path: path.into(),
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    pub fn post(path: impl Into<String>, body: Vec<u8>) -> HttpRequest {
        HttpRequest {
            method: Method::Post,
            path: path.into(),
            headers: Vec::new(),
            body,
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> HttpRequest {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// The first header of this name (case-insensitive).
    pub fn header_value(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }
}

/// A response: status, headers in order, the whole body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// The first header of this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }

    /// The media type, lower-cased, without parameters:
    /// `application/fhir+json`.
    pub fn media_type(&self) -> Option<String> {
        let ct = self.header("content-type")?;
        let mt = ct
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        (!mt.is_empty()).then_some(mt)
    }
}

fn find_header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Something that answers requests for one FHIR endpoint.
pub trait Transport {
    /// Sends a request and returns the response; `Err` when there is no
    /// HTTP response at all (connection refused, timeout, garbage).
    fn send(&self, req: &HttpRequest) -> Result<HttpResponse, String>;

    /// Where requests go, for messages.
    fn describe(&self) -> String {
        "transport".to_string()
    }
}

impl<T: Transport + ?Sized> Transport for &T {
    fn send(&self, req: &HttpRequest) -> Result<HttpResponse, String> {
        (**self).send(req)
    }

    fn describe(&self) -> String {
        (**self).describe()
    }
}

/// A blocking HTTP/1.1 client for one base URL (`http://host:port/r4`).
#[derive(Clone, Debug)]
pub struct HttpTransport {
    host: String,
    port: u16,
    /// The base path without a trailing slash (`/r4`, or empty).
    base_path: String,
    connect_timeout: Duration,
    read_timeout: Duration,
}

/// Responses larger than this are refused rather than filling memory.
const MAX_BODY: usize = 1 << 30;

impl HttpTransport {
    /// A client for `http://host[:port][/path]`.
    pub fn new(base_url: &str) -> Result<HttpTransport, String> {
        let rest = base_url
            .strip_prefix("http://")
            .ok_or_else(|| format!("{base_url}: only http:// URLs are supported"))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let bad_port = |p: &str| format!("{base_url}: bad port {p:?}");
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (h, after) = v6
                .split_once(']')
                .ok_or_else(|| format!("{base_url}: bad host"))?;
            let port = match after.strip_prefix(':') {
                Some(p) => p.parse::<u16>().map_err(|_| bad_port(p))?,
                None if after.is_empty() => 80,
                None => return Err(bad_port(after)),
            };
            (format!("[{h}]"), port)
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h.to_string(), p.parse::<u16>().map_err(|_| bad_port(p))?),
                None => (authority.to_string(), 80),
            }
        };
        if host.is_empty() {
            return Err(format!("{base_url}: no host"));
        }
        Ok(HttpTransport {
            host,
            port,
            base_path: path.trim_end_matches('/').to_string(),
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(300),
        })
    }

    /// How long to wait for each read of a response (default 300 s).
    pub fn with_read_timeout(mut self, t: Duration) -> HttpTransport {
        self.read_timeout = t;
        self
    }

    pub fn base_url(&self) -> String {
        format!("http://{}:{}{}", self.host, self.port, self.base_path)
    }

    fn connect(&self) -> Result<TcpStream, String> {
        let addrs = (self.host.trim_matches(['[', ']']), self.port)
            .to_socket_addrs()
            .map_err(|e| format!("{}: {e}", self.base_url()))?;
        let mut last = format!("{}: no address", self.base_url());
        for a in addrs {
            match TcpStream::connect_timeout(&a, self.connect_timeout) {
                Ok(s) => return Ok(s),
                Err(e) => last = format!("{}: {e}", self.base_url()),
            }
        }
        Err(last)
    }
}

impl Transport for HttpTransport {
    fn send(&self, req: &HttpRequest) -> Result<HttpResponse, String> {
        let url = format!("{}/{}", self.base_url(), req.path);
        let fail = |e: std::io::Error| format!("{} {url}: {e}", req.method.as_str());
        let mut stream = self.connect()?;
        stream
            .set_read_timeout(Some(self.read_timeout))
            .map_err(fail)?;
        stream
            .set_write_timeout(Some(self.read_timeout))
            .map_err(fail)?;
        stream.set_nodelay(true).map_err(fail)?;
        let mut head = format!(
            "{} {}/{} HTTP/1.1\r\nHost: {}:{}\r\nConnection: close\r\n",
            req.method.as_str(),
            self.base_path,
            req.path,
            self.host,
            self.port
        );
        for (k, v) in &req.headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        if req.method == Method::Post || !req.body.is_empty() {
            head.push_str(&format!("Content-Length: {}\r\n", req.body.len()));
        }
        head.push_str("\r\n");
        let mut msg = head.into_bytes();
        msg.extend_from_slice(&req.body);
        stream.write_all(&msg).map_err(fail)?;
        stream.flush().map_err(fail)?;
        read_response(BufReader::new(stream))
            .map_err(|e| format!("{} {url}: {e}", req.method.as_str()))
    }

    fn describe(&self) -> String {
        self.base_url()
    }
}

fn read_line(r: &mut impl BufRead) -> Result<String, String> {
    let mut line = Vec::new();
    r.take(64 * 1024)
        .read_until(b'\n', &mut line)
        .map_err(|e| e.to_string())?;
    if line.is_empty() {
        return Err("connection closed before the response ended".into());
    }
    while let Some(b'\n' | b'\r') = line.last() {
        line.pop();
    }
    String::from_utf8(line).map_err(|_| "response head is not UTF-8".into())
}

/// Reads one HTTP/1.1 response (skipping `1xx` interim responses).
pub fn read_response(mut r: impl BufRead) -> Result<HttpResponse, String> {
    loop {
        let status_line = read_line(&mut r)?;
        let mut parts = status_line.splitn(3, ' ');
        let version = parts.next().unwrap_or("");
        if !version.starts_with("HTTP/") {
            return Err(format!("not an HTTP response: {status_line:?}"));
        }
        let status: u16 = parts
            .next()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("bad status line {status_line:?}"))?;
        let mut headers = Vec::new();
        loop {
            let line = read_line(&mut r)?;
            if line.is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                headers.push((k.trim().to_string(), v.trim().to_string()));
            }
        }
        if (100..200).contains(&status) {
            continue;
        }
        let chunked = find_header(&headers, "transfer-encoding")
            .is_some_and(|t| t.to_ascii_lowercase().contains("chunked"));
        let body = if chunked {
            read_chunked(&mut r)?
        } else if let Some(n) = find_header(&headers, "content-length") {
            let n: usize = n.parse().map_err(|_| format!("bad Content-Length {n:?}"))?;
            if n > MAX_BODY {
                return Err(format!("response of {n} bytes is too large"));
            }
            let mut b = vec![0; n];
            r.read_exact(&mut b).map_err(|e| e.to_string())?;
            b
        } else if status == 204 || status == 304 {
            Vec::new()
        } else {
            let mut b = Vec::new();
            r.take(MAX_BODY as u64 + 1)
                .read_to_end(&mut b)
                .map_err(|e| e.to_string())?;
            if b.len() > MAX_BODY {
                return Err("response is too large".into());
            }
            b
        };
        return Ok(HttpResponse {
            status,
            headers,
            body,
        });
    }
}

fn read_chunked(r: &mut impl BufRead) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    loop {
        let line = read_line(r)?;
        let size = line.split(';').next().unwrap_or("").trim();
        let n = usize::from_str_radix(size, 16).map_err(|_| format!("bad chunk size {line:?}"))?;
        if n == 0 {
            // Trailers, up to the empty line (or the end of the stream).
            while let Ok(l) = read_line(r) {
                if l.is_empty() {
                    break;
                }
            }
            return Ok(body);
        }
        if body.len() + n > MAX_BODY {
            return Err("response is too large".into());
        }
        let start = body.len();
        body.resize(start + n, 0);
        r.read_exact(&mut body[start..])
            .map_err(|e| e.to_string())?;
        let end = read_line(r)?;
        if !end.is_empty() {
            return Err("chunk not followed by CRLF".into());
        }
    }
}

/// Java's `URLEncoder.encode(s, UTF-8)`: `A-Z a-z 0-9 . - * _` kept, space
/// as `+`, every other byte as `%XX`.
pub fn form_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'-' | b'*' | b'_' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::thread;

    #[test]
    fn parses_base_urls() {
        let t = HttpTransport::new("http://127.0.0.1:8080/r4/").unwrap();
        assert_eq!(t.base_url(), "http://127.0.0.1:8080/r4");
        assert_eq!(
            HttpTransport::new("http://localhost").unwrap().base_url(),
            "http://localhost:80"
        );
        assert!(HttpTransport::new("https://x.org").is_err());
        assert!(HttpTransport::new("http://x:notaport").is_err());
        assert_eq!(
            HttpTransport::new("http://[::1]:9/a").unwrap().base_url(),
            "http://[::1]:9/a"
        );
        assert_eq!(
            HttpTransport::new("http://[::1]").unwrap().base_url(),
            "http://[::1]:80"
        );
    }

    #[test]
    fn reads_length_chunked_and_close_delimited_bodies() {
        let r = read_response(&b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Type: application/fhir+json; charset=utf-8\r\n\r\nabcdef"[..]).unwrap();
        assert_eq!((r.status, &r.body[..]), (200, &b"abc"[..]));
        assert_eq!(r.media_type().as_deref(), Some("application/fhir+json"));
        let r = read_response(&b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nT: 1\r\n\r\n"[..]).unwrap();
        assert_eq!((r.status, &r.body[..]), (404, &b"abcde"[..]));
        let r = read_response(&b"HTTP/1.0 500 Oops\r\n\r\nall of it"[..]).unwrap();
        assert_eq!(&r.body[..], b"all of it");
        assert!(read_response(&b"garbage\r\n\r\n"[..]).is_err());
        assert!(read_response(&b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc"[..]).is_err());
    }

    #[test]
    fn form_encoding_is_javas() {
        assert_eq!(form_encode("a b|c*é~"), "a+b%7Cc*%C3%A9%7E");
    }

    #[test]
    fn round_trip_over_a_socket() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = thread::spawn(move || {
            let (s, _) = listener.accept().unwrap();
            let mut r = BufReader::new(s.try_clone().unwrap());
            let mut head = String::new();
            loop {
                let mut l = String::new();
                r.read_line(&mut l).unwrap();
                if l == "\r\n" {
                    break;
                }
                head.push_str(&l);
            }
            let mut body = vec![0; 2];
            r.read_exact(&mut body).unwrap();
            let mut s = s;
            s.write_all(
                b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
            )
            .unwrap();
            (head, body)
        });
        let t = HttpTransport::new(&format!("http://127.0.0.1:{port}/r5")).unwrap();
        let resp = t
            .send(&HttpRequest::post("ValueSet/$expand", b"{}".to_vec()).header("X-Test", "1"))
            .unwrap();
        assert_eq!((resp.status, &resp.body[..]), (201, &b"ok"[..]));
        let (head, body) = server.join().unwrap();
        assert!(
            head.starts_with("POST /r5/ValueSet/$expand HTTP/1.1\r\n"),
            "{head}"
        );
        assert!(
            head.contains("X-Test: 1\r\n") && head.contains("Content-Length: 2\r\n"),
            "{head}"
        );
        assert_eq!(body, b"{}");
    }
}

//! What the server tells strangers, and whom it believes.
//!
//! A terminology server sits behind proxies and caches, and is called by
//! browser apps on other origins. So:
//!
//! * **Links** (search paging, `fullUrl`, the CapabilityStatement's
//!   `implementation.url`) are built from a configured public base URL;
//!   without one, from what a *trusted* proxy forwards
//!   (`X-Forwarded-Proto`, `X-Forwarded-Host`, `Host`); otherwise from the
//!   address the connection reached. A stranger's `Host` or
//!   `X-Forwarded-Proto` never becomes a link: behind a cache that keys on
//!   the path, `Host: evil.example` would otherwise poison every client's
//!   links.
//! * **CORS** is off unless the config lists origins; then a listed
//!   origin's preflight is answered and its responses carry
//!   `Access-Control-Allow-Origin`.
//! * **`/status`** names files by their file name; the whole view (paths)
//!   takes an admin token ([`crate::auth`]).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::config::HttpConfig;

/// The addresses of one connection, put on each of its requests by the
/// accept loop ([`crate::http::serve`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Connection {
    pub remote: SocketAddr,
    pub local: SocketAddr,
}

/// `[http]` as the server uses it.
#[derive(Clone, Debug, Default)]
pub struct Public {
    /// The configured public base URL, without a trailing `/`.
    base: Option<String>,
    trusted: Vec<IpAddr>,
    cors: Vec<String>,
}

impl Public {
    /// `[http]`, checked: a base URL that is not `http(s)://…` without a
    /// query, or a trusted proxy that is not an IP address, is an error
    /// naming the key.
    pub fn from_config(c: &HttpConfig) -> Result<Public, String> {
        let base = match &c.public_base_url {
            None => None,
            Some(u) => {
                let ok = (u.starts_with("http://") || u.starts_with("https://"))
                    && !u.contains(['?', '#', ' '])
                    && u.split("://").nth(1).is_some_and(|rest| !rest.is_empty());
                if !ok {
                    return Err(format!(
                        "[http] public_base_url = {u:?}: must be an http:// or https:// URL without a query"
                    ));
                }
                Some(u.trim_end_matches('/').to_owned())
            }
        };
        let trusted = c
            .trusted_proxies
            .iter()
            .map(|p| {
                p.parse::<IpAddr>()
                    .map_err(|_| format!("[http] trusted_proxies: {p:?} is not an IP address"))
            })
            .collect::<Result<_, _>>()?;
        Ok(Public {
            base,
            trusted,
            cors: c.cors_origins.clone(),
        })
    }

    /// The base URL links of this request start with (no trailing `/`):
    /// see the module doc.
    pub fn base_url(&self, headers: &HeaderMap, conn: Option<&Connection>) -> String {
        if let Some(b) = &self.base {
            return b.clone();
        }
        let text = |name: &str| headers.get(name).and_then(|h| h.to_str().ok());
        if let Some(c) = conn
            && self.trusted.contains(&c.remote.ip())
        {
            let host = text("x-forwarded-host")
                .and_then(|h| h.split(',').next())
                .or(text(header::HOST.as_str()))
                .map(str::trim)
                .filter(|h| plausible_host(h));
            let scheme = text("x-forwarded-proto")
                .and_then(|s| s.split(',').next())
                .map(str::trim)
                .filter(|s| s.eq_ignore_ascii_case("http") || s.eq_ignore_ascii_case("https"))
                .unwrap_or("http")
                .to_ascii_lowercase();
            if let Some(host) = host {
                return format!("{scheme}://{host}");
            }
        }
        match conn {
            Some(c) => format!("http://{}", c.local),
            None => "http://localhost".to_owned(),
        }
    }

    /// The base URL of FHIR endpoint `v` for this request's links, e.g.
    /// `https://tx.example.org/r4`: [`base_url`](Self::base_url) and the
    /// endpoint's path, never from a stranger's `Host`.
    pub fn fhir_base(
        &self,
        v: crate::version::FhirVersion,
        headers: &HeaderMap,
        extensions: &axum::http::Extensions,
    ) -> String {
        format!(
            "{}{}",
            self.base_url(headers, extensions.get::<Connection>()),
            v.path()
        )
    }

    /// Whether browser apps of `origin` may call.
    fn allows(&self, origin: &str) -> bool {
        self.cors.iter().any(|o| o == "*" || o == origin)
    }
}

/// A host, optionally with a port: letters, digits, `.-_:` and the
/// brackets of an IPv6 literal. Anything else is not echoed into URLs.
fn plausible_host(h: &str) -> bool {
    !h.is_empty()
        && h.len() <= 255
        && h.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._:[]".contains(&b))
}

/// The headers a browser app may send and read.
const ALLOW_HEADERS: &str =
    "accept, accept-language, content-type, authorization, x-too-costly-threshold";
const EXPOSE_HEADERS: &str = "retry-after, content-type";

/// CORS for the configured origins: a listed origin's preflight is
/// answered 204 here (before the memory guard), and its other responses
/// say it may read them. Off (nothing added) when no origin is listed.
pub async fn cors(State(public): State<Arc<Public>>, request: Request, next: Next) -> Response {
    let origin = request
        .headers()
        .get(header::ORIGIN)
        .and_then(|o| o.to_str().ok())
        .filter(|o| public.allows(o))
        .and_then(|o| HeaderValue::from_str(o).ok());
    let Some(origin) = origin else {
        return next.run(request).await;
    };
    let preflight = request.method() == Method::OPTIONS
        && request
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    let mut response = if preflight {
        let mut r = StatusCode::NO_CONTENT.into_response();
        let h = r.headers_mut();
        h.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET, POST"),
        );
        h.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static(ALLOW_HEADERS),
        );
        h.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from_static("600"),
        );
        r
    } else {
        next.run(request).await
    };
    let h = response.headers_mut();
    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    h.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(EXPOSE_HEADERS),
    );
    h.append(header::VARY, HeaderValue::from_static("origin"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn public(toml: &str) -> Result<Public, String> {
        Public::from_config(&crate::config::Config::parse(toml).unwrap().http)
    }

    fn conn(remote: &str) -> Connection {
        Connection {
            remote: format!("{remote}:40000").parse().unwrap(),
            local: "10.0.0.5:8080".parse().unwrap(),
        }
    }

    #[test]
    fn links_come_from_the_config_a_trusted_proxy_or_the_connection() {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_static("evil.example"));
        h.insert("x-forwarded-proto", HeaderValue::from_static("https"));
        // A stranger's Host and X-Forwarded-Proto are not believed.
        let open = public("").unwrap();
        assert_eq!(
            open.base_url(&h, Some(&conn("192.0.2.1"))),
            "http://10.0.0.5:8080"
        );
        assert_eq!(open.base_url(&h, None), "http://localhost");
        // A trusted proxy's are.
        let proxied = public("[http]\ntrusted_proxies = [\"192.0.2.1\"]\n").unwrap();
        assert_eq!(
            proxied.base_url(&h, Some(&conn("192.0.2.1"))),
            "https://evil.example"
        );
        assert_eq!(
            proxied.base_url(&h, Some(&conn("192.0.2.2"))),
            "http://10.0.0.5:8080"
        );
        // The configured base wins over everything.
        let fixed = public("[http]\npublic_base_url = \"https://tx.example.org/fhir/\"\n").unwrap();
        assert_eq!(
            fixed.base_url(&h, Some(&conn("192.0.2.1"))),
            "https://tx.example.org/fhir"
        );
        for bad in [
            "public_base_url = \"tx.example.org\"",
            "public_base_url = \"https://x/?a=b\"",
            "trusted_proxies = [\"proxy.local\"]",
        ] {
            let e = public(&format!("[http]\n{bad}\n")).unwrap_err();
            assert!(e.contains(bad.split(' ').next().unwrap()), "{bad}: {e}");
        }
    }
}

//! HTTP for the sync: feeds and artefacts fetched with each host's
//! credentials ([`crate::config::Credentials`]), an OAuth2 token taken
//! once and taken again when a request is refused with 401, and
//! downloads streamed to a file while their length and digest are
//! counted — SHA-256 when the feed gives it, else MD5 — so that a file
//! whose bytes are not the feed's is deleted and never compiled.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

use md5::Md5;
use sha2::{Digest, Sha256};

use crate::config::{Credentials, secret};
use crate::feed::Link;

/// The longest a feed may be.
pub const MAX_FEED_BYTES: u64 = 64 << 20;

/// Why a request failed.
#[derive(Debug)]
pub enum FetchError {
    /// No answer: the connection, TLS, a timeout.
    Transport { url: String, message: String },
    /// An answer other than 2xx.
    Status { url: String, status: u16 },
    /// The credentials could not be read or a token could not be had.
    Credentials(String),
    /// The download's bytes are not what the feed says.
    Mismatch { url: String, message: String },
    /// Writing the download failed.
    Io { path: String, error: std::io::Error },
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::Transport { url, message } => write!(f, "{url}: {message}"),
            FetchError::Status { url, status } => write!(f, "{url}: answered {status}"),
            FetchError::Credentials(why) => write!(f, "credentials: {why}"),
            FetchError::Mismatch { url, message } => write!(f, "{url}: {message}"),
            FetchError::Io { path, error } => write!(f, "{path}: {error}"),
        }
    }
}

impl std::error::Error for FetchError {}

/// A client that knows each host's credentials.
pub struct Client {
    agent: ureq::Agent,
    credentials: Vec<Credentials>,
    /// OAuth2 tokens by host, taken on first use.
    tokens: HashMap<String, String>,
    /// Token requests made (tests count them).
    pub token_requests: u32,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("credentials", &self.credentials)
            .finish_non_exhaustive()
    }
}

/// The host (and port, if given) of `url`.
fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    authority.rsplit('@').next().unwrap_or(authority)
}

/// Standard base64 (RFC 4648 §4), for Basic credentials.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Client {
    /// A client with these hosts' credentials.
    pub fn new(credentials: Vec<Credentials>) -> Client {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(30)))
            .timeout_recv_response(Some(Duration::from_secs(120)))
            // A release is gigabytes: no whole-request limit, but a
            // stalled read is given up.
            .timeout_per_read(Some(Duration::from_secs(120)))
            .build()
            .into();
        Client {
            agent,
            credentials,
            tokens: HashMap::new(),
            token_requests: 0,
        }
    }

    fn credentials_for(&self, url: &str) -> Option<&Credentials> {
        let host = host_of(url);
        let bare = host.split(':').next().unwrap_or(host);
        self.credentials
            .iter()
            .find(|c| c.host == host)
            .or_else(|| self.credentials.iter().find(|c| c.host == bare))
    }

    /// The `Authorization` header for `url`, if its host has credentials;
    /// `fresh` takes a new OAuth2 token.
    fn authorization(&mut self, url: &str, fresh: bool) -> Result<Option<String>, FetchError> {
        let Some(c) = self.credentials_for(url).cloned() else {
            return Ok(None);
        };
        let cred = |e: String| FetchError::Credentials(e);
        match c.kind.as_str() {
            "basic" => {
                let user = c.username.clone().unwrap_or_default();
                let password = secret(
                    &format!("{} password", c.host),
                    c.password_env.as_deref(),
                    c.password_file.as_deref(),
                )
                .map_err(cred)?;
                Ok(Some(format!(
                    "Basic {}",
                    base64(format!("{user}:{password}").as_bytes())
                )))
            }
            "bearer" => {
                let token = secret(
                    &format!("{} token", c.host),
                    c.token_env.as_deref(),
                    c.token_file.as_deref(),
                )
                .map_err(cred)?;
                Ok(Some(format!("Bearer {token}")))
            }
            "oauth2" => {
                if fresh || !self.tokens.contains_key(&c.host) {
                    let token = self.oauth2_token(&c)?;
                    self.tokens.insert(c.host.clone(), token);
                }
                Ok(self.tokens.get(&c.host).map(|t| format!("Bearer {t}")))
            }
            _ => Ok(None),
        }
    }

    /// A client-credentials token from the host's token URL.
    fn oauth2_token(&mut self, c: &Credentials) -> Result<String, FetchError> {
        self.token_requests += 1;
        let url = c.token_url.clone().unwrap_or_default();
        let client_secret = secret(
            &format!("{} client secret", c.host),
            c.client_secret_env.as_deref(),
            c.client_secret_file.as_deref(),
        )
        .map_err(FetchError::Credentials)?;
        let client_id = c.client_id.clone().unwrap_or_default();
        let mut answer = self
            .agent
            .post(&url)
            .send_form([
                ("grant_type", "client_credentials"),
                ("client_id", client_id.as_str()),
                ("client_secret", client_secret.as_str()),
            ])
            .map_err(|e| FetchError::Transport {
                url: url.clone(),
                message: e.to_string(),
            })?;
        let status = answer.status().as_u16();
        if !(200..300).contains(&status) {
            return Err(FetchError::Credentials(format!(
                "the token URL {url} answered {status}"
            )));
        }
        let body = answer
            .body_mut()
            .with_config()
            .limit(1 << 20)
            .read_to_string()
            .map_err(|e| FetchError::Transport {
                url: url.clone(),
                message: e.to_string(),
            })?;
        let v: serde_json::Value = serde_json::from_str(&body).map_err(|_| {
            FetchError::Credentials(format!("the token URL {url} did not answer JSON"))
        })?;
        v["access_token"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| {
                FetchError::Credentials(format!("the token URL {url} gave no access_token"))
            })
    }

    /// GETs `url` with its host's credentials; a 401 takes a new OAuth2
    /// token and tries once more.
    fn get(&mut self, url: &str) -> Result<ureq::http::Response<ureq::Body>, FetchError> {
        let transport = |e: ureq::Error| FetchError::Transport {
            url: url.to_owned(),
            message: e.to_string(),
        };
        let mut fresh = false;
        loop {
            let mut request = self.agent.get(url);
            if let Some(auth) = self.authorization(url, fresh)? {
                request = request.header("Authorization", auth);
            }
            let answer = request.call().map_err(transport)?;
            let status = answer.status().as_u16();
            let oauth = self
                .credentials_for(url)
                .is_some_and(|c| c.kind == "oauth2");
            if status == 401 && oauth && !fresh {
                fresh = true;
                continue;
            }
            if !(200..300).contains(&status) {
                return Err(FetchError::Status {
                    url: url.to_owned(),
                    status,
                });
            }
            return Ok(answer);
        }
    }

    /// The feed at `url`, as text.
    pub fn feed(&mut self, url: &str) -> Result<String, FetchError> {
        let mut answer = self.get(url)?;
        answer
            .body_mut()
            .with_config()
            .limit(MAX_FEED_BYTES)
            .read_to_string()
            .map_err(|e| FetchError::Transport {
                url: url.to_owned(),
                message: e.to_string(),
            })
    }

    /// Downloads `link` to `to`, checking its length and digest as the
    /// bytes pass; on any mismatch `to` is deleted. Returns the SHA-256
    /// of what was written.
    pub fn download(&mut self, link: &Link, to: &Path) -> Result<String, FetchError> {
        let result = self.download_checked(link, to);
        if result.is_err() {
            let _ = std::fs::remove_file(to);
        }
        result
    }

    fn download_checked(&mut self, link: &Link, to: &Path) -> Result<String, FetchError> {
        let url = link.href.clone();
        let mismatch = |message: String| FetchError::Mismatch {
            url: url.clone(),
            message,
        };
        if link.sha256.is_none() && link.md5.is_none() {
            return Err(mismatch(
                "the feed gives no digest (ncts:sha256Hash or sct:md5Hash) to check it by".into(),
            ));
        }
        let mut answer = self.get(&url)?;
        let io = |error| FetchError::Io {
            path: to.display().to_string(),
            error,
        };
        let mut file = std::fs::File::create(to).map_err(io)?;
        let mut sha256 = Sha256::new();
        let mut md5 = Md5::new();
        let mut reader = answer.body_mut().as_reader();
        let mut buffer = vec![0u8; 1 << 16];
        let mut length = 0u64;
        loop {
            let n = reader
                .read(&mut buffer)
                .map_err(|e| FetchError::Transport {
                    url: url.clone(),
                    message: format!("the download broke off after {length} bytes: {e}"),
                })?;
            if n == 0 {
                break;
            }
            length += n as u64;
            if let Some(want) = link.length
                && length > want
            {
                return Err(mismatch(format!(
                    "longer than the {want} bytes the feed says"
                )));
            }
            sha256.update(&buffer[..n]);
            md5.update(&buffer[..n]);
            file.write_all(&buffer[..n]).map_err(io)?;
        }
        file.sync_all().map_err(io)?;
        if let Some(want) = link.length
            && length != want
        {
            return Err(mismatch(format!(
                "{length} bytes, and the feed says {want}"
            )));
        }
        let sha256 = hex(&sha256.finalize());
        let md5 = hex(&md5.finalize());
        match (&link.sha256, &link.md5) {
            (Some(want), _) if *want != sha256 => Err(mismatch(format!(
                "SHA-256 {sha256}, and the feed says {want}"
            ))),
            (None, Some(want)) if *want != md5 => {
                Err(mismatch(format!("MD5 {md5}, and the feed says {want}")))
            }
            _ => Ok(sha256),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_rfc_4648() {
        // RFC 4648 §10's test vectors.
        for (text, want) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(text.as_bytes()), want);
        }
    }

    #[test]
    fn hosts_are_read_from_urls() {
        assert_eq!(host_of("https://a.example.org/x?y"), "a.example.org");
        assert_eq!(host_of("http://127.0.0.1:8080/feed"), "127.0.0.1:8080");
        assert_eq!(host_of("https://u:p@h.example/"), "h.example");
    }
}

//! Who may do what: bearer tokens with scopes (`[auth]`).
//!
//! Reads are open unless the config closes them; writes to stored
//! resources need a token with the `write` scope, admin calls (and
//! `/status` whole) one with `admin`. Tokens are configured as the SHA-256
//! of their text, so the config file (often readable by more people than
//! the server's secrets) does not hold them; a presented token is hashed
//! and compared with each, every byte, so the time taken says nothing of
//! how much of a hash matched. The `[http] admin_token` of earlier
//! configs, given as text, still counts as an admin token.
//!
//! A request without a token where one is needed is 401 with
//! `WWW-Authenticate: Bearer`; with a token not configured, 401 too; with a
//! token that lacks the scope, 403.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use sha2::{Digest, Sha256};

use crate::config::{AuthConfig, HttpConfig};
use crate::outcome;

/// What a token may do beyond reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Read resources and run operations (any token, when reads are
    /// closed).
    Read,
    /// Create, update and delete stored resources.
    Write,
    /// The admin listener's calls, `/status` whole.
    Admin,
}

impl Scope {
    fn name(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write",
            Scope::Admin => "admin",
        }
    }
}

/// One configured token.
#[derive(Clone, Debug)]
struct Token {
    name: String,
    sha256: [u8; 32],
    write: bool,
    admin: bool,
}

/// The configured tokens and whether reads need one.
#[derive(Clone, Debug, Default)]
pub struct Auth {
    tokens: Vec<Token>,
    reads_closed: bool,
}

/// Why a request was not let through.
#[derive(Debug, PartialEq, Eq)]
pub enum Denied {
    /// No bearer token was sent.
    Missing(Scope),
    /// The token sent is not a configured one.
    Unknown(Scope),
    /// The token is known and lacks the scope.
    Lacks { token: String, scope: Scope },
}

impl Denied {
    /// The 401 or 403 OperationOutcome to send.
    pub fn response(&self) -> Response {
        let (status, code, text) = match self {
            Denied::Missing(s) => (
                StatusCode::UNAUTHORIZED,
                "login",
                format!(
                    "this needs a bearer token with the {} scope (Authorization: Bearer …)",
                    s.name()
                ),
            ),
            Denied::Unknown(s) => (
                StatusCode::UNAUTHORIZED,
                "login",
                format!(
                    "the bearer token is not one this server knows; this needs one with the {} scope",
                    s.name()
                ),
            ),
            Denied::Lacks { token, scope } => (
                StatusCode::FORBIDDEN,
                "forbidden",
                format!(
                    "the token of {token} does not have the {} scope",
                    scope.name()
                ),
            ),
        };
        let mut r = outcome::response(status, code, &text);
        if status == StatusCode::UNAUTHORIZED {
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"txmap\""),
            );
        }
        r
    }
}

/// The SHA-256 of `token`'s text, as the config holds it (64 hex digits).
pub fn hash(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn unhex(text: &str) -> Option<[u8; 32]> {
    let text = text.trim();
    if text.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in text.as_bytes().chunks(2).enumerate() {
        let pair = std::str::from_utf8(pair).ok()?;
        out[i] = u8::from_str_radix(pair, 16).ok()?;
    }
    Some(out)
}

impl Auth {
    /// The tokens of `[auth]` and the `[http] admin_token`; a token that
    /// is not 64 hex digits, an unknown scope, a read setting other than
    /// `open` or `token`, or reads closed with no token to open them is an
    /// error naming the key.
    pub fn from_config(auth: &AuthConfig, http: &HttpConfig) -> Result<Auth, String> {
        let reads_closed = match auth.read.as_deref() {
            None | Some("open") => false,
            Some("token") => true,
            Some(other) => {
                return Err(format!(
                    "[auth] read = {other:?}: must be \"open\" or \"token\""
                ));
            }
        };
        let mut tokens = Vec::new();
        for t in &auth.tokens {
            let Some(sha256) = unhex(&t.sha256) else {
                return Err(format!(
                    "[[auth.tokens]] {:?}: sha256 must be 64 hex digits (`txmap token` makes a token and its hash)",
                    t.name
                ));
            };
            let (mut write, mut admin) = (false, false);
            for s in &t.scopes {
                match s.as_str() {
                    "write" => write = true,
                    "admin" => admin = true,
                    "read" => {}
                    other => {
                        return Err(format!(
                            "[[auth.tokens]] {:?}: scope {other:?} is not one of read, write, admin",
                            t.name
                        ));
                    }
                }
            }
            tokens.push(Token {
                name: t.name.clone(),
                sha256,
                write,
                admin,
            });
        }
        if let Some(text) = &http.admin_token {
            if text.len() < 16 {
                return Err("[http] admin_token must be at least 16 characters".into());
            }
            let mut sha256 = [0u8; 32];
            sha256.copy_from_slice(&Sha256::digest(text.as_bytes()));
            tokens.push(Token {
                name: "[http] admin_token".into(),
                sha256,
                write: false,
                admin: true,
            });
        }
        if reads_closed && tokens.is_empty() {
            return Err("[auth] read = \"token\" needs at least one [[auth.tokens]]".into());
        }
        Ok(Auth {
            tokens,
            reads_closed,
        })
    }

    /// Whether reads and operations need a token.
    pub fn reads_closed(&self) -> bool {
        self.reads_closed
    }

    /// Whether any token may use `scope`.
    pub fn any_with(&self, scope: Scope) -> bool {
        self.tokens.iter().any(|t| t.allows(scope))
    }

    /// Lets the request through for `scope`, or says why not. Reads pass
    /// without a token while they are open.
    pub fn check(&self, headers: &HeaderMap, scope: Scope) -> Result<(), Denied> {
        if scope == Scope::Read && !self.reads_closed {
            return Ok(());
        }
        let Some(given) = headers
            .get(header::AUTHORIZATION)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| {
                h.strip_prefix("Bearer ")
                    .or_else(|| h.strip_prefix("bearer "))
            })
            .map(str::trim)
            .filter(|t| !t.is_empty())
        else {
            return Err(Denied::Missing(scope));
        };
        let digest = Sha256::digest(given.as_bytes());
        // Every configured hash compared whole, the match kept to the end.
        let mut found: Option<&Token> = None;
        for t in &self.tokens {
            let diff = t
                .sha256
                .iter()
                .zip(digest.iter())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b));
            if diff == 0 {
                found = Some(t);
            }
        }
        match found {
            None => Err(Denied::Unknown(scope)),
            Some(t) if t.allows(scope) => Ok(()),
            Some(t) => Err(Denied::Lacks {
                token: t.name.clone(),
                scope,
            }),
        }
    }

    /// Whether the request carries a token with the admin scope.
    pub fn is_admin(&self, headers: &HeaderMap) -> bool {
        self.check(headers, Scope::Admin).is_ok()
    }
}

impl Token {
    fn allows(&self, scope: Scope) -> bool {
        match scope {
            Scope::Read => true,
            Scope::Write => self.write,
            Scope::Admin => self.admin,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn auth(toml: &str) -> Result<Auth, String> {
        let c = Config::parse(toml).unwrap();
        Auth::from_config(&c.auth, &c.http)
    }

    fn bearer(token: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_str(&format!("Bearer {token}")).unwrap(),
        );
        h
    }

    #[test]
    fn the_hash_is_sha256_of_the_text() {
        // FIPS 180-2's example: SHA-256("abc").
        assert_eq!(
            hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn tokens_open_what_their_scopes_say() {
        let a = auth(&format!(
            "[auth]\ntokens = [{{ name = \"ci\", sha256 = \"{}\", scopes = [\"write\"] }}, {{ name = \"ops\", sha256 = \"{}\", scopes = [\"admin\"] }}]\n",
            hash("writer-secret"),
            hash("admin-secret")
        ))
        .unwrap();
        assert!(a.check(&HeaderMap::new(), Scope::Read).is_ok());
        assert_eq!(
            a.check(&HeaderMap::new(), Scope::Write),
            Err(Denied::Missing(Scope::Write))
        );
        assert!(a.check(&bearer("writer-secret"), Scope::Write).is_ok());
        assert_eq!(
            a.check(&bearer("writer-secret"), Scope::Admin),
            Err(Denied::Lacks {
                token: "ci".into(),
                scope: Scope::Admin
            })
        );
        assert!(a.is_admin(&bearer("admin-secret")));
        assert_eq!(
            a.check(&bearer("writer-secret "), Scope::Write),
            Ok(()),
            "surrounding white space is not part of a token"
        );
        assert_eq!(
            a.check(&bearer("writer-secreT"), Scope::Write),
            Err(Denied::Unknown(Scope::Write))
        );
        assert_eq!(
            a.check(&bearer(&hash("writer-secret")), Scope::Write),
            Err(Denied::Unknown(Scope::Write)),
            "the hash is not the token"
        );
    }

    #[test]
    fn closed_reads_need_any_known_token() {
        let a = auth(&format!(
            "[auth]\nread = \"token\"\ntokens = [{{ name = \"r\", sha256 = \"{}\", scopes = [\"read\"] }}]\n",
            hash("reader")
        ))
        .unwrap();
        assert_eq!(
            a.check(&HeaderMap::new(), Scope::Read),
            Err(Denied::Missing(Scope::Read))
        );
        assert!(a.check(&bearer("reader"), Scope::Read).is_ok());
        assert!(a.check(&bearer("reader"), Scope::Write).is_err());
    }

    #[test]
    fn the_old_admin_token_is_an_admin_token() {
        let a = auth("[http]\nadmin_token = \"0123456789abcdef\"\n").unwrap();
        assert!(a.is_admin(&bearer("0123456789abcdef")));
        assert!(!a.is_admin(&bearer("0123456789abcdeX")));
        assert!(!a.any_with(Scope::Write));
    }

    #[test]
    fn mistakes_name_their_key() {
        for (bad, key) in [
            (
                "[auth]\ntokens = [{ name = \"x\", sha256 = \"abc\", scopes = [] }]\n",
                "sha256",
            ),
            (
                "[auth]\ntokens = [{ name = \"x\", sha256 = \"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\", scopes = [\"root\"] }]\n",
                "scope",
            ),
            ("[auth]\nread = \"closed\"\n", "read"),
            ("[auth]\nread = \"token\"\n", "read"),
            ("[http]\nadmin_token = \"short\"\n", "admin_token"),
        ] {
            let e = auth(bad).unwrap_err();
            assert!(e.contains(key), "{bad}: {e}");
        }
    }
}

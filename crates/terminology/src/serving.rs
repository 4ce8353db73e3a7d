//! Whether a code system held in a file may answer: a file is served
//! once every checksum of it has been read through (a SNOMED CT edition's
//! `Edition::verify`, a LOINC, RxNorm or NDC file's `CodeSystemFile::verify`).
//!
//! Opening a file checks its header, its section table and the small
//! sections parsed on open; the big ones are read on demand, and a
//! flipped byte in them would be served as data ("Draina[e - action" for
//! "Drainage - action", a wrong relationship target). So the server reads
//! each file through once in the background and answers from it only
//! when that has passed; while it runs the file answers 503, and if it
//! fails the file stays out of service, naming the file and the section.
//! A file the config trusts (`[snomed] trust_unverified`) is served at
//! once, unverified.
//!
//! A provider out of service is still a provider: the resolver finds it
//! by URL and version like any other, and then refuses with its
//! [`Serving::check`] (`CodeSystemProvider::in_service`), so a request
//! that needs it is a 503 on every path — never "unknown code system",
//! never `result: false`.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use crate::Error;

/// Where a file's verification stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Verifying,
    Verified,
    /// Served unverified, as the config asked.
    Trusted,
    Failed,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Verifying => "verifying",
            State::Verified => "verified",
            State::Trusted => "trusted",
            State::Failed => "failed",
        }
    }
}

/// A file's serving state, shared by the verifier and every request.
#[derive(Debug)]
pub struct Serving {
    /// The file's name (not its path: messages go to clients), for
    /// messages.
    file: String,
    state: AtomicU8,
    /// Why verification failed.
    failure: OnceLock<String>,
    /// Bytes checked so far.
    checked: AtomicU64,
}

impl Serving {
    /// A file being verified (or trusted, and so served at once).
    pub fn new(file: impl Into<String>, trusted: bool) -> Serving {
        Serving {
            file: file.into(),
            state: AtomicU8::new(if trusted {
                State::Trusted
            } else {
                State::Verifying
            } as u8),
            failure: OnceLock::new(),
            checked: AtomicU64::new(0),
        }
    }

    pub fn file(&self) -> &str {
        &self.file
    }

    pub fn state(&self) -> State {
        match self.state.load(Ordering::Acquire) {
            0 => State::Verifying,
            1 => State::Verified,
            2 => State::Trusted,
            _ => State::Failed,
        }
    }

    /// Why verification failed, if it did.
    pub fn failure(&self) -> Option<&str> {
        self.failure.get().map(String::as_str)
    }

    pub fn checked(&self) -> u64 {
        self.checked.load(Ordering::Relaxed)
    }

    /// Progress of the verification: bytes checked so far.
    pub fn progress(&self, bytes: u64) {
        self.checked.store(bytes, Ordering::Relaxed);
    }

    /// A verification starts again (the file is read through once more):
    /// out of service until [`Serving::finish`]. A trusted file stays
    /// trusted.
    pub fn begin(&self) {
        if self.state() != State::Trusted {
            self.checked.store(0, Ordering::Relaxed);
            self.state.store(State::Verifying as u8, Ordering::Release);
        }
    }

    /// Takes the file out of service for good, saying why (a later check
    /// found it changed): requests that need it get the 503 of a failed
    /// file.
    pub fn fail(&self, why: impl Into<String>) {
        let _ = self.failure.set(why.into());
        self.state.store(State::Failed as u8, Ordering::Release);
    }

    /// The outcome of the verification.
    pub fn finish(&self, result: Result<(), String>) {
        match result {
            Ok(()) => self.state.store(State::Verified as u8, Ordering::Release),
            Err(why) => {
                let _ = self.failure.set(why);
                self.state.store(State::Failed as u8, Ordering::Release);
            }
        }
    }

    /// Whether the file may answer now.
    pub fn is_serving(&self) -> bool {
        matches!(self.state(), State::Verified | State::Trusted)
    }

    /// `Ok` when the file may answer; else the 503 that says why, naming
    /// what the file holds (`what`: "the SNOMED CT edition
    /// http://snomed.info/sct/…", "the code system http://loinc.org|2.77").
    pub fn check(&self, what: &str) -> Result<(), Error> {
        match self.state() {
            State::Verified | State::Trusted => Ok(()),
            State::Verifying => Err(Error::Unavailable(format!(
                "{what} ({}) is being verified; retry shortly",
                self.file
            ))),
            State::Failed => Err(Error::Unavailable(format!(
                "{what} is out of service: its file {} failed verification ({})",
                self.file,
                self.failure().unwrap_or("unknown reason")
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_serves_once_verified_or_trusted() {
        let s = Serving::new("a.txmap", false);
        assert_eq!(s.state(), State::Verifying);
        let e = s.check("v").unwrap_err();
        assert_eq!(e.status(), 503);
        assert!(e.to_string().contains("a.txmap"), "{e}");
        s.finish(Ok(()));
        assert!(s.check("v").is_ok());
        let s = Serving::new("b.txmap", false);
        s.finish(Err("section TermHeap: checksum mismatch".into()));
        let e = s.check("v").unwrap_err();
        assert!(e.to_string().contains("b.txmap"), "{e}");
        assert!(e.to_string().contains("TermHeap"), "{e}");
        assert!(Serving::new("c.txmap", true).check("v").is_ok());
    }
}

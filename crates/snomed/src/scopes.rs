//! The scopes of text searches, kept between requests.
//!
//! A person typing into a search box scoped by ECL, a refset or a module
//! asks the same scope at every keystroke, and building its set can cost
//! far more than the search: a semantic-tag scope (`* {{ D term =
//! wild:"*(finding)", type = fsn }}`) reads every FSN of the edition,
//! about 180 ms on the International-scale synthetic edition, against a
//! millisecond for the word search in it. So the sets of the scopes the
//! searches asked for last are kept, per edition, least recently used out
//! first, within [`SCOPE_CACHE_BYTES`]. The edition is immutable, so a
//! kept set is the answer a new evaluation would give, whatever budget
//! built it; the cache goes with its edition.
//!
//! A selective search whose scope is not kept does not build it: its few
//! hits are tested against the scope one by one ([`crate::expand`]),
//! which costs less than a set nobody may ask for again.

use std::sync::{Arc, Mutex};

use txmap_store::ScopeSet;

/// The most bytes of scope sets one edition keeps. A set is its concepts
/// (4 bytes each) and two bitmaps over the descriptions (2 bits each):
/// on the International-scale edition a hierarchy of 150,000 concepts
/// is about 1 MB, so 16 MiB holds a dozen or more. A set bigger than this
/// is built for its request and not kept.
pub const SCOPE_CACHE_BYTES: usize = 16 << 20;

/// The most scope sets one edition keeps, whatever their size.
pub const SCOPE_CACHE_ENTRIES: usize = 64;

/// What a kept value costs in memory.
pub trait Weight {
    fn bytes(&self) -> usize;
}

impl Weight for ScopeSet {
    fn bytes(&self) -> usize {
        ScopeSet::bytes(self)
    }
}

impl Weight for Vec<u32> {
    fn bytes(&self) -> usize {
        self.len() * 4
    }
}

/// Scope sets by key (the scope as written), most recently used last.
#[derive(Debug)]
pub struct Scopes<T = ScopeSet> {
    kept: Mutex<Vec<(String, Arc<T>)>>,
}

impl<T> Default for Scopes<T> {
    fn default() -> Self {
        Scopes {
            kept: Mutex::new(Vec::new()),
        }
    }
}

impl<T: Weight> Scopes<T> {
    /// The set kept for `key`, or `build`'s, kept if it fits. The set is
    /// built outside the lock, so a slow scope blocks nobody else's;
    /// two requests building the same one both build it.
    pub fn get_or_build<E>(
        &self,
        key: &str,
        build: impl FnOnce() -> Result<T, E>,
    ) -> Result<Arc<T>, E> {
        if let Some(set) = self.kept(key) {
            return Ok(set);
        }
        let set = Arc::new(build()?);
        self.keep(key, &set);
        Ok(set)
    }

    /// The set kept for `key`, if any (now the most recently used).
    pub fn kept(&self, key: &str) -> Option<Arc<T>> {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let i = kept.iter().position(|(k, _)| k == key)?;
        let entry = kept.remove(i);
        let set = Arc::clone(&entry.1);
        kept.push(entry);
        Some(set)
    }

    fn keep(&self, key: &str, set: &Arc<T>) {
        if set.bytes() > SCOPE_CACHE_BYTES {
            return;
        }
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.retain(|(k, _)| k != key);
        kept.push((key.to_owned(), Arc::clone(set)));
        let mut total: usize = kept.iter().map(|(_, s)| s.bytes()).sum();
        while total > SCOPE_CACHE_BYTES || kept.len() > SCOPE_CACHE_ENTRIES {
            let (_, oldest) = kept.remove(0);
            total -= oldest.bytes();
        }
    }

    /// How many sets are kept, and their bytes.
    pub fn usage(&self) -> (usize, usize) {
        let kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        (kept.len(), kept.iter().map(|(_, s)| s.bytes()).sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_sets_are_reused_and_the_oldest_go_first() {
        let scopes = Scopes::<Vec<u32>>::default();
        let builds = std::cell::Cell::new(0);
        let get = |key: &str, len: usize| {
            scopes
                .get_or_build(key, || {
                    builds.set(builds.get() + 1);
                    Ok::<_, ()>(vec![7; len])
                })
                .unwrap()
        };
        assert_eq!(*get("a", 3), vec![7; 3]);
        assert_eq!(get("a", 3).len(), 3);
        // A quarter of the cap each: the fifth pushes out the least
        // recently used, which is "b" once "a" has been asked again.
        let quarter = SCOPE_CACHE_BYTES / 4 / 4;
        get("b", quarter);
        get("c", quarter);
        get("d", quarter);
        get("a", 3);
        get("e", quarter);
        assert_eq!(builds.get(), 5);
        let (n, bytes) = scopes.usage();
        assert_eq!(n, 4, "a, c, d, e");
        assert!(bytes <= SCOPE_CACHE_BYTES);
        let mut rebuilt = false;
        scopes
            .get_or_build("b", || {
                rebuilt = true;
                Ok::<_, ()>(Vec::new())
            })
            .unwrap();
        assert!(rebuilt, "b was the oldest");
        scopes
            .get_or_build("a", || -> Result<Vec<u32>, ()> { panic!("a is kept") })
            .unwrap();
    }

    #[test]
    fn a_set_over_the_cap_is_not_kept_and_errors_keep_nothing() {
        let scopes = Scopes::<Vec<u32>>::default();
        let big = SCOPE_CACHE_BYTES / 4 + 1;
        assert_eq!(
            scopes
                .get_or_build("big", || Ok::<_, ()>(vec![0; big]))
                .unwrap()
                .len(),
            big
        );
        assert!(
            scopes
                .get_or_build("bad", || Err::<Vec<u32>, _>("no"))
                .is_err()
        );
        assert_eq!(scopes.usage(), (0, 0));
    }
}

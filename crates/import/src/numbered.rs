//! Values numbered in the order they are first seen, for records that
//! hold a two-byte number instead of the value: a relationship's (type,
//! characteristic type, group), a description's module, effective time,
//! type, case, language and status, its set of language refset rows, a
//! member's module and time.
//! An edition has a few dozen to a few hundred of each, so the numbers
//! are assigned as the records are staged and the table is staged after
//! them.

use std::collections::BTreeMap;

use crate::ImportError;

#[derive(Debug)]
pub(crate) struct Numbered<K> {
    /// What the numbers are of, for the error when they run out.
    what: &'static str,
    numbers: BTreeMap<K, u16>,
    list: Vec<K>,
}

impl<K: Ord + Clone> Numbered<K> {
    pub(crate) fn new(what: &'static str) -> Self {
        Numbered {
            what,
            numbers: BTreeMap::new(),
            list: Vec::new(),
        }
    }

    /// The number of `value`, the next one if it is new.
    pub(crate) fn number(&mut self, value: K) -> Result<u16, ImportError> {
        if let Some(&n) = self.numbers.get(&value) {
            return Ok(n);
        }
        let n = u16::try_from(self.list.len()).map_err(|_| {
            ImportError::Inconsistent(format!(
                "more than 65,536 distinct {}: an edition file numbers them in two bytes",
                self.what
            ))
        })?;
        self.numbers.insert(value.clone(), n);
        self.list.push(value);
        Ok(n)
    }

    /// The values by number.
    pub(crate) fn values(&self) -> &[K] {
        &self.list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_numbered_in_first_seen_order() {
        let mut n = Numbered::new("times");
        assert_eq!(n.number(20240101u32).unwrap(), 0);
        assert_eq!(n.number(20020131).unwrap(), 1);
        assert_eq!(n.number(20240101).unwrap(), 0);
        assert_eq!(n.values(), [20240101, 20020131]);
    }

    #[test]
    fn the_65537th_value_is_refused() {
        let mut n = Numbered::new("modules");
        for v in 0..65_536u32 {
            n.number(v).unwrap();
        }
        let err = n.number(65_536).unwrap_err();
        assert!(err.to_string().contains("65,536 distinct modules"), "{err}");
        assert_eq!(n.number(65_535).unwrap(), 65_535);
    }
}

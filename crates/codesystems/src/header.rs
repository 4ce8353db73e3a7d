//! A release file's header row: its column names, found by name so that
//! a release that adds or moves columns still reads (LOINC's CSV, NDC's
//! tab-separated files).

use std::path::{Path, PathBuf};

use crate::CodeSystemError;

/// The column names of one file.
#[derive(Debug, Default)]
pub(crate) struct Header {
    path: PathBuf,
    names: Vec<String>,
}

impl Header {
    pub(crate) fn new(path: &Path, names: Vec<String>) -> Header {
        Header {
            path: path.to_owned(),
            names,
        }
    }

    /// The indexes of required columns; a missing one is an error naming
    /// the file and the column.
    pub(crate) fn columns<const N: usize>(
        &self,
        names: [&'static str; N],
    ) -> Result<[usize; N], CodeSystemError> {
        let mut out = [0; N];
        for (o, name) in out.iter_mut().zip(names) {
            *o = self
                .optional(name)
                .ok_or_else(|| CodeSystemError::MissingColumn {
                    path: self.path.clone(),
                    column: name,
                })?;
        }
        Ok(out)
    }

    /// The index of a column the file may lack.
    pub(crate) fn optional(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|h| h == name)
    }

    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }
}

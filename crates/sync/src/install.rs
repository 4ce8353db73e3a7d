//! A downloaded release made into what the server serves, in a staging
//! folder beside the served one and then renamed in: an RF2 release
//! imported into an edition file, a LOINC release into a code system
//! file, a FHIR package checked (it must read, through its gzip
//! checksum) and copied.

use std::path::{Path, PathBuf};

use crate::feed::Entry;

/// What a category makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `SCT_RF2_SNAPSHOT`, `SCT_RF2_ALL`, `SCT_RF2_FULL`: an edition file.
    Edition,
    /// `FHIR_Package`: the package, as it is.
    Package,
    /// `LOINC`: a code system file.
    Loinc,
}

impl Kind {
    /// What the category `term` makes, if txmap serves it.
    pub fn of(term: &str) -> Option<Kind> {
        match term {
            "SCT_RF2_SNAPSHOT" | "SCT_RF2_ALL" | "SCT_RF2_FULL" => Some(Kind::Edition),
            "FHIR_Package" => Some(Kind::Package),
            "LOINC" => Some(Kind::Loinc),
            _ => None,
        }
    }
}

/// A file name made of `text`: letters, digits, `.`, `-` and `_`.
fn slug(text: &str) -> String {
    let s: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    s.trim_matches('-').chars().take(120).collect()
}

/// The served file's name for `entry`: `sct-<module>-<date>.txmap` for a
/// SNOMED CT version URI, `loinc-<version>.txmap`, else the version made a
/// file name.
pub fn file_name(kind: Kind, entry: &Entry) -> String {
    match kind {
        Kind::Edition => {
            let v = &entry.version;
            let parts: Vec<&str> = v.split('/').collect();
            match (v.strip_prefix("http://snomed.info/sct/"), parts.len()) {
                (Some(_), n) if n >= 2 && parts[n - 2] == "version" && n >= 4 => {
                    format!("sct-{}-{}.txmap", slug(parts[n - 3]), slug(parts[n - 1]))
                }
                _ => format!("{}.txmap", slug(v)),
            }
        }
        Kind::Loinc => {
            let version = entry.version.rsplit('|').next().unwrap_or(&entry.version);
            format!("loinc-{}.txmap", slug(version))
        }
        Kind::Package => format!("{}.tgz", slug(&entry.version.replace('|', "-"))),
    }
}

/// Makes `download` (and, for an edition, the releases it builds on,
/// base first) into `staged`, which the caller renames in.
pub fn compile(
    kind: Kind,
    entry: &Entry,
    download: &Path,
    bases: &[PathBuf],
    staged: &Path,
    scratch: &Path,
) -> Result<(), String> {
    match kind {
        Kind::Edition => {
            let mut sources = bases.to_vec();
            sources.push(download.to_owned());
            let mut options = txmap_import::ImportOptions::new(sources, staged.to_owned());
            options.temp_dir = Some(scratch.to_owned());
            txmap_import::import(&options, &txmap_import::Quiet).map_err(|e| e.to_string())?;
            edition_is(entry, staged)
        }
        Kind::Package => {
            let package = txmap_packages::Package::open(download).map_err(|e| e.to_string())?;
            // `name|version`, when the feed says it so, must be the package.
            if let Some((name, version)) = entry.version.split_once('|')
                && (package.name != name || package.version != version)
            {
                return Err(format!(
                    "the download is the package {}#{}, and the feed says {name}#{version}",
                    package.name, package.version
                ));
            }
            std::fs::copy(download, staged)
                .map(|_| ())
                .map_err(|e| format!("{}: {e}", staged.display()))
        }
        Kind::Loinc => {
            let folder = scratch.join("loinc");
            unzip(download, &folder)?;
            let release = find_loinc(&folder, 0)
                .ok_or_else(|| "no LoincTable/Loinc.csv in the release".to_owned())?;
            let version = entry.version.rsplit('|').next().map(str::to_owned);
            let options = txmap_codesystems::ImportOptions {
                version,
                temp_dir: Some(scratch.to_owned()),
            };
            let done = txmap_codesystems::loinc::import(&release, staged, &options)
                .map(|_| ())
                .map_err(|e| e.to_string());
            let _ = std::fs::remove_dir_all(&folder);
            done
        }
    }
}

/// The `<module>/version/<date>` a SNOMED CT version URI ends with.
fn module_and_date(version_uri: &str) -> Option<&str> {
    let (head, date) = version_uri.rsplit_once("/version/")?;
    let module = head.rsplit('/').next()?;
    let start = version_uri.len() - date.len() - "/version/".len() - module.len();
    Some(&version_uri[start..])
}

/// An edition compiled from a release is the version the feed says it is
/// (module and date; the compiled file's version URI is read from the
/// release itself), so a feed cannot serve one release under another's
/// name.
fn edition_is(entry: &Entry, staged: &Path) -> Result<(), String> {
    let Some(want) = module_and_date(&entry.version) else {
        return Ok(()); // the feed names it otherwise: nothing to compare
    };
    let file = std::fs::File::open(staged).map_err(|e| format!("{}: {e}", staged.display()))?;
    let meta = txmap_format::peek_metadata(&file).map_err(|e| e.to_string())?;
    let have = meta
        .get("version_uri")
        .map(String::as_str)
        .unwrap_or_default();
    if module_and_date(have) == Some(want) {
        Ok(())
    } else {
        Err(format!(
            "the release is {have}, and the feed says {}",
            entry.version
        ))
    }
}

/// The folder holding `LoincTable/Loinc.csv`, at most three levels down.
fn find_loinc(dir: &Path, depth: usize) -> Option<PathBuf> {
    if dir.join("LoincTable").join("Loinc.csv").is_file() {
        return Some(dir.to_owned());
    }
    if depth >= 3 {
        return None;
    }
    let mut children: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    children.sort();
    children.iter().find_map(|c| find_loinc(c, depth + 1))
}

/// Unpacks `zip` into `to`; entries that would land outside it are an
/// error.
fn unzip(zip: &Path, to: &Path) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", zip.display());
    let file = std::fs::File::open(zip).map_err(|e| err(&e))?;
    let mut archive = zip::ZipArchive::new(file).map_err(|e| err(&e))?;
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).map_err(|e| err(&e))?;
        let Some(name) = entry.enclosed_name() else {
            return Err(err(&format!("entry {:?} leaves the folder", entry.name())));
        };
        let path = to.join(name);
        if entry.is_dir() {
            std::fs::create_dir_all(&path).map_err(|e| err(&e))?;
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| err(&e))?;
        }
        let mut out = std::fs::File::create(&path).map_err(|e| err(&e))?;
        std::io::copy(&mut entry, &mut out).map_err(|e| err(&e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(version: &str) -> Entry {
        Entry {
            version: version.into(),
            ..Entry::default()
        }
    }

    #[test]
    fn a_version_uri_ends_with_its_module_and_date() {
        assert_eq!(
            module_and_date("http://snomed.info/sct/32506021000036107/version/20260731"),
            Some("32506021000036107/version/20260731")
        );
        assert_eq!(
            module_and_date("http://snomed.info/xsct/900000000000207008/version/20250131"),
            Some("900000000000207008/version/20250131")
        );
        assert_eq!(module_and_date("hl7.terminology|7.0.1"), None);
    }

    #[test]
    fn files_are_named_by_their_version() {
        assert_eq!(
            file_name(
                Kind::Edition,
                &entry("http://snomed.info/sct/32506021000036107/version/20260731")
            ),
            "sct-32506021000036107-20260731.txmap"
        );
        assert_eq!(
            file_name(Kind::Loinc, &entry("http://loinc.org|2.82")),
            "loinc-2.82.txmap"
        );
        assert_eq!(
            file_name(Kind::Package, &entry("hl7.terminology.r4|7.0.1")),
            "hl7.terminology.r4-7.0.1.tgz"
        );
        assert_eq!(
            file_name(Kind::Edition, &entry("../../etc/passwd")),
            "..-..-etc-passwd.txmap",
            "never a path"
        );
    }
}

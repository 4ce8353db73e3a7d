//! Which edition and version a release is.
//!
//! SNOMED CT names an edition by the module at the top of its module
//! dependency graph (`http://snomed.info/sct/{module}`) and a version by that
//! module's release date (`.../version/{YYYYMMDD}`). Editions that have not
//! been published by a release centre use `http://snomed.info/xsct/...`
//! ("Using SNOMED CT with HL7 FHIR"), so that they can never be confused with
//! a published release of the same module and date.

use std::collections::{BTreeMap, BTreeSet};

/// Whether the edition is a published release.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ReleaseStatus {
    /// Decided by the packages' names where they follow the RF2 naming
    /// convention (`PRODUCTION` is published), else published if the
    /// edition module is one SNOMED International or a national release
    /// centre publishes.
    #[default]
    Auto,
    Published,
    Unpublished,
}

/// Modules of published editions that are commonly served (International
/// and national editions). Any other edition module is treated as
/// unpublished unless a package name or `--published` says otherwise.
pub const PUBLISHED_EDITION_MODULES: &[(u64, &str)] = &[
    (900000000000207008, "International"),
    (731000124108, "United States"),
    (83821000000107, "United Kingdom"),
    (999000041000000102, "United Kingdom clinical"),
    (999000021000000109, "United Kingdom drug"),
    (32506021000036107, "Australia"),
    (20611000087101, "Canada"),
    (11000146104, "Netherlands"),
    (45991000052106, "Sweden"),
    (554471000005108, "Denmark"),
    (11000172109, "Belgium"),
    (51000202101, "Norway"),
    (21000210109, "New Zealand"),
    (827022005, "IPS"),
    (450829007, "Spanish"),
    (11000220105, "Ireland"),
    (2011000195101, "Switzerland"),
    (11000221109, "Argentina"),
    (11000181102, "Estonia"),
];

/// Modules that ship content for an edition without being one: the
/// International release's ICD-10 map module and the model component module.
pub const DERIVATIVE_MODULES: &[u64] = &[449080006, 900000000000012004];

/// A module dependency row: `module` depends on `target`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dependency {
    pub module: u64,
    pub target: u64,
    pub source_effective_time: u32,
}

/// The identity derived for an import.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    pub edition_module: u64,
    pub effective_time: u32,
    pub published: bool,
    pub edition_uri: String,
    pub version_uri: String,
}

/// Picks the edition module: the top of the module dependency graph among
/// modules that own concepts. Modules that own none — the International
/// release's map modules, which depend on the core while nothing depends on
/// them — do not count, so they cannot hide the core. Of several tops, the
/// one owning the most concepts wins; with no dependency rows, the module
/// owning the most concepts.
pub fn edition_module(
    deps: &[Dependency],
    concepts_per_module: &BTreeMap<u64, u64>,
) -> Option<u64> {
    let owns = |m: u64| {
        concepts_per_module.get(&m).copied().unwrap_or(0) > 0 && !DERIVATIVE_MODULES.contains(&m)
    };
    let depended: BTreeSet<u64> = deps
        .iter()
        .filter(|d| d.module != d.target && owns(d.module))
        .map(|d| d.target)
        .collect();
    concepts_per_module
        .iter()
        .filter(|(m, _)| owns(**m) && !depended.contains(m))
        .max_by_key(|(m, n)| (**n, **m))
        .map(|(m, _)| *m)
}

/// The version date: the latest `sourceEffectiveTime` of the edition
/// module's dependency rows, else the latest effective time seen.
pub fn effective_time(deps: &[Dependency], module: u64, latest_seen: u32) -> u32 {
    deps.iter()
        .filter(|d| d.module == module)
        .map(|d| d.source_effective_time)
        .max()
        .unwrap_or(latest_seen)
}

/// The release status a package name states, following SNOMED
/// International's naming convention `SnomedCT_<Product>_<STATUS>_...`:
/// `PRODUCTION` for published releases, `ALPHA`, `BETA`, `MEMBER`, ... (and
/// txmap's own `SYNTH`) otherwise.
pub fn status_in_name(name: &str) -> Option<&str> {
    let rest = name
        .strip_prefix('x')
        .unwrap_or(name)
        .strip_prefix("SnomedCT_")?;
    let (_product, rest) = rest.split_once('_')?;
    let status = rest.split('_').next()?;
    (!status.is_empty() && status.bytes().all(|b| b.is_ascii_uppercase())).then_some(status)
}

/// Builds the URIs; explicit overrides win. With `ReleaseStatus::Auto`, a
/// package named by the RF2 convention decides by the status in its name;
/// otherwise a known edition module counts as published.
pub fn identity(
    module: u64,
    effective_time: u32,
    status: ReleaseStatus,
    package_names: &[String],
    edition_uri: Option<&str>,
    version_uri: Option<&str>,
) -> Identity {
    let published = match status {
        ReleaseStatus::Published => true,
        ReleaseStatus::Unpublished => false,
        ReleaseStatus::Auto => {
            let stated: Vec<&str> = package_names
                .iter()
                .filter_map(|n| status_in_name(n))
                .collect();
            if stated.is_empty() {
                PUBLISHED_EDITION_MODULES.iter().any(|(m, _)| *m == module)
            } else {
                stated.iter().all(|s| *s == "PRODUCTION")
            }
        }
    };
    let scheme = if published { "sct" } else { "xsct" };
    let edition_uri = edition_uri
        .map(str::to_owned)
        .unwrap_or_else(|| format!("http://snomed.info/{scheme}/{module}"));
    let version_uri = version_uri
        .map(str::to_owned)
        .unwrap_or_else(|| format!("{edition_uri}/version/{effective_time}"));
    Identity {
        edition_module: module,
        effective_time,
        published,
        edition_uri,
        version_uri,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dep(module: u64, target: u64, t: u32) -> Dependency {
        Dependency {
            module,
            target,
            source_effective_time: t,
        }
    }

    #[test]
    fn hl7_test_edition_rows() {
        // The module dependency rows of the HL7 test edition.
        let deps = [
            dep(449080006, 900000000000012004, 20250801),
            dep(900000000000207008, 900000000000012004, 20250801),
            dep(449080006, 900000000000207008, 20250801),
            dep(31000003106, 449080006, 20250909),
            dep(31000003106, 900000000000012004, 20250909),
            dep(31000003106, 31000003106, 20250909),
            dep(31000003106, 900000000000207008, 20250909),
        ];
        let owned = BTreeMap::from([
            (900000000000207008, 2000),
            (31000003106, 1),
            (900000000000012004, 200),
        ]);
        let m = edition_module(&deps, &owned).unwrap();
        assert_eq!(m, 31000003106);
        let t = effective_time(&deps, m, 20250909);
        let id = identity(m, t, ReleaseStatus::Auto, &["snomed".into()], None, None);
        assert_eq!(
            id.version_uri,
            "http://snomed.info/xsct/31000003106/version/20250909"
        );
        assert_eq!(id.edition_uri, "http://snomed.info/xsct/31000003106");
    }

    #[test]
    fn international_roots_pick_the_core() {
        let deps = [
            dep(900000000000207008, 900000000000012004, 20250201),
            dep(449080006, 900000000000207008, 20250201),
            dep(449080006, 900000000000012004, 20250201),
        ];
        let owned = BTreeMap::from([
            (900000000000207008, 370_000),
            (449080006, 3),
            (900000000000012004, 900),
        ]);
        let m = edition_module(&deps, &owned).unwrap();
        assert_eq!(m, 900000000000207008);
        let id = identity(m, 20250201, ReleaseStatus::Auto, &[], None, None);
        assert_eq!(
            id.version_uri,
            "http://snomed.info/sct/900000000000207008/version/20250201"
        );
    }

    #[test]
    fn package_names_and_overrides() {
        let auto = |module: u64, names: &[&str]| {
            let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
            identity(module, 20250101, ReleaseStatus::Auto, &names, None, None).published
        };
        assert!(auto(
            123456789,
            &["SnomedCT_ManagedServiceUS_PRODUCTION_US1000124_20250901T120000Z.zip"]
        ));
        assert!(!auto(123456789, &[]));
        // Synthetic or pre-release International packages are not published.
        assert!(!auto(
            900000000000207008,
            &["SnomedCT_SyntheticRF2_SYNTH_20250131"]
        ));
        assert!(!auto(
            900000000000207008,
            &["xSnomedCT_InternationalRF2_BETA_20250101T120000Z.zip"]
        ));
        // A folder without a conventional name: known edition modules only.
        assert!(auto(900000000000207008, &["intl"]));
        assert_eq!(
            status_in_name("SnomedCT_InternationalRF2_PRODUCTION_20250201T120000Z.zip"),
            Some("PRODUCTION")
        );
        assert_eq!(status_in_name("snomed"), None);
        assert_eq!(status_in_name("SnomedCT_Foo"), None);
        let published = identity(
            900000000000207008,
            1,
            ReleaseStatus::Unpublished,
            &[],
            None,
            None,
        );
        assert!(!published.published);
        let id = identity(1, 2, ReleaseStatus::Auto, &[], Some("http://x/e"), None);
        assert_eq!(id.version_uri, "http://x/e/version/2");
        let id = identity(1, 2, ReleaseStatus::Auto, &[], None, Some("http://x/v"));
        assert_eq!(id.version_uri, "http://x/v");
    }

    #[test]
    fn no_dependency_rows() {
        let owned = BTreeMap::from([(5u64, 10u64), (7, 3)]);
        assert_eq!(edition_module(&[], &owned), Some(5));
        assert_eq!(effective_time(&[], 5, 20200101), 20200101);
    }
}

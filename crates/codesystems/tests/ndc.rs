//! An NDC directory written here, row by row as the FDA publishes it
//! (tab-separated, CRLF, a Latin-1 name among UTF-8 ones), compiled and
//! read back through the provider; and the errors of a bad release.

use std::path::Path;

use txmap_codesystems::ndc::{URL, import, version_from_path};
use txmap_codesystems::{CodeSystemFile, Compiled, ImportOptions};
use txmap_terminology::provider::CodeSystemProvider;

const PRODUCT_HEADER: &str = "PRODUCTID\tPRODUCTNDC\tPRODUCTTYPENAME\tPROPRIETARYNAME\tPROPRIETARYNAMESUFFIX\tNONPROPRIETARYNAME\tDOSAGEFORMNAME\tROUTENAME\tSTARTMARKETINGDATE\tENDMARKETINGDATE\tMARKETINGCATEGORYNAME\tAPPLICATIONNUMBER\tLABELERNAME\tSUBSTANCENAME\tNDC_EXCLUDE_FLAG";
const PACKAGE_HEADER: &str = "PRODUCTID\tPRODUCTNDC\tNDCPACKAGECODE\tPACKAGEDESCRIPTION\tSTARTMARKETINGDATE\tENDMARKETINGDATE\tNDC_EXCLUDE_FLAG\tSAMPLE_PACKAGE";

fn write(dir: &Path, products: &[&[u8]], packages: &[&str]) {
    std::fs::create_dir_all(dir).unwrap();
    let mut p = PRODUCT_HEADER.as_bytes().to_vec();
    for row in products {
        p.extend_from_slice(b"\r\n");
        p.extend_from_slice(row);
    }
    p.extend_from_slice(b"\r\n");
    std::fs::write(dir.join("product.txt"), p).unwrap();
    let mut k = PACKAGE_HEADER.to_owned();
    for row in packages {
        k.push_str("\r\n");
        k.push_str(row);
    }
    k.push_str("\r\n");
    std::fs::write(dir.join("package.txt"), k).unwrap();
}

#[test]
fn products_and_packages_are_concepts() {
    let dir = tempfile::tempdir().unwrap();
    let release = dir.path().join("2025-07-11");
    write(
        &release,
        &[
            b"p1\t0002-0152\tHUMAN PRESCRIPTION DRUG\tZepbound\t\ttirzepatide\tINJECTION\tSUBCUTANEOUS\t20231108\t\tNDA\tNDA1\tEli Lilly\tTIRZEPATIDE\tN",
            b"p2\t0002-0213\tHUMAN OTC DRUG\tHumulin\tR\tinsulin\tINJECTION\tPARENTERAL\t19830627\t20240101\tBLA\tBLA1\tEli Lilly\tINSULIN\tN",
            // A Latin-1 name (0xE9, é), as the FDA's older files have them.
            b"p3\t0777-3105\tHUMAN PRESCRIPTION DRUG\tCaf\xe9\t\tx\tCAPSULE\tORAL\t19870101\t\tNDA\tNDA2\tLab\tX\tY",
        ],
        &[
            "p1\t0002-0152\t0002-0152-01\t1 VIAL in 1 CARTON (0002-0152-01)\t20240328\t\tN\tN",
            "p2\t0002-0213\t0002-0213-01\t10 mL in 1 VIAL (0002-0213-01)\t19830627\t20240101\tN\tN",
            "p9\t9999-9999\t9999-9999-99\ta package of no product\t20200101\t\tN\tN",
        ],
    );
    let out = dir.path().join("ndc.txmap");
    let report = import(&release, &out, &ImportOptions::default()).unwrap();
    assert_eq!(report.version, "2025-07-11");
    assert_eq!(
        (report.products, report.packages, report.skipped_rows),
        (3, 2, 1)
    );
    let cs = Compiled::new(
        CodeSystemFile::open(std::fs::read(&out).unwrap())
            .unwrap()
            .into(),
    );
    assert_eq!(cs.url(), URL);
    let id = |code: &str| cs.locate(code).unwrap_or_else(|| panic!("{code}")).id;
    assert_eq!(cs.display(id("0002-0152")), Some("Zepbound"));
    assert_eq!(cs.display(id("0002-0213")), Some("Humulin R"));
    assert_eq!(cs.display(id("0777-3105")), Some("Café"));
    assert_eq!(
        cs.display(id("0002-0152-01")),
        Some("Zepbound, 1 VIAL in 1 CARTON (0002-0152-01)")
    );
    // A package is below its product.
    assert_eq!(cs.parents(id("0002-0152-01")).to_vec(), [id("0002-0152")]);
    // Marketing ended before the release, or excluded: inactive.
    assert!(!cs.status(id("0002-0152")).inactive);
    assert!(cs.status(id("0002-0213")).inactive);
    assert!(cs.status(id("0002-0213-01")).inactive);
    assert!(cs.status(id("0777-3105")).inactive);
    assert!(cs.locate("9999-9999-99").is_none());
    let route: Vec<String> = cs
        .properties(id("0002-0152"))
        .iter()
        .filter(|p| p.code == "route")
        .map(|p| p.value.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(route, ["SUBCUTANEOUS"]);
}

#[test]
fn bad_releases_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ndc.txmap");
    let opts = ImportOptions {
        version: Some("2025-01-01".into()),
        temp_dir: None,
    };
    let e = import(dir.path(), &out, &opts).unwrap_err();
    assert!(e.to_string().contains("product.txt: not found"), "{e}");
    let release = dir.path().join("release");
    write(&release, &[b"p1\t0002-0152\tshort"], &[]);
    let e = import(&release, &out, &opts).unwrap_err();
    assert!(
        e.to_string().contains("product.txt: line 2: 3 fields"),
        "{e}"
    );
    assert!(!out.exists());
    let e = import(&release, &out, &ImportOptions::default()).unwrap_err();
    assert!(
        e.to_string().contains("cannot tell the release version"),
        "{e}"
    );
    assert_eq!(
        version_from_path(Path::new("/x/2025-07-11")),
        Some("2025-07-11".into())
    );
    assert_eq!(version_from_path(Path::new("/x/ndc")), None);
}

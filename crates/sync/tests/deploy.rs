//! The sync config the Kubernetes CronJob carries (`deploy/k8s/sync.yaml`)
//! is one `txmap sync` reads.

#[test]
fn the_cronjobs_sync_config_is_valid() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../deploy/k8s/sync.yaml");
    let yaml = std::fs::read_to_string(path).unwrap();
    let mut lines = yaml.lines().skip_while(|l| l.trim() != "sync.toml: |");
    lines.next().expect("sync.toml");
    let text: String = lines
        .take_while(|l| l.starts_with("    ") || l.trim().is_empty())
        .map(|l| l.get(4..).unwrap_or("").to_owned() + "\n")
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sync.toml");
    std::fs::write(&file, &text).unwrap();
    let c = txmap_sync::SyncConfig::load(&file).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(c.feeds.len(), 1);
    assert_eq!(c.credentials[0].kind, "oauth2");
    assert_eq!(c.packages_dir(), std::path::Path::new("/editions/packages"));
}

#[test]
fn a_config_mistake_is_one_line_naming_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sync.toml");
    std::fs::write(&file, "editions = \"e\"\nbogus = 1\n").unwrap();
    let e = txmap_sync::SyncConfig::load(&file).unwrap_err();
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("sync.toml") && e.contains("line 2"), "{e}");
    std::fs::write(
        &file,
        "editions = \"e\"\n[[credentials]]\nhost = \"h\"\nkind = \"oauth2\"\n",
    )
    .unwrap();
    let e = txmap_sync::SyncConfig::load(&file).unwrap_err();
    assert!(e.contains("token_url"), "{e}");
}

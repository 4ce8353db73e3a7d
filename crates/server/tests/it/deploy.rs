//! The configs the deployment files carry (`deploy/k8s/config.yaml`) are
//! ones this server starts with: each parses, and its tokens and `[http]`
//! are accepted.

use txmap_server::auth::{Auth, Scope};
use txmap_server::config::Config;

/// The block scalar under `key: |` in a YAML text, dedented.
fn block(yaml: &str, key: &str) -> String {
    let mut lines = yaml.lines().skip_while(|l| l.trim() != format!("{key}: |"));
    let head = lines.next().expect(key);
    let indent = head.len() - head.trim_start().len();
    lines
        .take_while(|l| l.trim().is_empty() || l.len() - l.trim_start().len() > indent)
        .map(|l| l.get(indent + 2..).unwrap_or("").to_owned() + "\n")
        .collect()
}

#[test]
fn the_kubernetes_configs_are_valid_txmap_configs() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../deploy/k8s/config.yaml");
    let yaml = std::fs::read_to_string(path).unwrap();
    for (key, writes) in [("txmap.toml", false), ("writer.toml", true)] {
        let text = block(&yaml, key);
        let c = Config::parse(&text).unwrap_or_else(|e| panic!("{key}: {e}\n{text}"));
        let auth = Auth::from_config(&c.auth, &c.http).unwrap();
        assert!(
            auth.any_with(Scope::Admin),
            "{key}: the sync Job reloads through the admin listener"
        );
        assert!(c.admin.listen.is_some(), "{key}");
        assert_eq!(
            c.store.path.is_some(),
            writes,
            "{key}: only the writer stores"
        );
        assert_eq!(auth.any_with(Scope::Write), writes, "{key}");
        txmap_server::public::Public::from_config(&c.http).unwrap();
    }
}

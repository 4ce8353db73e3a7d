use super::*;

fn value_set(id: Option<&str>, url: &str, version: &str) -> Value {
    let mut vs = json!({
        "resourceType": "ValueSet",
        "url": url,
        "version": version,
        "status": "active",
        "compose": {"include": [{"system": "http://example.org/cs", "concept": [{"code": "a"}]}]}
    });
    if let Some(id) = id {
        vs["id"] = json!(id);
    }
    vs
}

fn open() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("data/resources.sqlite")).unwrap();
    (dir, store)
}

fn parsed(json: &str) -> Value {
    serde_json::from_str(json).unwrap()
}

#[test]
fn a_resource_is_created_updated_and_deleted_as_versions() {
    let (_dir, store) = open();
    let made = store
        .create(
            Kind::ValueSet,
            value_set(Some("ignored"), "http://x/vs", "1"),
        )
        .unwrap();
    assert!(made.created);
    assert_eq!(made.version_id, 1);
    assert_ne!(made.id, "ignored", "a create chooses the id");
    check_id(&made.id).unwrap();
    let v = parsed(&made.json);
    assert_eq!(v["id"], json!(made.id));
    assert_eq!(v["meta"]["versionId"], json!("1"));
    assert_eq!(v["meta"]["lastUpdated"], json!(made.last_updated));

    let mut next = value_set(Some(&made.id), "http://x/vs", "1");
    next["title"] = json!("Second");
    let changed = store
        .update(Kind::ValueSet, &made.id, next, Some(1))
        .unwrap();
    assert!(!changed.created);
    assert_eq!(changed.version_id, 2);

    // The package serves the current version only.
    let p = store.package().unwrap();
    assert_eq!(p.name, PACKAGE_NAME);
    assert_eq!(p.entries().len(), 1);
    assert_eq!(p.entries()[0].title.as_deref(), Some("Second"));
    assert_eq!(p.version, "2", "two versions written");

    assert_eq!(
        store.delete(Kind::ValueSet, &made.id, None).unwrap(),
        Some(3)
    );
    assert_eq!(store.delete(Kind::ValueSet, &made.id, None).unwrap(), None);
    assert!(store.package().unwrap().entries().is_empty());
    assert_eq!(store.deleted(Kind::ValueSet, &made.id).unwrap(), Some(3));

    let history = store.history(Kind::ValueSet, &made.id).unwrap();
    let methods: Vec<(u64, &str)> = history
        .iter()
        .map(|v| (v.version_id, v.method.as_str()))
        .collect();
    assert_eq!(methods, [(3, "DELETE"), (2, "PUT"), (1, "POST")]);
    let first = store.version(Kind::ValueSet, &made.id, 1).unwrap();
    assert_eq!(
        parsed(first.json.as_deref().unwrap())["version"],
        json!("1")
    );
    assert!(
        parsed(first.json.as_deref().unwrap())
            .get("title")
            .is_none()
    );
    assert!(matches!(
        store.version(Kind::ValueSet, &made.id, 3),
        Err(Error::Gone { version_id: 3 })
    ));
    assert!(matches!(
        store.version(Kind::ValueSet, &made.id, 4),
        Err(Error::NotFound)
    ));

    // A put after the delete makes it again, as the next version.
    let again = store
        .update(
            Kind::ValueSet,
            &made.id,
            value_set(Some(&made.id), "http://x/vs", "1"),
            None,
        )
        .unwrap();
    assert!(again.created);
    assert_eq!(again.version_id, 4);
}

#[test]
fn if_match_names_the_current_version_or_nothing_is_written() {
    let (_dir, store) = open();
    let vs = || value_set(Some("a"), "http://x/a", "1");
    assert!(matches!(
        store.update(Kind::ValueSet, "a", vs(), Some(1)),
        Err(Error::Precondition {
            expected: 1,
            current: None
        })
    ));
    store.update(Kind::ValueSet, "a", vs(), None).unwrap();
    assert!(matches!(
        store.update(Kind::ValueSet, "a", vs(), Some(7)),
        Err(Error::Precondition {
            expected: 7,
            current: Some(1)
        })
    ));
    assert!(matches!(
        store.delete(Kind::ValueSet, "a", Some(2)),
        Err(Error::Precondition { .. })
    ));
    assert_eq!(store.history(Kind::ValueSet, "a").unwrap().len(), 1);
}

#[test]
fn two_stored_resources_cannot_share_url_and_version() {
    let (_dir, store) = open();
    store
        .update(
            Kind::ValueSet,
            "a",
            value_set(Some("a"), "http://x/s", "1"),
            None,
        )
        .unwrap();
    let e = store
        .update(
            Kind::ValueSet,
            "b",
            value_set(Some("b"), "http://x/s", "1"),
            None,
        )
        .unwrap_err();
    assert!(
        matches!(&e, Error::Collision { with } if with == "stored ValueSet/a"),
        "{e}"
    );
    // Another version, or another type, is not a collision.
    store
        .update(
            Kind::ValueSet,
            "b",
            value_set(Some("b"), "http://x/s", "2"),
            None,
        )
        .unwrap();
    // Once deleted, its url is free.
    store.delete(Kind::ValueSet, "a", None).unwrap();
    store
        .update(
            Kind::ValueSet,
            "c",
            value_set(Some("c"), "http://x/s", "1"),
            None,
        )
        .unwrap();
}

#[test]
fn what_cannot_be_stored_is_refused_and_nothing_is_written() {
    let (_dir, store) = open();
    let cases: Vec<(Kind, &str, Value, bool)> = vec![
        (Kind::ValueSet, "a", json!([1, 2]), false),
        (
            Kind::ValueSet,
            "a",
            json!({"resourceType": "CodeSystem", "id": "a"}),
            false,
        ),
        (
            Kind::ValueSet,
            "a",
            json!({"id": "a", "url": "http://x"}),
            false,
        ),
        (
            Kind::ValueSet,
            "a",
            value_set(Some("b"), "http://x/a", "1"),
            false,
        ),
        (
            Kind::ValueSet,
            "a",
            value_set(None, "http://x/a", "1"),
            false,
        ),
        (
            Kind::ValueSet,
            "a b",
            value_set(Some("a b"), "http://x/a", "1"),
            false,
        ),
        (
            Kind::ValueSet,
            "a",
            json!({"resourceType": "ValueSet", "id": "a", "status": "active"}),
            true,
        ),
        (
            Kind::ValueSet,
            "a",
            json!({"resourceType": "ValueSet", "id": "a", "url": "http://x/a"}),
            true,
        ),
        (
            Kind::ValueSet,
            "a",
            json!({"resourceType": "ValueSet", "id": "a", "url": "http://x/a", "status": "final"}),
            true,
        ),
        (
            Kind::CodeSystem,
            "a",
            json!({"resourceType": "CodeSystem", "id": "a", "url": "http://x/a", "status": "active", "content": "complete", "concept": "not a list"}),
            true,
        ),
    ];
    for (kind, id, body, unprocessable) in cases {
        let shown = body.to_string();
        let e = store.update(kind, id, body, None).unwrap_err();
        match (&e, unprocessable) {
            (Error::Unprocessable(_), true) | (Error::Unparsable(_), false) => {}
            _ => panic!("{shown}: {e:?}"),
        }
    }
    assert!(store.package().unwrap().entries().is_empty());
    assert!(matches!(
        store.history(Kind::ValueSet, "a"),
        Err(Error::NotFound)
    ));
}

#[test]
fn what_was_written_is_there_when_the_file_is_opened_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.sqlite");
    let id = {
        let store = Store::open(&path).unwrap();
        store
            .create(Kind::ValueSet, value_set(None, "http://x/a", "1"))
            .unwrap()
            .id
    };
    let store = Store::open(&path).unwrap();
    let p = store.package().unwrap();
    assert_eq!(p.entries().len(), 1);
    assert_eq!(p.entries()[0].id.as_deref(), Some(id.as_str()));
    assert_eq!(p.entries()[0].url, "http://x/a");
    let journal: String = store
        .conn()
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(journal, "wal");
}

#[test]
fn a_database_of_another_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.sqlite");
    Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let e = Store::open(&path).unwrap_err();
    assert!(matches!(e, Error::Schema { found: 99, .. }), "{e}");
    assert!(e.to_string().contains("r.sqlite"), "{e}");
}

#[test]
fn a_folder_that_cannot_be_made_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-folder");
    std::fs::write(&file, "x").unwrap();
    let e = Store::open(&file.join("r.sqlite")).unwrap_err();
    assert!(matches!(e, Error::Folder { .. }), "{e:?}");
    assert!(e.to_string().contains("not-a-folder"), "{e}");
}

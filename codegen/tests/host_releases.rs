//! `x-msp-host-releases`: the releases and fixtures become the registry's tables; a table of
//! the wrong shape is refused at its JSON pointer, nothing generated.

use msp_codegen::{generate, Options};
use serde_json::json;

fn schema(releases: serde_json::Value) -> String {
    json!({
        "$defs": {"Ping": {"type": "object", "properties": {}}},
        "x-msp-host-releases": releases,
    })
    .to_string()
}

fn registry(releases: serde_json::Value) -> String {
    let output = generate(&schema(releases), &Options::new("releases.json")).unwrap();
    output.files["registry.rs"].clone()
}

#[test]
fn releases_and_fixtures_become_the_registry_tables() {
    let text = registry(json!({
        "releases": [
            {"release": "1.0.0", "fingerprints": {"stable": "sha256:aa", "experimental": "sha256:ab"}},
            {"release": "1.0.1", "fingerprints": {"stable": "sha256:bb"}}
        ],
        "fixtures": [{"fingerprint": "sha256:ff", "description": "recorded"}]
    }));
    let compact: String = text.split_whitespace().collect();
    let first =
        r#"HostRelease{release:"1.0.0",stable:Some("sha256:aa"),experimental:Some("sha256:ab"),}"#;
    assert!(compact.replace(",)", ")").contains(first), "{text}");
    assert!(
        compact.contains(r#"release:"1.0.1""#) && compact.contains("experimental:None"),
        "{text}"
    );
    assert!(
        compact.contains(r#"FIXTURE_FINGERPRINTS:&[&str]=&["sha256:ff"]"#),
        "{text}"
    );
    let empty = registry(json!({}));
    let compact: String = empty.split_whitespace().collect();
    assert!(
        compact.contains("HOST_RELEASES:&[HostRelease]=&[];"),
        "{empty}"
    );
}

#[test]
fn a_table_of_the_wrong_shape_is_refused_at_its_pointer() {
    for (releases, pointer) in [
        (json!([]), "/x-msp-host-releases"),
        (json!({"releases": {}}), "/x-msp-host-releases/releases"),
        (
            json!({"releases": [{"fingerprints": {}}]}),
            "/x-msp-host-releases/releases/0/release",
        ),
        (
            json!({"releases": [{"release": "1", "fingerprints": {"stable": 1}}]}),
            "/x-msp-host-releases/releases/0/fingerprints/stable",
        ),
        (
            json!({"fixtures": [{"fingerprint": null}]}),
            "/x-msp-host-releases/fixtures/0/fingerprint",
        ),
    ] {
        let Err(error) = generate(&schema(releases), &Options::new("releases.json")) else {
            panic!("refused: {pointer}")
        };
        assert_eq!(error.pointer.as_deref(), Some(pointer), "{error}");
    }
}

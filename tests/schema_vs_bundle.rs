//! Our schema against the upstream experimental bundle, on wire facts alone: every difference
//! must be listed, with its reason, in `schema_vs_bundle.allow` (changes made by 1.4.13).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

const PROSE: &[&str] = &["description", "title", "$comment", "examples"];

// Unset: the test skips. Set to a folder without `msp-upstream/`: a mistake, said loudly.
fn shared_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("MSP_SHARED_DIR").filter(|v| !v.is_empty())?);
    assert!(
        dir.join("msp-upstream").is_dir(),
        "MSP_SHARED_DIR is set but {}/msp-upstream is missing",
        dir.display()
    );
    Some(dir)
}

/// Objects whose keys are names (of members, definitions, methods), not keywords: a member
/// named `description` is a wire fact and stays.
const NAME_MAPS: &[&str] = &[
    "properties",
    "$defs",
    "dependentRequired",
    "methods",
    "notifications",
    "requests",
];

fn strip(value: &Value, names: bool) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| names || !PROSE.contains(&k.as_str()))
                .map(|(k, v)| {
                    (
                        k.clone(),
                        strip(v, !names && NAME_MAPS.contains(&k.as_str())),
                    )
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| strip(v, false)).collect()),
        other => other.clone(),
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

// The deepest differing nodes; lists of scalars (required, enum, type) compare as sets.
fn diff(a: &Value, b: &Value, pointer: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for key in keys {
                let p = format!("{pointer}/{}", escape(key));
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => diff(x, y, &p, out),
                    _ => out.push(p),
                }
            }
        }
        (Value::Array(x), Value::Array(y))
            if x.iter().chain(y).all(|v| !v.is_object() && !v.is_array()) =>
        {
            let mut x: Vec<String> = x.iter().map(Value::to_string).collect();
            let mut y: Vec<String> = y.iter().map(Value::to_string).collect();
            x.sort();
            y.sort();
            if x != y {
                out.push(pointer.to_owned());
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (x, y)) in x.iter().zip(y).enumerate() {
                diff(x, y, &format!("{pointer}/{i}"), out);
            }
        }
        _ if a != b => out.push(pointer.to_owned()),
        _ => {}
    }
}

fn allow_list(root: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(root.join("tests/schema_vs_bundle.allow")).unwrap();
    text.lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| {
            let (pointer, reason) = line.split_once('\t').unwrap_or((line, ""));
            assert!(
                !reason.trim().is_empty(),
                "allow-list entry without a reason: {line}"
            );
            (pointer.to_owned(), reason.to_owned())
        })
        .collect()
}

#[test]
fn schema_differs_from_the_bundle_only_where_listed() {
    let Some(shared) = shared_dir() else {
        eprintln!("skipped: MSP_SHARED_DIR is not set to the shared material");
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |path: PathBuf| -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let mut bundle = strip(
        &read(shared.join("msp-upstream/experimental/msp.schema.json")),
        false,
    );
    let mut ours = strip(&read(root.join("schema/msp.schema.json")), false);
    for doc in [&mut bundle, &mut ours] {
        doc.as_object_mut().unwrap().remove("$schema");
    }
    let mut found = Vec::new();
    diff(&bundle, &ours, "", &mut found);
    let allowed = allow_list(root);
    println!(
        "schema vs bundle: {} wire differences, {} listed",
        found.len(),
        allowed.len()
    );
    let unlisted: Vec<&String> = found.iter().filter(|p| !allowed.contains_key(*p)).collect();
    let stale: Vec<&String> = allowed.keys().filter(|p| !found.contains(p)).collect();
    assert!(
        unlisted.is_empty(),
        "differences not in the allow-list: {unlisted:#?}"
    );
    assert!(
        stale.is_empty(),
        "allow-list entries that no longer differ: {stale:#?}"
    );
}

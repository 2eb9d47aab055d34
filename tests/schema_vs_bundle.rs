//! Our schema against the upstream experimental bundle, on wire facts alone: every difference
//! must be listed, with its reason, in `schema_vs_bundle.allow` (changes made by 1.4.13).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

mod wire_facts;
use wire_facts::{diff, strip};

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

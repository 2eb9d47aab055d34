//! The fold under the Python SDK 1.4.13 rules against that SDK's own fold of every golden
//! transcript (`$MSP_PYFOLD_DIR/<scenario>.json`, written by `shared/tools/pyfold_dump.py
//! --all`, which `.ci/run` runs when the package installs), on the fields both keep: items
//! (id, kind, revision, status, the deltas' text), turns (id, state, terminal), approvals
//! pending (with their latest update) and resolved, questions pending and settled (with
//! their outcome), and whether the fold is current.

mod support;

use std::collections::BTreeSet;
use std::path::PathBuf;

use msp_conformance::fold::{fold_file, Rules};
use serde_json::{json, Value};

/// The fields compared, in the Python dump's names.
fn project(document: &Value) -> Value {
    let list = |key: &str, fields: &[&str]| -> Value {
        let rows = document[key].as_array().cloned().unwrap_or_default();
        rows.iter()
            .map(|row| {
                fields
                    .iter()
                    .map(|field| (field.to_string(), row[*field].clone()))
                    .collect::<serde_json::Map<_, _>>()
                    .into()
            })
            .collect::<Vec<Value>>()
            .into()
    };
    json!({
        "items": list("items", &["itemId", "kind", "revision", "status", "accumulated"]),
        "turns": list("turns", &["turnId", "state", "terminal"]),
        "pendingApprovals": list("pendingApprovals", &["approvalId", "latestUpdate"]),
        "resolvedApprovals": list("resolvedApprovals", &["approvalId"]),
        "pendingUserInputs": list("pendingUserInputs", &["userInputId"]),
        "settledUserInputs": list("settledUserInputs", &["userInputId", "outcome"]),
        "gap": {"current": document["gap"]["current"]},
    })
}

/// The first JSON pointer where `a` and `b` differ.
fn first_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            keys.into_iter().find_map(|k| match (a.get(k), b.get(k)) {
                (Some(a), Some(b)) => first_difference(a, b, &format!("{at}/{k}")),
                _ => Some(format!("{at}/{k}")),
            })
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (a, b))| first_difference(a, b, &format!("{at}/{i}"))),
        _ => (a != b).then(|| at.to_owned()),
    }
}

#[test]
fn every_golden_transcript_folds_as_the_python_sdk_folds_it() {
    let Some(dumps) = std::env::var_os("MSP_PYFOLD_DIR").filter(|d| !d.is_empty()) else {
        eprintln!("skipped: MSP_PYFOLD_DIR is not set (the Python SDK's dumps)");
        return;
    };
    let dumps = PathBuf::from(dumps);
    let shared = support::shared_dir().expect("MSP_SHARED_DIR is set with MSP_PYFOLD_DIR");
    let transcripts = shared.join("msp-upstream/transcripts");
    let mut compared = 0;
    let mut differences = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(&dumps)
        .unwrap_or_else(|e| panic!("{}: {e}", dumps.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    entries.sort();
    for dump in entries {
        let scenario = dump.file_stem().unwrap().to_string_lossy().into_owned();
        let file = transcripts.join(&scenario).join("transcript.ndjson");
        let python: Value = serde_json::from_str(&std::fs::read_to_string(&dump).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", dump.display()));
        assert_eq!(
            python["mode"],
            "replay",
            "{}: a replay-mode dump",
            dump.display()
        );
        let ours =
            fold_file(&file, &scenario, Rules::PythonSdk1413).unwrap_or_else(|e| panic!("{e}"));
        let (python, ours) = (project(&python), project(&ours));
        if let Some(pointer) = first_difference(&python, &ours, "") {
            differences.push(format!(
                "{scenario}: differs at {pointer}: python {} ours {}",
                python.pointer(&pointer).unwrap_or(&Value::Null),
                ours.pointer(&pointer).unwrap_or(&Value::Null)
            ));
        }
        compared += 1;
    }
    println!(
        "{compared} transcripts compared, {} differ",
        differences.len()
    );
    assert_eq!(
        compared,
        47,
        "a dump for each golden scenario in {}",
        dumps.display()
    );
    assert!(differences.is_empty(), "{differences:#?}");
}

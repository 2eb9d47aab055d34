//! `msp-conformance fold`: the fold of a transcript, as a document; and what the default rules
//! make of the golden transcripts a client would see.

mod support;

use std::path::Path;
use std::process::{Command, Output};

use msp_conformance::fold::{fold_file, Rules};
use msp_conformance::transcript::{self, Dir};
use msp_session::{Fold, FoldRules, Outcome};
use msp_types::{Frame, Message, Sender, SessionResumeResult};
use serde_json::Value;

fn fold(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_msp-conformance"))
        .arg("fold")
        .args(args)
        .current_dir(support::repo_root())
        .output()
        .expect("the binary runs")
}

#[test]
fn the_command_prints_one_document_per_transcript_and_refuses_bad_usage() {
    let seed = "tests/fixtures/seed-answer-user-input/transcript.ndjson";
    let output = fold(&["--rules", "python-sdk-1.4.13", seed]);
    assert_eq!(output.status.code(), Some(0));
    let document: Value = serde_json::from_slice(&output.stdout).expect("one JSON document");
    assert_eq!(document["scenario"], "seed-answer-user-input");
    assert_eq!(document["rules"], "python-sdk-1.4.13");
    assert_eq!(document["settledUserInputs"][0]["outcome"], "answered");
    // The form is the Python dump's: sorted keys, one space of indent, a newline at the end.
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.starts_with("{\n \"activeTurnId\"") && text.ends_with("}\n"),
        "{text}"
    );
    let out = tempfile::tempdir().unwrap();
    let output = fold(&["--out", out.path().to_str().unwrap(), "tests/fixtures"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(out.path().join("seed-answer-user-input.json").is_file());
    for bad in [
        &["--rules", "typescript", seed][..],
        &[],
        &["no/such/folder"],
    ] {
        let output = fold(bad);
        assert_eq!(output.status.code(), Some(2), "{bad:?}");
    }
    let help = Command::new(env!("CARGO_BIN_EXE_msp-conformance"))
        .arg("--help")
        .output()
        .unwrap();
    assert_eq!(help.status.code(), Some(0));
}

#[test]
fn the_default_rules_fold_every_golden_transcript_as_a_client_sees_it() {
    let Ok(shared) = support::shared_dir() else {
        eprintln!("skipped: MSP_SHARED_DIR is not set");
        return;
    };
    let transcripts = shared.join("msp-upstream/transcripts");
    let mut folded = 0;
    let files = transcript::files(&transcripts).unwrap();
    // Each scenario's transcript (some folders hold partial recordings besides).
    for file in files.iter().filter(|f| f.ends_with("transcript.ndjson")) {
        let scenario = msp_conformance::fold::scenario_name(file);
        let document = fold_file(file, &scenario, Rules::Default).unwrap();
        folded += 1;
        let current = document["gap"]["current"].as_bool().unwrap();
        match scenario.as_str() {
            // Its recording re-anchored (`anchor: latestCompaction`): no recorded page answers
            // a walk from the hole, which fails and is reported.
            "gap-recovery-reanchor" => {
                assert!(!current);
                assert!(document["gap"]["failure"].is_string());
            }
            // Its gap arrives after its `next`: the refill pages once and the fold is current,
            // the refilled item last.
            "gap-recovery-splice-fill" => {
                assert!(current, "{document}");
                assert_eq!(document["refillPages"], 1);
                assert_eq!(document["items"].as_array().unwrap().len(), 8);
            }
            _ => assert!(current, "{scenario}: {}", document["gap"]),
        }
        if scenario == "tolerance-unknown-item-kind" {
            let kinds: Vec<&str> = document["items"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|i| i["kind"].as_str())
                .collect();
            assert!(kinds.iter().any(|k| !KNOWN_KINDS.contains(k)), "{kinds:?}");
        }
    }
    assert_eq!(folded, 47);
}

const KNOWN_KINDS: &[&str] = &["userMessage", "agentMessage", "reasoning", "toolCall"];

/// A question pending when a client resumes shows pending as soon as the resume result is
/// folded, before the host re-issues it.
#[test]
fn a_resume_with_a_pending_question_shows_it_at_once() {
    let Ok(shared) = support::shared_dir() else {
        eprintln!("skipped: MSP_SHARED_DIR is not set");
        return;
    };
    let file =
        shared.join("msp-upstream/transcripts/snapshot-suffix-pending-userinput/transcript.ndjson");
    let text = std::fs::read_to_string(&file).unwrap();
    let records = transcript::records(Path::new("t"), &text).unwrap();
    let resume_id = records.iter().find_map(|(_, r)| {
        let frame: Value = serde_json::from_str(&r.raw).ok()?;
        (r.dir == Dir::Client && frame["method"] == "session/resume").then(|| frame["id"].clone())
    });
    let result = records.iter().find_map(|(_, r)| {
        let frame: Value = serde_json::from_str(&r.raw).ok()?;
        (r.dir == Dir::Server
            && Some(&frame["id"]) == resume_id.as_ref()
            && frame.get("result").is_some())
        .then(|| frame["result"].clone())
    });
    let result: SessionResumeResult =
        serde_json::from_value(result.expect("a resume result")).unwrap();
    let mut fold = Fold::new(FoldRules::default());
    assert!(matches!(fold.seed_resumed(&result), Outcome::Seeded(_)));
    let pending = fold.pending_prompts();
    assert_eq!(pending.len(), 1, "pending at once");
    assert!(pending[0].request().is_none(), "only the pointer so far");
    // The re-issued request fills the same entry.
    let request = records
        .iter()
        .filter(|(_, r)| r.dir == Dir::Server)
        .find_map(|(_, r)| match Frame::parse(Sender::Server, &r.raw) {
            Ok(Frame {
                message: Message::ServerRequest { request, .. },
                ..
            }) => Some(request),
            _ => None,
        });
    fold.apply(request.expect("the re-issued request"));
    assert_eq!(fold.pending_prompts().len(), 1);
    assert!(fold.pending_prompts()[0].request().is_some());
}

//! The shared golden corpus: every frame of every scenario round-trips losslessly.

mod support;

use std::path::PathBuf;

use msp_conformance::{Report, Runner};
use msp_types::{ItemKind, Message, ProtocolNotification};

const SCENARIOS: usize = 47;
const SCENARIO_FRAMES: usize = 562;
/// `model-round-trip/model-command-legs.ndjson` and `provider-failure-turn/turn-start-legs.ndjson`:
/// request/response legs captured beside two scenarios, walked too by the runner.
const LEG_FRAMES: usize = 10;

fn corpus() -> Option<PathBuf> {
    match support::shared_dir() {
        Ok(dir) => Some(dir.join("msp-upstream/transcripts")),
        Err(reason) => {
            eprintln!("{reason}");
            None
        }
    }
}

fn failures(report: &Report) -> String {
    report.failures.iter().map(|f| format!("\n  {f}")).collect()
}

#[test]
fn every_scenario_frame_round_trips_losslessly() {
    let Some(root) = corpus() else { return };
    let runner = Runner::new().expect("the schema builds a model");
    let mut scenarios: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("the corpus folder reads")
        .map(|e| e.expect("a folder entry").path().join("transcript.ndjson"))
        .filter(|p| p.is_file())
        .collect();
    scenarios.sort();
    assert_eq!(scenarios.len(), SCENARIOS, "scenario transcripts");

    let mut report = Report::default();
    for file in &scenarios {
        let text = std::fs::read_to_string(file).expect("the transcript reads");
        runner
            .check_text(file, &text, &mut report)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    eprintln!("scenarios: {}", report.summary());
    assert!(report.failures.is_empty(), "failures:{}", failures(&report));
    assert_eq!(report.frames, SCENARIO_FRAMES);
    assert_eq!(report.decoded, report.frames);
    assert_eq!(report.lossless, report.frames);
    assert_eq!(report.typed + report.untyped, report.frames);
    assert!(
        report.untyped >= 1,
        "the unknown session-state method is untyped"
    );
}

#[test]
fn the_runner_walks_every_transcript_of_the_folder() {
    let Some(root) = corpus() else { return };
    let runner = Runner::new().expect("the schema builds a model");
    let report = runner.run(&root).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("folder: {}", report.summary());
    assert!(report.failures.is_empty(), "failures:{}", failures(&report));
    assert_eq!(report.frames, SCENARIO_FRAMES + LEG_FRAMES);
    assert_eq!(report.lossless, report.frames);
}

#[test]
fn tolerance_scenarios_keep_what_this_version_does_not_know() {
    let Some(root) = corpus() else { return };
    let runner = Runner::new().expect("the schema builds a model");

    let state = support::play(
        &runner,
        &root.join("tolerance-unknown-state-method/transcript.ndjson"),
    );
    let untyped: Vec<_> = state
        .iter()
        .filter(|p| p.checked.typed == Some(false))
        .collect();
    assert_eq!(untyped.len(), 1, "one unknown session-state method");
    assert_eq!(untyped[0].output(), &untyped[0].input);

    for scenario in [
        "tolerance-unknown-item-kind",
        "tolerance-unknown-state-method",
        "tolerance-unknown-stream-kind",
    ] {
        let file = root.join(scenario).join("transcript.ndjson");
        for played in support::play(&runner, &file) {
            assert!(
                played.checked.lossless,
                "{}:{}: {:?}",
                file.display(),
                played.line,
                played.checked.failure
            );
        }
    }

    // The unknown item kind is held by the typed item, not only passed through.
    let file = root.join("tolerance-unknown-item-kind/transcript.ndjson");
    let text = std::fs::read_to_string(&file).expect("the transcript reads");
    let (_, record) = msp_conformance::transcript::records(&file, &text)
        .expect("records")
        .into_iter()
        .find(|(_, r)| r.raw.contains("hologramPreview"))
        .expect("the unknown item kind frame");
    let frame = msp_types::Frame::parse_guessing_sender(&record.raw).expect("the frame decodes");
    let Message::Notification(ProtocolNotification::ItemCompleted(params)) = frame.message else {
        panic!("item/completed decodes as ItemCompleted");
    };
    assert_eq!(
        params.item.kind,
        ItemKind::Unknown("hologramPreview".to_owned())
    );
    assert!(params.item.unknown.contains_key("sceneGraph"));
}

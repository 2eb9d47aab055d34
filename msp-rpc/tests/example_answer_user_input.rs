//! The `answer_user_input` example as a child-process client of `msp-canned-host`, over real
//! stdio: on the project's fixture of the seed's exchange, variants of it, and the shared
//! `userinput-*` scenarios (skipped without `MSP_SHARED_DIR`). What it printed, and what it
//! sent (its `--trace` lines). Also the example's typed label check, deadline and options.
#![cfg(feature = "canned-host")]

// The example's own modules, for their unit-level checks (the help text goes unused here).
#[allow(dead_code)]
#[path = "../examples/answer_user_input/cli.rs"]
mod cli;
#[path = "../examples/answer_user_input/deadline.rs"]
mod deadline;
#[path = "../examples/answer_user_input/labels.rs"]
mod labels;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use deadline::Deadline;
use labels::{Choice, OfferedLabel};
use msp_types::rpc::Id;
use msp_types::{
    ClientRequest, Frame, Message, ProtocolNotification, Sender, UserInputAnswer, UserInputOption,
    UserInputQuestion, UserInputSelection, UserInputSelectionMode,
};
use serde_json::{json, Value};

const HOST: &str = env!("CARGO_BIN_EXE_msp-canned-host");
const USER_INPUT_ID: &str = "0198f0ae-1111-7000-8000-0000000000f1";
const SESSION_ID: &str = "0198f0aa-1111-7000-8000-0000000000bb";

/// What the example printed for the default run; the README shows the same.
const DEFAULT_OUTPUT: &str = "\
connected to fixture-host 0.1.0 (schema 1)
warning: the host serves schema fingerprint sha256:e2202b2bf9704c381600cd483b7533c8349d0b08920dc5e8840647809ae618b8, which no known release serves (this crate speaks 1.4.14): it was built from another schema
resumed session 0198f0aa-1111-7000-8000-0000000000bb: running, turn 018f6a1e-9b3c-7c21-a54a-2f30bd3c9f20 in progress
pending: question 0198f0ae-1111-7000-8000-0000000000f1
question 0198f0ae-1111-7000-8000-0000000000f1 (request 18), answer within 120 s:
  Database: Which database should the new service use? (pick one)
    - Postgres: Matches the other services.
    - SQLite: Zero-ops, single node only.
receipt: showing question 0198f0ae-1111-7000-8000-0000000000f1
pending question 0198f0ae-1111-7000-8000-0000000000f1 matches re-issued request 18
view: user message \"Set up persistence for the new orders service.\"
view: tool call request_user_input inProgress
view: question 0198f0ae-1111-7000-8000-0000000000f1 asked here (shown above)
answer: Database = Postgres
host accepted the answer (a receipt, not the outcome); waiting for userInput/settled
settled: answered, by this client's command
result: answered by this client: Database = Postgres
";

fn fixture() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    workspace.join("tests/fixtures/seed-answer-user-input")
}

/// The example binary, built beside the canned host by `cargo test`.
fn example() -> PathBuf {
    let dir = Path::new(HOST).parent().unwrap();
    let path = dir
        .join("examples")
        .join(format!("answer_user_input{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.is_file(),
        "{} is missing: `cargo test` builds it (or `cargo build -p msp-rpc --examples`)",
        path.display()
    );
    path
}

struct Run {
    code: i32,
    out: String,
    err: String,
}

impl Run {
    /// Frames the client sent (`> ` lines of `--trace`), decoded as the client's.
    fn sent(&self) -> Vec<Frame> {
        self.frames("> ", Sender::Client)
    }

    /// Frames the client received (`< ` lines of `--trace`).
    fn received(&self) -> Vec<Frame> {
        self.frames("< ", Sender::Server)
    }

    fn frames(&self, prefix: &str, sender: Sender) -> Vec<Frame> {
        self.out
            .lines()
            .filter_map(|line| line.strip_prefix(prefix))
            .map(|raw| Frame::parse(sender, raw).unwrap_or_else(|e| panic!("{prefix}{raw}: {e}")))
            .collect()
    }

    fn sent_methods(&self) -> Vec<String> {
        let mut methods = Vec::new();
        for frame in self.sent() {
            match frame.message {
                Message::ClientRequest { request, .. } => methods.push(request.method().to_owned()),
                Message::Notification(n) => methods.push(n.method().to_owned()),
                _ => {}
            }
        }
        methods
    }

    fn sent_request(&self, method: &str) -> Option<(Id, ClientRequest)> {
        self.sent()
            .into_iter()
            .find_map(|frame| match frame.message {
                Message::ClientRequest { id, request } if request.method() == method => {
                    Some((id, request))
                }
                _ => None,
            })
    }

    /// The `userInput/settled` the client received.
    fn settled(&self) -> msp_types::UserInputSettledParams {
        self.received()
            .into_iter()
            .find_map(|frame| match frame.message {
                Message::Notification(ProtocolNotification::UserInputSettled(p)) => Some(*p),
                _ => None,
            })
            .expect("a userInput/settled was received")
    }

    /// The lines that are not `--trace` frames.
    fn text(&self) -> String {
        self.out
            .lines()
            .filter(|l| !l.starts_with("> ") && !l.starts_with("< "))
            .map(|l| format!("{l}\n"))
            .collect()
    }

    fn last_line(&self) -> String {
        self.text().lines().last().unwrap_or_default().to_owned()
    }
}

fn run(args: &[&str]) -> Run {
    let output = Command::new(example())
        .arg("--host")
        .arg(HOST)
        .args(args)
        .output()
        .unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        out: String::from_utf8(output.stdout).unwrap(),
        err: String::from_utf8(output.stderr).unwrap(),
    }
}

fn assert_ok(run: &Run) {
    assert_eq!(
        run.code, 0,
        "exit code; stdout:\n{}\nstderr:\n{}",
        run.out, run.err
    );
}

/// The receipt `{}` the client sent for server request `id`.
fn assert_receipt(run: &Run, id: i64) {
    let receipt = run
        .sent()
        .into_iter()
        .find_map(|frame| match frame.message {
            Message::Result { id: got, result } if got == Id::Number(id) => Some(result.to_value()),
            _ => None,
        });
    assert_eq!(receipt, Some(json!({})), "receipt for request {id}");
}

fn db_choice(label: &str) -> Vec<UserInputAnswer> {
    let mut answer = UserInputAnswer::builder().question_id("db_choice").build();
    answer.selected_label = Some(label.to_owned());
    vec![answer]
}

fn shared_scenario(name: &str) -> Option<PathBuf> {
    let Some(root) = std::env::var_os("MSP_SHARED_DIR").filter(|v| !v.is_empty()) else {
        eprintln!("skipped: MSP_SHARED_DIR is not set to the shared material");
        return None;
    };
    let dir = Path::new(&root).join("msp-upstream/transcripts").join(name);
    assert!(
        dir.is_dir(),
        "MSP_SHARED_DIR is set but {} is missing",
        dir.display()
    );
    Some(dir)
}

// ---------------------------------------------------------------------------------------
// Variants of the fixture, written to a scratch folder

fn fixture_frames() -> Vec<(String, Value)> {
    let text = std::fs::read_to_string(fixture().join("transcript.ndjson")).unwrap();
    text.lines()
        .map(|line| {
            let entry: Value = serde_json::from_str(line).unwrap();
            let raw: Value = serde_json::from_str(entry["raw"].as_str().unwrap()).unwrap();
            (entry["dir"].as_str().unwrap().to_owned(), raw)
        })
        .collect()
}

/// A transcript folder holding `frames`.
fn variant(frames: &[(String, Value)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let text: String = frames
        .iter()
        .map(|(dir, raw)| json!({"dir": dir, "raw": raw.to_string()}).to_string() + "\n")
        .collect();
    std::fs::write(dir.path().join("transcript.ndjson"), text).unwrap();
    dir
}

fn position(frames: &[(String, Value)], dir: &str, method: &str) -> usize {
    frames
        .iter()
        .position(|(d, raw)| d == dir && raw["method"] == method)
        .unwrap_or_else(|| panic!("fixture has a {dir} {method}"))
}

/// The fixture up to (without) the client's answer, then `tail`.
fn fixture_until_answer(tail: Vec<(String, Value)>) -> Vec<(String, Value)> {
    let mut frames = fixture_frames();
    frames.truncate(position(&frames, "client", "userInput/answer"));
    frames.extend(tail);
    frames
}

fn settled(user_input_id: &str, outcome: &str, answers: Value, by: Value) -> (String, Value) {
    let params = json!({
        "sessionId": SESSION_ID,
        "viewCursor": format!("v:{SESSION_ID}:503"),
        "sourceRange": {
            "stream": {"kind": "run", "id": "018f6a1e-9b3c-7c21-a54a-2f30bd3c9f20"},
            "first": {"id": "018f9008-71aa-7000-8000-0000000000f3", "sequence": 142},
            "last": {"id": "018f9008-71aa-7000-8000-0000000000f3", "sequence": 142}
        },
        "userInputId": user_input_id,
        "outcome": outcome,
        "answers": answers,
        "clarification": null,
        "reason": null,
        "decidedByCommandId": by,
        "decidedAt": "2025-08-07T18:23:20.100Z"
    });
    let frame = json!({"jsonrpc": "2.0", "method": "userInput/settled", "params": params});
    ("server".to_owned(), frame)
}

fn approval_request(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "approval/request", "params": {
        "sessionId": SESSION_ID,
        "viewCursor": format!("v:{SESSION_ID}:502"),
        "sourceRange": {
            "stream": {"kind": "run", "id": "018f6a1e-9b3c-7c21-a54a-2f30bd3c9f20"},
            "first": {"id": "018f9008-71aa-7000-8000-0000000000e9", "sequence": 138},
            "last": {"id": "018f9008-71aa-7000-8000-0000000000e9", "sequence": 138}
        },
        "approvalId": "0198f0ae-3333-7000-8000-0000000000a1",
        "turnId": "018f6a1e-9b3c-7c21-a54a-2f30bd3c9f20",
        "taskId": "0198f0ae-4444-7000-8000-0000000000a2",
        "itemId": "0198f0ae-5555-7000-8000-0000000000a3",
        "toolCallId": "call_ab30",
        "toolName": "write_file",
        "rawArgs": "{\"path\":\"schema.sql\"}",
        "subject": {"kind": "fileAccess", "toolName": "write_file", "path": "/home/user/src/orders-service/schema.sql", "access": "write"},
        "currentRequirementId": {"approvalId": "0198f0ae-3333-7000-8000-0000000000a1", "sourceIndex": 0},
        "availableChoices": [{"choiceId": "allow_once", "label": "Allow once", "decision": "approved", "scope": "once"}],
        "protectedWrite": false,
        "judgeEscalated": false
    }})
}

// ---------------------------------------------------------------------------------------
// The example on the fixture

#[test]
fn default_run_prints_the_recipe() {
    let run = run(&[]);
    assert_ok(&run);
    assert_eq!(run.out, DEFAULT_OUTPUT);
    assert_eq!(run.err, "");
}

#[test]
fn default_run_sends_the_receipt_then_an_offered_answer() {
    let run = run(&["--trace"]);
    assert_ok(&run);
    assert_eq!(
        run.text(),
        DEFAULT_OUTPUT,
        "--trace adds frames, nothing else"
    );
    assert_eq!(
        run.sent_methods(),
        [
            "initialize",
            "initialized",
            "session/resume",
            "view/page",
            "userInput/answer"
        ]
    );
    let Some((_, ClientRequest::SessionResume(resume))) = run.sent_request("session/resume") else {
        panic!("session/resume was sent")
    };
    assert_eq!(resume.exclude_items, Some(true));
    assert_eq!(
        resume.session_id, SESSION_ID,
        "a session this client did not create"
    );
    assert_receipt(&run, 18);
    let Some((_, ClientRequest::UserInputAnswer(answer))) = run.sent_request("userInput/answer")
    else {
        panic!("userInput/answer was sent")
    };
    assert_eq!(answer.user_input_id, USER_INPUT_ID, "/params/userInputId");
    assert_eq!(answer.session_id, SESSION_ID, "/params/sessionId");
    assert_eq!(answer.answers, db_choice("Postgres"), "/params/answers");
    assert_eq!(
        answer.command_id.as_bytes()[14],
        b'7',
        "/params/commandId is a UUIDv7"
    );
    // The canned host bound the recorded command id to this client's.
    assert_eq!(run.settled().decided_by_command_id, Some(answer.command_id));
}

#[test]
fn a_label_that_was_not_offered_is_refused_before_anything_is_sent() {
    let run = run(&["--trace", "--answer", "MySQL"]);
    assert_eq!(run.code, 3, "stderr: {}", run.err);
    assert!(
        run.err.contains(
            "\"MySQL\" is not an offered label of question db_choice (offered: \"Postgres\", \"SQLite\")"
        ),
        "{}",
        run.err
    );
    assert!(
        !run.sent_methods()
            .iter()
            .any(|m| m.starts_with("userInput/")),
        "{}",
        run.out
    );
}

#[test]
fn another_offered_label_is_sent_and_the_recorded_answer_reported() {
    let run = run(&["--trace", "--answer", "SQLite"]);
    assert_ok(&run);
    let Some((_, ClientRequest::UserInputAnswer(answer))) = run.sent_request("userInput/answer")
    else {
        panic!("userInput/answer was sent")
    };
    assert_eq!(answer.answers, db_choice("SQLite"));
    assert!(run.out.contains(
        "note: the host recorded other answers than this client sent (Database = SQLite)"
    ));
    assert_eq!(
        run.last_line(),
        "result: answered by this client: Database = Postgres"
    );
}

#[test]
fn a_decision_the_recording_does_not_hold_is_diagnosed_by_the_canned_host() {
    let run = run(&["--cancel", "not now"]);
    assert_eq!(run.code, 1);
    let transcript = fixture().join("transcript.ndjson").display().to_string();
    assert!(
        run.err.contains(&format!(
            "mismatch at {transcript}:10: expected the client's request userInput/answer (id 4), the client sent request userInput/cancel (id 4)"
        )),
        "{}",
        run.err
    );
    assert!(
        run.err.contains("the host crashed (exit code 65)"),
        "{}",
        run.err
    );
}

#[test]
fn other_server_requests_get_an_error_reply() {
    let mut frames = fixture_frames();
    let at = position(&frames, "server", "userInput/request");
    let reply = json!({"jsonrpc": "2.0", "id": 17, "error": {"code": -32601, "message": "unhandled server request: approval/request"}});
    frames.insert(at, ("client".to_owned(), reply));
    frames.insert(at, ("server".to_owned(), approval_request(17)));
    let folder = variant(&frames);
    let run = run(&["--trace", folder.path().to_str().unwrap()]);
    assert_ok(&run);
    let error = run
        .sent()
        .into_iter()
        .find_map(|frame| match frame.message {
            Message::Error {
                id: Some(Id::Number(17)),
                error,
            } => Some(error),
            _ => None,
        });
    let error = error.expect("an error reply to request 17");
    assert_eq!(error.code, -32601, "/error/code");
    assert_eq!(
        error.message, "unhandled server request: approval/request",
        "/error/message"
    );
    assert!(
        run.out.contains("declined approval/request (request 17)"),
        "{}",
        run.out
    );
    assert_receipt(&run, 18);
    assert_eq!(
        run.last_line(),
        "result: answered by this client: Database = Postgres"
    );
}

#[test]
fn a_settlement_by_another_client_takes_the_question_down() {
    let other = "018f6a2b-3333-7abc-8def-00000000d0ff";
    let frames = fixture_until_answer(vec![
        settled(
            "0198f0ae-9999-7000-8000-0000000000f9",
            "answered",
            json!([]),
            json!(other),
        ),
        settled(
            USER_INPUT_ID,
            "answered",
            json!([{"questionId": "db_choice", "selectedLabel": "SQLite"}]),
            json!(other),
        ),
    ]);
    let folder = variant(&frames);
    // The transcript has no answer from this client: it settles before one is sent.
    let run = run(&["--trace", folder.path().to_str().unwrap()]);
    assert!(
        run.out.contains(
            "settled: question 0198f0ae-9999-7000-8000-0000000000f9, never shown here: answered by another client"
        ),
        "{}",
        run.out
    );
    assert!(
        run.out
            .contains(&format!("taking question {USER_INPUT_ID} down")),
        "{}",
        run.out
    );
}

#[test]
fn a_settlement_without_a_command_is_the_host_s() {
    let frames = fixture_until_answer(vec![settled(
        USER_INPUT_ID,
        "timedOut",
        json!([]),
        Value::Null,
    )]);
    let folder = variant(&frames);
    let run = run(&[folder.path().to_str().unwrap()]);
    assert!(
        run.out.contains(&format!(
            "settled: timedOut by the host (no command); taking question {USER_INPUT_ID} down"
        )),
        "{}",
        run.out
    );
}

// ---------------------------------------------------------------------------------------
// The example on the shared scenarios

#[test]
fn shared_answer_round_trip() {
    let Some(dir) = shared_scenario("userinput-answer-round-trip") else {
        return;
    };
    let run = run(&["--trace", "--answer", "Postgres", dir.to_str().unwrap()]);
    assert_ok(&run);
    assert_receipt(&run, 18);
    let Some((_, ClientRequest::UserInputAnswer(answer))) = run.sent_request("userInput/answer")
    else {
        panic!("userInput/answer was sent")
    };
    assert_eq!(
        (answer.user_input_id.as_str(), answer.answers.clone()),
        (USER_INPUT_ID, db_choice("Postgres"))
    );
    assert_eq!(run.settled().decided_by_command_id, Some(answer.command_id));
    // Upstream's recorded host: a known fixture, no warning.
    assert!(!run.out.contains("warning:"), "{}", run.out);
    assert!(run.out.contains("view: turn completed"), "{}", run.out);
    assert_eq!(
        run.last_line(),
        "result: answered by this client: Database = Postgres"
    );
}

#[test]
fn shared_cancel_round_trip() {
    let Some(dir) = shared_scenario("userinput-cancel-round-trip") else {
        return;
    };
    let reason = "client has no form elicitation capability";
    let run = run(&["--trace", "--cancel", reason, dir.to_str().unwrap()]);
    assert_ok(&run);
    assert_receipt(&run, 18);
    let Some((_, ClientRequest::UserInputCancel(cancel))) = run.sent_request("userInput/cancel")
    else {
        panic!("userInput/cancel was sent")
    };
    assert_eq!(
        (cancel.user_input_id.as_str(), cancel.reason.as_deref()),
        (USER_INPUT_ID, Some(reason))
    );
    assert_eq!(run.settled().decided_by_command_id, Some(cancel.command_id));
    assert_eq!(
        run.last_line(),
        format!("result: cancelled by this client (reason: {reason})")
    );
}

#[test]
fn shared_interrupt_round_trip() {
    let Some(dir) = shared_scenario("userinput-interrupt-round-trip") else {
        return;
    };
    let run = run(&["--trace", "--interrupt", "Postgres", dir.to_str().unwrap()]);
    assert_ok(&run);
    // The recorded client listed the models first; this one has no use for them, and the
    // canned host lets it leave that request out.
    assert_eq!(
        run.sent_methods(),
        [
            "initialize",
            "initialized",
            "session/resume",
            "view/page",
            "userInput/engaged",
            "userInput/interrupt"
        ]
    );
    assert_receipt(&run, 18);
    let Some((_, ClientRequest::UserInputInterrupt(interrupt))) =
        run.sent_request("userInput/interrupt")
    else {
        panic!("userInput/interrupt was sent")
    };
    assert_eq!(
        interrupt.answers,
        Some(db_choice("Postgres")),
        "/params/answers"
    );
    assert_eq!(
        run.settled().decided_by_command_id,
        Some(interrupt.command_id)
    );
    assert_eq!(
        run.last_line(),
        "result: interrupted by this client: Database = Postgres"
    );
}

// ---------------------------------------------------------------------------------------
// The typed label check, the deadline, the options

fn question(id: &str, mode: UserInputSelectionMode, labels: &[&str]) -> UserInputQuestion {
    let options: Vec<UserInputOption> = labels
        .iter()
        .map(|l| UserInputOption::builder().label(*l).build())
        .collect();
    UserInputQuestion::builder()
        .header("Header")
        .id(id)
        .options(options)
        .question("Which?")
        .selection(UserInputSelection::builder().mode(mode).build())
        .build()
}

#[test]
fn only_offered_labels_can_be_picked() {
    let q = question(
        "db_choice",
        UserInputSelectionMode::Single,
        &["Postgres", "SQLite"],
    );
    assert!(OfferedLabel::pick(&q, "Postgres").is_ok());
    for text in ["MySQL", "postgres", "Postgres ", ""] {
        let refused = OfferedLabel::pick(&q, text).expect_err(text);
        assert_eq!(
            (refused.question_id.as_str(), refused.text.as_str()),
            ("db_choice", text)
        );
        assert_eq!(refused.offered, ["Postgres", "SQLite"]);
    }
    assert_eq!(OfferedLabel::first(&q), OfferedLabel::pick(&q, "Postgres"));
    let empty = question("empty", UserInputSelectionMode::Single, &[]);
    assert!(
        OfferedLabel::first(&empty).is_err(),
        "no options, nothing to pick"
    );
}

#[test]
fn a_choice_holds_labels_of_its_own_question_within_its_selection() {
    let db = question(
        "db_choice",
        UserInputSelectionMode::Single,
        &["Postgres", "SQLite"],
    );
    let cache = question(
        "cache",
        UserInputSelectionMode::Single,
        &["Postgres", "Redis"],
    );
    let postgres = OfferedLabel::pick(&db, "Postgres").unwrap();
    let sqlite = OfferedLabel::pick(&db, "SQLite").unwrap();
    // Same text, other question: still refused.
    assert!(Choice::new(&cache, vec![postgres.clone()]).is_err());
    assert!(Choice::new(&db, vec![]).is_err(), "single takes one");
    assert!(
        Choice::new(&db, vec![postgres.clone(), sqlite]).is_err(),
        "single takes one"
    );
    let answer = Choice::new(&db, vec![postgres]).unwrap().to_answer();
    assert_eq!(vec![answer], db_choice("Postgres"));

    let mut tags = question("tags", UserInputSelectionMode::Multiple, &["a", "b", "c"]);
    tags.selection.max_selections = Some(2);
    let [a, b, c] = ["a", "b", "c"].map(|l| OfferedLabel::pick(&tags, l).unwrap());
    let answer = Choice::new(&tags, vec![a.clone(), c.clone()])
        .unwrap()
        .to_answer();
    assert_eq!(
        (answer.selected_label, answer.selected_labels),
        (None, Some(vec!["a".to_owned(), "c".to_owned()]))
    );
    assert!(
        Choice::new(&tags, vec![a, b, c]).is_err(),
        "above maxSelections"
    );
}

#[test]
fn the_deadline_follows_auto_resolution_ms_until_engaged() {
    let now = Instant::now();
    assert!(Deadline::after(now, Some(0)).passed(now));
    assert!(!Deadline::after(now, Some(120_000)).passed(now));
    assert!(
        !Deadline::after(now, None).passed(now),
        "absent: waits indefinitely"
    );
    let mut engaged = Deadline::after(now, Some(0));
    engaged.stop();
    assert!(
        !engaged.passed(now),
        "userInput/engaged stops the countdown"
    );
}

#[test]
fn options_take_one_kind_of_decision_and_a_host() {
    use cli::{parse, Decision, HostChoice};
    let strings = |args: &[&str]| args.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    let parsed = parse(&strings(&["--answer", "A", "--answer=B", "dir"]))
        .unwrap()
        .unwrap();
    assert_eq!(
        parsed.decision,
        Decision::Answer(vec!["A".to_owned(), "B".to_owned()])
    );
    assert_eq!(parsed.transcript, PathBuf::from("dir"));
    assert!(parse(&strings(&["--answer", "A", "--cancel", "no"])).is_err());
    assert!(
        parse(&strings(&["--cancel"])).is_err(),
        "--cancel needs a reason"
    );
    assert_eq!(parse(&strings(&["--help"])), Ok(None));
    let muse = parse(&strings(&["--muse", "--session", "s"]))
        .unwrap()
        .unwrap();
    assert_eq!(muse.host, HostChoice::Muse);
    let canned = parse(&strings(&["--host", "h", "--host-arg", "--strict"]))
        .unwrap()
        .unwrap();
    assert_eq!(
        canned.host,
        HostChoice::Canned {
            binary: Some(PathBuf::from("h")),
            args: vec!["--strict".to_owned()]
        }
    );
}

#[cfg(feature = "tokio")]
#[test]
fn the_async_twin_answers_the_question_too() {
    let exe = Path::new(HOST)
        .parent()
        .unwrap()
        .join("examples")
        .join(format!(
            "answer_user_input_async{}",
            std::env::consts::EXE_SUFFIX
        ));
    let output = Command::new(exe)
        .env("MSP_CANNED_HOST", HOST)
        .output()
        .unwrap();
    let out = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        out,
        "connected to fixture-host\n\
         question 0198f0ae-1111-7000-8000-0000000000f1 (pending at resume: true)\n\
         host: accepted (a receipt, not the outcome)\n\
         settled: answered (by this client: true)\n\
         the host shut down cleanly (exit code 0)\n"
    );
}

#[test]
fn under_a_served_fingerprint_override_the_recipe_reports_no_warning() {
    let fingerprint = msp_types::registry::SERVED_FINGERPRINT.unwrap();
    let run = run(&["--host-arg", "--fingerprint", "--host-arg", fingerprint]);
    assert_ok(&run);
    let without_warning: String = DEFAULT_OUTPUT
        .lines()
        .filter(|line| !line.starts_with("warning:"))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_eq!(run.out, without_warning);
}

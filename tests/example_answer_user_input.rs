//! The `answer_user_input` example, run in-process: on the project's fixture, on variants
//! of it, and on the shared `userinput-*` scenarios (skipped without `MSP_SHARED_DIR`).
//! Also checks that every fixture frame decodes and re-encodes, and the typed label check.

#[path = "../examples/answer_user_input/app.rs"]
mod app;

use std::path::{Path, PathBuf};
use std::time::Instant;

use app::canned_host::Transcript;
use app::deadline::Deadline;
use app::labels::{Choice, OfferedLabel};
use msp_types::rpc::{Id, PendingRequests};
use msp_types::{
    ClientRequest, ClientResult, Frame, Message, ProtocolNotification, ServerRequest, ServerResult,
    UserInputAnswer, UserInputOption, UserInputQuestion, UserInputSelection,
    UserInputSelectionMode,
};
use serde_json::{json, Value};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/seed-answer-user-input"
);
const USER_INPUT_ID: &str = "0198f0ae-1111-7000-8000-0000000000f1";
const SESSION_ID: &str = "0198f0aa-1111-7000-8000-0000000000bb";
const SEED: &str = "seeds/000_08e68b43f02707d2.txt";

/// What the example printed for the default run; the README shows the same.
const DEFAULT_OUTPUT: &str = "\
connected to fixture-host 0.1.0 (schema 1)
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

// ---------------------------------------------------------------------------------------
// Running the example

struct Run {
    code: u8,
    out: String,
    err: String,
}

impl Run {
    /// Frames the client sent (`> ` lines of `--trace`), decoded.
    fn sent(&self) -> Vec<Frame> {
        self.frames("> ")
    }

    /// Frames the client received (`< ` lines of `--trace`), decoded.
    fn received(&self) -> Vec<Frame> {
        self.frames("< ")
    }

    fn frames(&self, prefix: &str) -> Vec<Frame> {
        self.out
            .lines()
            .filter_map(|line| line.strip_prefix(prefix))
            .map(|raw| Frame::parse(raw).unwrap_or_else(|e| panic!("{prefix}{raw}: {e}")))
            .collect()
    }

    fn last_line(&self) -> &str {
        self.out.lines().last().unwrap_or_default()
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
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

fn run_args(args: &[&str]) -> Run {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = app::main(&strings(args), &mut out, &mut err);
    Run {
        code,
        out: String::from_utf8(out).unwrap(),
        err: String::from_utf8(err).unwrap(),
    }
}

fn run_transcript(text: &str, args: &[&str]) -> Run {
    let transcript = Transcript::parse(text, "variant").expect("variant parses");
    let options = app::cli::parse(&strings(args)).unwrap().unwrap();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = app::play(transcript, &options, &mut out, &mut err);
    Run {
        code,
        out: String::from_utf8(out).unwrap(),
        err: String::from_utf8(err).unwrap(),
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
    let mut answer = UserInputAnswer::new("db_choice".to_owned());
    answer.selected_label = Some(label.to_owned());
    vec![answer]
}

/// Canned-host notes, each naming the JSON pointer whose value differed.
fn note_pointers(run: &Run) -> Vec<String> {
    run.err
        .lines()
        .filter_map(|line| line.strip_prefix("canned host: value differs at "))
        .map(|rest| {
            rest.split_once(" (")
                .map_or(rest, |(pointer, _)| pointer)
                .to_owned()
        })
        .collect()
}

fn shared_scenario(name: &str) -> Option<PathBuf> {
    let Some(root) = std::env::var_os("MSP_SHARED_DIR") else {
        eprintln!("skipped: MSP_SHARED_DIR not set");
        return None;
    };
    let dir = Path::new(&root).join("msp-upstream/transcripts").join(name);
    if !dir.is_dir() {
        eprintln!("skipped: {} is missing", dir.display());
        return None;
    }
    Some(dir)
}

// ---------------------------------------------------------------------------------------
// Variants of the fixture

fn fixture_frames() -> Vec<(String, Value)> {
    let text = std::fs::read_to_string(Path::new(FIXTURE).join("transcript.ndjson")).unwrap();
    text.lines()
        .map(|line| {
            let entry: Value = serde_json::from_str(line).unwrap();
            let raw: Value = serde_json::from_str(entry["raw"].as_str().unwrap()).unwrap();
            (entry["dir"].as_str().unwrap().to_owned(), raw)
        })
        .collect()
}

fn to_text(frames: &[(String, Value)]) -> String {
    frames
        .iter()
        .map(|(dir, raw)| json!({"dir": dir, "raw": raw.to_string()}).to_string() + "\n")
        .collect()
}

fn position(frames: &[(String, Value)], dir: &str, method: &str) -> usize {
    frames
        .iter()
        .position(|(d, raw)| d == dir && raw["method"] == method)
        .unwrap_or_else(|| panic!("fixture has a {dir} {method}"))
}

/// The fixture up to (without) the client's answer, then `tail`.
fn fixture_until_answer(tail: Vec<(String, Value)>) -> String {
    let mut frames = fixture_frames();
    frames.truncate(position(&frames, "client", "userInput/answer"));
    frames.extend(tail);
    to_text(&frames)
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
// The fixture itself

/// Where `back` differs from `original`, tolerating a member absent from `original` that
/// re-encodes as `null` (a required-nullable member the sender left out).
fn difference(original: &Value, back: &Value, pointer: &str) -> Option<String> {
    match (original, back) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, value) in b {
                let at = format!("{pointer}/{key}");
                match a.get(key) {
                    None if value.is_null() => {}
                    None => return Some(format!("{at}: added {value}")),
                    Some(orig) => {
                        if let Some(d) = difference(orig, value, &at) {
                            return Some(d);
                        }
                    }
                }
            }
            a.keys()
                .find(|k| !b.contains_key(*k))
                .map(|k| format!("{pointer}/{k}: dropped"))
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| difference(x, y, &format!("{pointer}/{i}"))),
        _ if original == back => None,
        _ => Some(format!("{pointer}: {original} became {back}")),
    }
}

/// Decodes every frame of a transcript with msp-types (results typed by the method of the
/// request they answer) and re-encodes it; one message per frame that fails.
fn round_trip_failures(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let (mut from_client, mut from_server) =
        (PendingRequests::default(), PendingRequests::default());
    let mut failures = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let at = format!("{}:{}", file.display(), index + 1);
        let entry: Value = serde_json::from_str(line).unwrap();
        let raw = entry["raw"].as_str().unwrap();
        let original: Value = serde_json::from_str(raw).unwrap();
        let frame = match Frame::parse(raw) {
            Ok(frame) => frame,
            Err(e) => {
                failures.push(format!("{at}: does not decode: {e}"));
                continue;
            }
        };
        let back = serde_json::to_value(frame.to_raw()).unwrap();
        if let Some(d) = difference(&original, &back, "") {
            failures.push(format!("{at}: re-encodes differently at {d}"));
        }
        match &frame.message {
            Message::ClientRequest { id, request } => {
                from_client.insert(id.clone(), request.method())
            }
            Message::ServerRequest { id, request } => {
                from_server.insert(id.clone(), request.method())
            }
            Message::Result { id, result } => {
                let server_answers = entry["dir"] == "server";
                let pending = match server_answers {
                    true => &mut from_client,
                    false => &mut from_server,
                };
                let Some(method) = pending.take(id) else {
                    failures.push(format!("{at}: result for unknown request {id}"));
                    continue;
                };
                let typed = match server_answers {
                    true => ClientResult::decode_raw(&method, result.as_raw()).map(|r| r.result()),
                    false => ServerResult::decode_raw(&method, result.as_raw()).map(|r| r.result()),
                };
                match typed {
                    Ok(typed) => {
                        if let Some(d) = difference(&result.to_value(), &typed, "/result") {
                            failures.push(format!(
                                "{at}: {method} result re-encodes differently at {d}"
                            ));
                        }
                    }
                    Err(e) => failures.push(format!("{at}: {method} result does not decode: {e}")),
                }
            }
            _ => {}
        }
    }
    failures
}

#[test]
fn fixture_frames_decode_and_reencode() {
    let failures = round_trip_failures(&Path::new(FIXTURE).join("transcript.ndjson"));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn shared_userinput_frames_decode_and_reencode() {
    for name in [
        "userinput-answer-round-trip",
        "userinput-cancel-round-trip",
        "userinput-interrupt-round-trip",
    ] {
        let Some(dir) = shared_scenario(name) else {
            return;
        };
        let failures = round_trip_failures(&dir.join("transcript.ndjson"));
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}

#[test]
fn fixture_holds_the_seed_wire_lines_verbatim() {
    let Some(root) = std::env::var_os("MSP_SHARED_DIR") else {
        eprintln!("skipped: MSP_SHARED_DIR not set");
        return;
    };
    let Ok(seed) = std::fs::read_to_string(Path::new(&root).join(SEED)) else {
        eprintln!("skipped: {SEED} is missing");
        return;
    };
    let fixture = std::fs::read_to_string(Path::new(FIXTURE).join("transcript.ndjson")).unwrap();
    let fixture: Vec<&str> = fixture.lines().collect();
    let wire: Vec<&str> = seed
        .lines()
        .filter(|l| l.starts_with("{\"dir\":"))
        .collect();
    assert_eq!(wire.len(), 5, "the seed shows five wire lines");
    let at: Vec<usize> = wire
        .iter()
        .map(|line| {
            fixture
                .iter()
                .position(|f| f == line)
                .unwrap_or_else(|| panic!("not in the fixture: {line}"))
                + 1
        })
        .collect();
    assert_eq!(
        at,
        [6, 7, 10, 11, 12],
        "fixture lines of the seed's wire lines"
    );
}

#[test]
fn fixture_tells_one_consistent_story() {
    let frames: Vec<(String, Frame)> = fixture_frames()
        .into_iter()
        .map(|(dir, raw)| (dir, Frame::parse(&raw.to_string()).unwrap()))
        .collect();
    let client_ids: Vec<Id> = frames
        .iter()
        .filter_map(|(_, f)| match &f.message {
            Message::ClientRequest { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        client_ids,
        [1, 2, 3, 4].map(Id::Number),
        "client request ids"
    );

    let resume = frames.iter().find_map(|(_, f)| match &f.message {
        Message::ClientRequest {
            request: ClientRequest::SessionResume(p),
            ..
        } => Some(p.clone()),
        _ => None,
    });
    let resume = resume.expect("a session/resume");
    assert_eq!(
        resume.exclude_items,
        Some(true),
        "session/resume /params/excludeItems"
    );
    assert_eq!(
        resume.session_id, SESSION_ID,
        "session/resume /params/sessionId"
    );

    let result = frames.iter().find_map(|(_, f)| match &f.message {
        Message::Result { id, result } if *id == Id::Number(2) => {
            Some(ClientResult::decode_raw("session/resume", result.as_raw()).unwrap())
        }
        _ => None,
    });
    let Some(ClientResult::SessionResume(result)) = result else {
        panic!("a session/resume result")
    };
    let pending: Vec<_> = result
        .pending_requests
        .iter()
        .map(|p| (p.kind.as_str(), p.user_input_id.as_deref()))
        .collect();
    assert_eq!(
        pending,
        [("userInput", Some(USER_INPUT_ID))],
        "/result/pendingRequests"
    );

    let request = frames.iter().find_map(|(_, f)| match &f.message {
        Message::ServerRequest {
            id,
            request: ServerRequest::UserInputRequest(p),
        } => Some((id.clone(), p.clone())),
        _ => None,
    });
    let (id, request) = request.expect("a userInput/request");
    assert_eq!(
        (id, request.user_input_id.as_str()),
        (Id::Number(18), USER_INPUT_ID)
    );

    let page = frames.iter().find_map(|(_, f)| match &f.message {
        Message::Result { id, result } if *id == Id::Number(3) => {
            Some(ClientResult::decode_raw("view/page", result.as_raw()).unwrap())
        }
        _ => None,
    });
    let Some(ClientResult::ViewPage(page)) = page else {
        panic!("a view/page result")
    };
    let methods: Vec<&str> = page.events.iter().map(|e| e.method.as_str()).collect();
    assert_eq!(
        methods,
        ["item/completed", "item/started", "userInput/requested"]
    );
    let requested = serde_json::to_value(&page.events[2].params).unwrap();
    let requested = ProtocolNotification::decode("userInput/requested", Some(requested)).unwrap();
    let ProtocolNotification::UserInputRequested(requested) = requested else {
        panic!()
    };
    assert_eq!(
        requested.user_input_id, USER_INPUT_ID,
        "requested event /userInputId"
    );
    assert_eq!(
        requested.questions, request.questions,
        "requested event /questions"
    );
    assert_eq!(
        requested.view_cursor, request.view_cursor,
        "requested event /viewCursor"
    );
}

// ---------------------------------------------------------------------------------------
// The example on the fixture

#[test]
fn default_run_prints_the_recipe() {
    let run = run_args(&[]);
    assert_ok(&run);
    assert_eq!(run.out, DEFAULT_OUTPUT);
    assert_eq!(
        run.err, "",
        "the client matched the recording value for value"
    );
}

#[test]
fn default_run_sends_receipt_then_an_offered_answer() {
    let run = run_args(&["--trace", FIXTURE]);
    assert_ok(&run);
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
    assert_eq!(
        run.last_line(),
        "result: answered by this client: Database = Postgres"
    );
}

#[test]
fn a_label_that_was_not_offered_is_refused_before_anything_is_sent() {
    let run = run_args(&["--trace", "--answer", "MySQL"]);
    assert_eq!(run.code, 3, "stderr: {}", run.err);
    assert!(
        run.err.contains("\"MySQL\" is not an offered label of question db_choice (offered: \"Postgres\", \"SQLite\")"),
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
    let run = run_args(&["--trace", "--answer", "SQLite"]);
    assert_ok(&run);
    let Some((_, ClientRequest::UserInputAnswer(answer))) = run.sent_request("userInput/answer")
    else {
        panic!("userInput/answer was sent")
    };
    assert_eq!(answer.answers, db_choice("SQLite"));
    assert_eq!(
        note_pointers(&run),
        ["/params/answers/0/selectedLabel"],
        "{}",
        run.err
    );
    assert!(run.out.contains(
        "note: the host recorded other answers than this client sent (Database = SQLite)"
    ));
    assert_eq!(
        run.last_line(),
        "result: answered by this client: Database = Postgres"
    );
}

#[test]
fn a_decision_the_recording_does_not_hold_stops_the_canned_host() {
    let run = run_args(&["--cancel", "not now"]);
    assert_eq!(run.code, 1);
    assert!(
        run.err.contains("the recording has the client send request \"userInput/answer\" (id 4) here, not request \"userInput/cancel\""),
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
    let request = Frame::parse(&frames[at].1.to_string()).unwrap();
    assert!(
        matches!(
            request.message,
            Message::ServerRequest {
                request: ServerRequest::ApprovalRequest(_),
                ..
            }
        ),
        "the variant's approval/request is a typed one"
    );

    let run = run_transcript(&to_text(&frames), &["--trace"]);
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
    assert_receipt(&run, 18);
    assert_eq!(run.err, "");
    assert_eq!(
        run.last_line(),
        "result: answered by this client: Database = Postgres"
    );
}

#[test]
fn a_settlement_by_another_client_takes_the_question_down() {
    let other = "018f6a2b-3333-7abc-8def-00000000d0ff";
    let text = fixture_until_answer(vec![
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
    let run = run_transcript(&text, &["--trace"]);
    assert_ok(&run);
    assert!(
        !run.sent_methods().contains(&"userInput/answer".to_owned()),
        "{}",
        run.out
    );
    assert!(run.out.contains(
        "settled: question 0198f0ae-9999-7000-8000-0000000000f9, never shown here: answered by another client"
    ), "{}", run.out);
    assert!(
        run.out
            .contains(&format!("taking question {USER_INPUT_ID} down")),
        "{}",
        run.out
    );
    assert_eq!(
        run.last_line(),
        format!("result: answered by another client (command {other}): Database = SQLite")
    );
}

#[test]
fn a_settlement_without_a_command_is_the_host_s() {
    let text = fixture_until_answer(vec![settled(
        USER_INPUT_ID,
        "timedOut",
        json!([]),
        Value::Null,
    )]);
    let run = run_transcript(&text, &[]);
    assert_ok(&run);
    assert!(run.out.contains(&format!(
        "settled: timedOut by the host (no command); taking question {USER_INPUT_ID} down"
    )));
    assert_eq!(run.last_line(), "result: timedOut by the host (no command)");
}

// ---------------------------------------------------------------------------------------
// The example on the shared scenarios

#[test]
fn shared_answer_round_trip() {
    let Some(dir) = shared_scenario("userinput-answer-round-trip") else {
        return;
    };
    let run = run_args(&["--trace", "--answer", "Postgres", dir.to_str().unwrap()]);
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
    assert_eq!(
        note_pointers(&run),
        ["/params/clientInfo/name", "/params/clientInfo/version"]
    );
    assert!(run.out.contains("view: turn completed"));
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
    let run = run_args(&["--trace", "--cancel", reason, dir.to_str().unwrap()]);
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
    assert_eq!(
        note_pointers(&run),
        ["/params/clientInfo/name", "/params/clientInfo/version"]
    );
    assert_eq!(
        run.last_line(),
        format!("result: cancelled by this client (reason: {reason})")
    );

    // Without a decision the client follows the recording, in its own words.
    let run = run_args(&[dir.to_str().unwrap()]);
    assert_ok(&run);
    assert!(run
        .out
        .contains(&format!("cancel: {}", app::DEFAULT_REASON)));
    assert!(
        note_pointers(&run).contains(&"/params/reason".to_owned()),
        "{}",
        run.err
    );
}

#[test]
fn shared_interrupt_round_trip() {
    let Some(dir) = shared_scenario("userinput-interrupt-round-trip") else {
        return;
    };
    // The default decision follows the recording: engage, confirm the first label, interrupt.
    let run = run_args(&["--trace", dir.to_str().unwrap()]);
    assert_ok(&run);
    assert_eq!(
        run.sent_methods(),
        [
            "initialize",
            "initialized",
            "model/list",
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
    // The recorded model/list (id 19) was answered with the id this client used (2).
    let Some((list_id, _)) = run.sent_request("model/list") else {
        panic!("model/list was sent")
    };
    let answered: Vec<Id> = run
        .received()
        .into_iter()
        .filter_map(|f| match f.message {
            Message::Result { id, .. } => Some(id),
            _ => None,
        })
        .collect();
    assert!(
        answered.contains(&list_id) && !answered.contains(&Id::Number(19)),
        "{answered:?}"
    );
    assert_eq!(
        run.settled().decided_by_command_id,
        Some(interrupt.command_id)
    );
    assert_eq!(
        note_pointers(&run),
        ["/params/clientInfo/name", "/params/clientInfo/version"]
    );
    assert_eq!(
        run.last_line(),
        "result: interrupted by this client: Database = Postgres"
    );
}

// ---------------------------------------------------------------------------------------
// The typed label check, the deadline, the options

fn question(id: &str, mode: UserInputSelectionMode, labels: &[&str]) -> UserInputQuestion {
    let options = labels
        .iter()
        .map(|l| UserInputOption::new(l.to_string()))
        .collect();
    UserInputQuestion::new(
        "Header".to_owned(),
        id.to_owned(),
        options,
        "Which?".to_owned(),
        UserInputSelection::new(mode),
    )
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
        Choice::new(&db, vec![postgres.clone(), sqlite.clone()]).is_err(),
        "single takes one"
    );
    let answer = Choice::new(&db, vec![postgres.clone()])
        .unwrap()
        .to_answer();
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
fn options_take_one_kind_of_decision() {
    use app::cli::{parse, Decision};
    let parsed = parse(&strings(&["--answer", "A", "--answer=B", "dir"]))
        .unwrap()
        .unwrap();
    assert_eq!(
        parsed.decision,
        Some(Decision::Answer(vec!["A".to_owned(), "B".to_owned()]))
    );
    assert_eq!(parsed.transcript, PathBuf::from("dir"));
    assert!(parse(&strings(&["--answer", "A", "--cancel", "no"])).is_err());
    assert!(
        parse(&strings(&["--cancel"])).is_err(),
        "--cancel needs a reason"
    );
    assert_eq!(parse(&strings(&["--help"])), Ok(None));
}

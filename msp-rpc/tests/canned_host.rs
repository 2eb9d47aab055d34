//! `msp-canned-host` as a child process: every shared transcript played to a client that
//! replays the transcript's own client lines with fresh ids and commandIds, and the diagnosis
//! a mismatching client gets.
#![cfg(feature = "canned-host")]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use msp_rpc::canned::{Dir, Transcript, INCOMPLETE, MISMATCH};
use msp_rpc::new_command_id;
use serde_json::Value;

const HOST: &str = env!("CARGO_BIN_EXE_msp-canned-host");
const WAIT: Duration = Duration::from_secs(20);

fn shared_transcripts() -> Option<PathBuf> {
    let dir = std::env::var_os("MSP_SHARED_DIR").filter(|v| !v.is_empty())?;
    let dir = PathBuf::from(dir).join("msp-upstream/transcripts");
    assert!(
        dir.is_dir(),
        "MSP_SHARED_DIR is set but {} is missing",
        dir.display()
    );
    Some(dir)
}

/// The canned host, its stdin, and its stdout line by line (with a deadline, never a hang).
struct Host {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Host {
    fn spawn(args: &[&str]) -> Host {
        let mut child = Command::new(HOST)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Host {
            stdin: child.stdin.take(),
            child,
            lines,
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\r\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends, unless the host stopped reading (its exit code says why).
    fn try_send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        let _ = stdin
            .write_all(line.as_bytes())
            .and_then(|()| stdin.write_all(b"\n"))
            .and_then(|()| stdin.flush());
    }

    /// The host's next frame; `None` once its stdout ended.
    fn try_recv(&mut self) -> Option<Value> {
        let line = self.lines.recv_timeout(WAIT).ok()?;
        Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}")))
    }

    fn recv(&mut self, context: &str) -> Value {
        let line = self.lines.recv_timeout(WAIT).unwrap_or_else(|e| {
            panic!(
                "{context}: no frame from the host ({e}); stderr: {}",
                self.stderr_now()
            )
        });
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{context}: {e}: {line}"))
    }

    /// Closes stdin and waits: the exit code and stderr.
    fn finish(mut self) -> (i32, String) {
        self.stdin = None;
        let status = self.child.wait().unwrap();
        let mut stderr = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        (status.code().unwrap_or(-1), stderr)
    }

    fn stderr_now(&mut self) -> String {
        let _ = self.child.kill();
        let mut stderr = String::new();
        if let Some(mut pipe) = self.child.stderr.take() {
            let _ = pipe.read_to_string(&mut stderr);
        }
        stderr
    }
}

/// Replays `transcript`'s client lines with fresh request ids and commandIds; checks every
/// server frame arrives as recorded, in the client's ids. The host's exit code and stderr.
fn replay(path: &Path, args: &[&str]) -> (i32, String) {
    replay_edited(path, args, |_, _| {})
}

/// [`replay`], each client frame passed through `edit` (with its method) before it is sent,
/// as a client deciding otherwise would send it; stops once the host stops.
fn replay_edited(path: &Path, args: &[&str], edit: impl Fn(&str, &mut Value)) -> (i32, String) {
    let transcript = Transcript::load(path).unwrap();
    let mut host_args: Vec<&str> = args.to_vec();
    let shown = path.to_str().unwrap();
    host_args.push(shown);
    let mut host = Host::spawn(&host_args);
    let mut ids: HashMap<Value, Value> = HashMap::new();
    let mut commands: HashMap<String, String> = HashMap::new();
    for frame in &transcript.frames {
        let context = format!("{}:{}", transcript.origin, frame.line);
        let mut value = frame.value.clone();
        match frame.dir {
            Dir::Client => {
                if value.get("method").is_some() {
                    if let Some(id) = value.get("id").cloned() {
                        let fresh = match &id {
                            Value::Number(n) => Value::from(n.as_i64().unwrap() + 1000),
                            other => Value::from(format!("fresh-{}", other.as_str().unwrap())),
                        };
                        ids.insert(id, fresh.clone());
                        value["id"] = fresh;
                    }
                }
                if let Some(Value::String(recorded)) = value.pointer("/params/commandId").cloned() {
                    commands.entry(recorded).or_insert_with(new_command_id);
                }
                // What the host said in the client's commandIds, the client says back so.
                rewrite(&mut value, &commands);
                let method = frame.value["method"].as_str().unwrap_or_default();
                edit(method, &mut value);
                host.try_send(&value.to_string());
            }
            Dir::Server => {
                if value.get("method").is_none() {
                    if let Some(fresh) = value.get("id").and_then(|id| ids.get(id)).cloned() {
                        value["id"] = fresh;
                    }
                }
                rewrite(&mut value, &commands);
                let Some(got) = host.try_recv() else {
                    break;
                };
                assert_eq!(got, value, "{context}: the host's frame");
            }
        }
    }
    host.finish()
}

fn rewrite(value: &mut Value, map: &HashMap<String, String>) {
    match value {
        Value::String(s) => {
            if let Some(fresh) = map.get(s.as_str()) {
                *s = fresh.clone();
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite(v, map)),
        Value::Object(members) => members.values_mut().for_each(|v| rewrite(v, map)),
        _ => {}
    }
}

#[test]
fn every_shared_scenario_completes_for_a_client_replaying_its_own_lines() {
    let Some(dir) = shared_transcripts() else {
        eprintln!("skipped: MSP_SHARED_DIR is not set to the shared material");
        return;
    };
    let mut scenarios: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("transcript.ndjson").is_file())
        .collect();
    scenarios.sort();
    assert_eq!(scenarios.len(), 47, "the shared corpus has 47 scenarios");
    for scenario in &scenarios {
        for mode in [&[][..], &["--strict"][..]] {
            let (code, stderr) = replay(scenario, mode);
            assert_eq!(code, 0, "{} {mode:?}: {stderr}", scenario.display());
            assert!(
                !stderr.contains("note:"),
                "{}: {stderr}",
                scenario.display()
            );
        }
    }
}

#[test]
fn the_project_fixture_of_the_seed_completes() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/seed-answer-user-input");
    let (code, stderr) = replay(&fixture, &[]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_mismatching_client_is_told_which_frame_at_which_line_differs_where() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/seed-answer-user-input");
    let mut host = Host::spawn(&["--strict", fixture.to_str().unwrap()]);
    host.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"x","version":"1"}}}"#);
    host.recv("initialize");
    host.send(r#"{"jsonrpc":"2.0","method":"initialized"}"#);
    // A resume whose `excludeItems` is a string where the recording has a boolean.
    host.send(r#"{"jsonrpc":"2.0","id":2,"method":"session/resume","params":{"commandId":"c-1","sessionId":"0198f0aa-1111-7000-8000-0000000000bb","excludeItems":"yes"}}"#);
    let (code, stderr) = host.finish();
    assert_eq!(code, MISMATCH, "{stderr}");
    let origin = fixture.join("transcript.ndjson").display().to_string();
    assert!(
        stderr.contains(&format!(
            "mismatch at {origin}:4: expected the client's request session/resume (id 2), the client sent request session/resume (id 2)"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("at /params/excludeItems: sent a string, recorded a boolean"),
        "{stderr}"
    );
}

#[test]
fn a_frame_that_leaves_out_a_required_member_is_refused_with_the_decoders_pointer() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/seed-answer-user-input");
    let mut host = Host::spawn(&[fixture.to_str().unwrap()]);
    host.send(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"x"}}}"#,
    );
    let (code, stderr) = host.finish();
    assert_eq!(code, MISMATCH, "{stderr}");
    assert!(
        stderr.contains("at /params/clientInfo/version: the member is missing"),
        "{stderr}"
    );
    assert!(
        stderr.contains("not a valid one: initialize (id 1) at /params/clientInfo/version: missing field `version`"),
        "{stderr}"
    );
}

#[test]
fn a_client_that_stops_early_is_told_what_the_transcript_expected() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/seed-answer-user-input");
    let host = Host::spawn(&[fixture.to_str().unwrap()]);
    let (code, stderr) = host.finish();
    assert_eq!(code, INCOMPLETE, "{stderr}");
    assert!(
        stderr.contains(":1 expects it to send request initialize (id 1)"),
        "{stderr}"
    );
}

// ---------------------------------------------------------------------------------------
// Clients that take their own legal path, and those that do not

mod own_path {
    use super::*;
    use msp_rpc::blocking::Connection;
    use msp_rpc::{FingerprintPolicy, HostCommand, HostExit, Inbound, Options, Reply, RpcError};
    use msp_types::protocol::methods;
    use msp_types::registry::SERVED_FINGERPRINT;
    use msp_types::{
        ClientInfo, HistoryPreference, InitializeParams, ProtocolNotification, RequestReceipt,
        ServerRequest, SessionResumeParams, UserInputAnswer, UserInputAnswerParams,
        UserInputOutcome,
    };

    const SESSION: &str = "0198f0aa-1111-7000-8000-0000000000bb";

    /// What happened to a client that answers the re-issued question at once.
    struct Ended {
        outcome: Result<UserInputOutcome, RpcError>,
        warnings: usize,
        exit: HostExit,
    }

    /// Resumes (`resume` sets its preferences), answers the re-issued question straight away
    /// with its first offered label, without any `view/page` backfill, and waits for the
    /// settlement.
    fn answer_at_once(
        transcript: &Path,
        host_args: &[&str],
        policy: FingerprintPolicy,
        resume: impl FnOnce(&mut SessionResumeParams),
    ) -> Ended {
        let (tx, asked) = mpsc::channel();
        let options = Options::new()
            .fingerprint_policy(policy)
            .close_grace(Duration::from_secs(5))
            .on_request(move |_, request| match request {
                ServerRequest::UserInputRequest(params) => {
                    let _ = tx.send(params);
                    Reply::ok(&RequestReceipt::new())
                }
                other => Reply::method_not_found(other.method()),
            });
        let host = HostCommand::new(HOST).args(host_args).arg(transcript);
        let conn = Connection::spawn(&host, options).unwrap();
        let outcome = (|| {
            let hello = InitializeParams::builder()
                .client_info(ClientInfo::builder().name("skipper").version("0").build())
                .build();
            let warnings = conn.initialize(&hello)?.warnings.len();
            let mut params = SessionResumeParams::builder()
                .command_id(new_command_id())
                .session_id(SESSION)
                .build();
            resume(&mut params);
            conn.request::<methods::SessionResume>(&params)?;
            let question = asked.recv_timeout(WAIT).expect("the question is re-issued");
            let mut answer = UserInputAnswer::builder()
                .question_id(question.questions[0].id.clone())
                .build();
            answer.selected_label = Some(question.questions[0].options[0].label.clone());
            let params = UserInputAnswerParams::builder()
                .answers(vec![answer])
                .command_id(new_command_id())
                .session_id(SESSION)
                .user_input_id(question.user_input_id.clone())
                .build();
            conn.request::<methods::UserInputAnswerMethod>(&params)?;
            while let Some(inbound) = conn.next_timeout(WAIT) {
                if let Inbound::Notification {
                    notification: ProtocolNotification::UserInputSettled(settled),
                    ..
                } = inbound
                {
                    return Ok((settled.outcome, warnings));
                }
            }
            panic!("no settlement")
        })();
        let exit = conn.close().unwrap();
        let (outcome, warnings) = match outcome {
            Ok((outcome, warnings)) => (Ok(outcome), warnings),
            Err(error) => (Err(error), 0),
        };
        Ended {
            outcome,
            warnings,
            exit,
        }
    }

    fn exclude_items(params: &mut SessionResumeParams) {
        params.exclude_items = Some(true);
    }

    #[test]
    fn a_client_that_skips_the_backfill_completes_the_question() {
        let Some(dir) = shared_transcripts() else {
            eprintln!("skipped: MSP_SHARED_DIR is not set to the shared material");
            return;
        };
        let ended = answer_at_once(
            &dir.join("userinput-answer-round-trip"),
            &[],
            FingerprintPolicy::Warn,
            exclude_items,
        );
        assert_eq!(ended.outcome.unwrap(), UserInputOutcome::Answered);
        assert_eq!(ended.exit.code, Some(0), "{}", ended.exit);
        // What the host noted reaches the test on a clean exit too.
        assert!(
            ended
                .exit
                .stderr_tail
                .contains("the client left out request view/page"),
            "{}",
            ended.exit
        );

        // The same client on a transcript that records no backfill, strict.
        let ended = answer_at_once(
            &dir.join("snapshot-suffix-pending-userinput"),
            &["--strict"],
            FingerprintPolicy::Warn,
            |params| params.history = Some(HistoryPreference::Snapshot),
        );
        assert_eq!(ended.outcome.unwrap(), UserInputOutcome::Answered);
        assert_eq!(ended.exit.code, Some(0));
    }

    #[test]
    fn strict_matching_refuses_the_skip() {
        let Some(dir) = shared_transcripts() else {
            eprintln!("skipped: MSP_SHARED_DIR is not set to the shared material");
            return;
        };
        let scenario = dir.join("userinput-answer-round-trip");
        let ended = answer_at_once(
            &scenario,
            &["--strict"],
            FingerprintPolicy::Warn,
            exclude_items,
        );
        let error = ended.outcome.unwrap_err();
        assert_eq!(ended.exit.code, Some(MISMATCH), "{error}");
        let tail = ended.exit.stderr_tail;
        let origin = scenario.join("transcript.ndjson").display().to_string();
        assert!(
            tail.contains(&format!(
                "mismatch at {origin}:8: expected the client's request view/page (id 3), the client sent request userInput/answer (id 3)"
            )),
            "{tail}"
        );
    }

    #[test]
    fn a_served_fingerprint_override_lets_a_strict_client_through() {
        let fingerprint = SERVED_FINGERPRINT.unwrap();
        let Some(dir) = shared_transcripts() else {
            eprintln!("skipped: MSP_SHARED_DIR is not set to the shared material");
            return;
        };
        let scenario = dir.join("userinput-answer-round-trip");
        // Recorded under an older fingerprint: a strict client is refused...
        let ended = answer_at_once(&scenario, &[], FingerprintPolicy::Require, exclude_items);
        assert!(
            matches!(ended.outcome, Err(RpcError::Handshake(_))),
            "{:?}",
            ended.outcome.err()
        );
        // ... unless the host serves the one this crate pins.
        for args in [
            &["--fingerprint", fingerprint][..],
            &["--fault", &format!("start: fingerprint {fingerprint}")],
        ] {
            let ended = answer_at_once(&scenario, args, FingerprintPolicy::Require, exclude_items);
            assert_eq!(ended.outcome.unwrap(), UserInputOutcome::Answered);
            assert_eq!(ended.warnings, 0);
        }
    }

    /// The project's fixture, played to a raw client; returns the exit code and stderr.
    fn raw_client(frames: &[&str]) -> (i32, String) {
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/seed-answer-user-input");
        let mut host = Host::spawn(&[fixture.to_str().unwrap()]);
        for frame in frames {
            host.send(frame);
            if frame.contains("\"method\"") && frame.contains("\"id\"") {
                host.recv("a response");
            }
        }
        host.finish()
    }

    const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"fixture-client","version":"0.1.0"}}}"#;
    const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"initialized"}"#;
    const RESUME: &str = r#"{"jsonrpc":"2.0","id":2,"method":"session/resume","params":{"commandId":"018f6a2b-3333-7abc-8def-00000000d001","sessionId":"0198f0aa-1111-7000-8000-0000000000bb","excludeItems":true}}"#;
    const PAGE: &str = r#"{"jsonrpc":"2.0","id":3,"method":"view/page","params":{"sessionId":"0198f0aa-1111-7000-8000-0000000000bb","direction":"forward","limit":200}}"#;

    #[test]
    fn a_client_that_never_answers_the_hosts_request_is_diagnosed() {
        let (code, stderr) = raw_client(&[INITIALIZE, INITIALIZED, RESUME, PAGE]);
        assert_eq!(code, MISMATCH, "{stderr}");
        assert!(
            stderr.contains(":7: expected the client's result (id 18)"),
            "{stderr}"
        );
        assert!(
            stderr.contains("the client never answered the host's request 18"),
            "{stderr}"
        );
    }

    #[test]
    fn a_method_the_transcript_does_not_have_is_diagnosed() {
        let models = r#"{"jsonrpc":"2.0","id":3,"method":"model/list","params":{}}"#;
        let (code, stderr) = raw_client(&[
            INITIALIZE,
            INITIALIZED,
            RESUME,
            r#"{"jsonrpc":"2.0","id":18,"result":{}}"#,
            models,
        ]);
        assert_eq!(code, MISMATCH, "{stderr}");
        assert!(
            stderr.contains(":8: expected the client's request view/page (id 3), the client sent request model/list (id 3)"),
            "{stderr}"
        );
    }
}

fn approval_round_trip() -> Option<PathBuf> {
    let scenario = shared_transcripts()?.join("approval-round-trip");
    Some(scenario)
}

/// A change to a frame, as a client deciding otherwise would make it.
type Edit = fn(&mut Value);

/// `approval/decide` as a client deciding otherwise would send it.
fn decide(change: Edit) -> impl Fn(&str, &mut Value) {
    move |method, frame| {
        if method == "approval/decide" {
            change(frame);
        }
    }
}

fn choose_abort(frame: &mut Value) {
    frame["params"]["choiceId"] = "abort".into();
}

#[test]
fn a_client_deciding_otherwise_than_the_recording_fails_naming_the_pointer() {
    let Some(scenario) = approval_round_trip() else {
        eprintln!("skipped: MSP_SHARED_DIR is not set to the shared material");
        return;
    };
    let origin = scenario.join("transcript.ndjson").display().to_string();
    let cases: [(&str, Edit, &str); 3] = [
        (
            "another choice",
            choose_abort,
            r#"at /params/choiceId: sent "abort", recorded "allow_session""#,
        ),
        (
            "a made-up session",
            |frame| frame["params"]["sessionId"] = "made-up".into(),
            r#"at /params/sessionId: sent "made-up", recorded "0198f0aa-1111-7000-8000-0000000000aa""#,
        ),
        (
            "a member left out",
            |frame| {
                frame["params"]
                    .as_object_mut()
                    .unwrap()
                    .remove("requirementId");
            },
            "at /params/requirementId: the member is missing",
        ),
    ];
    for (case, change, diagnosis) in cases {
        let (code, stderr) = replay_edited(&scenario, &[], decide(change));
        assert_eq!(code, MISMATCH, "{case}: {stderr}");
        let expected = format!(
            "mismatch at {origin}:15: expected the client's request approval/decide (id \"b9\")"
        );
        assert!(stderr.contains(&expected), "{case}: {stderr}");
        assert!(stderr.contains(diagnosis), "{case}: {stderr}");
    }
}

#[test]
fn a_loosened_place_lets_the_clients_value_through_and_notes_it() {
    let Some(scenario) = approval_round_trip() else {
        eprintln!("skipped: MSP_SHARED_DIR is not set to the shared material");
        return;
    };
    let noted = r#"loosened (approval/decide#/choiceId) at /params/choiceId: sent "abort", recorded "allow_session""#;
    // On the command line, and as a script step from where it runs.
    for args in [
        &["--allow", "approval/decide#/choiceId"][..],
        &["--fault", "after 14: allow approval/decide#/choiceId"][..],
    ] {
        let (code, stderr) = replay_edited(&scenario, args, decide(choose_abort));
        assert_eq!(code, 0, "{args:?}: {stderr}");
        assert!(stderr.contains(noted), "{args:?}: {stderr}");
    }
    // A step that runs after the decision comes too late for it.
    let late = ["--fault", "after 16: allow approval/decide#/choiceId"];
    let (code, stderr) = replay_edited(&scenario, &late, decide(choose_abort));
    assert_eq!(code, MISMATCH, "{stderr}");
}

#[test]
fn the_default_set_loosens_who_the_client_is_unless_told_not_to() {
    let Some(scenario) = approval_round_trip() else {
        eprintln!("skipped: MSP_SHARED_DIR is not set to the shared material");
        return;
    };
    let rename = |method: &str, frame: &mut Value| {
        if method == "initialize" {
            frame["params"]["clientInfo"]["name"] = "my-client".into();
        }
    };
    let (code, stderr) = replay_edited(&scenario, &[], rename);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains(r#"loosened (initialize#/clientInfo) at /params/clientInfo/name: sent "my-client", recorded "conformance""#),
        "{stderr}"
    );
    let (code, stderr) = replay_edited(&scenario, &["--no-default-allow"], rename);
    assert_eq!(code, MISMATCH, "{stderr}");
    assert!(
        stderr.contains(r#"at /params/clientInfo/name: sent "my-client", recorded "conformance""#),
        "{stderr}"
    );
}

#[test]
fn a_member_the_client_adds_is_noted_and_strict_matching_refuses_it() {
    let Some(scenario) = approval_round_trip() else {
        eprintln!("skipped: MSP_SHARED_DIR is not set to the shared material");
        return;
    };
    let add = |method: &str, frame: &mut Value| {
        if method == "turn/start" {
            frame["params"]["tokenBudget"] = 5000.into();
        }
    };
    let (code, stderr) = replay_edited(&scenario, &[], add);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("added at /params/tokenBudget: the member was not recorded"),
        "{stderr}"
    );
    let (code, stderr) = replay_edited(&scenario, &["--strict"], add);
    assert_eq!(code, MISMATCH, "{stderr}");
    assert!(
        stderr.contains("at /params/tokenBudget: the member was not recorded"),
        "{stderr}"
    );
}

/// The library API returns what the host noted, besides writing it to stderr.
#[test]
fn the_report_carries_the_notes() {
    use msp_rpc::canned::{CannedHost, Outcome};
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/seed-answer-user-input");
    let host = CannedHost::new(Transcript::load(&fixture).unwrap());
    let client = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"clientInfo\":{\"name\":\"x\",\"version\":\"0.1.0\"}}}\n";
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let report = host.serve(client.as_bytes(), &mut out, &mut err);
    assert!(
        matches!(report.outcome, Outcome::Incomplete(_)),
        "{report:?}"
    );
    assert_eq!(report.notes.len(), 1, "{report:?}");
    assert!(report.notes[0].ends_with(
        r#"transcript.ndjson:1: loosened (initialize#/clientInfo) at /params/clientInfo/name: sent "x", recorded "answer_user_input""#
    ));
    assert!(String::from_utf8(err).unwrap().contains(&report.notes[0]));
}

//! The canned host for the client's tests: as a child process (`msp-canned-host`, built
//! when missing) over real pipes, or in this process over in-memory pipes.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::thread::{self, JoinHandle};

use msp_client::blocking::Client;
use msp_client::Options;
use msp_rpc::canned::{CannedHost, Outcome, Transcript};
use msp_rpc::pipe::pipe;
use msp_rpc::HostCommand;

/// The shared transcripts, when `MSP_SHARED_DIR` names the shared material.
pub fn transcripts() -> Option<PathBuf> {
    let dir = std::env::var_os("MSP_SHARED_DIR").filter(|v| !v.is_empty())?;
    let dir = PathBuf::from(dir).join("msp-upstream/transcripts");
    assert!(
        dir.is_dir(),
        "MSP_SHARED_DIR is set but {} is missing",
        dir.display()
    );
    Some(dir)
}

/// Scenario `name` of the shared transcripts; `None` (the test skips) without them.
pub fn scenario(name: &str) -> Option<PathBuf> {
    match transcripts() {
        Some(dir) => Some(dir.join(name)),
        None => {
            eprintln!("skipped: MSP_SHARED_DIR is not set to the shared material");
            None
        }
    }
}

/// The `msp-canned-host` binary of this build, built once if it is missing.
pub fn host_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        // target/<profile>/deps/<this test> -> target/<profile>/msp-canned-host
        let exe = std::env::current_exe().expect("the test's path");
        let profile = exe
            .parent()
            .and_then(Path::parent)
            .expect("target/<profile>");
        let binary = profile.join(format!("msp-canned-host{}", std::env::consts::EXE_SUFFIX));
        if !binary.exists() {
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let mut build = Command::new(cargo);
            build.args([
                "build",
                "-p",
                "msp-rpc",
                "--features",
                "canned-host",
                "--bin",
                "msp-canned-host",
            ]);
            if profile.file_name().is_some_and(|n| n == "release") {
                build.arg("--release");
            }
            let status = build.status().expect("cargo runs");
            assert!(status.success(), "building msp-canned-host failed");
        }
        binary
    })
}

/// The options every test client uses.
pub fn options() -> Options {
    Options::new("conformance", "0.0.0")
}

/// A client of the canned host playing `scenario`, spawned as a child process.
pub fn spawn(scenario: &Path, args: &[&str]) -> Client {
    let command = HostCommand::new(host_binary()).args(args).arg(scenario);
    Client::spawn(&command, options()).expect("the canned host starts and shakes hands")
}

/// The canned host's thread of [`in_memory`]: how the recording played, and its stderr.
pub type InMemoryHost = JoinHandle<(Outcome, String)>;

/// A client of the canned host playing `scenario` in this process, over in-memory pipes;
/// the host's thread gives its outcome and its stderr.
pub fn in_memory(scenario: &Path) -> (Client, InMemoryHost) {
    let transcript = Transcript::load(scenario).expect("the transcript loads");
    let (client_reader, host_writer) = pipe();
    let (host_reader, client_writer) = pipe();
    let host = thread::spawn(move || {
        let mut stderr = Vec::new();
        let outcome = CannedHost::new(transcript)
            .serve(host_reader, host_writer, &mut stderr)
            .outcome;
        (outcome, String::from_utf8_lossy(&stderr).into_owned())
    });
    let client = Client::over(client_reader, client_writer, options()).expect("handshake");
    (client, host)
}

/// Shared scenario `name` edited at run time (frames as JSON, in order, each `(client,
/// frame)`), written with its manifest to a temporary folder; `None` without the shared
/// material.
pub fn derived(
    name: &str,
    edit: impl FnOnce(&mut Vec<(bool, serde_json::Value)>),
) -> Option<tempfile::TempDir> {
    let source = scenario(name)?;
    let mut frames = frames(name)?;
    edit(&mut frames);
    let dir = tempfile::tempdir().unwrap();
    let text: String = frames
        .iter()
        .map(|(client, frame)| {
            let dir = if *client { "client" } else { "server" };
            format!(
                "{}\n",
                serde_json::json!({"dir": dir, "raw": frame.to_string()})
            )
        })
        .collect();
    std::fs::write(dir.path().join("transcript.ndjson"), text).unwrap();
    std::fs::copy(
        source.join("manifest.json"),
        dir.path().join("manifest.json"),
    )
    .unwrap();
    Some(dir)
}

/// The frames of shared scenario `name`, each `(client, frame)`.
pub fn frames(name: &str) -> Option<Vec<(bool, serde_json::Value)>> {
    let source = scenario(name)?;
    let text = std::fs::read_to_string(source.join("transcript.ndjson")).unwrap();
    let frames = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let line: serde_json::Value = serde_json::from_str(line).unwrap();
            let raw = line["raw"].as_str().unwrap();
            (line["dir"] == "client", serde_json::from_str(raw).unwrap())
        })
        .collect();
    Some(frames)
}

/// `text-run-single-turn` served again after the connection was lost: see [`resumed`]; and
/// when `ended`, the turn ended while the client was away: the resume's `lastTurn` names it
/// and nothing of it follows its acknowledgement.
pub fn resumed_turn(ended: bool) -> Option<tempfile::TempDir> {
    resumed_turn_acknowledged(ended, None)
}

/// [`resumed_turn`], the replay acknowledged as turn `as_turn` when given (the resume's
/// `lastTurn` still naming the turn first acknowledged).
pub fn resumed_turn_acknowledged(ended: bool, as_turn: Option<&str>) -> Option<tempfile::TempDir> {
    let resume = frames("compact-command-noop")?;
    derived("text-run-single-turn", |frames| {
        own_turn_id(frames);
        let at = resume_in_place_of_start(frames, &resume, "turn/start");
        if ended {
            let turn_id = frames[at + 1].1["result"]["turnId"].clone();
            frames[at - 1].1["result"]["lastTurn"] =
                serde_json::json!({"turnId": turn_id, "terminal": "completed"});
            frames.truncate(at + 2);
        }
        if let Some(turn_id) = as_turn {
            frames[at + 1].1["result"]["turnId"] = turn_id.into();
        }
    })
}

/// Shared scenario `name` served again after the connection was lost: the session resumed
/// (idle; the result as `compact-command-noop` records it) in place of started, then the
/// recorded `method` command sent again, and what followed it.
pub fn resumed(name: &str, method: &str) -> Option<tempfile::TempDir> {
    let resume = frames("compact-command-noop")?;
    derived(name, |frames| {
        resume_in_place_of_start(frames, &resume, method);
    })
}

/// Puts `resume`'s `session/resume` and its result in place of the frames from
/// `session/start` to the first `method` command; where that command is now.
fn resume_in_place_of_start(
    frames: &mut Vec<(bool, serde_json::Value)>,
    resume: &[(bool, serde_json::Value)],
    method: &str,
) -> usize {
    let first = |method: &str| {
        frames
            .iter()
            .position(|(client, f)| *client && f["method"] == method)
            .unwrap()
    };
    let (start, command) = (first("session/start"), first(method));
    let request = resume.iter().find(|(_, f)| f["method"] == "session/resume");
    let request = request.unwrap().clone();
    let mut result = resume
        .iter()
        .find(|(client, f)| !*client && f["id"] == request.1["id"])
        .unwrap()
        .clone();
    let session = &mut result.1["result"]["session"];
    session["status"] = "idle".into();
    session["activeTurnId"] = serde_json::Value::Null;
    frames.splice(start..command, [request, result]);
    start + 2
}

/// `text-run-single-turn` with a turn id of its own ([`own_turn_id`]).
pub fn single_turn() -> Option<tempfile::TempDir> {
    derived("text-run-single-turn", |frames| own_turn_id(frames))
}

/// The recorded turn's id, where the host says it (`turnId` members), made other than its
/// `turn/start`'s `commandId` (the recording mints both alike): the canned host puts the
/// client's `commandId` wherever the recorded one is quoted once it saw it, so a `lastTurn`
/// served before the `turn/start` could not name the turn otherwise.
pub fn own_turn_id(frames: &mut [(bool, serde_json::Value)]) {
    fn rename(value: &mut serde_json::Value, from: &str) {
        match value {
            serde_json::Value::Object(members) => {
                for (key, member) in members.iter_mut() {
                    if key == "turnId" && member == from {
                        *member = TURN.into();
                    } else {
                        rename(member, from);
                    }
                }
            }
            serde_json::Value::Array(values) => values.iter_mut().for_each(|v| rename(v, from)),
            _ => {}
        }
    }
    let start = frames
        .iter()
        .find(|(client, f)| *client && f["method"] == "turn/start");
    let from = start.unwrap().1["params"]["commandId"]
        .as_str()
        .unwrap()
        .to_owned();
    for (client, frame) in frames.iter_mut() {
        if !*client {
            rename(frame, &from);
        }
    }
}

/// `text-run-single-turn` where the host says its subscription usage changed (`usage/changed`,
/// naming no session) while the turn runs.
pub fn usage_during_turn() -> Option<tempfile::TempDir> {
    derived("text-run-single-turn", |frames| {
        let started = turn_started_at(frames);
        let usage = serde_json::json!({"jsonrpc": "2.0", "method": "usage/changed", "params": {
            "observedAtMs": 1_754_590_941_000_i64, "tier": "pro",
            "weekly": {"resetsAtMs": 1_755_000_000_000_i64, "usedPercent": 12},
            "window": {"resetsAtMs": 1_754_600_000_000_i64, "usedPercent": 40,
                "windowDurationMins": 300}}});
        frames.insert(started + 1, (false, usage));
    })
}

/// The interrupt [`retracted_turn`] sends.
pub const RETRACT: &str = "0198f0ab-5151-7000-8000-0000000000d3";

/// `text-run-single-turn` where the client interrupts the running turn asking to retract
/// it (`turn/interrupt` with `retract: true`), the host acknowledges and retracts it
/// (`turn/retracted`, accepted): nothing of the turn follows.
pub fn retracted_turn() -> Option<tempfile::TempDir> {
    derived("text-run-single-turn", |frames| {
        let started = turn_started_at(frames);
        let params = frames[started].1["params"].clone();
        let (session, turn) = (&params["sessionId"], &params["turnId"]);
        let interrupt = serde_json::json!({"jsonrpc": "2.0", "id": 4, "method": "turn/interrupt",
            "params": {"sessionId": session, "commandId": RETRACT, "turnId": turn,
                "retract": true}});
        let ack = serde_json::json!({"jsonrpc": "2.0", "id": 4, "result":
            {"commandId": RETRACT, "status": "accepted", "turnId": turn}});
        // `commandId`: the retracted submission's, as `turn/started` has it.
        let mut retracted = params.clone();
        retracted["outcome"] = "accepted".into();
        retracted["viewCursor"] = format!("{}.1", params["viewCursor"].as_str().unwrap()).into();
        let retracted =
            serde_json::json!({"jsonrpc": "2.0", "method": "turn/retracted", "params": retracted});
        frames.truncate(started + 1);
        frames.extend([(true, interrupt), (false, ack), (false, retracted)]);
    })
}

/// The turn id [`own_turn_id`] gives.
pub const TURN: &str = "0198f0aa-7777-7000-8000-0000000000d1";

/// A fork of the resumed session and a side chat of the fork (the compaction scenario up to
/// its resume, then the two commands, each new session told its goal; the fork's result
/// with an approval pending): the new sessions' ids.
pub fn fork_and_side_chat() -> Option<(tempfile::TempDir, [&'static str; 2])> {
    const NEW: [&str; 2] = [
        "0198f0aa-1111-7000-8000-0000000000f1",
        "0198f0aa-1111-7000-8000-0000000000f2",
    ];
    let goal = frames("goal-set-round-trip")?
        .into_iter()
        .find(|(_, f)| f["method"] == "session/goalChanged")?
        .1;
    let resumed = |frames: &[(bool, serde_json::Value)]| {
        frames
            .iter()
            .position(|(_, f)| f["result"]["session"].is_object())
            .unwrap()
    };
    // The fork's result shows a snapshot with an approval pending; the side chat's starts
    // with no history.
    let snapshot = frames("snapshot-suffix-pending-approval")?;
    let forked = snapshot[resumed(&snapshot)].1["result"].clone();
    let dir = derived("compact-command-noop", |frames| {
        let at = resumed(frames);
        let empty = frames[at].1["result"].clone();
        frames.truncate(at + 1);
        let exchanges = [
            (
                "session/fork",
                "0198f0aa-1111-7000-8000-0000000000aa",
                NEW[0],
                forked,
            ),
            ("session/sideChat", NEW[0], NEW[1], empty),
        ];
        for (n, (method, from, new, template)) in exchanges.into_iter().enumerate() {
            let id = format!("0198f0aa-1111-7000-8000-00000000c0d{n}");
            frames.push((
                true,
                serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method,
                    "params": {"commandId": id, "sessionId": from}}),
            ));
            let mut result = template;
            let session = result["session"].as_object_mut().unwrap();
            session.insert("sessionId".into(), new.into());
            session.insert("status".into(), "idle".into());
            session.remove("activeTurnId");
            result["viewCursor"] = format!("v:{new}:1").into();
            frames.push((
                false,
                serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}),
            ));
            let mut told = goal.clone();
            told["params"]["sessionId"] = new.into();
            told["params"]["viewCursor"] = format!("v:{new}:2").into();
            frames.push((false, told));
        }
    })?;
    Some((dir, NEW))
}

/// The approval round trip where the host resolves the approval itself (`timedOut`, no
/// `decidedByCommandId`): with `error` answering the client's decision in place of the
/// recorded acknowledgement, or, without one, with no decision sent at all.
pub fn resolved_by_host(error: Option<serde_json::Value>) -> Option<tempfile::TempDir> {
    derived("approval-round-trip", |frames| {
        resolve_by_host(frames, error)
    })
}

/// [`resolved_by_host`] with the client's decision refused as `approvalAlreadyResolved`,
/// and the host's resolution held until the client renamed the session (`meanwhile`): until
/// then, the stage stays pending in the fold after the refusal.
pub fn lost_race_resolved_once_renamed() -> Option<tempfile::TempDir> {
    derived("approval-round-trip", |frames| {
        let lost = serde_json::json!({
            "code": -32051,
            "message": "the approval is resolved",
            "data": {"kind": "approvalAlreadyResolved"}
        });
        resolve_by_host(frames, Some(lost));
        // After the refusal.
        insert_rename(frames, approval_decide_at(frames) + 2);
    })
}

/// [`resolved_by_host`] without a decision, the host resolving the approval only once the
/// client renamed the session (`meanwhile`): a handler that renames it when offered the
/// stage is offered it before the resolution, whatever the timing.
pub fn resolved_by_host_once_renamed() -> Option<tempfile::TempDir> {
    derived("approval-round-trip", |frames| {
        resolve_by_host(frames, None);
        // After the receipt of the request.
        insert_rename(frames, approval_request_at(frames) + 2);
    })
}

/// The approval round trip where the host changes the stage's choices (the same
/// requirement, `allow_session` no longer offered) once the client renamed the session, and
/// the client decides `allow_once` of the changed stage: a handler that renames it when
/// offered the stage, and awaits a person meanwhile, is offered the changed stage.
pub fn choices_changed_once_renamed() -> Option<tempfile::TempDir> {
    derived("approval-round-trip", change_choices_once_renamed)
}

/// [`choices_changed_once_renamed`]'s edit of the approval round trip's `frames`, for
/// scenarios built on it.
pub fn change_choices_once_renamed(frames: &mut Vec<(bool, serde_json::Value)>) {
    let request = approval_request_at(frames);
    let decide = approval_decide_at(frames);
    frames[decide].1["params"]["choiceId"] = "allow_once".into();
    // After the receipt of the request, the rename, then the update.
    frames.insert(request + 2, (false, choices_changed(frames)));
    insert_rename(frames, request + 2);
}

/// The host's `approval/updated` of the approval scenarios' stage with its choices changed:
/// `allow_session` no longer offered.
pub fn choices_changed(frames: &[(bool, serde_json::Value)]) -> serde_json::Value {
    let mut params = frames[approval_request_at(frames)].1["params"].clone();
    params["viewCursor"] = "v:0198f0aa-1111-7000-8000-0000000000aa:7.1".into();
    params["change"] = serde_json::json!({"kind": "choicesChanged"});
    let choices = params["availableChoices"].as_array_mut().unwrap();
    choices.retain(|choice| choice["choiceId"] != "allow_session");
    serde_json::json!({"jsonrpc": "2.0", "method": "approval/updated", "params": params})
}

/// Makes the approval scenarios' decision `allow_session`, refused as
/// `approvalChoiceInvalid`; gives back the decision of `allow_once` as another command,
/// and its acknowledgement, for the caller to put where the client sends it.
pub fn refuse_allow_session(
    frames: &mut [(bool, serde_json::Value)],
) -> [(bool, serde_json::Value); 2] {
    let decide = approval_decide_at(frames);
    let (mut accepted, mut ack) = (frames[decide].clone(), frames[decide + 1].clone());
    frames[decide].1["params"]["choiceId"] = "allow_session".into();
    let error = serde_json::json!({
        "code": -32052,
        "message": "not offered",
        "data": {"kind": "approvalChoiceInvalid", "choiceId": "allow_session"}
    });
    refuse(&mut frames[decide + 1].1, error);
    let command = "018f6a2a-3333-7abc-8def-00000000d0aa";
    accepted.1["id"] = "b10".into();
    accepted.1["params"]["choiceId"] = "allow_once".into();
    accepted.1["params"]["commandId"] = command.into();
    ack.1["id"] = "b10".into();
    ack.1["result"]["commandId"] = command.into();
    [accepted, ack]
}

/// The approval round trip where the handler's `allow_session` is refused as
/// `approvalChoiceInvalid` before the host's change of the stage's choices is on the wire
/// (the update comes after the refusal; the client may still fold it before its handler
/// reads the refusal, the order `Deciding`'s unit test pins down both ways), and its
/// `allow_once` of the changed stage is accepted.
pub fn refused_before_the_change() -> Option<tempfile::TempDir> {
    derived("approval-round-trip", |frames| {
        let updated = choices_changed(frames);
        let [accepted, ack] = refuse_allow_session(frames);
        let decide = approval_decide_at(frames);
        frames.insert(decide + 2, (false, updated));
        frames.insert(decide + 3, accepted);
        frames.insert(decide + 4, ack);
    })
}

/// Where the host's `turn/started` is among the single-turn scenarios' `frames`.
pub fn turn_started_at(frames: &[(bool, serde_json::Value)]) -> usize {
    frames
        .iter()
        .position(|(_, f)| f["method"] == "turn/started")
        .unwrap()
}

/// Where the host's `approval/request` is among the approval scenarios' `frames`.
pub fn approval_request_at(frames: &[(bool, serde_json::Value)]) -> usize {
    frames
        .iter()
        .position(|(client, f)| !*client && f["method"] == "approval/request")
        .unwrap()
}

/// Where the client's first `approval/decide` is among the approval scenarios' `frames`.
pub fn approval_decide_at(frames: &[(bool, serde_json::Value)]) -> usize {
    frames
        .iter()
        .position(|(client, f)| *client && f["method"] == "approval/decide")
        .unwrap()
}

/// `reply`, the host's reply to a request, made its refusal with `error`.
pub fn refuse(reply: &mut serde_json::Value, error: serde_json::Value) {
    let reply = reply.as_object_mut().unwrap();
    reply.remove("result");
    reply.insert("error".into(), error);
}

/// Inserts at `at` the client's `session/rename` of the approval scenarios' session to
/// `meanwhile`, and the host's acknowledgement: what a test's handler sends so that the host
/// goes on only once the handler was asked.
pub fn insert_rename(frames: &mut Vec<(bool, serde_json::Value)>, at: usize) {
    let command = "018f6a2a-3333-7abc-8def-00000000d0cc";
    let rename = serde_json::json!({"jsonrpc": "2.0", "id": "r1", "method": "session/rename",
        "params": {"sessionId": "0198f0aa-1111-7000-8000-0000000000aa",
            "commandId": command, "name": "meanwhile"}});
    let renamed = serde_json::json!({"jsonrpc": "2.0", "id": "r1", "result":
        {"commandId": command, "status": "accepted"}});
    frames.insert(at, (true, rename));
    frames.insert(at + 1, (false, renamed));
}

fn resolve_by_host(frames: &mut Vec<(bool, serde_json::Value)>, error: Option<serde_json::Value>) {
    let decide = approval_decide_at(frames);
    match error {
        Some(error) => refuse(&mut frames[decide + 1].1, error),
        None => {
            frames.drain(decide..decide + 2);
        }
    }
    let resolved = frames
        .iter_mut()
        .find(|(_, f)| f["method"] == "approval/resolved")
        .unwrap();
    let params = resolved.1["params"].as_object_mut().unwrap();
    params.remove("decidedByCommandId");
    params.remove("amendment");
    params["decision"] = "timedOut".into();
    params["resolvedBy"] = "timeout".into();
    params["policyResult"] = "deny".into();
}

/// The `initialize` result a host double replies.
pub fn initialize_result() -> serde_json::Value {
    serde_json::json!({"schema": {"version": 1, "fingerprint": "sha256:x"}, "serverInfo": {"name": "double", "version": "0"}, "userAgent": "double", "museHome": "/h", "platformFamily": "unix", "platformOs": "linux"})
}

/// Three frames of session `s` to write at once, at cursors `n` to `n + 2`: an item started,
/// a question (a host request, id `n`) and another item started.
pub fn item_question_item(n: u32) -> String {
    let item = |n: u32| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"item/started","params":{{"sessionId":"s","viewCursor":"v:{n}","item":{{"itemId":"i{n}","kind":"agentMessage","revision":1,"status":"inProgress","turnId":"t"}}}}}}"#
        )
    };
    let question = format!(
        r#"{{"jsonrpc":"2.0","id":{n},"method":"userInput/request","params":{{"sessionId":"s","userInputId":"q{n}","turnId":"t","itemId":"i{n}","toolCallId":"c","toolName":"request_user_input","viewCursor":"v:{}","questions":[]}}}}"#,
        n + 1
    );
    format!("{}\n{question}\n{}\n", item(n), item(n + 2))
}

/// The `model/list` result a host double replies.
pub fn models() -> serde_json::Value {
    serde_json::json!({"models": [], "providerId": "fake", "source": "fakeCatalog"})
}

/// The methods a pipe test of the wire order expects: [`item_question_item`] twice.
pub const ITEM_QUESTION_ITEM_TWICE: [&str; 6] = [
    "item/started",
    "userInput/request",
    "item/started",
    "item/started",
    "userInput/request",
    "item/started",
];

/// The methods of the `Folded` events among `events`, in order.
pub fn folded_methods(events: &[msp_client::Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match event {
            msp_client::Event::Folded { input, .. } => input.method().map(str::to_owned),
            _ => None,
        })
        .collect()
}

/// The sessions listed two pages of one (`session/list` with `limit` 1, the second page asked
/// with the first's cursor), the session read with its items (`session/read`), then resumed
/// (as `compact-command-noop` records it) and unfollowed (`view/unsubscribe`).
pub fn listed_read_and_unfollowed() -> Option<tempfile::TempDir> {
    derived("compact-command-noop", |frames| {
        let request = |id: &str, method: &str, params: serde_json::Value| {
            let frame = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method,
                "params": params});
            (true, frame)
        };
        let reply = |id: &str, result: serde_json::Value| {
            (
                false,
                serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}),
            )
        };
        let resume = frames
            .iter()
            .position(|(client, f)| *client && f["method"] == "session/resume")
            .unwrap();
        let resumed = frames[resume + 1].1["result"].clone();
        let session = resumed["session"].clone();
        let mut other = session.clone();
        other["sessionId"] = "0198f0aa-1111-7000-8000-0000000000ab".into();
        let read = serde_json::json!({"history": resumed["history"],
            "pendingRequests": resumed["pendingRequests"], "session": session,
            "viewCursor": resumed["viewCursor"]});
        let id = session["sessionId"].clone();
        frames.truncate(resume + 2);
        frames.splice(
            resume..resume,
            [
                request("l1", "session/list", serde_json::json!({"limit": 1})),
                reply(
                    "l1",
                    serde_json::json!({"nextCursor": "page-2", "sessions": [session]}),
                ),
                request(
                    "l2",
                    "session/list",
                    serde_json::json!({"limit": 1, "cursor": "page-2"}),
                ),
                reply(
                    "l2",
                    serde_json::json!({"nextCursor": null, "sessions": [other]}),
                ),
                request(
                    "r1",
                    "session/read",
                    serde_json::json!({"sessionId": id, "excludeItems": false}),
                ),
                reply("r1", read),
            ],
        );
        frames.extend([
            request(
                "u1",
                "view/unsubscribe",
                serde_json::json!({"sessionId": id}),
            ),
            reply("u1", serde_json::json!({})),
        ]);
    })
}

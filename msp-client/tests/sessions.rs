//! The session API end to end against the canned host playing the shared transcripts: as a
//! child process over real pipes, and in this process over in-memory pipes. Each scenario
//! plays to the end (the host exits 0, or its in-process outcome is `Completed`).

mod support;

use std::time::Duration;

use msp_client::blocking::{Client, Session, Turn};
use msp_client::{
    render, Answer, AskError, Decision, Error, Event, HandlerStop, Resent, SettledBy, TurnOutcome,
};
use msp_rpc::canned::Outcome as Played;
use msp_rpc::{ExitKind, Retry, RpcError};
use msp_session::{Outcome, PendingApproval, Stage};
use msp_types::protocol::methods;
use msp_types::{
    ApprovalDecision, HistoryPreference, ItemStatus, SessionResumeParams, TurnTerminal,
    UserInputOutcome,
};

const WAIT: Option<Duration> = Some(Duration::from_secs(20));
/// The approval of the approval scenarios.
const APPROVAL: &str = "0198f0ac-7777-7000-8000-0000000000e1";
const SESSION: &str = "0198f0aa-1111-7000-8000-0000000000bb";

fn start(client: &Client) -> Session {
    let start = |id| {
        msp_types::SessionStartParams::builder()
            .command_id(id)
            .build()
    };
    client.start_session(start).expect("started").0
}

/// The text run over in-memory pipes: its session, and its turn started.
fn say_hello_in_memory() -> Option<(Client, support::InMemoryHost, Session, Turn)> {
    let scenario = support::scenario("text-run-single-turn")?;
    let (client, host) = support::in_memory(&scenario);
    let session = start(&client);
    let turn = session
        .send_user_turn([render::text("Say hello.")])
        .expect("turn started");
    Some((client, host, session, turn))
}

/// Starts a session and a turn against the canned host playing `scenario`.
fn start_a_turn(scenario: &std::path::Path) -> (Client, Session, Turn) {
    let client = support::spawn(scenario, &[]);
    let session = start(&client);
    let turn = session
        .send_user_turn([render::text("Bump the version.")])
        .expect("turn started");
    (client, session, turn)
}

/// Resumes session `session_id` asking for a snapshot.
fn resume_with_snapshot(
    client: &Client,
    session_id: &str,
) -> (Session, msp_types::SessionResumeResult) {
    client
        .resume_session_with(|command_id| {
            let mut params = SessionResumeParams::builder()
                .command_id(command_id)
                .session_id(session_id)
                .build();
            params.history = Some(HistoryPreference::Snapshot);
            params
        })
        .expect("resumed")
}

fn resume_excluding_items(client: &Client) -> (Session, String) {
    let (session, result) = client
        .resume_session_with(|command_id| {
            let mut params = SessionResumeParams::builder()
                .command_id(command_id)
                .session_id(SESSION)
                .build();
            params.exclude_items = Some(true);
            params
        })
        .expect("resumed");
    assert_eq!(result.pending_requests.len(), 1, "one question pending");
    let turn = result.session.active_turn_id.clone().expect("a turn runs");
    (session, turn)
}

/// The seed's recipe: resume, find the pending question, answer with an offered label, wait
/// for the settlement, say who settled it.
fn answer_the_pending_question(client: &Client) {
    let (session, turn_id) = resume_excluding_items(client);
    let prompt = session.next_prompt(WAIT).expect("the question");
    let question = &prompt.request().expect("its questions").questions[0];
    assert_eq!(question.id, "db_choice");
    // A label nobody offered is refused before anything is sent.
    let refused = session.answer(prompt.id(), [Answer::label(&question.id, "Oracle")]);
    assert!(
        matches!(&refused, Err(Error::Ask(AskError::NotOffered { label, .. })) if label == "Oracle"),
        "{refused:?}"
    );
    let ack = session
        .answer(prompt.id(), [Answer::label(&question.id, "Postgres")])
        .expect("accepted");
    let settlement = session.settled(prompt.id(), WAIT).expect("settled");
    assert_eq!(settlement.params.outcome, UserInputOutcome::Answered);
    assert_eq!(settlement.by, SettledBy::ThisClient(ack.command_id.clone()));
    assert_eq!(
        settlement.params.answers[0].selected_label.as_deref(),
        Some("Postgres")
    );
    // The turn the question held up goes on to its end.
    let turn = session.turn(&turn_id);
    let outcome = turn.completed_within(WAIT).expect("the turn ends");
    assert_eq!(outcome.terminal(), Some(&TurnTerminal::Completed));
}

#[test]
fn the_seed_recipe_over_a_child_process() {
    let Some(scenario) = support::scenario("userinput-answer-round-trip") else {
        return;
    };
    let client = support::spawn(&scenario, &[]);
    answer_the_pending_question(&client);
    let exit = client.close().expect("the host exited");
    assert_eq!(exit.code, Some(0), "{exit:?}");
}

#[test]
fn the_seed_recipe_over_in_memory_pipes() {
    let Some(scenario) = support::scenario("userinput-answer-round-trip") else {
        return;
    };
    let (client, host) = support::in_memory(&scenario);
    answer_the_pending_question(&client);
    drop(client);
    let (played, stderr) = host.join().unwrap();
    assert!(matches!(played, Played::Completed), "{played:?}\n{stderr}");
}

#[test]
fn a_cancelled_question_is_settled_cancelled_by_this_client() {
    let Some(scenario) = support::scenario("userinput-cancel-round-trip") else {
        return;
    };
    let client = support::spawn(&scenario, &[]);
    let (session, _) = resume_excluding_items(&client);
    let prompt = session.next_prompt(WAIT).expect("the question");
    let ack = session
        .cancel_prompt(prompt.id(), Some("not now"))
        .expect("accepted");
    let settlement = session.settled(prompt.id(), WAIT).expect("settled");
    assert_eq!(settlement.params.outcome, UserInputOutcome::Cancelled);
    assert_eq!(settlement.by, SettledBy::ThisClient(ack.command_id));
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
}

#[test]
fn a_resume_from_a_snapshot_shows_the_pending_question_at_once() {
    let Some(scenario) = support::scenario("snapshot-suffix-pending-userinput") else {
        return;
    };
    let client = support::spawn(&scenario, &[]);
    let (session, _) = resume_with_snapshot(&client, SESSION);
    // Seeded from the result: the snapshot's items and the pending question are there.
    let (items, pending) = session.read(|fold| (fold.items().len(), fold.pending_prompts().len()));
    assert!(items > 0, "the snapshot's items seed the fold");
    assert_eq!(pending, 1);
    // The snapshot's state is kept beside them, its items once: in the fold's items.
    let kept = session.read(|fold| fold.state().snapshot().map(|s| s.items.len()));
    assert_eq!(kept, Some(0));
    let prompt = session.next_prompt(WAIT).expect("its questions arrive");
    let question = &prompt.request().unwrap().questions[0];
    let label = question.options[0].label.clone();
    session
        .answer(prompt.id(), [Answer::label(&question.id, &label)])
        .expect("accepted");
    let settlement = session.settled(prompt.id(), WAIT).expect("settled");
    assert!(matches!(settlement.by, SettledBy::ThisClient(_)));
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
}

/// Once the host is gone, a wait for a question to answer ends with why, though the fold
/// still shows the question pending: nothing could be sent about it.
#[test]
fn a_question_pending_when_the_host_died_is_not_offered_after() {
    let Some(scenario) = support::scenario("snapshot-suffix-pending-userinput") else {
        return;
    };
    // The host exits 3 right after it asked the question again (line 6).
    let client = support::spawn(&scenario, &["--fault", "after 6: exit 3"]);
    let (session, _) = resume_with_snapshot(&client, SESSION);
    let reason = client.closed();
    assert_eq!(
        reason.host_exit().and_then(|e| e.code),
        Some(3),
        "{reason:?}"
    );
    assert_eq!(session.read(|fold| fold.pending_prompts().len()), 1);
    match session.next_prompt(WAIT) {
        Err(Error::Closed(closed)) => assert_eq!(closed, reason),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_turn_the_resumed_snapshot_shows_ran_and_ended_comes_back_ended() {
    // The snapshot holds the `userMessage` of an earlier turn, neither running nor queued:
    // that turn ended before the resume, and a wait on it (after resending its `turn/start`,
    // say) ends at once instead of waiting for a `turn/completed` that will not come.
    const EARLIER: &str = "0198f0aa-7777-7000-8000-0000000000e0";
    let Some(dir) = support::derived("snapshot-suffix-pending-userinput", |frames| {
        let result = frames
            .iter_mut()
            .find(|(client, f)| !*client && f["result"]["history"]["mode"] == "snapshot")
            .unwrap();
        let items = &mut result.1["result"]["history"]["snapshot"]["state"]["items"];
        let items = items.as_array_mut().unwrap();
        let mut earlier = items
            .iter()
            .find(|item| item["kind"] == "userMessage")
            .unwrap()
            .clone();
        earlier["itemId"] = "0198f0aa-7777-7000-8000-0000000000e1".into();
        earlier["turnId"] = EARLIER.into();
        items.insert(0, earlier);
    }) else {
        return;
    };
    let client = support::spawn(dir.path(), &[]);
    let (session, resumed) = resume_with_snapshot(&client, SESSION);
    let earlier = session.turn(EARLIER);
    let outcome = earlier.completed_within(WAIT).expect("ended");
    assert!(
        matches!(outcome, TurnOutcome::EndedBeforeResume(None)),
        "{outcome:?}"
    );
    // Its items are what the snapshot holds of it, and then nothing more comes.
    let items: Vec<String> = earlier.items().map(|i| i.item().item_id.clone()).collect();
    assert_eq!(items, ["0198f0aa-7777-7000-8000-0000000000e1"]);
    // The running turn is not taken for ended.
    let active = resumed.session.active_turn_id.clone().expect("a turn runs");
    let running = session
        .turn(&active)
        .completed_within(Some(Duration::from_millis(50)));
    assert!(
        matches!(running, Err(Error::TimedOut { .. })),
        "{running:?}"
    );
    drop((earlier, session));
    client.close();
}

#[test]
fn an_approval_is_decided_with_an_offered_choice_and_the_turn_ends() {
    let Some(scenario) = support::scenario("approval-round-trip") else {
        return;
    };
    let client = support::spawn(&scenario, &[]);
    let session = start(&client);
    let turn = session
        .send_user_turn([render::text("Run the tests.")])
        .expect("turn started");
    let approval = session.next_approval(WAIT).expect("the approval");
    let stage = approval.stage().expect("its stage");
    let offered: Vec<&str> = stage.choices.iter().map(|c| c.choice_id.as_str()).collect();
    assert!(offered.contains(&"allow_session"), "{offered:?}");
    println!("approve? {}", render::SubjectLine(stage.subject));
    let refused = session.decide(&approval, "allow_forever", None);
    assert!(
        matches!(refused, Err(Error::Ask(AskError::ChoiceNotOffered { .. }))),
        "{refused:?}"
    );
    let decided = session
        .decide(&approval, "allow_session", None)
        .expect("accepted");
    assert!(decided.terminal, "one stage");
    let resolved = session.resolved(approval.id(), WAIT).expect("resolved");
    assert_eq!(resolved.decision, ApprovalDecision::ApprovedForSession);
    let outcome = turn.completed_within(WAIT).expect("ends");
    assert_eq!(outcome.terminal(), Some(&TurnTerminal::Completed));
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
}

/// Two handles of one turn (a view and a log, say) each take every change on their own: the
/// second, opened on a thread while the turn streams, from the items the fold held then.
#[test]
fn each_handle_of_a_turn_takes_every_change_to_its_items() {
    let Some((client, host, session, turn)) = say_hello_in_memory() else {
        return;
    };
    let other = session.turn(turn.id());
    let (mine, theirs) = std::thread::scope(|scope| {
        let theirs = scope.spawn(|| other.items().collect::<Vec<_>>());
        let mine: Vec<_> = turn.items().collect();
        (mine, theirs.join().expect("the thread ran"))
    });
    let ids = |items: &[msp_session::ItemEntry]| {
        let mut ids: Vec<String> = items.iter().map(|i| i.id().to_owned()).collect();
        ids.dedup();
        ids.sort();
        ids.dedup();
        ids
    };
    assert!(ids(&mine).len() >= 2, "{mine:#?}");
    assert_eq!(ids(&mine), ids(&theirs));
    // Each ends with the reply as it stands at the end.
    let last = |items: &[msp_session::ItemEntry]| items.last().map(|i| i.item().status.clone());
    assert_eq!(last(&mine), Some(ItemStatus::Completed));
    assert_eq!(last(&theirs), Some(ItemStatus::Completed));
    drop((turn, other, session));
    drop(client);
    let (played, stderr) = host.join().unwrap();
    assert!(matches!(played, Played::Completed), "{played:?}\n{stderr}");
}

#[test]
fn a_streamed_turn_gives_its_items_with_their_text_as_they_change() {
    let Some((client, host, session, turn)) = say_hello_in_memory() else {
        return;
    };
    let mut lines = Vec::new();
    for item in turn.items() {
        lines.push(render::ItemLine(&item).to_string());
    }
    // Followed from the command; changes not taken yet coalesce into the item as it stands.
    assert!(lines.len() >= 2, "{lines:#?}");
    assert!(lines[0].starts_with("userMessage completed"), "{lines:#?}");
    assert!(
        lines.iter().any(|l| l.starts_with("agentMessage ")),
        "{lines:#?}"
    );
    let last = session.read(|fold| fold.items().last().cloned()).unwrap();
    assert_eq!(last.item().status, ItemStatus::Completed);
    assert!(matches!(turn.completed(), TurnOutcome::Ended(_)));
    // Every event of the session came through its stream, in order, the turn's end last.
    let events: Vec<Event> =
        std::iter::from_fn(|| session.next_event_timeout(Duration::ZERO).ok().flatten()).collect();
    assert!(events.iter().any(|e| matches!(
        e,
        Event::Folded {
            outcome: Outcome::Delta { .. },
            ..
        }
    )));
    assert!(matches!(
        events.last(),
        Some(Event::Folded {
            outcome: Outcome::Turn { .. },
            ..
        })
    ));
    drop(session);
    drop(client);
    let (played, stderr) = host.join().unwrap();
    assert!(matches!(played, Played::Completed), "{played:?}\n{stderr}");
}

/// The text run against a host that exits 3 right after the turn's first delta (line 12):
/// its session, and its turn started.
fn dying_mid_turn() -> Option<(Client, Session, Turn)> {
    let scenario = support::scenario("text-run-single-turn")?;
    let client = support::spawn(&scenario, &["--fault", "after 12: exit 3"]);
    let session = start(&client);
    let turn = session
        .send_user_turn([render::text("Say hello.")])
        .expect("turn started");
    Some((client, session, turn))
}

#[test]
fn a_host_dying_mid_turn_ends_the_turn_with_the_classified_exit() {
    let Some((_client, session, turn)) = dying_mid_turn() else {
        return;
    };
    let TurnOutcome::HostExited(reason) = turn.completed() else {
        panic!("the host died before the turn ended");
    };
    let exit = reason.host_exit().expect("the host's exit");
    assert_eq!(exit.code, Some(3), "{exit:?}");
    // Later commands fail with the same exit, at once.
    let late = session.interrupt(Some(turn.id()), false);
    match late {
        Err(Error::Rpc(msp_rpc::RpcError::Closed(closed))) => {
            assert_eq!(closed.host_exit(), Some(exit), "the same exit");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        session.events().count() > 0,
        "the events before the death are kept"
    );
}

/// A program waiting for its host to die (to restart it) learns why while its client is
/// open, and closing after gives the same exit.
#[test]
fn a_host_dying_is_waited_for_on_the_client_with_its_classified_exit() {
    let Some((client, session, turn)) = dying_mid_turn() else {
        return;
    };
    let reason = client.closed();
    let exit = reason.host_exit().expect("the host's exit").clone();
    assert_eq!(
        (exit.code, exit.kind, exit.retry()),
        (Some(3), ExitKind::ConfigError, Retry::AfterConfigFix),
        "{exit}"
    );
    assert!(matches!(turn.completed(), TurnOutcome::HostExited(_)));
    drop((turn, session));
    assert_eq!(client.close(), Some(exit));
}

#[test]
fn a_gap_is_refilled_from_view_page_for_the_session() {
    let Some(scenario) = support::scenario("gap-recovery-splice-fill") else {
        return;
    };
    // The recording's client sent a member of a future schema this client does not know.
    let client = support::spawn(&scenario, &["--allow", "view/page#/futureOptionalField"]);
    let session_id = "0198f0aa-fixture-session";
    let session = client.open_session(session_id);
    session
        .subscribe(Some("v:0198f0aa-fixture-session:4"))
        .expect("subscribed");
    let refilled = session
        .events()
        .find_map(|event| match event {
            Event::Refilled { outcomes } => Some(outcomes),
            _ => None,
        })
        .expect("the gap was refilled");
    assert!(!refilled.is_empty());
    session.read(|fold| {
        assert!(fold.item("item-7").is_some(), "the page filled the hole");
        assert!(fold.is_current(), "{:?}", fold.gap());
    });
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
}

#[test]
fn a_timed_out_command_is_sent_again_with_the_same_command_id() {
    use std::io::{BufRead, BufReader, Write};
    let (client_reader, mut host_writer) = msp_rpc::pipe::pipe();
    let (host_reader, client_writer) = msp_rpc::pipe::pipe();
    // A host that lets the first turn/interrupt go unanswered and answers the second.
    let host = std::thread::spawn(move || {
        let mut ids = Vec::new();
        for line in BufReader::new(host_reader).lines() {
            let frame: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
            let reply = match frame["method"].as_str() {
                Some("initialize") => {
                    serde_json::json!({"schema": {"version": 1, "fingerprint": "sha256:x"}, "serverInfo": {"name": "double", "version": "0"}, "userAgent": "double", "museHome": "/h", "platformFamily": "unix", "platformOs": "linux"})
                }
                Some("turn/interrupt") => {
                    ids.push(frame["params"]["commandId"].as_str().unwrap().to_owned());
                    if ids.len() == 1 {
                        continue;
                    }
                    serde_json::json!({"commandId": ids[0], "status": "accepted", "turnId": "t"})
                }
                _ => continue,
            };
            let response =
                serde_json::json!({"jsonrpc": "2.0", "id": frame["id"], "result": reply});
            writeln!(host_writer, "{response}").unwrap();
        }
        ids
    });
    let options = support::options().connection(
        msp_rpc::Options::new()
            .timeout_for::<msp_types::protocol::methods::TurnInterrupt>(Duration::from_millis(200)),
    );
    let client = Client::over(client_reader, client_writer, options).expect("handshake");
    let session = client.open_session("s");
    let ack = session.interrupt(None, false);
    drop(session);
    drop(client);
    let ids = host.join().unwrap();
    assert_eq!(ids.len(), 2, "sent twice");
    assert_eq!(ids[0], ids[1], "with one commandId");
    assert!(ack.is_ok(), "{ack:?}");
}

/// A resume whose history is of a mode this client does not know is paged from the view's
/// oldest event up to its head before `resume_session` returns: the session shows what
/// the pages served and is current.
#[test]
fn a_resume_whose_history_is_of_an_unknown_mode_is_paged_before_it_returns() {
    use std::io::{BufRead, BufReader, Write};
    let (client_reader, mut host_writer) = msp_rpc::pipe::pipe();
    let (host_reader, client_writer) = msp_rpc::pipe::pipe();
    let range = serde_json::json!({"stream": {"kind": "run", "id": "t1"},
        "first": {"id": "r1", "sequence": 1}, "last": {"id": "r1", "sequence": 1}});
    let item = move |n: u32| {
        serde_json::json!({"method": "item/completed", "params": {"sessionId": "s",
            "viewCursor": format!("v:s:{n}"), "sourceRange": range,
            "item": {"itemId": format!("i{n}"), "kind": "agentMessage", "revision": 1,
                "status": "completed", "turnId": "t"}}})
    };
    let host = std::thread::spawn(move || {
        let mut pages = Vec::new();
        for line in BufReader::new(host_reader).lines() {
            let frame: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
            let result = match frame["method"].as_str() {
                Some("initialize") => {
                    serde_json::json!({"schema": {"version": 1, "fingerprint": "sha256:x"}, "serverInfo": {"name": "double", "version": "0"}, "userAgent": "double", "museHome": "/h", "platformFamily": "unix", "platformOs": "linux"})
                }
                Some("session/resume") => serde_json::json!({
                    "session": {"sessionId": "s", "path": "/s", "workspaceRoot": "/w",
                        "status": "idle", "createdAt": "t", "updatedAt": "t", "turnCount": 0,
                        "modelId": null, "providerId": null, "forkedFrom": null,
                        "activeTurnId": null},
                    "history": {"mode": "streamed", "items": null, "snapshot": null},
                    "pendingRequests": [], "viewCursor": "v:s:2"}),
                Some("view/page") => {
                    pages.push(frame["params"].clone());
                    serde_json::json!({"events": [item(1), item(2)], "nextCursor": null})
                }
                _ => continue,
            };
            let response =
                serde_json::json!({"jsonrpc": "2.0", "id": frame["id"], "result": result});
            writeln!(host_writer, "{response}").unwrap();
        }
        pages
    });
    let client = Client::over(client_reader, client_writer, support::options()).expect("handshake");
    let (session, _) = client.resume_session("s").expect("resumed");
    session.read(|fold| {
        let ids: Vec<_> = fold.items().iter().map(|i| i.id().to_owned()).collect();
        assert_eq!(ids, ["i1", "i2"]);
        assert!(fold.is_current(), "{:?}", fold.gap());
    });
    drop(session);
    drop(client);
    let pages = host.join().unwrap();
    assert_eq!(pages.len(), 1, "{pages:?}");
    assert_eq!(pages[0].get("cursor"), None, "from the oldest event");
}

/// An attempt that timed out may have been applied: when every later attempt is refused for
/// now (`overloaded`), the command's outcome is still unknown, and it stays pending.
#[test]
fn a_command_refused_for_now_after_a_timed_out_attempt_stays_pending() {
    use std::io::{BufRead, BufReader, Write};
    let (client_reader, mut host_writer) = msp_rpc::pipe::pipe();
    let (host_reader, client_writer) = msp_rpc::pipe::pipe();
    // A host that lets the first turn/interrupt go unanswered and refuses the others as
    // overloaded.
    let host = std::thread::spawn(move || {
        let mut ids = Vec::new();
        for line in BufReader::new(host_reader).lines() {
            let frame: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
            let reply = match frame["method"].as_str() {
                Some("initialize") => {
                    serde_json::json!({"result": {"schema": {"version": 1, "fingerprint": "sha256:x"}, "serverInfo": {"name": "double", "version": "0"}, "userAgent": "double", "museHome": "/h", "platformFamily": "unix", "platformOs": "linux"}})
                }
                Some("turn/interrupt") => {
                    ids.push(frame["params"]["commandId"].as_str().unwrap().to_owned());
                    if ids.len() == 1 {
                        continue;
                    }
                    serde_json::json!({"error": {"code": -32001, "message": "overloaded"}})
                }
                _ => continue,
            };
            let mut response = reply;
            response["jsonrpc"] = "2.0".into();
            response["id"] = frame["id"].clone();
            writeln!(host_writer, "{response}").unwrap();
        }
        ids
    });
    let retry = msp_client::Retry {
        attempts: 3,
        backoff: Duration::from_millis(1),
    };
    let options = support::options().retry(retry).connection(
        msp_rpc::Options::new().timeout_for::<methods::TurnInterrupt>(Duration::from_millis(200)),
    );
    let client = Client::over(client_reader, client_writer, options).expect("handshake");
    let session = client.open_session("s");
    match session.interrupt(None, false) {
        Err(Error::Rpc(msp_rpc::RpcError::Remote(remote))) => assert_eq!(remote.code(), -32001),
        other => panic!("{other:?}"),
    }
    let pending = session.pending();
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert_eq!(pending[0].method(), "turn/interrupt");
    drop(session);
    drop(client);
    let ids = host.join().unwrap();
    assert_eq!(ids.len(), 3, "sent three times");
    assert!(
        ids.iter().all(|id| *id == pending[0].command_id()),
        "{ids:?}"
    );
}

/// Retries follow the registry: a command refused as `overloaded` (retryable) is sent again
/// with its `commandId` and acknowledged; one refused as `commandRejected` (not retryable)
/// is sent once and fails. The same command sent again by the program, acknowledged
/// otherwise than the first time, is `ReplayDiffers`.
#[test]
fn a_command_is_sent_again_only_on_a_retryable_error_and_a_differing_replay_is_an_error() {
    use std::io::{BufRead, BufReader, Write};
    use std::sync::mpsc::channel;
    let (client_reader, mut host_writer) = msp_rpc::pipe::pipe();
    let (host_reader, client_writer) = msp_rpc::pipe::pipe();
    let (sent, sends) = channel();
    // Refuses the first turn/interrupt as overloaded, acknowledges the second (turn `t`) and
    // then another turn; refuses every turn/unqueue as rejected.
    std::thread::spawn(move || {
        let mut interrupts = 0;
        for line in BufReader::new(host_reader).lines() {
            let frame: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
            let method = frame["method"].as_str().unwrap_or_default().to_owned();
            let command_id = frame["params"]["commandId"].clone();
            let reply = match method.as_str() {
                "initialize" => {
                    serde_json::json!({"result": {"schema": {"version": 1, "fingerprint": "sha256:x"}, "serverInfo": {"name": "double", "version": "0"}, "userAgent": "double", "museHome": "/h", "platformFamily": "unix", "platformOs": "linux"}})
                }
                "turn/interrupt" => {
                    interrupts += 1;
                    match interrupts {
                        1 => {
                            serde_json::json!({"error": {"code": -32001, "message": "overloaded"}})
                        }
                        n => {
                            serde_json::json!({"result": {"commandId": command_id, "status": "accepted", "turnId": if n == 2 { "t" } else { "t2" }}})
                        }
                    }
                }
                "turn/unqueue" => {
                    serde_json::json!({"error": {"code": -32030, "message": "rejected"}})
                }
                _ => continue,
            };
            if method != "initialize" {
                sent.send((method, command_id.as_str().unwrap().to_owned()))
                    .unwrap();
            }
            let mut response = reply;
            response["jsonrpc"] = "2.0".into();
            response["id"] = frame["id"].clone();
            writeln!(host_writer, "{response}").unwrap();
        }
    });
    let retry = msp_client::Retry {
        attempts: 3,
        backoff: Duration::from_millis(1),
    };
    let client = Client::over(
        client_reader,
        client_writer,
        support::options().retry(retry),
    )
    .expect("handshake");
    let session = client.open_session("s");
    let interrupt = msp_rpc::Command::<methods::TurnInterrupt>::new(|command_id| {
        msp_types::TurnInterruptParams::builder()
            .command_id(command_id)
            .session_id("s")
            .build()
    });
    let ack = session
        .send(&interrupt)
        .expect("acknowledged on the second send");
    assert_eq!(ack.turn_id, "t");
    let id = interrupt.command_id().to_owned();
    let first_two: Vec<_> = sends.iter().take(2).collect();
    let again = ("turn/interrupt".to_owned(), id.clone());
    assert_eq!(
        first_two,
        [again.clone(), again.clone()],
        "sent again, same id"
    );

    let refused = session.unqueue("t");
    match refused {
        Err(Error::Rpc(msp_rpc::RpcError::Remote(remote))) => assert_eq!(remote.code(), -32030),
        other => panic!("{other:?}"),
    }
    let (method, _) = sends.recv().unwrap();
    assert_eq!(method, "turn/unqueue");

    let replayed = session.send(&interrupt);
    assert!(
        matches!(&replayed, Err(Error::ReplayDiffers { command_id, .. }) if *command_id == id),
        "{replayed:?}"
    );
    // Sent once after the refused unqueue: nothing else came between.
    assert_eq!(sends.recv().unwrap(), again);
    drop(session);
    drop(client);
    assert!(sends.try_recv().is_err(), "the unqueue was sent once");
}

/// The question of `userinput-answer-round-trip`.
const QUESTION: &str = "0198f0ae-1111-7000-8000-0000000000f1";

/// `userinput-answer-round-trip` with its answer replaced: `edit` changes the answer's
/// frame, or returns `false` to remove it with its acknowledgement (another client or the
/// host settles); `settle` sets the settlement's params.
fn settled_otherwise(
    edit: impl FnOnce(&mut serde_json::Value) -> bool,
    settle: impl FnOnce(&mut serde_json::Value),
) -> Option<tempfile::TempDir> {
    support::derived("userinput-answer-round-trip", |frames| {
        let answer = frames
            .iter()
            .position(|(client, f)| *client && f["method"] == "userInput/answer")
            .unwrap();
        if !edit(&mut frames[answer].1) {
            frames.drain(answer..=answer + 1);
            // Nor does this client page the items it resumed with: the host goes on at once.
            let page = frames
                .iter()
                .position(|(client, f)| *client && f["method"] == "view/page")
                .unwrap();
            frames.drain(page..=page + 1);
        }
        let settled = frames
            .iter_mut()
            .find(|(_, f)| f["method"] == "userInput/settled")
            .unwrap();
        settle(&mut settled.1["params"]);
    })
}

/// `settled` says how a prompt ended and who ended it: clarified by this client
/// (`Session::clarify`), answered by another client, timed out by the host.
#[test]
fn a_settlement_names_how_and_who_clarified_here_answered_elsewhere_timed_out() {
    let clarified = settled_otherwise(
        |answer| {
            answer["method"] = "userInput/clarify".into();
            let params = answer["params"].as_object_mut().unwrap();
            params.remove("answers");
            params.insert(
                "clarification".into(),
                serde_json::json!({"content": "Which one is cheaper to run?", "format": "text"}),
            );
            true
        },
        |params| {
            params["outcome"] = "clarified".into();
            params["answers"] = serde_json::json!([]);
            params["clarification"] =
                serde_json::json!({"content": "Which one is cheaper to run?", "format": "text"});
        },
    );
    let Some(clarified) = clarified else {
        return;
    };
    let elsewhere = settled_otherwise(
        |_| false,
        |params| params["decidedByCommandId"] = "0198f0ff-0000-7000-8000-00000000e1se".into(),
    )
    .unwrap();
    let timed_out = settled_otherwise(
        |_| false,
        |params| {
            params["outcome"] = "timedOut".into();
            params["answers"] = serde_json::json!([]);
            params["decidedByCommandId"] = serde_json::Value::Null;
        },
    )
    .unwrap();
    let allow = ["--allow", "session/resume#/excludeItems"];

    let client = support::spawn(clarified.path(), &allow);
    let (session, _) = resume_with_items(&client);
    let prompt = session.next_prompt(WAIT).expect("the question");
    let clarification: msp_types::UserInputClarification = serde_json::from_value(
        serde_json::json!({"content": "Which one is cheaper to run?", "format": "text"}),
    )
    .unwrap();
    let ack = session
        .clarify(prompt.id(), clarification)
        .expect("clarified");
    let settled = session.settled(prompt.id(), WAIT).expect("settled");
    assert_eq!(settled.params.outcome, UserInputOutcome::Clarified);
    assert_eq!(settled.by, SettledBy::ThisClient(ack.command_id));
    drop(session);
    assert_eq!(client.close().and_then(|e| e.code), Some(0));

    for (dir, outcome, by) in [
        (
            &elsewhere,
            UserInputOutcome::Answered,
            SettledBy::Elsewhere("0198f0ff-0000-7000-8000-00000000e1se".into()),
        ),
        (&timed_out, UserInputOutcome::TimedOut, SettledBy::Host),
    ] {
        let client = support::spawn(dir.path(), &allow);
        let (session, _) = resume_with_items(&client);
        // Settled right after it was asked: the question may be over before the program
        // looks for it (its events come in wire order), so it is named.
        let settled = session.settled(QUESTION, WAIT).expect("settled");
        assert_eq!((settled.params.outcome, settled.by), (outcome, by));
        drop(session);
        assert_eq!(client.close().and_then(|e| e.code), Some(0));
    }
}

/// The session of `userinput-answer-round-trip`, resumed with its items (the recording's
/// client excluded them and paged them in: allowed to differ there).
fn resume_with_items(client: &Client) -> (Session, msp_types::SessionResumeResult) {
    client
        .resume_session_with(|command_id| {
            SessionResumeParams::builder()
                .command_id(command_id)
                .session_id(SESSION)
                .build()
        })
        .expect("resumed")
}

/// `Session::steer` and `Turn::interrupt` on a running turn, each acknowledged with the
/// turn they name (the text run with the two commands put after its `turn/started`; the
/// host checks each as recorded, the turn's id bound to this client's `turn/start`).
#[test]
fn a_running_turn_is_steered_and_interrupted() {
    const STEER: &str = "0198f0ab-5151-7000-8000-0000000000d1";
    const INTERRUPT: &str = "0198f0ab-5151-7000-8000-0000000000d2";
    let dir = support::derived("text-run-single-turn", |frames| {
        let start = frames
            .iter()
            .position(|(client, f)| *client && f["method"] == "turn/start")
            .unwrap();
        let params = frames[start].1["params"].clone();
        let (session, turn) = (&params["sessionId"], &params["commandId"]);
        let started = support::turn_started_at(frames);
        let ack = |id: u64, command: &str| {
            let result =
                serde_json::json!({"commandId": command, "status": "accepted", "turnId": turn});
            (
                false,
                serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}),
            )
        };
        let steer = serde_json::json!({"jsonrpc": "2.0", "id": 4, "method": "turn/steer",
            "params": {"sessionId": session, "commandId": STEER, "expectedTurnId": turn,
                "input": [{"type": "text", "text": "Only the failing crate."}]}});
        let interrupt = serde_json::json!({"jsonrpc": "2.0", "id": 5, "method": "turn/interrupt",
            "params": {"sessionId": session, "commandId": INTERRUPT, "turnId": turn}});
        let inserted = [
            (true, steer),
            ack(4, STEER),
            (true, interrupt),
            ack(5, INTERRUPT),
        ];
        frames.splice(started + 1..started + 1, inserted);
    });
    let Some(dir) = dir else {
        return;
    };
    let (client, session, turn) = start_a_turn(dir.path());
    let steered = session
        .steer(turn.id(), [render::text("Only the failing crate.")])
        .expect("steered");
    assert_eq!(steered.turn_id, turn.id());
    let interrupted = turn.interrupt(false).expect("interrupted");
    assert_eq!(interrupted.turn_id, turn.id());
    assert_ne!(steered.command_id, interrupted.command_id);
    drop((turn, session));
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
}

/// What the host says naming no session (its subscription usage) is the client's own
/// event, not a session's.
#[test]
fn a_notification_naming_no_session_is_the_clients_own_event() {
    let Some(dir) = support::usage_during_turn() else {
        return;
    };
    let (client, session, turn) = start_a_turn(dir.path());
    assert!(matches!(turn.completed(), TurnOutcome::Ended(_)));
    match client.next_event_timeout(Duration::from_secs(10)) {
        Ok(Some(Event::Folded { input, .. })) => {
            assert_eq!(input.method(), Some("usage/changed"));
        }
        other => panic!("{other:?}"),
    }
    let routed = std::iter::from_fn(|| session.next_event_timeout(Duration::ZERO).ok().flatten());
    let methods = support::folded_methods(&routed.collect::<Vec<_>>());
    assert!(!methods.iter().any(|m| m == "usage/changed"), "{methods:?}");
    drop((turn, session));
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
}

/// A running turn interrupted and retracted: its outcome says so.
#[test]
fn a_retracted_turn_ends_retracted() {
    let Some(dir) = support::retracted_turn() else {
        return;
    };
    let (client, session, turn) = start_a_turn(dir.path());
    let interrupted = turn.interrupt(true).expect("interrupted");
    assert_eq!(interrupted.turn_id, turn.id());
    assert!(matches!(turn.completed(), TurnOutcome::Retracted));
    drop((turn, session));
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
}

/// The approval round trip with a second stage: the first decision is not terminal, the
/// host moves the approval to requirement 1 (`approval/updated`), and that one is decided
/// (`allow_session`, then `allow_once`). `stale`: the first decision is refused instead, the
/// host having moved on to requirement 1 (`approvalRequirementStale`).
fn two_stages(stale: bool) -> Option<tempfile::TempDir> {
    support::derived("approval-round-trip", |frames| {
        let decide = support::approval_decide_at(frames);
        let [updated, second, answer] = second_stage(frames, decide);
        frames[decide + 1].1["result"]["terminal"] = false.into();
        if stale {
            refuse_as_stale(&mut frames[decide + 1].1);
        }
        frames.insert(decide + 2, updated);
        frames.insert(decide + 3, second);
        frames.insert(decide + 4, answer);
    })
}

/// For the approval round trip's decision at `decide`: the approval's update to a second
/// stage, the client's decision of that stage (`allow_once`) and its terminal
/// acknowledgement.
fn second_stage(
    frames: &[(bool, serde_json::Value)],
    decide: usize,
) -> [(bool, serde_json::Value); 3] {
    let request = frames[support::approval_request_at(frames)].1["params"].clone();
    let mut updated =
        serde_json::json!({"jsonrpc": "2.0", "method": "approval/updated", "params": request});
    let params = &mut updated["params"];
    params["viewCursor"] = "v:0198f0aa-1111-7000-8000-0000000000aa:7.1".into();
    params["currentRequirementId"]["sourceIndex"] = 1.into();
    params["change"] = serde_json::json!({"kind": "stageSatisfied"});
    let mut second = frames[decide].1.clone();
    second["id"] = "b10".into();
    second["params"]["commandId"] = "018f6a2a-3333-7abc-8def-00000000d0aa".into();
    second["params"]["requirementId"]["sourceIndex"] = 1.into();
    second["params"]["choiceId"] = "allow_once".into();
    let mut answer = frames[decide + 1].1.clone();
    answer["id"] = "b10".into();
    answer["result"]["commandId"] = "018f6a2a-3333-7abc-8def-00000000d0aa".into();
    answer["result"]["terminal"] = true.into();
    [(false, updated), (true, second), (false, answer)]
}

/// `ack`, an acknowledgement, made the host's refusal of a stage it moved past.
fn refuse_as_stale(ack: &mut serde_json::Value) {
    let error = serde_json::json!({
        "code": -32053,
        "message": "the approval moved on",
        "data": {"kind": "approvalRequirementStale"}
    });
    support::refuse(ack, error);
}

/// The approval round trip where the approval moves to a second stage while the handler
/// decides the first: the handler renames the session meanwhile, and the host sends the
/// update only after that; the decision of the first stage is refused as stale, and the
/// second stage is decided.
fn moved_while_deciding() -> Option<tempfile::TempDir> {
    support::derived("approval-round-trip", |frames| {
        let request = support::approval_request_at(frames);
        let decide = support::approval_decide_at(frames);
        let [updated, second, answer] = second_stage(frames, decide);
        refuse_as_stale(&mut frames[decide + 1].1);
        frames.insert(decide + 2, second);
        frames.insert(decide + 3, answer);
        // After the receipt of the request, the rename, then the update.
        frames.insert(request + 2, updated);
        support::insert_rename(frames, request + 2);
    })
}

#[test]
fn a_handlers_decision_names_the_stage_it_was_offered_though_the_fold_moved_on() {
    let Some(dir) = moved_while_deciding() else {
        return;
    };
    let (client, session, turn) = start_a_turn(dir.path());
    let mut offered = Vec::new();
    let outcome = turn
        .completed_deciding(|approval, stage| {
            offered.push(stage.requirement.source_index);
            if stage.requirement.source_index > 0 {
                return Some(Decision::choose("allow_once"));
            }
            // The host moves the approval on before this decision is sent.
            session.rename("meanwhile").expect("renamed");
            let moved = |fold: &msp_session::Fold| {
                let stage = fold.pending_approval(approval.id())?.stage()?;
                (stage.requirement.source_index == 1).then_some(())
            };
            session.wait_for(WAIT, moved).expect("the update");
            Some(Decision::choose("allow_session"))
        })
        .expect("a stale stage is not an error");
    assert_eq!(offered, [0, 1], "the first stage as offered, then the next");
    assert_eq!(outcome.terminal(), Some(&TurnTerminal::Completed));
    drop((turn, session));
    let exit = client.close();
    assert_eq!(exit.as_ref().and_then(|e| e.code), Some(0), "{exit:?}");
}

#[test]
fn a_decision_names_the_stage_the_program_saw_not_the_one_the_host_moved_to() {
    let Some(dir) = moved_while_deciding() else {
        return;
    };
    let (client, session, turn) = start_a_turn(dir.path());
    let first = session.next_approval(WAIT).expect("the first stage");
    assert_eq!(first.stage().unwrap().requirement.source_index, 0);
    // The host moves the approval on before the program decides what it was shown.
    session.rename("meanwhile").expect("renamed");
    let moved = |fold: &msp_session::Fold| {
        let stage = fold.pending_approval(first.id())?.stage()?;
        (stage.requirement.source_index == 1).then_some(())
    };
    session.wait_for(WAIT, moved).expect("the update");
    // `allow_session` is offered at both stages: the decision is still the first's, and the
    // host refuses it as stale (the transcript expects `requirementId` 0 here).
    let stale = session.decide(&first, "allow_session", None);
    let Err(Error::Rpc(RpcError::Remote(refusal))) = stale else {
        panic!("refused as stale: {stale:?}");
    };
    assert_eq!(refusal.kind(), Some("approvalRequirementStale"));
    let second = session.next_approval(WAIT).expect("the second stage");
    assert_eq!(second.stage().unwrap().requirement.source_index, 1);
    let ack = session
        .decide(&second, "allow_once", None)
        .expect("accepted");
    assert!(ack.terminal);
    assert!(matches!(turn.completed(), TurnOutcome::Ended(_)));
    // Resolved: a decision of it is refused before anything is sent.
    session.resolved(second.id(), WAIT).expect("resolved");
    let late = session.decide(&second, "allow_once", None);
    assert!(
        matches!(late, Err(Error::Ask(AskError::UnknownApproval { .. }))),
        "{late:?}"
    );
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
}

/// The approval round trip where the host changes the stage's choices (same requirement,
/// `allow_session` no longer offered) while the handler decides
/// ([`support::change_choices_once_renamed`]), and the handler's `allow_session`, sent
/// before its `allow_once` of the changed stage, is refused as `approvalChoiceInvalid`.
fn choices_changed_while_deciding() -> Option<tempfile::TempDir> {
    support::derived("approval-round-trip", |frames| {
        support::change_choices_once_renamed(frames);
        // The recorded decision sends `allow_session` and is refused; the `allow_once` the
        // edit made it comes next, as another command.
        let [accepted, ack] = support::refuse_allow_session(frames);
        let decide = support::approval_decide_at(frames);
        frames.insert(decide + 2, accepted);
        frames.insert(decide + 3, ack);
    })
}

#[test]
fn a_handlers_stage_whose_choices_changed_is_offered_again_with_them() {
    let Some(dir) = choices_changed_while_deciding() else {
        return;
    };
    let (client, session, turn) = start_a_turn(dir.path());
    let mut offered = Vec::new();
    let outcome = turn
        .completed_deciding(|_, stage| {
            let choices: Vec<_> = stage.choices.iter().map(|c| c.choice_id.clone()).collect();
            offered.push((stage.requirement.source_index, choices));
            if offered.len() > 1 {
                return Some(Decision::choose("allow_once"));
            }
            // The host changes the stage's choices before this decision is sent.
            session.rename("meanwhile").expect("renamed");
            let changed = |fold: &msp_session::Fold| {
                let stage = fold.pending_approval(APPROVAL)?.stage()?;
                (stage.choices.len() == 2).then_some(())
            };
            session.wait_for(WAIT, changed).expect("the update");
            Some(Decision::choose("allow_session"))
        })
        .expect("a changed stage is not an error");
    let choices = |ids: &[&str]| ids.iter().map(|id| id.to_string()).collect::<Vec<_>>();
    assert_eq!(
        offered,
        [
            (0, choices(&["allow_once", "allow_session", "abort"])),
            (0, choices(&["allow_once", "abort"])),
        ],
        "the stage, then the same stage with its new choices"
    );
    assert_eq!(outcome.terminal(), Some(&TurnTerminal::Completed));
    drop((turn, session));
    let exit = client.close();
    assert_eq!(exit.as_ref().and_then(|e| e.code), Some(0), "{exit:?}");
}

/// A decision refused as `approvalChoiceInvalid` with the host's change of the stage's
/// choices after the refusal on the wire: the handler goes on, and is offered the stage
/// again with them.
#[test]
fn a_stage_refused_before_its_change_arrives_is_offered_again_once_it_does() {
    let Some(dir) = support::refused_before_the_change() else {
        return;
    };
    let (client, session, turn) = start_a_turn(dir.path());
    let mut offered = Vec::new();
    let outcome = turn
        .completed_deciding(|_, stage| {
            let choices: Vec<_> = stage.choices.iter().map(|c| c.choice_id.clone()).collect();
            offered.push(choices);
            let choice = if offered.len() == 1 {
                "allow_session"
            } else {
                "allow_once"
            };
            Some(Decision::choose(choice))
        })
        .expect("a refused choice is not the handler's end");
    let choices = |ids: &[&str]| ids.iter().map(|id| id.to_string()).collect::<Vec<_>>();
    assert_eq!(
        offered,
        [
            choices(&["allow_once", "allow_session", "abort"]),
            choices(&["allow_once", "abort"]),
        ],
        "the stage, then (once the change came) the same stage with its new choices"
    );
    assert_eq!(outcome.terminal(), Some(&TurnTerminal::Completed));
    drop((turn, session));
    let exit = client.close();
    assert_eq!(exit.as_ref().and_then(|e| e.code), Some(0), "{exit:?}");
}

#[test]
fn a_multi_stage_approval_is_decided_stage_by_stage_until_terminal() {
    let Some(dir) = two_stages(false) else {
        return;
    };
    let (client, session, turn) = start_a_turn(dir.path());
    let mut decided = Vec::new();
    loop {
        let approval = session.next_approval(WAIT).expect("a stage to decide");
        let stage = approval.stage().unwrap();
        let choice = if decided.is_empty() {
            "allow_session"
        } else {
            "allow_once"
        };
        let ack = session.decide(&approval, choice, None).expect("accepted");
        decided.push(stage.requirement.source_index);
        if ack.terminal {
            break;
        }
    }
    assert_eq!(decided, [0, 1], "each stage once, in order");
    assert!(matches!(turn.completed(), TurnOutcome::Ended(_)));
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
}

#[test]
fn a_turns_approvals_loop_takes_each_stage_until_the_turn_ends() {
    // The README's approvals recipe, on an approval of two stages.
    let Some(dir) = two_stages(false) else {
        return;
    };
    let (client, session, turn) = start_a_turn(dir.path());
    let mut decided = Vec::new();
    while let Some(approval) = turn.next_approval().expect("the turn's approvals") {
        let stage = approval.stage().expect("a stage to decide");
        let choice = if decided.is_empty() {
            "allow_session"
        } else {
            "allow_once"
        };
        let ack = session.decide(&approval, choice, None).expect("accepted");
        decided.push((stage.requirement.source_index, ack.terminal));
    }
    assert_eq!(
        decided,
        [(0, false), (1, true)],
        "each stage once, in order"
    );
    assert_eq!(turn.completed().terminal(), Some(&TurnTerminal::Completed));
    drop((turn, session));
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
}

#[test]
fn a_handler_decides_each_stage_once_until_the_turn_ends() {
    handler_decides_two_stages(false);
}

#[test]
fn a_handler_whose_stage_went_stale_decides_the_next_one() {
    handler_decides_two_stages(true);
}

fn handler_decides_two_stages(stale: bool) {
    let Some(dir) = two_stages(stale) else {
        return;
    };
    let (client, _, turn) = start_a_turn(dir.path());
    let mut stages = Vec::new();
    let outcome = turn
        .completed_deciding(|approval, stage| {
            stages.push((approval.id().to_owned(), stage.requirement.source_index));
            let once = [ApprovalDecision::Approved];
            if stages.len() == 1 {
                Some(Decision::choose("allow_session"))
            } else {
                Decision::first_offered(stage, &once)
            }
        })
        .expect("ends");
    let approval = "0198f0ac-7777-7000-8000-0000000000e1".to_owned();
    assert_eq!(
        stages,
        [(approval.clone(), 0), (approval, 1)],
        "each stage once"
    );
    assert_eq!(outcome.terminal(), Some(&TurnTerminal::Completed));
    let exit = client.close();
    assert_eq!(exit.as_ref().and_then(|e| e.code), Some(0), "{exit:?}");
}

#[test]
fn approvals_decided_on_a_thread_of_their_own_while_the_program_follows_the_items() {
    let Some(scenario) = support::scenario("approval-round-trip") else {
        return;
    };
    let (client, session, turn) = start_a_turn(&scenario);
    let deciding = session.turn(turn.id());
    let handler = std::thread::spawn(move || {
        let allow = [ApprovalDecision::ApprovedForSession];
        deciding.completed_deciding(|_, stage| Decision::first_offered(stage, &allow))
    });
    let items: Vec<String> = turn
        .items()
        .map(|i| render::ItemLine(&i).to_string())
        .collect();
    assert!(!items.is_empty());
    let outcome = handler.join().expect("the thread ran").expect("ended");
    assert_eq!(outcome.terminal(), Some(&TurnTerminal::Completed));
    assert_eq!(turn.completed().terminal(), Some(&TurnTerminal::Completed));
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
}

#[test]
fn the_sessions_handler_decides_an_approval_pending_at_the_resume_until_the_client_closes() {
    let Some(scenario) = support::scenario("snapshot-suffix-pending-approval") else {
        return;
    };
    let client = support::spawn(&scenario, &[]);
    let (session, resumed) = resume_with_snapshot(&client, SESSION_AA);
    let running = resumed.session.active_turn_id.expect("a turn runs");
    // The session's handler on a thread of its own, for as long as the connection lives.
    let deciding = session.clone();
    let handler = std::thread::spawn(move || {
        let mut stages = Vec::new();
        let closed = deciding.decide_approvals(|approval, stage| {
            stages.push((approval.id().to_owned(), stage.requirement.source_index));
            Some(Decision::choose("allow_session"))
        });
        (stages, closed)
    });
    let resolved = session.resolved(APPROVAL, WAIT).expect("resolved");
    assert_eq!(resolved.decision, ApprovalDecision::ApprovedForSession);
    assert!(resolved.decided_by_command_id.is_some(), "{resolved:?}");
    let outcome = session.turn(&running).completed();
    assert_eq!(outcome.terminal(), Some(&TurnTerminal::Completed));
    drop(session);
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
    let (stages, closed) = handler.join().expect("the thread ran");
    assert_eq!(stages, [(APPROVAL.to_owned(), 0)], "decided once");
    assert!(closed.is_ok(), "the end is the connection's: {closed:?}");
}

/// A session's handler replaced, as the official SDK's `on_approval` replaces one: the first,
/// stopped once it left the stage pending, ends with the connection still open, and the
/// next is offered the same stage and decides it.
#[test]
fn the_sessions_handler_stopped_is_replaced_by_the_next() {
    let Some(scenario) = support::scenario("snapshot-suffix-pending-approval") else {
        return;
    };
    let client = support::spawn(&scenario, &[]);
    let (session, resumed) = resume_with_snapshot(&client, SESSION_AA);
    let running = resumed.session.active_turn_id.expect("a turn runs");
    // Given a stop stopped already, a handler returns at once, offered nothing.
    let stopped = HandlerStop::new();
    stopped.stop();
    let ended = session.decide_approvals_until(&stopped, |_, _| panic!("offered"));
    assert!(matches!(ended, Ok(None)), "{ended:?}");
    let stop = HandlerStop::new();
    let (offered, first_offer) = std::sync::mpsc::channel();
    let first = {
        let (session, stop) = (session.clone(), stop.clone());
        std::thread::spawn(move || {
            session.decide_approvals_until(&stop, |approval, stage| {
                let _ = offered.send((approval.id().to_owned(), stage.requirement.source_index));
                None
            })
        })
    };
    assert_eq!(first_offer.recv(), Ok((APPROVAL.to_owned(), 0)));
    stop.stop();
    let ended = first.join().expect("the thread ran");
    assert!(matches!(ended, Ok(None)), "stopped: {ended:?}");
    assert!(
        client.connection().close_reason().is_none(),
        "the connection is still open"
    );
    assert!(session.read(|fold| fold.pending_approval(APPROVAL).is_some()));
    assert!(first_offer.try_recv().is_err(), "offered once");

    let next = {
        let session = session.clone();
        std::thread::spawn(move || {
            let mut stages = Vec::new();
            let closed = session.decide_approvals(|approval, stage| {
                stages.push((approval.id().to_owned(), stage.requirement.source_index));
                Some(Decision::choose("allow_session"))
            });
            (stages, closed)
        })
    };
    let resolved = session.resolved(APPROVAL, WAIT).expect("resolved");
    assert_eq!(resolved.decision, ApprovalDecision::ApprovedForSession);
    let outcome = session.turn(&running).completed();
    assert_eq!(outcome.terminal(), Some(&TurnTerminal::Completed));
    drop(session);
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
    let (stages, closed) = next.join().expect("the thread ran");
    assert_eq!(
        stages,
        [(APPROVAL.to_owned(), 0)],
        "the same stage, offered again"
    );
    assert!(closed.is_ok(), "{closed:?}");
}

/// The same replacement through `handle_approvals`, the handler on a thread the client
/// starts: one stopped, one dropped, each leaving the stage pending for the next, which
/// decides it and ends with the connection; a handler's panic reaches `stop`.
#[test]
fn a_handler_on_its_own_thread_is_stopped_or_dropped_and_replaced() {
    let Some(scenario) = support::scenario("snapshot-suffix-pending-approval") else {
        return;
    };
    let client = support::spawn(&scenario, &[]);
    let (session, resumed) = resume_with_snapshot(&client, SESSION_AA);
    let running = resumed.session.active_turn_id.expect("a turn runs");
    let (offered, offers) = std::sync::mpsc::channel();
    let passing = |offered: std::sync::mpsc::Sender<_>| {
        move |approval: &PendingApproval, stage: Stage<'_>| {
            let _ = offered.send((approval.id().to_owned(), stage.requirement.source_index));
            None
        }
    };
    let first = session.handle_approvals(passing(offered.clone()));
    assert_eq!(offers.recv(), Ok((APPROVAL.to_owned(), 0)));
    assert!(!first.is_finished());
    let ended = first.stop();
    assert!(matches!(ended, Ok(None)), "stopped: {ended:?}");
    let second = session.handle_approvals(passing(offered.clone()));
    assert_eq!(offers.recv(), Ok((APPROVAL.to_owned(), 0)), "offered again");
    drop(second);
    let panicking = session.handle_approvals(move |_, _| {
        let _ = offered.send((String::new(), 0));
        panic!("a policy's bug")
    });
    assert_eq!(offers.recv(), Ok((String::new(), 0)));
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| panicking.stop()));
    let message = panicked.expect_err("the panic resumed");
    assert_eq!(message.downcast_ref::<&str>(), Some(&"a policy's bug"));
    assert!(session.read(|fold| fold.pending_approval(APPROVAL).is_some()));

    let last = session.handle_approvals(|_, _| Some(Decision::choose("allow_session")));
    let resolved = session.resolved(APPROVAL, WAIT).expect("resolved");
    assert_eq!(resolved.decision, ApprovalDecision::ApprovedForSession);
    let outcome = session.turn(&running).completed();
    assert_eq!(outcome.terminal(), Some(&TurnTerminal::Completed));
    drop(session);
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
    let ended = last.stop();
    assert!(
        matches!(ended, Ok(Some(_))),
        "the connection's end: {ended:?}"
    );
    assert!(offers.try_recv().is_err(), "nothing offered after");
}

/// A handler stopped from within its own `decide` (which cannot wait for its own thread)
/// returns at once, and the stage stays pending.
#[test]
fn a_handler_stopped_from_its_own_decide_returns_at_once() {
    let Some(scenario) = support::scenario("snapshot-suffix-pending-approval") else {
        return;
    };
    let client = support::spawn(&scenario, &[]);
    let (session, _) = resume_with_snapshot(&client, SESSION_AA);
    let (give, handler_given) = std::sync::mpsc::channel();
    let (stopped, stop_returned) = std::sync::mpsc::channel();
    let handler = session.handle_approvals(move |_, _| {
        let handler: msp_client::blocking::ApprovalHandler = handler_given.recv().unwrap();
        let _ = stopped.send(handler.stop().map_err(|e| e.to_string()));
        None
    });
    give.send(handler).unwrap();
    assert_eq!(stop_returned.recv(), Ok(Ok(None)));
    assert!(session.read(|fold| fold.pending_approval(APPROVAL).is_some()));
    drop(session);
    client.connection().close();
}

#[test]
fn the_sessions_handler_decides_each_stage_of_a_turn_started_after_it() {
    let Some(dir) = two_stages(false) else {
        return;
    };
    let client = support::spawn(dir.path(), &[]);
    let session = start(&client);
    let deciding = session.clone();
    let handler = std::thread::spawn(move || {
        let mut stages = Vec::new();
        let closed = deciding.decide_approvals(|approval, stage| {
            stages.push((approval.id().to_owned(), stage.requirement.source_index));
            let once = [ApprovalDecision::Approved];
            if stages.len() == 1 {
                Some(Decision::choose("allow_session"))
            } else {
                Decision::first_offered(stage, &once)
            }
        });
        (stages, closed)
    });
    let turn = session
        .send_user_turn([render::text("Bump the version.")])
        .expect("turn started");
    assert_eq!(turn.completed().terminal(), Some(&TurnTerminal::Completed));
    drop((turn, session));
    let exit = client.close();
    assert_eq!(exit.as_ref().and_then(|e| e.code), Some(0), "{exit:?}");
    let (stages, closed) = handler.join().expect("the thread ran");
    assert_eq!(
        stages,
        [(APPROVAL.to_owned(), 0), (APPROVAL.to_owned(), 1)],
        "each stage once"
    );
    assert!(closed.is_ok(), "{closed:?}");
}

#[test]
fn the_sessions_handler_choosing_what_is_not_offered_gets_the_refusal() {
    let Some(scenario) = support::scenario("approval-round-trip") else {
        return;
    };
    let (client, session, turn) = start_a_turn(&scenario);
    let refused = session.decide_approvals(|_, _| Some(Decision::choose("allow_forever")));
    assert!(
        matches!(refused, Err(Error::Ask(AskError::ChoiceNotOffered { .. }))),
        "{refused:?}"
    );
    // Nothing was sent: the recorded decision still goes through.
    let approval = session.next_approval(None).expect("still pending");
    let ack = session
        .decide(&approval, "allow_session", None)
        .expect("accepted");
    assert!(ack.terminal);
    assert_eq!(turn.completed().terminal(), Some(&TurnTerminal::Completed));
    drop((turn, session));
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
}

#[test]
fn the_sessions_handler_leaving_a_stage_undecided_is_not_asked_again() {
    let Some(dir) = support::resolved_by_host_once_renamed() else {
        return;
    };
    let (client, session, turn) = start_a_turn(dir.path());
    let deciding = session.clone();
    let handler = std::thread::spawn(move || {
        let mut asked = 0;
        let closed = deciding.decide_approvals(|_, _| {
            asked += 1;
            // The host resolves the stage once this came.
            deciding.rename("meanwhile").expect("renamed");
            None
        });
        (asked, closed)
    });
    let resolved = session
        .resolved(APPROVAL, WAIT)
        .expect("resolved by the host");
    assert_eq!(resolved.decision, ApprovalDecision::TimedOut);
    assert_eq!(turn.completed().terminal(), Some(&TurnTerminal::Completed));
    drop((turn, session));
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
    let (asked, closed) = handler.join().expect("the thread ran");
    assert_eq!(asked, 1, "the stage passed on is not asked again");
    assert!(closed.is_ok(), "{closed:?}");
}

#[test]
fn a_handler_that_leaves_a_stage_undecided_waits_for_the_host_to_resolve_it() {
    let Some(dir) = support::resolved_by_host_once_renamed() else {
        return;
    };
    let (client, session, turn) = start_a_turn(dir.path());
    let mut asked = 0;
    let outcome = turn
        .completed_deciding(|_, _| {
            asked += 1;
            // The host resolves the stage once this came.
            session.rename("meanwhile").expect("renamed");
            None
        })
        .expect("ends");
    assert_eq!(asked, 1, "the stage passed on is not asked again");
    assert_eq!(outcome.terminal(), Some(&TurnTerminal::Completed));
    let resolved = session.resolved("0198f0ac-7777-7000-8000-0000000000e1", WAIT);
    let resolved = resolved.expect("resolved by the host");
    assert_eq!(resolved.decision, ApprovalDecision::TimedOut);
    assert_eq!(resolved.decided_by_command_id, None);
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
}

#[test]
fn a_handler_whose_decision_lost_the_race_waits_for_the_resolution_that_won() {
    let lost = serde_json::json!({
        "code": -32051,
        "message": "the approval is resolved",
        "data": {"kind": "approvalAlreadyResolved"}
    });
    let Some(dir) = support::resolved_by_host(Some(lost)) else {
        return;
    };
    let (client, _, turn) = start_a_turn(dir.path());
    let mut asked = 0;
    let outcome = turn
        .completed_deciding(|_, _| {
            asked += 1;
            Some(Decision::choose("allow_session"))
        })
        .expect("not an error: another decision won");
    assert_eq!(asked, 1);
    assert_eq!(outcome.terminal(), Some(&TurnTerminal::Completed));
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
}

#[test]
fn a_pulled_decision_that_lost_the_race_is_not_offered_again() {
    let Some(dir) = support::lost_race_resolved_once_renamed() else {
        return;
    };
    let (client, session, turn) = start_a_turn(dir.path());
    let approval = turn.next_approval().expect("asked").expect("an approval");
    let lost = session.decide(&approval, "allow_session", None);
    let lost = lost.expect_err("another decision won");
    assert!(lost.stage_gone(), "{lost}");
    // Still pending in the fold (the host resolves it once renamed), but not offered again.
    assert!(session.read(|fold| fold.pending_approval(APPROVAL).is_some()));
    let again = session.next_approval(Some(Duration::from_millis(50)));
    assert!(matches!(again, Err(Error::TimedOut { .. })), "{again:?}");
    session.rename("meanwhile").expect("renamed");
    let resolved = session
        .resolved(APPROVAL, WAIT)
        .expect("resolved by the host");
    assert_eq!(resolved.decision, ApprovalDecision::TimedOut);
    assert_eq!(turn.next_approval().expect("the turn's end"), None);
    assert_eq!(turn.completed().terminal(), Some(&TurnTerminal::Completed));
    drop((turn, session));
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
}

#[test]
fn a_handler_choosing_what_is_not_offered_gets_the_refusal_and_nothing_is_sent() {
    let Some(scenario) = support::scenario("approval-round-trip") else {
        return;
    };
    let (client, session, turn) = start_a_turn(&scenario);
    let refused = turn.completed_deciding(|_, stage| {
        // `abort` would take feedback; `allow_once` takes none.
        let deny = [ApprovalDecision::Denied, ApprovalDecision::Abort];
        let abort = Decision::first_offered(stage, &deny).expect("offered");
        assert_eq!(abort.choice_id(), "abort");
        let why = |d: Decision| {
            d.with_feedback_where_accepted(stage, "why")
                .feedback()
                .map(str::to_owned)
        };
        assert_eq!(why(abort), Some("why".to_owned()));
        assert_eq!(why(Decision::choose("allow_once")), None);
        let never = [ApprovalDecision::DeniedPolicyAmendment];
        assert_eq!(Decision::first_offered(stage, &never), None);
        Some(Decision::choose("allow_once").with_feedback("only this file"))
    });
    let Err(Error::Ask(AskError::FeedbackNotAccepted { choice_id, .. })) = refused else {
        panic!("refused: {refused:?}");
    };
    assert_eq!(choice_id, "allow_once");
    // Nothing was sent: the recorded decision still goes through.
    let approval = session.next_approval(None).expect("still pending");
    assert_eq!(approval.id(), "0198f0ac-7777-7000-8000-0000000000e1");
    let ack = session
        .decide(&approval, "allow_session", None)
        .expect("accepted");
    assert!(ack.terminal);
    assert!(matches!(turn.completed(), TurnOutcome::Ended(_)));
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
}

/// The model scenario's session.
const SESSION_MODEL: &str = "018f7294-0000-7000-8000-5f0e06800000";

#[test]
fn the_sessions_settings_and_a_turns_cancel_are_methods_of_their_own() {
    // The model scenario up to its `session/setModel`, then one command of each method
    // and the host's acknowledgement: the host checks the params it was sent.
    let command = |id: &str, method: &str, params: serde_json::Value| {
        let mut params = params;
        params["commandId"] = id.into();
        params["sessionId"] = SESSION_MODEL.into();
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    };
    let ack = |id: &str, result: serde_json::Value| {
        let mut result = result;
        result["commandId"] = id.into();
        serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result})
    };
    let accepted = serde_json::json!({"status": "accepted"});
    let turn = "018f7294-0000-7000-8000-5f0e068000aa";
    let Some(dir) = support::derived("model-round-trip", |frames| {
        let set_model = frames
            .iter()
            .position(|(client, f)| *client && f["method"] == "session/setModel")
            .unwrap();
        frames.truncate(set_model);
        let exchanges = [
            (
                "session/rename",
                serde_json::json!({"name": "release prep"}),
                serde_json::json!({"status": "accepted", "name": "release prep"}),
            ),
            (
                "session/setApprovalMode",
                serde_json::json!({"mode": "onRequest"}),
                serde_json::json!({"status": "accepted", "applyOutcome": "completed",
                    "effectiveMode": {"mode": "onRequest", "source": "approvalReconfigure",
                        "lastCommandId": null}}),
            ),
            (
                "session/setReasoningEffort",
                serde_json::json!({"reasoningEffort": "high"}),
                accepted.clone(),
            ),
            (
                "session/compact",
                serde_json::json!({}),
                serde_json::json!({"status": "noop", "reason": "no_compactable_history"}),
            ),
            (
                "turn/cancel",
                serde_json::json!({"turnId": turn}),
                serde_json::json!({"status": "accepted", "turnId": turn}),
            ),
            (
                "session/leave",
                serde_json::json!({"stop": true}),
                accepted.clone(),
            ),
        ];
        for (n, (method, params, result)) in exchanges.into_iter().enumerate() {
            let id = format!("018f7294-0000-7000-8000-5f0e06800c0{n}");
            frames.push((true, command(&id, method, params)));
            frames.push((false, ack(&id, result)));
        }
    }) else {
        return;
    };
    let client = support::spawn(dir.path(), &[]);
    let subscribe = serde_json::from_value(serde_json::json!({
        "sessionId": SESSION_MODEL, "after": format!("v:{SESSION_MODEL}:4")
    }))
    .unwrap();
    client
        .request::<methods::ViewSubscribe>(&subscribe)
        .expect("subscribed");
    let session = client.open_session(SESSION_MODEL);
    let list = serde_json::from_value(serde_json::json!({"sessionId": SESSION_MODEL})).unwrap();
    let models = client.request::<methods::ModelList>(&list).expect("listed");
    assert!(!models.models.is_empty());

    let renamed = session.rename("release prep").expect("renamed");
    assert_eq!(renamed.name.as_deref(), Some("release prep"));
    let mode = session
        .set_approval_mode(msp_types::ApprovalMode::OnRequest)
        .expect("switched");
    assert_eq!(mode.effective_mode.mode, msp_types::ApprovalMode::OnRequest);
    session
        .set_reasoning_effort(msp_types::ReasoningEffort::High)
        .expect("set");
    let compacted = session.compact(None).expect("admitted");
    assert_eq!(compacted.reason.as_deref(), Some("no_compactable_history"));
    let cancelled = session.turn(turn).cancel().expect("cancelled");
    assert_eq!(cancelled.turn_id, turn);
    session.leave(true).expect("left");
    // Each acknowledged: nothing of them pending.
    assert!(session.pending().is_empty(), "{:?}", session.pending());
    drop(session);
    let exit = client.close();
    assert_eq!(exit.as_ref().and_then(|e| e.code), Some(0), "{exit:?}");
}

#[test]
fn a_fork_and_a_side_chat_are_sessions_of_their_own() {
    let Some((dir, [forked, side])) = support::fork_and_side_chat() else {
        return;
    };
    let client = support::spawn(dir.path(), &[]);
    let (session, _) = client.resume_session(SESSION_AA).expect("resumed");
    let (fork, result) = client
        .fork_session(|command_id| {
            msp_types::SessionForkParams::builder()
                .command_id(command_id)
                .session_id(SESSION_AA)
                .build()
        })
        .expect("forked");
    assert_eq!(
        (fork.id(), &result.session.session_id[..]),
        (forked, forked)
    );
    let seeded = fork.read(|fold| fold.pending_approvals().len());
    assert_eq!(seeded, 1, "the fork's fold is seeded from its result");
    let told = |fold: &msp_session::Fold| fold.state().goal().map(drop);
    fork.wait_for(WAIT, told).expect("the fork is followed");
    let (chat, _) = fork.side_chat().expect("opened");
    assert_eq!(chat.id(), side);
    chat.wait_for(WAIT, told)
        .expect("the side chat is followed");
    assert!(fork.pending().is_empty(), "the side chat was acknowledged");
    assert!(
        session.read(|fold| fold.state().goal().is_none()),
        "the goals went to the new sessions"
    );
    drop((session, fork, chat));
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
}

const SESSION_AA: &str = "0198f0aa-1111-7000-8000-0000000000aa";

#[test]
fn a_turn_start_never_acknowledged_is_sent_again_with_its_command_id_after_a_reconnect() {
    let (Some(scenario), Some(again)) = (
        support::scenario("text-run-single-turn"),
        support::resumed_turn(false),
    ) else {
        return;
    };
    // The host exits once it read the `turn/start` (line 7), before acknowledging it.
    let lost = support::spawn(&scenario, &["--fault", "after 7: exit 3"]);
    let session = start(&lost);
    let refused = session.send_user_turn([render::text("Say hello.")]);
    assert!(refused.is_err(), "no acknowledgement: {:?}", refused.err());
    // Tried again on the dead connection: never sent, so not pending twice.
    assert!(session
        .send_user_turn([render::text("Say hello.")])
        .is_err());
    let pending = session.pending();
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert_eq!(pending[0].method(), "turn/start");
    assert_eq!(pending[0].turn_id(), None);
    drop(session);
    lost.close();

    let client = support::spawn(again.path(), &[]);
    let (session, _) = client.resume_session(SESSION_AA).expect("resumed");
    let turn = session.resend_turn(&pending[0]).expect("sent again");
    // The host echoes the commandId it was sent.
    let ack = turn.started().expect("acknowledged");
    assert_eq!(ack.command_id, pending[0].command_id());
    let items = turn.items().count();
    assert!(items > 0);
    assert_eq!(turn.completed().terminal(), Some(&TurnTerminal::Completed));
    assert!(session.pending().is_empty(), "its turn ended");
    // A pending command goes to its own session only.
    let other = client.open_session("another-session");
    let refused = other.resend_turn(&pending[0]);
    assert!(
        matches!(refused, Err(Error::Misdirected { .. })),
        "{refused:?}"
    );
    drop((turn, session, other));
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
}

#[test]
fn a_turn_that_ended_while_the_client_was_away_comes_back_ended_from_the_resume() {
    let (Some(scenario), Some(again)) = (support::single_turn(), support::resumed_turn(true))
    else {
        return;
    };
    // The host exits mid-turn (after line 10), its `turn/start` acknowledged.
    let lost = support::spawn(scenario.path(), &["--fault", "after 10: exit 3"]);
    let session = start(&lost);
    let turn = session
        .send_user_turn([render::text("Say hello.")])
        .expect("acknowledged");
    assert!(matches!(turn.completed(), TurnOutcome::HostExited(_)));
    let pending = session.pending();
    assert_eq!(pending.len(), 1, "its turn's end was not seen");
    assert_eq!(pending[0].turn_id(), Some(support::TURN));
    drop((turn, session));
    lost.close();

    // The new host replays the acknowledgement; its resume says the turn ended meanwhile.
    let client = support::spawn(again.path(), &[]);
    let (session, resumed) = client.resume_session(SESSION_AA).expect("resumed");
    assert!(resumed.last_turn.is_some());
    let turn = session.resend_turn(&pending[0]).expect("sent again");
    assert_eq!(Some(turn.id()), pending[0].turn_id(), "the same turn");
    let outcome = turn.completed_within(WAIT).expect("ended");
    let TurnOutcome::EndedBeforeResume(Some(last)) = outcome else {
        panic!("ended before the resume: {outcome:?}");
    };
    assert_eq!(last.terminal, TurnTerminal::Completed);
    assert_eq!(turn.next_item(), None, "nothing more comes of it");
    assert_eq!(turn.next_approval().expect("no wait"), None);
    assert!(session.pending().is_empty());
    drop((turn, session));
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
}

/// A `turn/start` sent again after a reconnect whose replay names another turn than its
/// first acknowledgement did is [`Error::ReplayDiffers`]: the host did not replay it.
#[test]
fn a_replayed_turn_start_acknowledged_as_another_turn_is_an_error() {
    let (Some(scenario), Some(again)) = (
        support::single_turn(),
        support::resumed_turn_acknowledged(true, Some("another-turn")),
    ) else {
        return;
    };
    let lost = support::spawn(scenario.path(), &["--fault", "after 10: exit 3"]);
    let session = start(&lost);
    let turn = session
        .send_user_turn([render::text("Say hello.")])
        .expect("acknowledged");
    assert!(matches!(turn.completed(), TurnOutcome::HostExited(_)));
    let pending = session.pending();
    assert_eq!(pending[0].turn_id(), Some(support::TURN));
    drop((turn, session));
    lost.close();

    let client = support::spawn(again.path(), &[]);
    let (session, _) = client.resume_session(SESSION_AA).expect("resumed");
    let replayed = session.resend_turn(&pending[0]);
    assert!(
        matches!(&replayed, Err(Error::ReplayDiffers { command_id, .. }) if command_id == pending[0].command_id()),
        "{:?}",
        replayed.err()
    );
    drop(session);
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
}

/// The goal scenario's `goal/set`, its host gone before acknowledging it: the pending
/// command and its objective, and the scenario resumed from it.
fn a_goal_set_lost() -> Option<(msp_client::PendingCommand, tempfile::TempDir)> {
    let scenario = support::scenario("goal-set-round-trip")?;
    let again = support::resumed("goal-set-round-trip", "goal/set")?;
    let frames = support::frames("goal-set-round-trip")?;
    let goal = frames
        .iter()
        .find(|(_, f)| f["method"] == "goal/set")
        .unwrap();
    let objective = goal.1["params"]["objective"].as_str().unwrap();
    // The host exits once it read the `goal/set` (line 7), before acknowledging it.
    let args = [
        "--allow",
        "session/start#/sessionId",
        "--fault",
        "after 7: exit 3",
    ];
    let lost = support::spawn(&scenario, &args);
    let session = start(&lost);
    assert!(session.goal_set(objective).is_err());
    let mut pending = session.pending();
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert_eq!(pending[0].params()["objective"], objective);
    drop(session);
    lost.close();
    Some((pending.remove(0), again))
}

#[test]
fn every_pending_command_is_sent_again_by_one_call_whatever_its_method() {
    let Some((pending, again)) = a_goal_set_lost() else {
        return;
    };
    let client = support::spawn(again.path(), &[]);
    let other = client.open_session("another-session");
    assert!(matches!(
        other.resend(&pending),
        Err(Error::Misdirected { .. })
    ));
    drop(other);
    let (session, _) = client.resume_session(SESSION_AA).expect("resumed");
    let resent = session.resend(&pending).expect("sent again");
    let Resent::Acknowledged(msp_types::ClientResult::GoalSet(ack)) = resent else {
        panic!("a goal/set's acknowledgement: {resent:?}");
    };
    assert_eq!(ack.command_id, pending.command_id());
    assert!(session.pending().is_empty(), "acknowledged");
    drop(session);
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
}

#[test]
fn any_command_never_acknowledged_is_sent_again_typed_with_its_command_id() {
    let Some((pending, again)) = a_goal_set_lost() else {
        return;
    };
    assert_eq!(pending.method(), "goal/set");
    let client = support::spawn(again.path(), &[]);
    let (session, _) = client.resume_session(SESSION_AA).expect("resumed");
    let wrong = pending.command::<methods::TurnStart>();
    assert!(matches!(wrong, Err(Error::Misdirected { .. })), "{wrong:?}");
    let command = pending.command::<methods::GoalSet>().expect("a goal/set");
    assert_eq!(command.command_id(), pending.command_id());
    let ack = session.send(&command).expect("acknowledged");
    assert_eq!(ack.command_id, pending.command_id());
    assert!(session.pending().is_empty(), "acknowledged");
    drop(session);
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
}

/// Where a derived transcript reports its `view/gap`.
#[derive(Clone, Copy)]
enum GapAt {
    /// Right after the client's receipt for the question (sent as the request is read, so
    /// the session may be open by then or not: either path refills).
    AfterTheReceipt,
    /// Before the resume's reply: the gap reaches the client before its session opens, so
    /// opening it must start the refill (routing cannot: nobody holds the session yet).
    BeforeTheReply,
}

/// The answer round trip with a gap reported at `at`: the session pages the hole itself (the
/// recorded `view/page`), then the question is answered as usual.
fn resume_with_a_pending_question_and_a_gap(at: GapAt) {
    let Some(dir) = support::derived("userinput-answer-round-trip", |frames| {
        let place = match at {
            GapAt::AfterTheReceipt => {
                frames
                    .iter()
                    .position(|(client, f)| *client && f.get("method").is_none() && f["id"] == 18)
                    .unwrap()
                    + 1
            }
            GapAt::BeforeTheReply => frames
                .iter()
                .position(|(client, f)| !*client && f["id"] == 2)
                .unwrap(),
        };
        let gap = serde_json::json!({"jsonrpc": "2.0", "method": "view/gap", "params": {
            "sessionId": SESSION,
            "after": "v:0198f0aa-1111-7000-8000-0000000000bb:499",
            "next": "v:0198f0aa-1111-7000-8000-0000000000bb:503",
        }});
        frames.insert(place, (false, gap));
    }) else {
        return;
    };
    let client = support::spawn(dir.path(), &[]);
    let (session, turn_id) = resume_excluding_items(&client);
    // Bounded, so that a refill never started fails the test rather than hanging it.
    let refilled = std::iter::from_fn(|| session.next_event_timeout(WAIT.unwrap()).unwrap())
        .find_map(|event| match event {
            Event::Refilled { outcomes } => Some(outcomes),
            _ => None,
        })
        .expect("refilled");
    assert_eq!(refilled.len(), 3, "the page's three events: {refilled:?}");
    session.read(|fold| {
        assert!(fold.is_current(), "{:?}", fold.gap());
        assert_eq!(fold.items().len(), 2, "the page's items");
        assert_eq!(fold.pending_prompts().len(), 1);
    });
    let prompt = session.next_prompt(WAIT).expect("the question");
    session
        .answer(prompt.id(), [Answer::label("db_choice", "Postgres")])
        .expect("accepted");
    let settlement = session.settled(prompt.id(), WAIT).expect("settled");
    assert!(matches!(settlement.by, SettledBy::ThisClient(_)));
    assert!(matches!(
        session.turn(&turn_id).completed(),
        TurnOutcome::Ended(_)
    ));
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
}

#[test]
fn a_resume_with_a_pending_question_and_a_gap_refills_and_answers() {
    resume_with_a_pending_question_and_a_gap(GapAt::AfterTheReceipt);
}

#[test]
fn a_gap_reported_before_the_resume_reply_is_refilled_once_the_session_opens() {
    resume_with_a_pending_question_and_a_gap(GapAt::BeforeTheReply);
}

#[test]
fn an_ephemeral_host_dying_mid_turn_ends_its_items_in_progress_unknown() {
    // The text run, its host ephemeral, dying right after the reply's first delta.
    let Some(dir) = support::derived("text-run-single-turn", |frames| {
        let result = frames
            .iter_mut()
            .find(|(client, f)| !*client && f["id"] == 1)
            .unwrap();
        result.1["result"]["sessionDurability"] = "ephemeral".into();
        let delta = frames
            .iter()
            .position(|(_, f)| f["method"] == "item/delta")
            .unwrap();
        frames.truncate(delta + 1);
    }) else {
        return;
    };
    // The transcript ends after the delta, and the host exits there.
    let client = support::spawn(dir.path(), &["--fault", "end: exit 3"]);
    assert!(!client.durable(), "the handshake says ephemeral");
    let session = start(&client);
    let turn = session
        .send_user_turn([render::text("Say hello.")])
        .expect("turn started");
    assert!(matches!(turn.completed(), TurnOutcome::HostExited(_)));
    session.read(|fold| {
        let open: Vec<_> = fold
            .items()
            .iter()
            .filter(|i| !i.is_final() && !i.terminal_unknown())
            .collect();
        assert!(open.is_empty(), "nothing left in progress: {open:?}");
        assert!(
            fold.items().iter().any(|i| i.terminal_unknown()),
            "the streamed reply ended unknown"
        );
    });
    // Nothing of the session outlived its host: no command to send again.
    assert!(session.pending().is_empty());
    // The turn's follower takes the reply as it ended; the session's last event says why,
    // and which items ended unknown.
    let last = turn.items().last().expect("the reply");
    assert!(last.terminal_unknown(), "{last:?}");
    match session.events().last() {
        Some(Event::Closed {
            reason,
            ended_unknown,
        }) => {
            assert_eq!(reason.host_exit().and_then(|e| e.code), Some(3));
            assert_eq!(ended_unknown, [last.id()]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_host_request_that_does_not_decode_reaches_its_session_and_the_host_gets_invalid_params() {
    // The recorded `approval/request` without its `approvalId`; the client's reply is then
    // `-32602` (nothing was presented), and the recording ends there.
    let Some(dir) = support::derived("approval-round-trip", |frames| {
        let asked = support::approval_request_at(frames);
        let request = &mut frames[asked].1;
        request["params"]
            .as_object_mut()
            .unwrap()
            .remove("approvalId");
        let id = request["id"].clone();
        frames.truncate(asked + 1);
        let refused = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "as sent"}});
        frames.push((true, refused));
    }) else {
        return;
    };
    let client = support::spawn(dir.path(), &[]);
    let session = start(&client);
    session
        .send_user_turn([render::text("Run the tests.")])
        .expect("turn started");
    let malformed = session
        .events()
        .find_map(|event| match event {
            Event::Folded {
                outcome:
                    Outcome::Malformed {
                        method, pointer, ..
                    },
                ..
            } => Some((method, pointer)),
            _ => None,
        })
        .expect("the request reached the session");
    assert_eq!(malformed.0.as_deref(), Some("approval/request"));
    assert!(malformed.1.contains("approvalId"), "{malformed:?}");
    let exit = client.close().expect("an exit");
    assert_eq!(exit.code, Some(0), "{exit}");
}

#[test]
fn a_wait_with_a_timeout_ends_at_it_while_another_sessions_frames_keep_coming() {
    use std::io::{BufRead, BufReader, Write};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let (client_reader, mut host_writer) = msp_rpc::pipe::pipe();
    let (host_reader, client_writer) = msp_rpc::pipe::pipe();
    // A host that shakes hands, then sends another session's frames without pause until
    // the client goes.
    let host = std::thread::spawn(move || {
        let mut lines = BufReader::new(host_reader).lines();
        let first = lines.next().unwrap().unwrap();
        let frame: serde_json::Value = serde_json::from_str(&first).unwrap();
        let result = serde_json::json!({"schema": {"version": 1, "fingerprint": "sha256:x"}, "serverInfo": {"name": "double", "version": "0"}, "userAgent": "double", "museHome": "/h", "platformFamily": "unix", "platformOs": "linux"});
        let response = serde_json::json!({"jsonrpc": "2.0", "id": frame["id"], "result": result});
        writeln!(host_writer, "{response}").unwrap();
        let gone = Arc::new(AtomicBool::new(false));
        let watch = {
            let gone = gone.clone();
            std::thread::spawn(move || {
                lines.for_each(drop);
                gone.store(true, Ordering::Relaxed);
            })
        };
        for n in 0u64.. {
            let line = format!(
                r#"{{"jsonrpc":"2.0","method":"item/started","params":{{"sessionId":"other","viewCursor":"v:{n}","item":{{"itemId":"i{n}","kind":"agentMessage","revision":1,"status":"inProgress","turnId":"t"}}}}}}"#
            );
            if gone.load(Ordering::Relaxed) || writeln!(host_writer, "{line}").is_err() {
                break;
            }
        }
        drop(host_writer);
        watch.join().unwrap();
    });
    let client = Client::over(client_reader, client_writer, support::options()).expect("handshake");
    let session = client.open_session("s");
    let waited = session.next_event_timeout(Duration::from_millis(50));
    assert!(matches!(waited, Err(Error::TimedOut { .. })), "{waited:?}");
    drop(session);
    drop(client);
    host.join().unwrap();
}

#[test]
fn a_session_opened_twice_stays_open_until_its_last_handle_is_gone() {
    use std::io::{BufRead, BufReader, Write};
    let (client_reader, mut host_writer) = msp_rpc::pipe::pipe();
    let (host_reader, client_writer) = msp_rpc::pipe::pipe();
    let (speak, told) = std::sync::mpsc::channel::<()>();
    // A host that shakes hands, then says an item started in session "s" once told to.
    let host = std::thread::spawn(move || {
        let mut lines = BufReader::new(host_reader).lines();
        let frame: serde_json::Value =
            serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        let result = serde_json::json!({"schema": {"version": 1, "fingerprint": "sha256:x"}, "serverInfo": {"name": "double", "version": "0"}, "userAgent": "double", "museHome": "/h", "platformFamily": "unix", "platformOs": "linux"});
        let response = serde_json::json!({"jsonrpc": "2.0", "id": frame["id"], "result": result});
        writeln!(host_writer, "{response}").unwrap();
        told.recv().unwrap();
        writeln!(host_writer, r#"{{"jsonrpc":"2.0","method":"item/started","params":{{"sessionId":"s","viewCursor":"v:1","item":{{"itemId":"i1","kind":"agentMessage","revision":1,"status":"inProgress","turnId":"t"}}}}}}"#).unwrap();
        lines.for_each(drop);
    });
    let client = Client::over(client_reader, client_writer, support::options()).expect("handshake");
    let first = client.open_session("s");
    let second = client.open_session("s");
    drop(first);
    speak.send(()).unwrap();
    let event = second.next_event_timeout(Duration::from_secs(10));
    assert!(
        matches!(
            &event,
            Ok(Some(Event::Folded {
                outcome: Outcome::Item { .. },
                ..
            }))
        ),
        "{event:?}"
    );
    assert_eq!(second.read(|fold| fold.items().len()), 1);
    drop(second);
    drop(client);
    host.join().unwrap();
}

/// A host request comes among its session's notifications where the wire has it, though
/// msp-rpc's handler takes it (and replies its receipt) as soon as it is read, before anyone
/// takes the notifications read with it: three frames written at once with the handshake
/// (kept until the session opens), three more once it is open (routed as they come).
#[test]
fn a_host_request_reaches_its_sessions_events_in_wire_order() {
    use std::io::{BufRead, BufReader, Write};
    let (client_reader, mut host_writer) = msp_rpc::pipe::pipe();
    let (host_reader, client_writer) = msp_rpc::pipe::pipe();
    // Writes each batch in one write: with its handshake, then with its `model/list`
    // reply. Gives the client's lines.
    let host = std::thread::spawn(move || {
        let mut sent = Vec::new();
        for line in BufReader::new(host_reader).lines() {
            let frame: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
            let (result, batch) = match frame["method"].as_str() {
                Some("initialize") => {
                    (support::initialize_result(), support::item_question_item(1))
                }
                Some("model/list") => (support::models(), support::item_question_item(4)),
                _ => {
                    sent.push(frame);
                    continue;
                }
            };
            let response =
                serde_json::json!({"jsonrpc": "2.0", "id": frame["id"], "result": result});
            host_writer
                .write_all(format!("{batch}{response}\n").as_bytes())
                .unwrap();
        }
        sent
    });
    let client = Client::over(client_reader, client_writer, support::options()).expect("handshake");
    let session = client.open_session("s");
    client
        .request::<methods::ModelList>(&msp_types::ModelListParams::new())
        .expect("the models");
    let events: Vec<Event> = (0..6)
        .map(|_| {
            session
                .next_event_timeout(Duration::from_secs(10))
                .unwrap()
                .unwrap()
        })
        .collect();
    assert_eq!(
        support::folded_methods(&events),
        support::ITEM_QUESTION_ITEM_TWICE
    );
    assert_eq!(session.read(|fold| fold.pending_prompts().len()), 2);
    drop(session);
    drop(client);
    let sent = host.join().unwrap();
    for id in [1, 4] {
        let receipt = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {}});
        assert!(sent.contains(&receipt), "the receipt of {id}: {sent:?}");
    }
}

/// An answer the host refuses leaves the question open to this client: `next_prompt` offers
/// it again, and the next answer settles it (`userinput-answer-round-trip` with the answer
/// refused as invalid, then sent again under another `commandId`).
#[test]
fn a_refused_answer_leaves_the_question_offered_again() {
    let again = "018f6a2b-3333-7abc-8def-00000000a9a1";
    let Some(dir) = support::derived("userinput-answer-round-trip", |frames| {
        let at = frames
            .iter()
            .position(|(client, f)| *client && f["method"] == "userInput/answer")
            .unwrap();
        let answer = frames[at].1.clone();
        let first = answer["params"]["commandId"].as_str().unwrap().to_owned();
        let reply_at = frames
            .iter()
            .position(|(client, f)| !client && f["id"] == answer["id"])
            .unwrap();
        let reply = std::mem::replace(
            &mut frames[reply_at].1,
            serde_json::json!({"jsonrpc": "2.0", "id": answer["id"], "error": {"code": -32057,
                "message": "the answer does not fit", "data": {"kind": "userInputAnswerInvalid"}}}),
        );
        let mut resent = answer;
        resent["id"] = "again".into();
        resent["params"]["commandId"] = again.into();
        let mut accepted = reply;
        accepted["id"] = "again".into();
        accepted["result"]["commandId"] = again.into();
        frames.insert(reply_at + 1, (true, resent));
        frames.insert(reply_at + 2, (false, accepted));
        for (_, frame) in &mut frames[reply_at + 3..] {
            let text = frame.to_string().replace(&first, again);
            *frame = serde_json::from_str(&text).unwrap();
        }
    }) else {
        return;
    };
    let client = support::spawn(dir.path(), &[]);
    let (session, _) = resume_excluding_items(&client);
    let prompt = session.next_prompt(WAIT).expect("the question");
    let question = &prompt.request().expect("its questions").questions[0];
    let answer = || [Answer::label(&question.id, "Postgres")];
    let refused = session.answer(prompt.id(), answer());
    assert!(
        matches!(&refused, Err(Error::Rpc(msp_rpc::RpcError::Remote(r))) if r.code() == -32057),
        "{refused:?}"
    );
    let offered = session.next_prompt(WAIT).expect("offered again");
    assert_eq!(offered.id(), prompt.id());
    let ack = session.answer(prompt.id(), answer()).expect("accepted");
    let settlement = session.settled(prompt.id(), WAIT).expect("settled");
    assert_eq!(settlement.by, SettledBy::ThisClient(ack.command_id));
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
}

/// An acknowledgement naming another `commandId` than the command's is an error, not the
/// command's result, and the command is not sent again.
#[test]
fn an_acknowledgement_of_another_command_is_an_error() {
    use std::io::{BufRead, BufReader, Write};
    let (client_reader, mut host_writer) = msp_rpc::pipe::pipe();
    let (host_reader, client_writer) = msp_rpc::pipe::pipe();
    let host = std::thread::spawn(move || {
        let mut interrupts = 0;
        for line in BufReader::new(host_reader).lines() {
            let frame: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
            let result = match frame["method"].as_str() {
                Some("initialize") => support::initialize_result(),
                Some("turn/interrupt") => {
                    interrupts += 1;
                    serde_json::json!({"commandId": "someone-else", "status": "accepted", "turnId": "t"})
                }
                _ => continue,
            };
            let response =
                serde_json::json!({"jsonrpc": "2.0", "id": frame["id"], "result": result});
            writeln!(host_writer, "{response}").unwrap();
        }
        interrupts
    });
    let client = Client::over(client_reader, client_writer, support::options()).expect("handshake");
    let session = client.open_session("s");
    let acked = session.interrupt(None, false);
    assert!(
        matches!(&acked, Err(Error::AckMismatch { acknowledged, .. }) if acknowledged == "someone-else"),
        "{acked:?}"
    );
    drop(session);
    drop(client);
    assert_eq!(host.join().unwrap(), 1, "sent once");
}

/// A gap's refill pages apart: while one session's `view/page` goes unanswered, another
/// session's frames still reach it (the wait that routed the gap goes on), and the refill
/// ends once its page is answered.
#[test]
fn a_refill_paging_holds_up_no_other_session() {
    use std::io::{BufRead, BufReader, Write};
    let (client_reader, mut host_writer) = msp_rpc::pipe::pipe();
    let (host_reader, client_writer) = msp_rpc::pipe::pipe();
    let item = |session: &str, n: u32| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"item/started","params":{{"sessionId":"{session}","viewCursor":"v:{n}","item":{{"itemId":"i{n}","kind":"agentMessage","revision":1,"status":"inProgress","turnId":"t"}}}}}}"#
        )
    };
    // At the first `model/list`, session b's gap and, after it, an item of session a; the
    // refill's page is answered (refused) only at the second.
    let host = std::thread::spawn(move || {
        let (mut lists, mut page) = (0, None);
        for line in BufReader::new(host_reader).lines() {
            let frame: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
            let mut batch = String::new();
            let result = match frame["method"].as_str() {
                Some("initialize") => support::initialize_result(),
                Some("view/page") if lists < 2 => {
                    page = Some(frame["id"].clone());
                    continue;
                }
                // Asked for after the second `model/list`: refused at once.
                Some("view/page") => {
                    let refused = serde_json::json!({"jsonrpc": "2.0", "id": frame["id"],
                        "error": {"code": -32603, "message": "not now"}});
                    writeln!(host_writer, "{refused}").unwrap();
                    continue;
                }
                Some("model/list") => {
                    lists += 1;
                    if lists == 1 {
                        let gap = r#"{"jsonrpc":"2.0","method":"view/gap","params":{"sessionId":"b","after":"v:1","next":"v:3"}}"#;
                        batch = format!("{}\n{gap}\n{}\n", item("b", 1), item("a", 7));
                    } else if let Some(id) = page.take() {
                        let refused = serde_json::json!({"jsonrpc": "2.0", "id": id,
                            "error": {"code": -32603, "message": "not now"}});
                        batch = format!("{refused}\n");
                    }
                    support::models()
                }
                _ => continue,
            };
            let response =
                serde_json::json!({"jsonrpc": "2.0", "id": frame["id"], "result": result});
            writeln!(host_writer, "{batch}{response}").unwrap();
        }
    });
    let client = Client::over(client_reader, client_writer, support::options()).expect("handshake");
    let (a, b) = (client.open_session("a"), client.open_session("b"));
    let list = || {
        client
            .request::<methods::ModelList>(&msp_types::ModelListParams::new())
            .expect("the models")
    };
    list();
    // Whoever routes b's gap, a's item comes while b's page is unanswered.
    let event = a.next_event_timeout(Duration::from_secs(10));
    assert_eq!(
        support::folded_methods(&[event.expect("in time").expect("an event")]),
        ["item/started"]
    );
    list();
    let refilled = b
        .events()
        .find(|event| matches!(event, Event::Refilled { .. }));
    assert!(refilled.is_some(), "the refill ended");
    assert!(b.read(|fold| fold.gap().failure().is_some()), "refused");
    drop((a, b));
    drop(client);
    host.join().unwrap();
}

/// A refill past which more inputs came than the rules let it hold ends overflowed, those
/// inputs folded as they came; another refill then fills the hole, its page answered.
#[test]
fn an_overflowed_refill_is_followed_by_one_that_fills_the_hole() {
    use std::io::{BufRead, BufReader, Write};
    let (client_reader, mut host_writer) = msp_rpc::pipe::pipe();
    let (host_reader, client_writer) = msp_rpc::pipe::pipe();
    let item = |n: u32| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"item/started","params":{{"sessionId":"s","viewCursor":"v:{n}","item":{{"itemId":"i{n}","kind":"agentMessage","revision":1,"status":"inProgress","turnId":"t"}}}}}}"#
        )
    };
    // The hole's item, as a page serves it.
    let page = serde_json::json!({"events": [{"method": "item/started", "params": {"sessionId": "s", "viewCursor": "v:2", "sourceRange": {"first": {"id": "r2", "sequence": 2}, "last": {"id": "r2", "sequence": 2}, "stream": {"id": "s", "kind": "session"}}, "item": {"itemId": "i2", "kind": "agentMessage", "revision": 1, "status": "inProgress", "turnId": "t"}}}], "nextCursor": null});
    // At the first `model/list`: an item, a gap, and three items more (one held, then past
    // the rules' one). A page asked before the second is answered only then.
    let host = std::thread::spawn(move || {
        let (mut lists, mut waiting, mut pages) = (0, None, 0);
        for line in BufReader::new(host_reader).lines() {
            let frame: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
            let mut batch = String::new();
            let result = match frame["method"].as_str() {
                Some("initialize") => support::initialize_result(),
                Some("view/page") => {
                    pages += 1;
                    if lists < 2 {
                        waiting = Some(frame["id"].clone());
                        continue;
                    }
                    page.clone()
                }
                Some("model/list") => {
                    lists += 1;
                    if lists == 1 {
                        let gap = r#"{"jsonrpc":"2.0","method":"view/gap","params":{"sessionId":"s","after":"v:1","next":"v:3"}}"#;
                        batch = [item(1), gap.to_owned(), item(4), item(5), item(6)].join("\n");
                        batch.push('\n');
                    } else if let Some(id) = waiting.take() {
                        let answer =
                            serde_json::json!({"jsonrpc": "2.0", "id": id, "result": page});
                        batch = format!("{answer}\n");
                    }
                    support::models()
                }
                _ => continue,
            };
            let response =
                serde_json::json!({"jsonrpc": "2.0", "id": frame["id"], "result": result});
            writeln!(host_writer, "{batch}{response}").unwrap();
        }
        pages
    });
    let mut rules = msp_session::FoldRules::default();
    rules.refill_held_frames = 1;
    let client = Client::over(
        client_reader,
        client_writer,
        support::options().rules(rules),
    )
    .expect("handshake");
    let session = client.open_session("s");
    let list = || {
        client
            .request::<methods::ModelList>(&msp_types::ModelListParams::new())
            .expect("the models")
    };
    list();
    // Held, the last items would come only after a refill: they come at once.
    let mut events = session.events();
    let before: Vec<Event> = events.by_ref().take(5).collect();
    assert_eq!(
        support::folded_methods(&before),
        [
            "item/started",
            "view/gap",
            "item/started",
            "item/started",
            "item/started"
        ]
    );
    list();
    // Each refill's end is an event; the hole is filled at the last.
    let mut refilled = 0;
    drop(events);
    let in_time = || {
        session
            .next_event_timeout(Duration::from_secs(10))
            .ok()
            .flatten()
    };
    let filled = std::iter::from_fn(in_time)
        .filter(|event| matches!(event, Event::Refilled { .. }))
        .any(|_| {
            refilled += 1;
            session.read(|fold| fold.is_current())
        });
    assert!(filled, "the hole filled");
    assert!(
        refilled <= 2,
        "the overflowed refill, then the one that filled it"
    );
    let ids = session.read(|fold| {
        fold.items()
            .iter()
            .map(|i| i.id().to_owned())
            .collect::<Vec<_>>()
    });
    assert_eq!(ids.len(), 5, "{ids:?}");
    assert!(ids.iter().any(|id| id == "i2"), "the hole's item: {ids:?}");
    drop(session);
    drop(client);
    let pages = host.join().unwrap();
    assert!((1..=2).contains(&pages), "{pages} pages asked");
}

#[test]
fn stored_sessions_are_listed_page_by_page_and_read_and_a_session_is_unfollowed() {
    let Some(dir) = support::listed_read_and_unfollowed() else {
        return;
    };
    let client = support::spawn(dir.path(), &[]);
    assert!(client.durable(), "the recording's host is durable");
    let pages = client.list_sessions(msp_types::SessionListParams::builder().limit(1).build());
    let pages: Vec<_> = pages.map(|page| page.expect("listed")).collect();
    let ids: Vec<_> = pages
        .iter()
        .flat_map(|page| &page.sessions)
        .map(|session| &session.session_id[..])
        .collect();
    assert_eq!(ids, [SESSION_AA, "0198f0aa-1111-7000-8000-0000000000ab"]);
    let read = client.read_session(SESSION_AA, true).expect("read");
    assert_eq!(read.session.session_id, SESSION_AA);
    let (session, _) = client.resume_session(SESSION_AA).expect("resumed");
    session.unsubscribe().expect("unfollowed");
    drop(session);
    // The host played every frame as recorded: the second page asked with the first's
    // cursor and the same limit, the read with its items.
    assert_eq!(client.close().and_then(|e| e.code), Some(0));
}

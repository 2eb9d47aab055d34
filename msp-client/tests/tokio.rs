//! The session API on tokio against the canned host as a child process: the same scenarios
//! as the blocking tests, the same words, each wait awaited.

mod support;

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Waker};
use std::time::Duration;

use msp_client::tokio::{Client, Session, Turn};
use msp_client::{render, Answer, Decision, Error, HandlerStop, Resent, SettledBy, TurnOutcome};
use msp_rpc::{CloseReason, HostCommand};
use msp_types::{
    ApprovalDecision, HistoryPreference, SessionResumeParams, TurnTerminal, UserInputOutcome,
};

const WAIT: Option<Duration> = Some(Duration::from_secs(20));
/// The approval of the approval scenarios.
const APPROVAL: &str = "0198f0ac-7777-7000-8000-0000000000e1";

async fn spawn(scenario: &std::path::Path, args: &[&str]) -> Client {
    let command = HostCommand::new(support::host_binary())
        .args(args)
        .arg(scenario);
    Client::spawn(&command, support::options())
        .await
        .expect("the canned host starts and shakes hands")
}

/// Starts a session and a turn saying `text`, against the canned host playing `scenario`.
async fn start_a_turn(
    scenario: &std::path::Path,
    args: &[&str],
    text: &str,
) -> (Client, Session, Turn) {
    let client = spawn(scenario, args).await;
    let (session, _) = client
        .start_session(|command_id| {
            msp_types::SessionStartParams::builder()
                .command_id(command_id)
                .build()
        })
        .await
        .expect("started");
    let turn = session
        .send_user_turn([render::text(text)])
        .await
        .expect("turn started");
    (client, session, turn)
}

/// Resumes the question scenario's session without its items (the session pages them).
async fn resume_excluding_items(client: &Client) -> msp_client::tokio::Session {
    let (session, _) = client
        .resume_session_with(|command_id| {
            let mut params = SessionResumeParams::builder()
                .command_id(command_id)
                .session_id("0198f0aa-1111-7000-8000-0000000000bb")
                .build();
            params.exclude_items = Some(true);
            params
        })
        .await
        .expect("resumed");
    session
}

/// Resumes the approval scenarios' session asking for a snapshot.
async fn resume_with_snapshot(client: &Client) -> (Session, msp_types::SessionResumeResult) {
    client
        .resume_session_with(|command_id| {
            let mut params = SessionResumeParams::builder()
                .command_id(command_id)
                .session_id("0198f0aa-1111-7000-8000-0000000000aa")
                .build();
            params.history = Some(HistoryPreference::Snapshot);
            params
        })
        .await
        .expect("resumed")
}

/// The end of `snapshot-suffix-pending-approval` once the session's handler on task
/// `handler` allowed its approval for the session: the running turn completes, the approval
/// resolves so, the host exits 0, and the handler, offered the stage once, ended with the
/// connection.
async fn allowed_for_the_session(
    client: Client,
    session: Session,
    running: &str,
    handler: tokio::task::JoinHandle<(Vec<String>, Result<CloseReason, Error>)>,
) {
    let outcome = session.turn(running).completed().await;
    assert_eq!(outcome.terminal(), Some(&TurnTerminal::Completed));
    let resolved = session.resolved(APPROVAL, WAIT).await.expect("resolved");
    assert_eq!(resolved.decision, ApprovalDecision::ApprovedForSession);
    drop(session);
    assert_eq!(client.close().await.and_then(|e| e.code), Some(0));
    let (offered, closed) = handler.await.expect("the task ran");
    assert_eq!(offered, [APPROVAL], "decided once");
    assert!(closed.is_ok(), "the end is the connection's: {closed:?}");
}

#[tokio::test]
async fn the_seed_recipe() {
    let Some(scenario) = support::scenario("userinput-answer-round-trip") else {
        return;
    };
    let client = spawn(&scenario, &[]).await;
    let session = resume_excluding_items(&client).await;
    let prompt = session.next_prompt(WAIT).await.expect("the question");
    let question = &prompt.request().expect("its questions").questions[0];
    let ack = session
        .answer(prompt.id(), [Answer::label(&question.id, "Postgres")])
        .await
        .expect("accepted");
    let settlement = session.settled(prompt.id(), WAIT).await.expect("settled");
    assert_eq!(settlement.params.outcome, UserInputOutcome::Answered);
    assert_eq!(settlement.by, SettledBy::ThisClient(ack.command_id));
    drop(session);
    let exit = client.close().await.expect("the host exited");
    assert_eq!(exit.code, Some(0), "{exit:?}");
}

/// A wait sees what the client does while it waits: a settlement awaited before this client
/// answered is still told as this client's.
#[tokio::test]
async fn a_settlement_awaited_before_the_answer_is_sent_is_this_clients() {
    let Some(scenario) = support::scenario("userinput-answer-round-trip") else {
        return;
    };
    let client = spawn(&scenario, &[]).await;
    let session = resume_excluding_items(&client).await;
    let prompt = session.next_prompt(WAIT).await.expect("the question");
    let question = &prompt.request().expect("its questions").questions[0];
    let mut settled = pin!(session.settled(prompt.id(), WAIT));
    // The wait begun (the host settles the question only once answered).
    let mut begun = Context::from_waker(Waker::noop());
    assert!(settled.as_mut().poll(&mut begun).is_pending());
    let ack = session
        .answer(prompt.id(), [Answer::label(&question.id, "Postgres")])
        .await
        .expect("accepted");
    let settlement = settled.await.expect("settled");
    assert_eq!(settlement.by, SettledBy::ThisClient(ack.command_id));
}

/// What the host says naming no session (its subscription usage) is the client's own
/// event: the client's events stream gives it, and ends with the connection.
#[tokio::test]
async fn a_notification_naming_no_session_is_the_clients_own_event() {
    use futures_core::Stream;
    let Some(dir) = support::usage_during_turn() else {
        return;
    };
    let (client, session, turn) = start_a_turn(dir.path(), &[], "Say hello.").await;
    assert!(matches!(turn.completed().await, TurnOutcome::Ended(_)));
    match client.next_event_timeout(Duration::from_secs(10)).await {
        Ok(Some(msp_client::Event::Folded { input, .. })) => {
            assert_eq!(input.method(), Some("usage/changed"));
        }
        other => panic!("{other:?}"),
    }
    client.connection().close().await;
    let mut events = client.events();
    let next = std::future::poll_fn(|cx| std::pin::Pin::new(&mut events).poll_next(cx)).await;
    assert!(
        matches!(next, Some(msp_client::Event::Closed { .. })),
        "{next:?}"
    );
    drop(events);
    drop((turn, session));
    client.close().await;
}

/// A running turn interrupted and retracted: its outcome says so.
#[tokio::test]
async fn a_retracted_turn_ends_retracted() {
    let Some(dir) = support::retracted_turn() else {
        return;
    };
    let (client, session, turn) = start_a_turn(dir.path(), &[], "Say hello.").await;
    let interrupted = turn.interrupt(true).await.expect("interrupted");
    assert_eq!(interrupted.turn_id, turn.id());
    assert!(matches!(turn.completed().await, TurnOutcome::Retracted));
    drop((turn, session));
    assert_eq!(client.close().await.and_then(|e| e.code), Some(0));
}

/// A turn's items and a session's events as streams: the items stream gives every item
/// another handle of the turn takes with `next_item`, each at its latest in the end, and
/// ends with the turn; the events stream
/// gives what the session routed, and ends once the connection closed.
#[tokio::test]
async fn a_turns_items_and_a_sessions_events_are_streams() {
    use futures_core::Stream;
    /// The next item of `stream`.
    async fn next<S: Stream + Unpin>(stream: &mut S) -> Option<S::Item> {
        std::future::poll_fn(|cx| std::pin::Pin::new(&mut *stream).poll_next(cx)).await
    }
    let Some(scenario) = support::scenario("text-run-single-turn") else {
        return;
    };
    let (client, session, turn) = start_a_turn(&scenario, &[], "Say hello.").await;
    let other = session.turn(turn.id());
    let mut streamed = Vec::new();
    let mut items = turn.items();
    while let Some(item) = next(&mut items).await {
        streamed.push((item.id().to_owned(), item.item().revision));
    }
    let mut taken = Vec::new();
    while let Some(item) = other.next_item().await {
        taken.push((item.id().to_owned(), item.item().revision));
    }
    assert!(!streamed.is_empty());
    // A handle that has not taken an item's change yet takes the item as it is when it
    // takes it (its changes merge): `other`, read after the turn ended, takes each item
    // once, at its latest, where the stream may have taken one at several revisions.
    let mut latest: Vec<(String, i64)> = Vec::new();
    for (id, revision) in &streamed {
        match latest.iter_mut().find(|(seen, _)| seen == id) {
            Some(entry) => entry.1 = *revision,
            None => latest.push((id.clone(), *revision)),
        }
    }
    assert_eq!(latest, taken, "every item, at its latest: {streamed:?}");
    drop(items);
    assert_eq!(
        turn.completed().await.terminal(),
        Some(&TurnTerminal::Completed)
    );
    let mut events = session.events();
    let first = next(&mut events).await.expect("the turn's events");
    assert!(
        matches!(first, msp_client::Event::Folded { .. }),
        "{first:?}"
    );
    drop((turn, other));
    let exit = client.close().await;
    assert_eq!(exit.and_then(|e| e.code), Some(0));
    let mut last = None;
    while let Some(event) = next(&mut events).await {
        last = Some(event);
    }
    assert!(
        matches!(last, Some(msp_client::Event::Closed { .. })),
        "the close, then the end: {last:?}"
    );
}

#[tokio::test]
async fn an_approval_and_a_streamed_turn() {
    let Some(scenario) = support::scenario("approval-round-trip") else {
        return;
    };
    let (client, session, turn) = start_a_turn(&scenario, &[], "Run the tests.").await;
    let approval = session.next_approval(WAIT).await.expect("the approval");
    session
        .decide(&approval, "allow_session", None)
        .await
        .expect("accepted");
    let resolved = session
        .resolved(approval.id(), WAIT)
        .await
        .expect("resolved");
    assert_eq!(resolved.decision, ApprovalDecision::ApprovedForSession);
    let mut items = 0;
    while let Some(item) = turn.next_item().await {
        assert!(!render::ItemLine(&item).to_string().is_empty());
        items += 1;
    }
    assert!(items > 0);
    let outcome = turn.completed().await;
    assert_eq!(outcome.terminal(), Some(&TurnTerminal::Completed));
    drop((turn, session));
    assert_eq!(client.close().await.and_then(|e| e.code), Some(0));
}

#[tokio::test]
async fn approvals_decided_on_a_task_of_their_own_while_the_program_follows_the_items() {
    let Some(scenario) = support::scenario("approval-round-trip") else {
        return;
    };
    let (client, session, turn) = start_a_turn(&scenario, &[], "Run the tests.").await;
    // The handler on a task of its own (spawned: the turn and its wait are `Send`).
    let deciding = session.turn(turn.id());
    let handler = tokio::spawn(async move {
        let allow = [ApprovalDecision::ApprovedForSession];
        deciding
            .completed_deciding(|_, stage| Decision::first_offered(stage, &allow))
            .await
    });
    let mut items = 0;
    while let Some(item) = turn.next_item().await {
        assert!(!render::ItemLine(&item).to_string().is_empty());
        items += 1;
    }
    assert!(items > 0);
    let outcome = handler.await.expect("the task ran").expect("ended");
    assert_eq!(outcome.terminal(), Some(&TurnTerminal::Completed));
    let resolved = session.resolved(APPROVAL, WAIT).await.expect("resolved");
    assert_eq!(resolved.decision, ApprovalDecision::ApprovedForSession);
    drop((turn, session));
    assert_eq!(client.close().await.and_then(|e| e.code), Some(0));
}

#[tokio::test]
async fn a_turn_that_ended_while_the_client_was_away_comes_back_ended_from_the_resume() {
    let (Some(scenario), Some(again)) = (support::single_turn(), support::resumed_turn(true))
    else {
        return;
    };
    let args = ["--fault", "after 10: exit 3"];
    let (lost, session, turn) = start_a_turn(scenario.path(), &args, "Say hello.").await;
    assert!(matches!(turn.completed().await, TurnOutcome::HostExited(_)));
    let pending = session.pending();
    assert_eq!(pending.len(), 1, "its turn's end was not seen");
    drop((turn, session));
    lost.close().await;

    let client = spawn(again.path(), &[]).await;
    let (session, _) = client
        .resume_session("0198f0aa-1111-7000-8000-0000000000aa")
        .await
        .expect("resumed");
    // Sent again on a task (the wait is `Send`), by the call that takes any method.
    let resending = session.clone();
    let command = pending[0].clone();
    let resent = tokio::spawn(async move { resending.resend(&command).await });
    let Resent::Turn(turn) = resent.await.expect("the task ran").expect("sent again") else {
        panic!("a turn/start's turn to follow");
    };
    assert_eq!(
        turn.started().map(|a| &a.command_id[..]),
        Some(pending[0].command_id())
    );
    let outcome = turn.completed_within(WAIT).await.expect("ended");
    assert!(
        matches!(outcome, TurnOutcome::EndedBeforeResume(_)),
        "{outcome:?}"
    );
    assert!(session.pending().is_empty());
    drop((turn, session));
    assert_eq!(client.close().await.and_then(|e| e.code), Some(0));
}

#[tokio::test]
async fn a_host_dying_mid_turn() {
    let Some(scenario) = support::scenario("text-run-single-turn") else {
        return;
    };
    let (client, session, turn) =
        start_a_turn(&scenario, &["--fault", "after 12: exit 3"], "Say hello.").await;
    // Waited for on the client, as a program that restarts its host does.
    let closed = client.closed().await;
    let TurnOutcome::HostExited(reason) = turn.completed().await else {
        panic!("the host died before the turn ended");
    };
    assert_eq!(closed, reason);
    assert_eq!(
        reason.host_exit().and_then(|e| e.code),
        Some(3),
        "{reason:?}"
    );
    drop((turn, session));
    assert_eq!(client.close().await.as_ref(), reason.host_exit());
}

#[tokio::test]
async fn a_host_dying_while_a_handler_decides_ends_the_turn_with_the_exit() {
    let Some(scenario) = support::scenario("approval-round-trip") else {
        return;
    };
    // Frame 14 is the client's `approval/decide`: the host exits instead of acknowledging it.
    let (_client, _session, turn) = start_a_turn(
        &scenario,
        &["--fault", "after 14: exit 3"],
        "Run the tests.",
    )
    .await;
    let mut asked = 0;
    let outcome = turn
        .completed_deciding(|_, _| {
            asked += 1;
            Some(Decision::choose("allow_session"))
        })
        .await
        .expect("the host's exit is the turn's outcome, not an error");
    assert_eq!(asked, 1);
    let TurnOutcome::HostExited(reason) = outcome else {
        panic!("the host died before the turn ended: {outcome:?}");
    };
    assert_eq!(
        reason.host_exit().and_then(|e| e.code),
        Some(3),
        "{reason:?}"
    );
}

#[tokio::test]
async fn a_gap_reported_before_the_resume_reply_is_refilled_once_the_session_opens() {
    // The gap reaches the client before its session opens: `open_session` pages it (as a
    // task), and the question is answered after the refill as usual.
    let Some(dir) = support::derived("userinput-answer-round-trip", |frames| {
        let reply = frames
            .iter()
            .position(|(client, f)| !*client && f["id"] == 2)
            .unwrap();
        let gap = serde_json::json!({"jsonrpc": "2.0", "method": "view/gap", "params": {
            "sessionId": "0198f0aa-1111-7000-8000-0000000000bb",
            "after": "v:0198f0aa-1111-7000-8000-0000000000bb:499",
            "next": "v:0198f0aa-1111-7000-8000-0000000000bb:503",
        }});
        frames.insert(reply, (false, gap));
    }) else {
        return;
    };
    let client = spawn(dir.path(), &[]).await;
    let session = resume_excluding_items(&client).await;
    // Bounded, so that a refill never started fails the test rather than hanging it.
    let refilled = loop {
        let event = session.next_event_timeout(WAIT.unwrap()).await;
        match event {
            Ok(Some(msp_client::Event::Refilled { outcomes })) => break outcomes,
            Ok(Some(_)) => continue,
            other => panic!("no refill: {other:?}"),
        }
    };
    assert_eq!(refilled.len(), 3, "the page's three events: {refilled:?}");
    assert!(session.read(|fold| fold.is_current()));
    let prompt = session.next_prompt(WAIT).await.expect("the question");
    session
        .answer(prompt.id(), [Answer::label("db_choice", "Postgres")])
        .await
        .expect("accepted");
    let settlement = session.settled(prompt.id(), WAIT).await.expect("settled");
    assert!(matches!(settlement.by, SettledBy::ThisClient(_)));
    drop(session);
    let exit = client.close().await.expect("the host exited");
    assert_eq!(exit.code, Some(0), "{exit:?}");
}

/// A client dropped while its sessions' handles wait (a handler on a task, a turn's end)
/// ends them and kills the host, though the handles still hold the connection.
#[tokio::test]
async fn a_client_dropped_ends_the_waits_of_its_sessions_and_kills_the_host() {
    let Some(scenario) = support::scenario("snapshot-suffix-pending-approval") else {
        return;
    };
    let client = spawn(&scenario, &[]).await;
    let connection = client.connection().clone();
    let (session, resumed) = resume_with_snapshot(&client).await;
    let running = resumed.session.active_turn_id.expect("a turn runs");
    let (offered, mut offers) = tokio::sync::mpsc::unbounded_channel();
    let handler = {
        let session = session.clone();
        tokio::spawn(async move {
            let passing = |_: &_, _: msp_session::Stage<'_>| {
                let _ = offered.send(());
                None
            };
            session.decide_approvals(passing).await
        })
    };
    let turn = tokio::spawn(async move { session.turn(&running).completed().await });
    // Both wait, parked: the handler passed the stage it was offered.
    offers.recv().await.expect("offered");
    tokio::task::yield_now().await;
    drop(client);
    // Bounded so that a wait left hanging fails here rather than hanging the run.
    let within = Duration::from_secs(20);
    let handled = tokio::time::timeout(within, handler).await.expect("ended");
    let handled = handled.expect("the task ran");
    assert!(matches!(handled, Ok(CloseReason::Local)), "{handled:?}");
    let outcome = tokio::time::timeout(within, turn).await.expect("ended");
    let outcome = outcome.expect("the task ran");
    assert!(
        matches!(outcome, TurnOutcome::HostExited(CloseReason::Local)),
        "{outcome:?}"
    );
    // The handles held the connection; the client's drop killed the host all the same.
    let exit = connection.process().expect("spawned").wait_exit(within);
    let exit = exit.expect("the host ended");
    assert_eq!(exit.kind, msp_rpc::ExitKind::Killed, "{exit}");
}

/// An awaiting handler stopped while it waits is dropped, and its stage stays pending for
/// the program to decide.
#[tokio::test]
async fn the_sessions_handler_stopped_while_it_awaits_is_dropped() {
    let Some(scenario) = support::scenario("snapshot-suffix-pending-approval") else {
        return;
    };
    let client = spawn(&scenario, &[]).await;
    let (session, resumed) = resume_with_snapshot(&client).await;
    let running = resumed.session.active_turn_id.expect("a turn runs");
    let stop = HandlerStop::new();
    let (offered, mut first_offer) = tokio::sync::mpsc::unbounded_channel();
    let handler = {
        let (session, stop) = (session.clone(), stop.clone());
        tokio::spawn(async move {
            session
                .decide_approvals_async_until(&stop, |approval| {
                    let _ = offered.send(approval.id().to_owned());
                    std::future::pending::<Option<Decision>>()
                })
                .await
        })
    };
    assert_eq!(first_offer.recv().await.as_deref(), Some(APPROVAL));
    stop.stop();
    // Bounded so that a handler never dropped fails here rather than hanging the run.
    let ended = tokio::time::timeout(Duration::from_secs(20), handler).await;
    let ended = ended.expect("stopped").expect("the task ran");
    assert!(matches!(ended, Ok(None)), "{ended:?}");
    assert!(client.connection().close_reason().is_none());
    let approval = session.next_approval(None).await.expect("still pending");
    session
        .decide(&approval, "allow_session", None)
        .await
        .expect("decided by the program");
    let outcome = session.turn(&running).completed().await;
    assert_eq!(outcome.terminal(), Some(&TurnTerminal::Completed));
    drop(session);
    assert_eq!(client.close().await.and_then(|e| e.code), Some(0));
}

/// `handle_approvals`: a handler on a task the client spawns, stopped while it awaits,
/// dropped, or panicking, leaves the stage pending for the next, which decides it and ends
/// with the connection.
#[tokio::test]
async fn a_handler_on_its_own_task_is_stopped_or_dropped_and_replaced() {
    let Some(scenario) = support::scenario("snapshot-suffix-pending-approval") else {
        return;
    };
    let client = spawn(&scenario, &[]).await;
    let (session, resumed) = resume_with_snapshot(&client).await;
    let running = resumed.session.active_turn_id.expect("a turn runs");
    let (offered, mut offers) = tokio::sync::mpsc::unbounded_channel();
    let awaiting = {
        let offered = offered.clone();
        session.handle_approvals_async(move |approval| {
            let _ = offered.send(approval.id().to_owned());
            std::future::pending::<Option<Decision>>()
        })
    };
    assert_eq!(offers.recv().await.as_deref(), Some(APPROVAL));
    // Bounded so that a handler never dropped fails here rather than hanging the run.
    let ended = tokio::time::timeout(Duration::from_secs(20), awaiting.stop()).await;
    assert!(matches!(ended, Ok(Ok(None))), "stopped: {ended:?}");
    let dropped = {
        let offered = offered.clone();
        session.handle_approvals(move |approval, _| {
            let _ = offered.send(approval.id().to_owned());
            None
        })
    };
    assert_eq!(
        offers.recv().await.as_deref(),
        Some(APPROVAL),
        "offered again"
    );
    drop(dropped);
    let panicking = session.handle_approvals(move |_, _| {
        let _ = offered.send(String::new());
        panic!("a policy's bug")
    });
    assert_eq!(offers.recv().await.as_deref(), Some(""));
    let stopped = tokio::spawn(panicking.stop()).await;
    assert!(stopped.is_err_and(|e| e.is_panic()), "the panic resumed");
    assert!(session.read(|fold| fold.pending_approval(APPROVAL).is_some()));

    // Started on a thread outside the runtime: the handler runs on the client's.
    let starting = session.clone();
    let last = std::thread::spawn(move || {
        starting.handle_approvals(|_, _| Some(Decision::choose("allow_session")))
    })
    .join()
    .expect("started outside a runtime");
    let resolved = session.resolved(APPROVAL, WAIT).await.expect("resolved");
    assert_eq!(resolved.decision, ApprovalDecision::ApprovedForSession);
    let outcome = session.turn(&running).completed().await;
    assert_eq!(outcome.terminal(), Some(&TurnTerminal::Completed));
    drop(session);
    assert_eq!(client.close().await.and_then(|e| e.code), Some(0));
    let ended = last.stop().await;
    assert!(
        matches!(ended, Ok(Some(_))),
        "the connection's end: {ended:?}"
    );
    assert!(offers.try_recv().is_err(), "nothing offered after");
}

#[tokio::test]
async fn the_sessions_handler_on_a_task_decides_an_approval_pending_at_the_resume() {
    let Some(scenario) = support::scenario("snapshot-suffix-pending-approval") else {
        return;
    };
    let client = spawn(&scenario, &[]).await;
    let (session, resumed) = resume_with_snapshot(&client).await;
    let running = resumed.session.active_turn_id.expect("a turn runs");
    // Spawned: the session and its handler's wait are `Send`.
    let deciding = session.clone();
    let handler = tokio::spawn(async move {
        let mut stages = Vec::new();
        let allow = [ApprovalDecision::ApprovedForSession];
        let closed = deciding
            .decide_approvals(|approval, stage| {
                stages.push(approval.id().to_owned());
                Decision::first_offered(stage, &allow)
            })
            .await;
        (stages, closed)
    });
    allowed_for_the_session(client, session, &running, handler).await;
}

#[tokio::test]
async fn the_model_is_set_through_the_sessions_method() {
    let Some(scenario) = support::scenario("model-round-trip") else {
        return;
    };
    let session_id = "018f7294-0000-7000-8000-5f0e06800000";
    let client = spawn(&scenario, &[]).await;
    let session = client.open_session(session_id);
    let after = format!("v:{session_id}:4");
    let head = session.subscribe(Some(&after)).await.expect("subscribed");
    assert!(head.view_cursor.starts_with(&format!("v:{session_id}:")));
    let list: msp_types::ModelListParams =
        serde_json::from_value(serde_json::json!({"sessionId": session_id})).unwrap();
    let models = client
        .request::<msp_types::protocol::methods::ModelList>(&list)
        .await
        .expect("listed");
    let pick = models
        .models
        .iter()
        .find(|m| m.model_id == "gpt-5.5")
        .expect("offered");
    let mut model = msp_types::ModelSelection::builder()
        .model_id(&pick.model_id)
        .build();
    model.provider_id = Some(pick.provider_id.clone());
    let set = session.set_model(model).await.expect("accepted");
    assert_eq!(set.status, msp_types::CommandStatus::Accepted);
    let changed = session
        .wait_for(WAIT, |fold| {
            fold.state().model().map(|m| m.model_id.clone())
        })
        .await
        .expect("the change came");
    assert_eq!(changed, "gpt-5.5");
    client
        .request::<msp_types::protocol::methods::ModelList>(&list)
        .await
        .expect("listed again");
    drop(session);
    assert_eq!(client.close().await.and_then(|e| e.code), Some(0));
}

#[tokio::test]
async fn any_pending_command_is_sent_again_by_one_call_on_a_task() {
    let (Some(scenario), Some(again), Some(frames)) = (
        support::scenario("goal-set-round-trip"),
        support::resumed("goal-set-round-trip", "goal/set"),
        support::frames("goal-set-round-trip"),
    ) else {
        return;
    };
    let objective = frames
        .iter()
        .find(|(_, f)| f["method"] == "goal/set")
        .map(|(_, f)| f["params"]["objective"].as_str().unwrap().to_owned())
        .unwrap();
    // The host exits once it read the `goal/set` (line 7), before acknowledging it.
    let args = [
        "--allow",
        "session/start#/sessionId",
        "--fault",
        "after 7: exit 3",
    ];
    let lost = spawn(&scenario, &args).await;
    let (session, _) = lost
        .start_session(|command_id| {
            msp_types::SessionStartParams::builder()
                .command_id(command_id)
                .build()
        })
        .await
        .expect("started");
    assert!(session.goal_set(&objective).await.is_err());
    let pending = session.pending();
    assert_eq!(pending.len(), 1, "{pending:?}");
    drop(session);
    lost.close().await;

    let client = spawn(again.path(), &[]).await;
    let (session, _) = client
        .resume_session("0198f0aa-1111-7000-8000-0000000000aa")
        .await
        .expect("resumed");
    let resending = session.clone();
    let command = pending[0].clone();
    let resent = tokio::spawn(async move { resending.resend(&command).await });
    let resent = resent.await.expect("the task ran").expect("sent again");
    let Resent::Acknowledged(msp_types::ClientResult::GoalSet(ack)) = resent else {
        panic!("a goal/set's acknowledgement: {resent:?}");
    };
    assert_eq!(ack.command_id, pending[0].command_id());
    assert!(session.pending().is_empty(), "acknowledged");
    drop(session);
    assert_eq!(client.close().await.and_then(|e| e.code), Some(0));
}

#[tokio::test]
async fn the_sessions_handler_may_await_its_decision() {
    let Some(scenario) = support::scenario("snapshot-suffix-pending-approval") else {
        return;
    };
    let client = spawn(&scenario, &[]).await;
    let (session, resumed) = resume_with_snapshot(&client).await;
    let running = resumed.session.active_turn_id.expect("a turn runs");
    let deciding = session.clone();
    let handler = tokio::spawn(async move {
        let mut asked = Vec::new();
        let closed = deciding
            .decide_approvals_async(|approval| {
                asked.push(approval.id().to_owned());
                async move {
                    // Another task answers, as a person or a policy service would.
                    let offered = approval.stage().map(|s| s.choices.len());
                    let answer =
                        tokio::spawn(
                            async move { offered.map(|_| Decision::choose("allow_session")) },
                        );
                    answer.await.expect("answered")
                }
            })
            .await;
        (asked, closed)
    });
    allowed_for_the_session(client, session, &running, handler).await;
}

#[tokio::test]
async fn a_fork_and_a_side_chat_are_sessions_of_their_own() {
    let Some((dir, [forked, side])) = support::fork_and_side_chat() else {
        return;
    };
    let client = spawn(dir.path(), &[]).await;
    let (session, _) = client
        .resume_session("0198f0aa-1111-7000-8000-0000000000aa")
        .await
        .expect("resumed");
    let (fork, _) = client
        .fork_session(|command_id| {
            msp_types::SessionForkParams::builder()
                .command_id(command_id)
                .session_id("0198f0aa-1111-7000-8000-0000000000aa")
                .build()
        })
        .await
        .expect("forked");
    assert_eq!(fork.id(), forked);
    let seeded = fork.read(|fold| fold.pending_approvals().len());
    assert_eq!(seeded, 1, "the fork's fold is seeded from its result");
    let told = |fold: &msp_session::Fold| fold.state().goal().map(drop);
    fork.wait_for(WAIT, told)
        .await
        .expect("the fork is followed");
    let (chat, _) = fork.side_chat().await.expect("opened");
    assert_eq!(chat.id(), side);
    chat.wait_for(WAIT, told)
        .await
        .expect("the side chat is followed");
    assert!(fork.pending().is_empty(), "the side chat was acknowledged");
    drop((session, fork, chat));
    assert_eq!(client.close().await.and_then(|e| e.code), Some(0));
}

#[tokio::test]
async fn a_handler_still_waiting_when_the_host_resolves_its_stage_is_dropped() {
    let Some(dir) = support::resolved_by_host_once_renamed() else {
        return;
    };
    let (client, session, turn) = start_a_turn(dir.path(), &[], "Bump the version.").await;
    let deciding = session.clone();
    let renaming = session.clone();
    // A person who never answers: the host resolves the stage (timed out) meanwhile, once
    // the session was renamed, which the handler does when asked.
    let handler = tokio::spawn(async move {
        let mut asked = 0;
        let closed = deciding
            .decide_approvals_async(|_| {
                asked += 1;
                let renaming = renaming.clone();
                async move {
                    renaming.rename("meanwhile").await.expect("renamed");
                    std::future::pending::<Option<Decision>>().await
                }
            })
            .await;
        (asked, closed)
    });
    let resolved = session
        .resolved(APPROVAL, WAIT)
        .await
        .expect("resolved by the host");
    assert_eq!(resolved.decision, ApprovalDecision::TimedOut);
    assert_eq!(
        turn.completed().await.terminal(),
        Some(&TurnTerminal::Completed)
    );
    drop((turn, session));
    assert_eq!(client.close().await.and_then(|e| e.code), Some(0));
    // Bounded so that a handler never dropped fails here rather than hanging the run.
    let ended = tokio::time::timeout(Duration::from_secs(20), handler).await;
    let (asked, closed) = ended
        .expect("the handler ended with the connection")
        .expect("it ran");
    assert_eq!(
        asked, 1,
        "asked once, dropped when the host resolved the stage"
    );
    assert!(closed.is_ok(), "{closed:?}");
}

#[tokio::test]
async fn a_pulled_decision_that_lost_the_race_is_not_offered_again() {
    let Some(dir) = support::lost_race_resolved_once_renamed() else {
        return;
    };
    let (client, session, turn) = start_a_turn(dir.path(), &[], "Bump the version.").await;
    let approval = turn.next_approval().await.expect("asked").expect("one");
    let lost = session.decide(&approval, "allow_session", None).await;
    let lost = lost.expect_err("another decision won");
    assert!(lost.stage_gone(), "{lost}");
    // Still pending in the fold (the host resolves it once renamed), but not offered again.
    assert!(session.read(|fold| fold.pending_approval(APPROVAL).is_some()));
    let again = session.next_approval(Some(Duration::from_millis(50))).await;
    assert!(matches!(again, Err(Error::TimedOut { .. })), "{again:?}");
    session.rename("meanwhile").await.expect("renamed");
    let resolved = session.resolved(APPROVAL, WAIT).await;
    let resolved = resolved.expect("resolved by the host");
    assert_eq!(resolved.decision, ApprovalDecision::TimedOut);
    assert_eq!(turn.next_approval().await.expect("the turn's end"), None);
    assert_eq!(
        turn.completed().await.terminal(),
        Some(&TurnTerminal::Completed)
    );
    drop((turn, session));
    assert_eq!(client.close().await.and_then(|e| e.code), Some(0));
}

#[tokio::test]
async fn a_handler_awaiting_a_person_is_offered_the_stage_again_when_its_choices_change() {
    let Some(dir) = support::choices_changed_once_renamed() else {
        return;
    };
    let (client, session, turn) = start_a_turn(dir.path(), &[], "Bump the version.").await;
    let deciding = session.clone();
    let renaming = session.clone();
    let handler = tokio::spawn(async move {
        let mut offered = Vec::new();
        let closed = deciding
            .decide_approvals_async(|approval| {
                let stage = approval.stage().expect("a stage");
                let choices: Vec<String> =
                    stage.choices.iter().map(|c| c.choice_id.clone()).collect();
                offered.push(choices);
                let first = offered.len() == 1;
                let renaming = renaming.clone();
                async move {
                    if !first {
                        return Some(Decision::choose("allow_once"));
                    }
                    // A person who has not answered when the host changes the choices.
                    renaming.rename("meanwhile").await.expect("renamed");
                    std::future::pending::<Option<Decision>>().await
                }
            })
            .await;
        (offered, closed)
    });
    // Bounded so that a handler left awaiting the old choices fails here.
    let outcome = tokio::time::timeout(Duration::from_secs(20), turn.completed()).await;
    let outcome = outcome.expect("the changed stage was decided");
    assert_eq!(outcome.terminal(), Some(&TurnTerminal::Completed));
    drop((turn, session));
    assert_eq!(client.close().await.and_then(|e| e.code), Some(0));
    let ended = tokio::time::timeout(Duration::from_secs(20), handler).await;
    let (offered, closed) = ended.expect("ended with the connection").expect("it ran");
    assert_eq!(
        offered,
        [
            vec!["allow_once", "allow_session", "abort"],
            vec!["allow_once", "abort"]
        ],
        "the stage, then the same stage with its new choices"
    );
    assert!(closed.is_ok(), "{closed:?}");
}

/// As the blocking test: a decision refused as `approvalChoiceInvalid` before the host's
/// change of the stage's choices arrives is offered again with them once it does.
#[tokio::test]
async fn a_stage_refused_before_its_change_arrives_is_offered_again_once_it_does() {
    let Some(dir) = support::refused_before_the_change() else {
        return;
    };
    let (client, session, turn) = start_a_turn(dir.path(), &[], "Bump the version.").await;
    let mut offered = Vec::new();
    let outcome = turn
        .completed_deciding(|_, stage| {
            let choices: Vec<String> = stage.choices.iter().map(|c| c.choice_id.clone()).collect();
            offered.push(choices);
            let choice = if offered.len() == 1 {
                "allow_session"
            } else {
                "allow_once"
            };
            Some(Decision::choose(choice))
        })
        .await
        .expect("a refused choice is not the handler's end");
    assert_eq!(
        offered,
        [
            vec!["allow_once", "allow_session", "abort"],
            vec!["allow_once", "abort"]
        ],
        "the stage, then (once the change came) the same stage with its new choices"
    );
    assert_eq!(outcome.terminal(), Some(&TurnTerminal::Completed));
    drop((turn, session));
    assert_eq!(client.close().await.and_then(|e| e.code), Some(0));
}

/// As the blocking test: a host request comes among its session's notifications where the
/// wire has it, though the handler replies its receipt as soon as it is read; three frames
/// before the session opens, three after.
#[tokio::test]
async fn a_host_request_reaches_its_sessions_events_in_wire_order() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let (client_side, host_side) = tokio::io::duplex(1 << 16);
    let (client_reader, client_writer) = tokio::io::split(client_side);
    let (host_reader, mut host_writer) = tokio::io::split(host_side);
    let host = tokio::spawn(async move {
        let mut lines = BufReader::new(host_reader).lines();
        let mut sent = Vec::new();
        while let Some(line) = lines.next_line().await.unwrap() {
            let frame: serde_json::Value = serde_json::from_str(&line).unwrap();
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
            let batch = format!("{batch}{response}\n");
            host_writer.write_all(batch.as_bytes()).await.unwrap();
        }
        sent
    });
    let client = Client::over(client_reader, client_writer, support::options())
        .await
        .expect("handshake");
    let session = client.open_session("s");
    client
        .request::<msp_types::protocol::methods::ModelList>(&msp_types::ModelListParams::new())
        .await
        .expect("the models");
    let mut events = Vec::new();
    for _ in 0..6 {
        let event = session.next_event_timeout(Duration::from_secs(10)).await;
        events.push(event.unwrap().unwrap());
    }
    assert_eq!(
        support::folded_methods(&events),
        support::ITEM_QUESTION_ITEM_TWICE
    );
    assert_eq!(session.read(|fold| fold.pending_prompts().len()), 2);
    drop(session);
    client.close().await;
    let sent = host.await.unwrap();
    for id in [1, 4] {
        let receipt = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {}});
        assert!(sent.contains(&receipt), "the receipt of {id}: {sent:?}");
    }
}

/// As on the blocking driver: a command refused as `overloaded` (retryable) is sent again
/// with its `commandId`, and an acknowledgement of another command is an error.
#[tokio::test]
async fn a_retryable_refusal_is_sent_again_with_the_same_command_id() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let (client_side, host_side) = tokio::io::duplex(1 << 16);
    let (client_reader, client_writer) = tokio::io::split(client_side);
    let (host_reader, mut host_writer) = tokio::io::split(host_side);
    // Refuses the first turn/interrupt as overloaded, acknowledges the second, and
    // acknowledges the third as another command's.
    let host = tokio::spawn(async move {
        let mut lines = BufReader::new(host_reader).lines();
        let mut ids = Vec::new();
        while let Some(line) = lines.next_line().await.unwrap() {
            let frame: serde_json::Value = serde_json::from_str(&line).unwrap();
            let command_id = frame["params"]["commandId"].clone();
            let reply = match frame["method"].as_str() {
                Some("initialize") => serde_json::json!({"result": support::initialize_result()}),
                Some("turn/interrupt") => {
                    ids.push(command_id.as_str().unwrap().to_owned());
                    match ids.len() {
                        1 => {
                            serde_json::json!({"error": {"code": -32001, "message": "overloaded"}})
                        }
                        2 => {
                            serde_json::json!({"result": {"commandId": command_id, "status": "accepted", "turnId": "t"}})
                        }
                        _ => {
                            serde_json::json!({"result": {"commandId": "someone-else", "status": "accepted", "turnId": "t"}})
                        }
                    }
                }
                _ => continue,
            };
            let mut response = reply;
            response["jsonrpc"] = "2.0".into();
            response["id"] = frame["id"].clone();
            let line = format!("{response}\n");
            host_writer.write_all(line.as_bytes()).await.unwrap();
        }
        ids
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
    .await
    .expect("handshake");
    let session = client.open_session("s");
    let acked = session.interrupt(None, false).await.expect("acknowledged");
    let other = session.interrupt(None, false).await;
    assert!(
        matches!(&other, Err(Error::AckMismatch { acknowledged, .. }) if acknowledged == "someone-else"),
        "{other:?}"
    );
    drop(session);
    client.close().await;
    let ids = host.await.unwrap();
    assert_eq!(ids.len(), 3, "{ids:?}");
    assert_eq!(ids[0], ids[1], "sent again with its commandId");
    assert_eq!(acked.command_id, ids[0]);
    assert_ne!(ids[2], ids[0], "another command");
}

/// A command given up (its future dropped) while it waits to send again after a refusal
/// for now was not applied: it is not pending. One given up while its attempt awaits the
/// host's answer may have been: it stays pending, to send again.
#[tokio::test]
async fn a_command_given_up_is_pending_only_while_an_attempt_may_have_been_applied() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let (client_side, host_side) = tokio::io::duplex(1 << 16);
    let (client_reader, client_writer) = tokio::io::split(client_side);
    let (host_reader, mut host_writer) = tokio::io::split(host_side);
    // Refuses every session/rename as overloaded and never answers goal/set; after either,
    // a notification of the session, which the test waits for.
    let host = tokio::spawn(async move {
        let mut lines = BufReader::new(host_reader).lines();
        let mut cursor = 0;
        while let Some(line) = lines.next_line().await.unwrap() {
            let frame: serde_json::Value = serde_json::from_str(&line).unwrap();
            let reply = match frame["method"].as_str() {
                Some("initialize") => serde_json::json!({"result": support::initialize_result()}),
                Some("session/rename") => {
                    serde_json::json!({"error": {"code": -32001, "message": "overloaded"}})
                }
                Some("goal/set") => serde_json::Value::Null,
                _ => continue,
            };
            let mut out = String::new();
            if !reply.is_null() {
                let mut response = reply;
                response["jsonrpc"] = "2.0".into();
                response["id"] = frame["id"].clone();
                out.push_str(&format!("{response}\n"));
            }
            if frame["method"] != "initialize" {
                cursor += 1;
                let named = serde_json::json!({"jsonrpc": "2.0", "method": "session/nameChanged",
                    "params": {"sessionId": "s", "name": format!("n{cursor}"), "viewCursor": format!("v:s:{cursor}"),
                        "sourceRange": {"stream": {"kind": "run", "id": "t1"}, "first": {"id": "r1", "sequence": 1}, "last": {"id": "r1", "sequence": 1}}}});
                out.push_str(&format!("{named}\n"));
            }
            host_writer.write_all(out.as_bytes()).await.unwrap();
        }
    });
    // A wait before sending again long enough never to end within the test.
    let retry = msp_client::Retry {
        attempts: 3,
        backoff: Duration::from_secs(3600),
    };
    let client = Client::over(
        client_reader,
        client_writer,
        support::options().retry(retry),
    )
    .await
    .expect("handshake");
    let session = client.open_session("s");
    // The refusal is read before the notification after it, and the send, polled first,
    // takes it before the wait sees the notification: it is given up while it waits.
    let named = |name: &'static str| {
        let session = session.clone();
        async move {
            session
                .wait_for(WAIT, |fold| {
                    (fold.state().name().map(|n| n.name.as_str()) == Some(name)).then_some(())
                })
                .await
        }
    };
    tokio::select! {
        biased;
        sent = session.rename("x") => panic!("the wait outlasts the test: {sent:?}"),
        seen = named("n1") => seen.expect("the notification after the refusal"),
    }
    assert_eq!(
        session.pending(),
        [],
        "refused for now, then given up: not applied"
    );
    tokio::select! {
        biased;
        sent = session.goal_set("ship") => panic!("never answered: {sent:?}"),
        seen = named("n2") => seen.expect("the notification after the request"),
    }
    let pending = session.pending();
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert_eq!(pending[0].method(), "goal/set");
    drop(session);
    client.close().await;
    host.await.unwrap();
}

/// As on the blocking driver: while one session's `view/page` goes unanswered (its refill a
/// task of its own), another session's frames still reach it, and the refill ends once its
/// page is answered.
#[tokio::test]
async fn a_refill_paging_holds_up_no_other_session() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let (client_side, host_side) = tokio::io::duplex(1 << 16);
    let (client_reader, client_writer) = tokio::io::split(client_side);
    let (host_reader, mut host_writer) = tokio::io::split(host_side);
    let item = |session: &str, n: u32| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"item/started","params":{{"sessionId":"{session}","viewCursor":"v:{n}","item":{{"itemId":"i{n}","kind":"agentMessage","revision":1,"status":"inProgress","turnId":"t"}}}}}}"#
        )
    };
    // At the first `model/list`, session b's gap and, after it, an item of session a; the
    // refill's page is refused at the second (at once, when asked for after it).
    let host = tokio::spawn(async move {
        let mut lines = BufReader::new(host_reader).lines();
        let (mut lists, mut page) = (0, None);
        let refused = |id: &serde_json::Value| {
            serde_json::json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32603, "message": "not now"}})
        };
        while let Some(line) = lines.next_line().await.unwrap() {
            let frame: serde_json::Value = serde_json::from_str(&line).unwrap();
            let mut batch = String::new();
            let result = match frame["method"].as_str() {
                Some("initialize") => support::initialize_result(),
                Some("view/page") if lists < 2 => {
                    page = Some(frame["id"].clone());
                    continue;
                }
                Some("view/page") => {
                    let line = format!("{}\n", refused(&frame["id"]));
                    host_writer.write_all(line.as_bytes()).await.unwrap();
                    continue;
                }
                Some("model/list") => {
                    lists += 1;
                    if lists == 1 {
                        let gap = r#"{"jsonrpc":"2.0","method":"view/gap","params":{"sessionId":"b","after":"v:1","next":"v:3"}}"#;
                        batch = format!("{}\n{gap}\n{}\n", item("b", 1), item("a", 7));
                    } else if let Some(id) = page.take() {
                        batch = format!("{}\n", refused(&id));
                    }
                    support::models()
                }
                _ => continue,
            };
            let response =
                serde_json::json!({"jsonrpc": "2.0", "id": frame["id"], "result": result});
            let line = format!("{batch}{response}\n");
            host_writer.write_all(line.as_bytes()).await.unwrap();
        }
    });
    let client = Client::over(client_reader, client_writer, support::options())
        .await
        .expect("handshake");
    let (a, b) = (client.open_session("a"), client.open_session("b"));
    let params = msp_types::ModelListParams::new();
    let list = || client.request::<msp_types::protocol::methods::ModelList>(&params);
    list().await.expect("the models");
    let event = a.next_event_timeout(Duration::from_secs(10)).await;
    assert_eq!(
        support::folded_methods(&[event.expect("in time").expect("an event")]),
        ["item/started"]
    );
    list().await.expect("the models");
    loop {
        let event = b.next_event_timeout(Duration::from_secs(10)).await;
        match event.expect("in time").expect("an event") {
            msp_client::Event::Refilled { .. } => break,
            _ => continue,
        }
    }
    assert!(b.read(|fold| fold.gap().failure().is_some()), "refused");
    drop((a, b));
    client.close().await;
    host.await.unwrap();
}

#[tokio::test]
async fn stored_sessions_are_listed_page_by_page_and_read_and_a_session_is_unfollowed() {
    let Some(dir) = support::listed_read_and_unfollowed() else {
        return;
    };
    let session_id = "0198f0aa-1111-7000-8000-0000000000aa";
    let client = spawn(dir.path(), &[]).await;
    assert!(client.durable(), "the recording's host is durable");
    let mut pages = client.list_sessions(msp_types::SessionListParams::builder().limit(1).build());
    let mut ids = Vec::new();
    while let Some(page) = pages.next_page().await {
        let page = page.expect("listed");
        ids.extend(page.sessions.into_iter().map(|session| session.session_id));
    }
    assert_eq!(ids, [session_id, "0198f0aa-1111-7000-8000-0000000000ab"]);
    let read = client.read_session(session_id, true).await.expect("read");
    assert_eq!(read.session.session_id, session_id);
    let (session, _) = client.resume_session(session_id).await.expect("resumed");
    session.unsubscribe().await.expect("unfollowed");
    drop(session);
    assert_eq!(client.close().await.and_then(|e| e.code), Some(0));
}

/// An answer dropped while in flight (a `timeout` or `select!` around it) leaves its prompt
/// offered again: it may never have reached the host.
#[tokio::test]
async fn a_prompt_whose_answer_was_dropped_in_flight_is_offered_again() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let (client_side, host_side) = tokio::io::duplex(1 << 16);
    let (client_reader, client_writer) = tokio::io::split(client_side);
    let (host_reader, mut host_writer) = tokio::io::split(host_side);
    // At `model/list`, a question of session s; its first answer is never acknowledged, the
    // second is (and the question not settled yet).
    let host = tokio::spawn(async move {
        let mut lines = BufReader::new(host_reader).lines();
        let mut answers = 0;
        while let Some(line) = lines.next_line().await.unwrap() {
            let frame: serde_json::Value = serde_json::from_str(&line).unwrap();
            let (result, before) = match frame["method"].as_str() {
                Some("initialize") => (support::initialize_result(), String::new()),
                Some("userInput/answer") if answers == 0 => {
                    answers += 1;
                    continue;
                }
                Some("userInput/answer") => {
                    let command_id = frame["params"]["commandId"].clone();
                    let ack = serde_json::json!({"commandId": command_id,
                        "status": "accepted", "userInputId": "p1"});
                    (ack, String::new())
                }
                Some("model/list") => {
                    let question = r#"{"jsonrpc":"2.0","id":"q","method":"userInput/request","params":{"sessionId":"s","userInputId":"p1","turnId":"t","itemId":"i","toolCallId":"c","toolName":"request_user_input","viewCursor":"v:1","questions":[{"id":"db","header":"Database","question":"Which?","options":[{"label":"Postgres"}],"selection":{"mode":"single"}}]}}"#;
                    (support::models(), format!("{question}\n"))
                }
                _ => continue,
            };
            let response =
                serde_json::json!({"jsonrpc": "2.0", "id": frame["id"], "result": result});
            let line = format!("{before}{response}\n");
            host_writer.write_all(line.as_bytes()).await.unwrap();
        }
    });
    let client = Client::over(client_reader, client_writer, support::options())
        .await
        .expect("handshake");
    let session = client.open_session("s");
    let params = msp_types::ModelListParams::new();
    client
        .request::<msp_types::protocol::methods::ModelList>(&params)
        .await
        .expect("the models");
    let prompt = session.next_prompt(WAIT).await.expect("the question");
    {
        let mut answer = pin!(session.answer(prompt.id(), [Answer::label("db", "Postgres")]));
        let mut sent = Context::from_waker(Waker::noop());
        assert!(answer.as_mut().poll(&mut sent).is_pending(), "in flight");
        let hidden = session.next_prompt(Some(Duration::ZERO)).await;
        assert!(matches!(hidden, Err(Error::TimedOut { .. })), "{hidden:?}");
    }
    let again = session.next_prompt(WAIT).await.expect("offered again");
    assert_eq!(again.id(), "p1");
    session
        .answer(again.id(), [Answer::label("db", "Postgres")])
        .await
        .expect("accepted");
    let hidden = session.next_prompt(Some(Duration::ZERO)).await;
    assert!(
        matches!(hidden, Err(Error::TimedOut { .. })),
        "accepted, not offered again: {hidden:?}"
    );
    drop(session);
    client.close().await;
    host.await.unwrap();
}

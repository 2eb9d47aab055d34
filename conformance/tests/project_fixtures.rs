//! The project's own transcripts (`tests/fixtures/`): the seed's exchange and the evolution
//! cases, each frame lossless, and what this version does not know kept, not dropped.

mod support;

use std::path::PathBuf;

use msp_conformance::Runner;
use msp_types::{
    ClientRequest, ClientResult, Frame, HistoryMode, ItemStatus, Message, PendingRequestKind,
    ProtocolNotification, ServerRequest, ServerResult, SessionStatus, ToolReceipt,
    ToolReceiptOperation, UserInputOutcome,
};
use serde_json::{json, Value};
use support::Played;

fn fixtures() -> PathBuf {
    support::repo_root().join("tests/fixtures")
}

fn evolution(name: &str) -> (Runner, Vec<Played>) {
    let runner = Runner::new().expect("the schema builds a model");
    let file = fixtures().join("evolution").join(format!("{name}.ndjson"));
    let played = support::play(&runner, &file);
    for p in &played {
        assert!(
            p.checked.lossless,
            "{}:{}: {:?}",
            file.display(),
            p.line,
            p.checked.failure
        );
    }
    (runner, played)
}

fn at(played: &[Played], line: usize) -> &Played {
    played
        .iter()
        .find(|p| p.line == line)
        .unwrap_or_else(|| panic!("no frame at line {line}"))
}

/// The member at `pointer` is in the input and comes back unchanged in the output.
fn survives(played: &[Played], line: usize, pointer: &str) {
    let p = at(played, line);
    let sent = p
        .input
        .pointer(pointer)
        .unwrap_or_else(|| panic!("line {line}: the fixture has no {pointer}"));
    assert_eq!(
        p.output().pointer(pointer),
        Some(sent),
        "line {line}: {pointer} did not survive"
    );
}

fn typed(p: &Played) -> Frame {
    Frame::parse_guessing_sender(&p.raw).expect("the frame decodes")
}

fn result_of(p: &Played, method: &str) -> ClientResult {
    let Message::Result { result, .. } = typed(p).message else {
        panic!("line {}: not a result", p.line);
    };
    ClientResult::decode_raw(method, result.as_raw()).expect("the result decodes")
}

fn notification(p: &Played) -> ProtocolNotification {
    match typed(p).message {
        Message::Notification(n) => n,
        other => panic!("line {}: not a notification: {other:?}", p.line),
    }
}

#[test]
fn every_project_fixture_round_trips_losslessly() {
    let runner = Runner::new().expect("the schema builds a model");
    let seed = fixtures().join("seed-answer-user-input/transcript.ndjson");
    assert!(
        seed.is_file(),
        "the seed's exchange is at {}",
        seed.display()
    );
    let report = runner.run(&fixtures()).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{}", report.summary());
    let listed: String = report.failures.iter().map(|f| format!("\n  {f}")).collect();
    assert!(report.failures.is_empty(), "failures:{listed}");
    assert_eq!(report.lossless, report.frames);
    assert!(report.frames >= 12 + 40, "the seed and the evolution cases");
    assert!(report.untyped > 0, "the unknown methods went through");
}

#[test]
fn unknown_members_survive_at_every_depth() {
    let (_, played) = evolution("unknown-members");
    for (line, pointer) in [
        (1, "/trace"),
        (1, "/params/futureFlag"),
        (1, "/params/clientInfo/futureClientField"),
        (2, "/result/futureServerField"),
        (2, "/result/schema/futureSchemaNote"),
        (3, "/emittedAtMs"),
        (4, "/params/futureResumeHint"),
        (5, "/result/futureTopLevel"),
        (5, "/result/session/futureSessionFacet"),
        (5, "/result/session/approvalMode/futureModeHint"),
        (5, "/result/history/futureHistoryNote"),
        (5, "/result/pendingRequests/0/futureRank"),
        (6, "/params/item/futureItemField"),
        (6, "/params/item/toolReceipt/futureReceiptField"),
        (6, "/params/sourceRange/stream/futureStreamField"),
        (7, "/params/answers/0/futureAnswerField"),
        (8, "/result/futureAckField"),
        (9, "/params/answers/0/futureSettledAnswerField"),
        (11, "/error/futureErrorField"),
        (11, "/error/data/futureDataField"),
        (11, "/emittedAtMs"),
    ] {
        survives(&played, line, pointer);
    }

    // Held by the typed values themselves, down to a tagged union's arm.
    let ClientResult::SessionResume(resumed) = result_of(at(&played, 5), "session/resume") else {
        panic!("session/resume result");
    };
    assert_eq!(resumed.unknown["futureTopLevel"], json!(0.25));
    assert!(resumed.session.unknown.contains_key("futureSessionFacet"));
    let mode = resumed
        .session
        .approval_mode
        .as_ref()
        .expect("approvalMode");
    assert!(mode.unknown.contains_key("futureModeHint"));
    assert!(resumed.pending_requests[0]
        .unknown
        .contains_key("futureRank"));

    let ProtocolNotification::ItemCompleted(item) = notification(at(&played, 6)) else {
        panic!("item/completed");
    };
    let Some(ToolReceipt::Cron(receipt)) = &item.item.tool_receipt else {
        panic!("a cron receipt");
    };
    assert_eq!(
        receipt.unknown["futureReceiptField"],
        json!({"jobs": ["nightly"]})
    );
    assert!(item
        .source_range
        .stream
        .unknown
        .contains_key("futureStreamField"));

    let Message::Error { error, .. } = typed(at(&played, 11)).message else {
        panic!("an error response");
    };
    assert!(error.unknown.contains_key("futureErrorField"));
    let data = error.data.as_ref().expect("error data");
    assert!(data.unknown.contains_key("futureDataField"));
}

#[test]
fn unknown_open_enum_values_survive() {
    let (_, played) = evolution("unknown-enum-values");
    for (line, pointer) in [
        (2, "/result/session/status"),
        (2, "/result/session/approvalMode/source"),
        (2, "/result/history/mode"),
        (2, "/result/history/noneReason"),
        (2, "/result/pendingRequests/0/kind"),
        (3, "/params/item/status"),
        (3, "/params/item/toolReceipt/operation"),
        (3, "/params/item/toolReceipt/outcome"),
        (4, "/params/item/kind"),
        (4, "/params/item/toolReceipt"),
        (6, "/result/status"),
        (7, "/params/outcome"),
    ] {
        survives(&played, line, pointer);
    }

    let ClientResult::SessionResume(resumed) = result_of(at(&played, 2), "session/resume") else {
        panic!("session/resume result");
    };
    assert_eq!(
        resumed.session.status,
        SessionStatus::Unknown("hibernating".to_owned())
    );
    assert_eq!(
        resumed.history.mode,
        HistoryMode::Unknown("streamed".to_owned())
    );
    assert_eq!(
        resumed.pending_requests[0].kind,
        PendingRequestKind::Unknown("elicitation".to_owned())
    );

    let ProtocolNotification::ItemCompleted(item) = notification(at(&played, 3)) else {
        panic!("item/completed");
    };
    assert_eq!(
        item.item.status,
        ItemStatus::Unknown("superseded".to_owned())
    );
    let Some(ToolReceipt::Cron(receipt)) = &item.item.tool_receipt else {
        panic!("a cron receipt");
    };
    assert_eq!(
        receipt.operation,
        ToolReceiptOperation::Unknown("reschedule".to_owned())
    );

    // An unknown arm of an open tagged union keeps the whole object, tag included.
    let ProtocolNotification::ItemCompleted(item) = notification(at(&played, 4)) else {
        panic!("item/completed");
    };
    let Some(ToolReceipt::Unknown(object)) = &item.item.tool_receipt else {
        panic!("an unknown receipt family decodes as Unknown");
    };
    assert_eq!(object["family"], json!("quantum"));
    assert_eq!(object["qubits"], json!(3));

    let ProtocolNotification::UserInputSettled(settled) = notification(at(&played, 7)) else {
        panic!("userInput/settled");
    };
    assert_eq!(
        settled.outcome,
        UserInputOutcome::Unknown("escalated".to_owned())
    );
}

#[test]
fn unknown_methods_decode_through_the_unknown_arm() {
    let (_, played) = evolution("unknown-methods");
    let untyped: Vec<usize> = played
        .iter()
        .filter(|p| p.checked.typed == Some(false))
        .map(|p| p.line)
        .collect();
    // The error answering `future/noParams` (line 7) is typed as an ErrorObject.
    assert_eq!(untyped, [4, 5, 6, 8, 9, 10, 11, 12]);
    for p in &played {
        assert_eq!(p.output(), &p.input, "line {}", p.line);
    }

    let Message::ClientRequest { request, .. } = typed(at(&played, 4)).message else {
        panic!("a request");
    };
    let ClientRequest::Unknown { method, params } = request else {
        panic!("an unknown client request");
    };
    assert_eq!(method, "future/doThing");
    assert_eq!(params.expect("params")["depth"]["a"][2], json!({"b": null}));

    let Message::Result { result, .. } = typed(at(&played, 5)).message else {
        panic!("a result");
    };
    let ClientResult::Unknown { method, result } =
        ClientResult::decode_raw("future/doThing", result.as_raw())
            .expect("an unknown result decodes")
    else {
        panic!("the result of an unknown request is Unknown");
    };
    assert_eq!(method, "future/doThing");
    assert_eq!(result["extra"], json!([1.5, "x", null]));

    let Message::ClientRequest { request, .. } = typed(at(&played, 6)).message else {
        panic!("a request");
    };
    assert!(matches!(
        request,
        ClientRequest::Unknown { params: None, .. }
    ));

    // A server's request in no table: typed by the generated dispatch as an unknown request.
    let Message::ClientRequest { request, .. } = typed(at(&played, 8)).message else {
        panic!("a request");
    };
    assert_eq!(request.method(), "future/ask");
    let Message::Result { result, .. } = typed(at(&played, 9)).message else {
        panic!("a result");
    };
    let decoded = ServerResult::decode_raw("future/ask", result.as_raw()).expect("decodes");
    assert!(matches!(decoded, ServerResult::Unknown { .. }));
    assert!(!matches!(
        ServerRequest::decode("future/ask", None).expect("decodes"),
        ServerRequest::ApprovalRequest(_) | ServerRequest::UserInputRequest(_)
    ));

    for line in [10, 11, 12] {
        let n = notification(at(&played, line));
        assert!(
            matches!(n, ProtocolNotification::Unknown { .. }),
            "line {line}"
        );
    }
}

#[test]
fn members_in_another_order_round_trip() {
    let (_, played) = evolution("member-order");
    assert_eq!(played.len(), 12);
    // `evolution` checked every frame lossless; the seed's settlement lacks `decidedAt`.
    for p in &played {
        // Really reordered: the seed's frames start with `jsonrpc`, these end with it.
        assert!(
            p.raw.ends_with("\"jsonrpc\":\"2.0\"}"),
            "line {}: not reordered",
            p.line
        );
    }
}

#[test]
fn absent_required_nullable_members_come_back_as_null() {
    let (_, played) = evolution("settled-without-decided-at");
    for (line, pointer) in [
        (2, "/result/session/activeTurnId"),
        (2, "/result/session/forkedFrom"),
        (2, "/result/session/approvalMode/lastCommandId"),
        (2, "/result/history/items"),
        (2, "/result/history/snapshot"),
        (4, "/result/nextCursor"),
        (5, "/params/decidedAt"),
        (6, "/params/decidedAt"),
        (6, "/params/clarification"),
        (6, "/params/reason"),
        (6, "/params/decidedByCommandId"),
    ] {
        let p = at(&played, line);
        assert_eq!(
            p.input.pointer(pointer),
            None,
            "line {line}: {pointer} is absent"
        );
        assert_eq!(
            p.output().pointer(pointer),
            Some(&Value::Null),
            "line {line}: {pointer} is written as null"
        );
    }

    let ProtocolNotification::UserInputSettled(settled) = notification(at(&played, 5)) else {
        panic!("userInput/settled");
    };
    assert_eq!(settled.decided_at, None);
    assert_eq!(settled.outcome, UserInputOutcome::Answered);
    let reencoded = serde_json::to_value(&settled).expect("encodes");
    assert_eq!(reencoded["decidedAt"], Value::Null);
}

/// Parses a sent line as the raw text it is, for the `\r` tolerance too.
#[test]
fn a_trailing_carriage_return_is_tolerated() {
    let runner = Runner::new().expect("the schema builds a model");
    let raw = "{\"jsonrpc\":\"2.0\",\"method\":\"initialized\"}\r";
    let mut session = msp_conformance::Session::new(runner.shapes());
    let checked = session.check(msp_conformance::Dir::Client, raw);
    assert!(checked.lossless, "{:?}", checked.failure);
}

fn client_request(p: &Played) -> ClientRequest {
    match typed(p).message {
        Message::ClientRequest { request, .. } => request,
        other => panic!("line {}: not a client request: {other:?}", p.line),
    }
}

/// Protocol 1.4.14's additions, one frame or exchange each: lossless, and typed.
#[test]
fn protocol_1_4_14_frames_round_trip_with_their_new_members_typed() {
    let runner = Runner::new().expect("the schema builds a model");
    let file = fixtures().join("protocol-1.4.14/transcript.ndjson");
    let played = support::play(&runner, &file);
    assert_eq!(played.len(), 25);
    for p in &played {
        assert!(
            p.checked.decoded && p.checked.lossless,
            "{}:{}: {:?}",
            file.display(),
            p.line,
            p.checked.failure
        );
    }

    let ClientRequest::SessionStart(start) = client_request(at(&played, 3)) else {
        panic!("session/start")
    };
    let spawned = start.spawned_by.expect("spawnedBy is typed");
    assert!(spawned.unknown.is_empty() && start.unknown.is_empty());
    let ClientRequest::SessionStart(start) = client_request(at(&played, 4)) else {
        panic!("session/start")
    };
    assert!(start.previous_session_id.is_some());
    let ClientRequest::SessionResume(resume) = client_request(at(&played, 5)) else {
        panic!("session/resume")
    };
    assert!(resume.model_id.is_some() && resume.unknown.is_empty());
    let ClientResult::SessionResume(resumed) = result_of(at(&played, 6), "session/resume") else {
        panic!("session/resume result")
    };
    assert!(resumed.abnormal_end.is_some() && resumed.session.resumed_by_client.is_some());
    let ClientRequest::ViewPage(page) = client_request(at(&played, 7)) else {
        panic!("view/page")
    };
    assert!(page.max_bytes.is_some());
    let ClientResult::SessionRead(read) = result_of(at(&played, 9), "session/read") else {
        panic!("session/read result")
    };
    let session = &read.session;
    assert!(session.drive_holder.is_some() && session.item_count.is_some());
    assert!(session.log_bytes.is_some() && session.unknown.is_empty());
    let ClientResult::SessionRead(child) = result_of(at(&played, 11), "session/read") else {
        panic!("session/read result")
    };
    let worktree = child.worktree.expect("worktree is typed");
    assert!(worktree.unknown.is_empty() && child.session.spawned_by.is_some());
    let ClientResult::SessionList(list) = result_of(at(&played, 13), "session/list") else {
        panic!("session/list result")
    };
    assert!(list.sessions.iter().any(|s| s.running_elsewhere.is_some()));
    let ClientResult::SessionResume(inline) = result_of(at(&played, 15), "session/resume") else {
        panic!("session/resume result")
    };
    let items = serde_json::to_value(&inline.history).unwrap();
    assert!(items.to_string().contains("\"earlierHistory\""));
    for (line, pointer) in [
        (16, "/params/item/held"),
        (16, "/params/item/heldFor"),
        (17, "/params/item/wakeSourceDescriptions"),
        (18, "/params/reviewerReason"),
        (20, "/params/error/requestDenied"),
    ] {
        survives(&played, line, pointer);
    }
    let ProtocolNotification::ItemStarted(started) = notification(at(&played, 16)) else {
        panic!("item/started")
    };
    assert!(started.item.held == Some(true) && started.item.held_for.is_some());
    assert!(started.item.unknown.is_empty());
    let ProtocolNotification::ItemCompleted(completed) = notification(at(&played, 17)) else {
        panic!("item/completed")
    };
    assert!(completed.item.wake_source_descriptions.is_some());
    let Message::ServerRequest {
        request: ServerRequest::ApprovalRequest(asked),
        ..
    } = typed(at(&played, 18)).message
    else {
        panic!("approval/request")
    };
    assert!(asked.reviewer_reason.is_some() && asked.unknown.is_empty());
    let ProtocolNotification::TurnCompleted(ended) = notification(at(&played, 20)) else {
        panic!("turn/completed")
    };
    assert_eq!(ended.error.map(|e| e.request_denied), Some(Some(true)));
    let ProtocolNotification::SessionClosed(closed) = notification(at(&played, 21)) else {
        panic!("session/closed")
    };
    assert_eq!(closed.reason, msp_types::SessionClosedReason::Vacated);
    let Message::Error { error, .. } = typed(at(&played, 23)).message else {
        panic!("an error response")
    };
    let entry = error.registry_entry().expect("-32039 is registered");
    assert_eq!(
        (entry.kind, entry.retryable),
        ("daemonDraining", Some(true))
    );
    let Message::Error { error, .. } = typed(at(&played, 25)).message else {
        panic!("an error response")
    };
    assert_eq!(error.registry_entry().map(|e| e.retryable), Some(None));
}

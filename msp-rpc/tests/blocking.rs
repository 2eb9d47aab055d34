//! The blocking driver over in-memory pipes, against a host double the test thread plays.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use msp_rpc::blocking::{Call, Connection};
use msp_rpc::{
    Client, Command, FingerprintPolicy, HandshakeError, Inbound, Options, Problem, Reply, RpcError,
    Warning,
};
use msp_types::protocol::methods::{self, ModelList};
use msp_types::registry::SERVED_FINGERPRINT;
use msp_types::{
    ClientInfo, InitializeParams, ModelListParams, ProtocolNotification, RequestReceipt,
    ServerRequest, UserInputAnswerParams, UserInputCancelParams,
};
use serde_json::{json, Value};
use support::{
    connect, connect_writing_through, initialize_result, notice_number, numbered_notices,
    result_line, HostDouble, MODELS, SEED_REQUEST, SEED_SETTLED,
};

const LONG: Duration = Duration::from_secs(20);

fn answer_params(n: usize) -> UserInputAnswerParams {
    UserInputAnswerParams::builder()
        .answers(vec![])
        .command_id(format!("cmd-{n}"))
        .session_id("sess")
        .user_input_id(format!("q-{n}"))
        .build()
}

fn next(conn: &Connection) -> Inbound {
    conn.next_timeout(LONG).expect("something arrives")
}

/// Sends `model/list`, and reads its frame on the host's side.
fn start_model_list(conn: &Connection, host: &mut HostDouble) -> (Call<Client, ModelList>, Value) {
    let call = conn
        .start::<ModelList>(&ModelListParams::new(), LONG)
        .unwrap();
    (call, host.recv().unwrap())
}

#[test]
fn concurrent_requests_answered_out_of_order_get_their_own_typed_results() {
    let (conn, mut host) = connect(Options::new());
    let calls: Vec<_> = (0..8)
        .map(|n| {
            conn.start::<methods::UserInputAnswerMethod>(&answer_params(n), LONG)
                .unwrap()
        })
        .collect();
    let frames: Vec<_> = (0..8).map(|_| host.recv().unwrap()).collect();
    for frame in frames.iter().rev() {
        let echoed = &frame["params"]["userInputId"];
        host.answer(
            frame,
            &format!(r#"{{"commandId":"c","status":"accepted","userInputId":{echoed}}}"#),
        );
    }
    for (n, call) in calls.into_iter().enumerate() {
        assert_eq!(call.wait().unwrap().user_input_id, format!("q-{n}"));
    }
}

/// `Duration::MAX`, the natural "no timeout", is no deadline rather than a panic, for a
/// request and for a wait on what comes.
#[test]
fn a_request_with_no_timeout_at_all_is_answered() {
    let (conn, mut host) = connect(Options::new());
    let call = conn
        .start::<ModelList>(&ModelListParams::new(), Duration::MAX)
        .unwrap();
    let frame = host.recv().unwrap();
    host.answer(&frame, MODELS);
    assert_eq!(call.wait().unwrap().provider_id, "muse");
    host.send(SEED_SETTLED);
    assert!(conn.next_timeout(Duration::MAX).is_some());
}

#[test]
fn requests_from_several_threads_share_one_connection() {
    let (conn, mut host) = connect(Options::new());
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let conn = conn.clone();
            std::thread::spawn(move || conn.request::<methods::ModelList>(&ModelListParams::new()))
        })
        .collect();
    for _ in 0..4 {
        let frame = host.recv().unwrap();
        host.answer(&frame, MODELS);
    }
    for worker in workers {
        assert_eq!(worker.join().unwrap().unwrap().provider_id, "muse");
    }
}

#[test]
fn a_request_times_out_and_its_late_response_is_dropped_quietly() {
    let (conn, mut host) = connect(Options::new());
    let error = conn
        .request_with_timeout::<methods::ModelList>(
            &ModelListParams::new(),
            Duration::from_millis(50),
        )
        .unwrap_err();
    assert!(
        matches!(
            error,
            RpcError::TimedOut {
                method: "model/list",
                ..
            }
        ),
        "{error}"
    );
    let frame = host.recv().unwrap();
    host.answer(&frame, MODELS);
    host.send(SEED_SETTLED);
    // The late response produced nothing: the next thing is the notification.
    assert!(matches!(next(&conn), Inbound::Notification { .. }));
}

/// Notes the thread of each write.
struct ThreadNoting<W> {
    inner: W,
    threads: Arc<Mutex<Vec<Option<String>>>>,
}

impl<W: std::io::Write> std::io::Write for ThreadNoting<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let thread = std::thread::current().name().map(str::to_owned);
        self.threads.lock().unwrap().push(thread);
        self.inner.write(bytes)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[test]
fn a_request_is_written_on_its_callers_thread_while_the_host_keeps_up() {
    let threads = Arc::new(Mutex::new(Vec::new()));
    let (conn, mut host) = connect_writing_through(Options::new(), |inner| ThreadNoting {
        inner,
        threads: threads.clone(),
    });
    for _ in 0..3 {
        let (call, frame) = start_model_list(&conn, &mut host);
        host.answer(&frame, MODELS);
        assert!(call.wait().unwrap().models.len() == 1);
    }
    let me = std::thread::current().name().map(str::to_owned);
    let threads = threads.lock().unwrap();
    assert!(!threads.is_empty());
    // The writer thread, woken for the queued line, may take the free stream first (seen
    // under load, about once in a dozen runs); the caller writes the others itself.
    let mine = threads.iter().filter(|thread| **thread == me).count();
    assert!(mine >= 1, "{threads:?}");
    assert!(threads
        .iter()
        .all(|thread| *thread == me || thread.as_deref() == Some("msp-writer")));
}

#[test]
fn a_host_that_stops_reading_blocks_no_caller_past_its_deadline() {
    // The host double never reads: what the client writes fills the pipe (64 KiB) and the
    // writer blocks. Callers must still get their timeouts.
    let (conn, host) = connect(Options::new());
    let (done, finished) = std::sync::mpsc::channel();
    let caller = conn.clone();
    std::thread::spawn(move || {
        let big = |n: usize| {
            let mut params = answer_params(n);
            params.command_id.push_str(&"x".repeat(1000));
            params
        };
        let calls: Vec<_> = (0..200)
            .map(|n| {
                caller
                    .start::<methods::UserInputAnswerMethod>(&big(n), Duration::from_millis(100))
                    .unwrap()
            })
            .collect();
        caller
            .notify::<msp_types::protocol::notifications::Initialized>(&None)
            .unwrap();
        let errors: Vec<_> = calls.into_iter().map(|call| call.wait()).collect();
        let _ = done.send(errors);
    });
    let errors = finished
        .recv_timeout(LONG)
        .expect("no caller blocks on the full pipe");
    assert_eq!(errors.len(), 200);
    for error in errors {
        assert!(matches!(error, Err(RpcError::TimedOut { .. })), "{error:?}");
    }
    drop(host);
}

#[test]
fn a_dropped_call_forgets_its_request() {
    let (conn, mut host) = connect(Options::new());
    let call = conn
        .start::<methods::ModelList>(&ModelListParams::new(), LONG)
        .unwrap();
    drop(call);
    let frame = host.recv().unwrap();
    host.answer(&frame, MODELS);
    host.send(SEED_SETTLED);
    assert!(matches!(next(&conn), Inbound::Notification { .. }));
}

#[test]
fn the_peer_closing_fails_every_pending_request_and_ends_the_notifications() {
    let (conn, mut host) = connect(Options::new());
    let calls: Vec<_> = (0..3)
        .map(|_| {
            conn.start::<methods::ModelList>(&ModelListParams::new(), LONG)
                .unwrap()
        })
        .collect();
    host.recv().unwrap();
    host.close_output();
    for call in calls {
        let error = call.wait().unwrap_err();
        assert!(
            matches!(error, RpcError::Closed(msp_rpc::CloseReason::PeerClosed)),
            "{error}"
        );
    }
    assert!(conn.notifications().next().is_none());
    let again = conn.request::<methods::ModelList>(&ModelListParams::new());
    assert!(matches!(again, Err(RpcError::Closed(_))));
}

#[test]
fn closing_locally_fails_pending_requests_and_closes_the_hosts_input() {
    let (conn, mut host) = connect(Options::new());
    let call = conn
        .start::<methods::ModelList>(&ModelListParams::new(), LONG)
        .unwrap();
    assert!(host.recv().is_some());
    assert_eq!(conn.close(), None, "no process behind plain pipes");
    assert!(matches!(
        call.wait(),
        Err(RpcError::Closed(msp_rpc::CloseReason::Local))
    ));
    assert!(host.recv().is_none(), "the host reads the end of its input");
}

#[test]
fn a_server_request_without_a_handler_gets_method_not_found() {
    let (_conn, mut host) = connect(Options::new());
    host.send(SEED_REQUEST);
    let reply = host.recv().unwrap();
    assert_eq!(reply["id"], 18);
    assert_eq!(reply["error"]["code"], -32601);
}

#[test]
fn the_handler_answers_server_requests_in_order_and_a_panic_still_replies() {
    let options = Options::new().on_request(|id, request| match request {
        ServerRequest::UserInputRequest(params) => {
            assert_eq!(params.questions[0].id, "db_choice");
            Reply::ok(&RequestReceipt::new())
        }
        ServerRequest::Unknown { method, .. } if method == "boom/now" => {
            panic!("handler bug at {id}")
        }
        other => Reply::method_not_found(other.method()),
    });
    let (_conn, mut host) = connect(options);
    host.send(SEED_REQUEST);
    host.send(r#"{"jsonrpc":"2.0","id":19,"method":"boom/now"}"#);
    host.send(r#"{"jsonrpc":"2.0","id":"x","method":"future/ask","params":{}}"#);
    assert_eq!(
        host.recv().unwrap(),
        json!({"jsonrpc": "2.0", "id": 18, "result": {}})
    );
    let panicked = host.recv().unwrap();
    assert_eq!(
        (panicked["id"].clone(), panicked["error"]["code"].clone()),
        (json!(19), json!(-32603))
    );
    let refused = host.recv().unwrap();
    assert_eq!(
        (refused["id"].clone(), refused["error"]["code"].clone()),
        (json!("x"), json!(-32601))
    );
}

#[test]
fn undecodable_frames_arrive_as_events_and_the_connection_goes_on() {
    let options = Options::new().on_request(|_, _| Reply::ok(&RequestReceipt::new()));
    let (conn, mut host) = connect(options);
    let bad_notification = SEED_SETTLED.replace(r#""answers":[{"#, r#""answers":[7,{"#);
    host.send(&bad_notification);
    let bad_request = SEED_REQUEST.replace(r#""toolName":"request_user_input","#, "");
    host.send(&bad_request);
    host.send("garbage");
    let Inbound::Undecodable(frame) = next(&conn) else {
        panic!("not reported")
    };
    assert_eq!(frame.line, bad_notification);
    let Problem::Decode(error) = &frame.problem else {
        panic!()
    };
    assert_eq!(error.pointer, "/params/answers/0");
    let Inbound::Undecodable(frame) = next(&conn) else {
        panic!()
    };
    assert_eq!(frame.replied, Some(-32602));
    let reply = host.recv().unwrap();
    assert_eq!(
        (reply["id"].clone(), reply["error"]["code"].clone()),
        (json!(18), json!(-32602))
    );
    assert!(matches!(next(&conn), Inbound::Undecodable(_)));
    // Still working.
    let (call, frame) = start_model_list(&conn, &mut host);
    host.answer(&frame, MODELS);
    assert!(call.wait().is_ok());
}

#[test]
fn with_inbound_requests_each_request_comes_among_the_notifications_where_it_was_read() {
    let options = Options::new()
        .inbound_requests(true)
        .on_request(|_, _| Reply::ok(&RequestReceipt::new()))
        .on_bad_request(|_, frame| Reply::invalid_params(&frame.problem));
    let (conn, mut host) = connect(options);
    let notices = numbered_notices(2);
    let mut notices = notices.lines();
    let bad_request = SEED_REQUEST
        .replace(r#""toolName":"request_user_input","#, "")
        .replace(r#""id":18"#, r#""id":19"#);
    host.send(notices.next().unwrap());
    host.send(SEED_REQUEST);
    host.send(&bad_request);
    host.send(notices.next().unwrap());
    // Each request is answered by the handlers, whether or not anyone takes the frames.
    let replies: Vec<_> = (0..2).map(|_| host.recv().unwrap()).collect();
    assert_eq!(
        replies[0],
        json!({"jsonrpc": "2.0", "id": 18, "result": {}})
    );
    assert_eq!(
        (
            replies[1]["id"].clone(),
            replies[1]["error"]["code"].clone()
        ),
        (json!(19), json!(-32602))
    );
    assert_eq!(notice_number(&next(&conn)), 0);
    match next(&conn) {
        Inbound::Request { id, request } => {
            assert_eq!(id.to_string(), "18");
            let ServerRequest::UserInputRequest(params) = *request else {
                panic!("{request:?}")
            };
            assert_eq!(params.questions[0].id, "db_choice");
        }
        other => panic!("not the request: {other:?}"),
    }
    match next(&conn) {
        Inbound::Undecodable(frame) => assert_eq!(frame.line, bad_request),
        other => panic!("not the bad request: {other:?}"),
    }
    assert_eq!(notice_number(&next(&conn)), 1);
}

#[test]
fn notifications_read_before_a_response_are_queued_before_it_returns() {
    let (conn, mut host) = connect(Options::new());
    let (call, frame) = start_model_list(&conn, &mut host);
    host.send(SEED_SETTLED);
    host.send(r#"{"jsonrpc":"2.0","method":"future/notice"}"#);
    host.answer(&frame, MODELS);
    call.wait().unwrap();
    let first = conn.next_timeout(Duration::ZERO).expect("already queued");
    assert!(matches!(
        first,
        Inbound::Notification {
            notification: ProtocolNotification::UserInputSettled(_),
            ..
        }
    ));
    let second = conn.next_timeout(Duration::ZERO).expect("already queued");
    assert!(matches!(
        second,
        Inbound::Notification {
            notification: ProtocolNotification::Unknown { .. },
            ..
        }
    ));
}

#[test]
fn framing_split_utf8_crlf_many_frames_per_write_and_an_oversized_frame() {
    let (conn, mut host) = connect(Options::new().max_frame_bytes(4096));
    let accented = SEED_SETTLED.replace("Postgres", "Postgr\u{e9}s \u{1f418}");
    let bytes = format!("{accented}\r\n");
    for byte in bytes.as_bytes() {
        host.send_bytes(std::slice::from_ref(byte));
    }
    let Inbound::Notification {
        notification: ProtocolNotification::UserInputSettled(settled),
        ..
    } = next(&conn)
    else {
        panic!()
    };
    assert_eq!(
        settled.answers[0].selected_label.as_deref(),
        Some("Postgr\u{e9}s \u{1f418}")
    );
    host.send_bytes(format!("{SEED_SETTLED}\n{SEED_SETTLED}\r\n{SEED_SETTLED}\n").as_bytes());
    for _ in 0..3 {
        assert!(matches!(next(&conn), Inbound::Notification { .. }));
    }
    let huge = format!(
        r#"{{"jsonrpc":"2.0","method":"x","params":"{}"}}"#,
        "y".repeat(100_000)
    );
    host.send(&huge);
    host.send(SEED_SETTLED);
    let Inbound::Undecodable(frame) = next(&conn) else {
        panic!()
    };
    assert!(
        matches!(
            frame.problem,
            Problem::Line(msp_rpc::framing::LineError::TooLong { max: 4096, .. })
        ),
        "{frame}"
    );
    assert!(matches!(next(&conn), Inbound::Notification { .. }));
    // A host request too long to read is answered all the same, with its id as sent, read
    // from the line's head.
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":"big","method":"approval/request","params":{{"x":"{}"}}}}"#,
        "y".repeat(100_000)
    );
    host.send(&huge);
    let reply = host.recv().expect("a reply");
    assert_eq!(
        (&reply["id"], &reply["error"]["code"]),
        (&json!("big"), &json!(-32600))
    );
    let Inbound::Undecodable(frame) = next(&conn) else {
        panic!()
    };
    assert_eq!(frame.replied, Some(-32600));
}

#[test]
fn the_handshake_keeps_grants_and_warns_on_an_unknown_fingerprint() {
    let (conn, mut host) = connect(Options::new());
    let worker = std::thread::spawn({
        let conn = conn.clone();
        move || {
            let params = InitializeParams::builder()
                .client_info(ClientInfo::builder().name("test").version("0").build())
                .build();
            conn.initialize(&params).cloned()
        }
    });
    let init = host.recv().unwrap();
    assert_eq!(init["method"], "initialize");
    host.answer(
        &init,
        &initialize_result(
            "sha256:1d03f10c2e42543d1a8871b770aa6c3617b0e27829752ceb2d84ccf5f33066ac",
            1,
        ),
    );
    assert_eq!(
        host.recv().unwrap(),
        json!({"jsonrpc": "2.0", "method": "initialized"})
    );
    let handshake = worker.join().unwrap().unwrap();
    assert!(handshake.has_capability("sessionListStream"));
    assert!(!handshake.has_capability("userShell"));
    assert_eq!(
        handshake.warnings,
        vec![Warning::UnknownFingerprint {
            served: "sha256:1d03f10c2e42543d1a8871b770aa6c3617b0e27829752ceb2d84ccf5f33066ac"
                .into(),
        }]
    );
    assert!(conn.handshake().is_some());
    let twice = conn.initialize(
        &InitializeParams::builder()
            .client_info(ClientInfo::builder().name("t").version("0").build())
            .build(),
    );
    assert!(matches!(
        twice,
        Err(RpcError::Handshake(HandshakeError::AlreadyInitialized))
    ));
}

#[test]
fn the_handshake_refuses_another_envelope_version_and_a_required_fingerprint() {
    for (policy, fingerprint, version) in [
        (FingerprintPolicy::Warn, SERVED_FINGERPRINT.unwrap(), 2),
        (
            FingerprintPolicy::Require,
            "sha256:0000000000000000000000000000000000000000000000000000000000000000",
            1,
        ),
    ] {
        let (conn, mut host) = connect(Options::new().fingerprint_policy(policy));
        let worker = std::thread::spawn({
            let conn = conn.clone();
            move || {
                let params = InitializeParams::builder()
                    .client_info(ClientInfo::builder().name("test").version("0").build())
                    .build();
                conn.initialize(&params).map(|_| ())
            }
        });
        let init = host.recv().unwrap();
        host.answer(&init, &initialize_result(fingerprint, version));
        let error = worker.join().unwrap().unwrap_err();
        match (policy, error) {
            (
                FingerprintPolicy::Warn,
                RpcError::Handshake(HandshakeError::SchemaVersion {
                    served: 2,
                    expected: 1,
                }),
            ) => {}
            (
                FingerprintPolicy::Require,
                RpcError::Handshake(HandshakeError::FingerprintMismatch { .. }),
            ) => {}
            (_, other) => panic!("{other}"),
        }
    }
}

#[test]
fn a_retried_command_carries_the_same_command_id() {
    let (conn, mut host) =
        connect(Options::new().timeout_for::<methods::UserInputCancel>(Duration::from_millis(50)));
    let cancel = Command::<methods::UserInputCancel>::new(|id| {
        UserInputCancelParams::builder()
            .command_id(id)
            .session_id("sess")
            .user_input_id("q-1")
            .build()
    });
    let first = conn.command(&cancel);
    assert!(matches!(first, Err(RpcError::TimedOut { .. })));
    let sent_first = host.recv().unwrap();
    let worker = std::thread::spawn({
        let conn = conn.clone();
        let cancel = cancel.clone();
        move || conn.command(&cancel)
    });
    let sent_again = host.recv().unwrap();
    assert_ne!(sent_first["id"], sent_again["id"], "a new request");
    assert_eq!(
        sent_first["params"]["commandId"],
        sent_again["params"]["commandId"]
    );
    assert_eq!(sent_again["params"]["commandId"], cancel.command_id());
    let command_id = cancel.command_id();
    host.answer(
        &sent_again,
        &format!(r#"{{"commandId":"{command_id}","status":"accepted","userInputId":"q-1"}}"#),
    );
    assert_eq!(worker.join().unwrap().unwrap().command_id, command_id);
}

#[test]
fn a_consumer_that_stops_halfway_holds_up_neither_responses_nor_the_peers_requests() {
    let (conn, mut host) = connect(Options::new());
    let (call, frame) = start_model_list(&conn, &mut host);
    // A consumer waits for notifications, takes one and then stops (busy elsewhere), keeping
    // its iterator: the lines it was handed and left must still be typed.
    let (took_tx, took) = std::sync::mpsc::channel();
    let (stop_tx, stop) = std::sync::mpsc::channel::<()>();
    let consumer = std::thread::spawn({
        let conn = conn.clone();
        move || {
            let mut notifications = conn.notifications();
            took_tx.send(notifications.next()).unwrap();
            let _ = stop.recv();
        }
    });
    let mut burst = numbered_notices(500);
    burst.push_str(SEED_REQUEST);
    burst.push('\n');
    burst.push_str(&format!("{}\n", result_line(&frame, MODELS)));
    host.send_bytes(burst.as_bytes());
    let first = took.recv().unwrap().expect("the consumer got one");
    assert_eq!(notice_number(&first), 0);
    // The response after the 500 lines reaches its caller, and the host's request its reply.
    assert!(call.wait().is_ok());
    let reply = host.recv().unwrap();
    assert_eq!(reply["id"], 18);
    assert_eq!(reply["error"]["code"], -32601);
    // What the consumer left is queued, in order, for whoever reads next.
    for n in 1..500 {
        assert_eq!(notice_number(&next(&conn)), n);
    }
    stop_tx.send(()).unwrap();
    consumer.join().unwrap();
}

#[test]
fn a_flood_larger_than_the_backlog_arrives_whole_and_in_order() {
    let (conn, mut host) = connect(Options::new());
    // About 4 MiB: the reader waits for the consumer (the backlog holds 1 MiB) and goes on.
    let count = 16_000;
    let host = std::thread::spawn(move || {
        host.send_bytes(numbered_notices(count).as_bytes());
        host
    });
    let mut notifications = conn.notifications();
    for n in 0..count as u64 {
        assert_eq!(notice_number(&notifications.next().unwrap()), n);
    }
    let mut host = host.join().unwrap();
    host.close_output();
    assert!(notifications.next().is_none(), "the flood is all there was");
}

#[test]
fn requests_answered_during_a_flood_complete_while_it_is_consumed() {
    let (conn, mut host) = connect(Options::new());
    let (call, frame) = start_model_list(&conn, &mut host);
    let host = std::thread::spawn(move || {
        let mut burst = numbered_notices(3_000);
        burst.push_str(&format!("{}\n", result_line(&frame, MODELS)));
        burst.push_str(&numbered_notices(3_000));
        host.send_bytes(burst.as_bytes());
        host
    });
    let consumer = std::thread::spawn({
        let conn = conn.clone();
        move || conn.notifications().take(6_000).count()
    });
    assert!(call.wait().is_ok());
    assert_eq!(consumer.join().unwrap(), 6_000);
    drop(host.join().unwrap());
}

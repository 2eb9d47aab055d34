//! The sans-I/O endpoint, driven by hand: lines in, events out, time given.

use std::time::{Duration, Instant};

use msp_rpc::endpoint::{Client, Endpoint, Event, Handled, Host, Problem, Reply, RespondError};
use msp_rpc::{CloseReason, ExitKind, HostExit, RpcError};
use msp_types::protocol::{methods, notifications, requests};
use msp_types::rpc::Id;
use msp_types::{
    ClientRequest, ModelListParams, ProtocolNotification, RequestReceipt, ServerRequest,
    UserInputAnswerParams,
};
use serde_json::{json, Value};

/// The seed's re-issued question, as the host sent it.
const SEED_REQUEST: &str = r#"{"jsonrpc":"2.0","id":18,"method":"userInput/request","params":{"sessionId":"0198f0aa-1111-7000-8000-0000000000bb","userInputId":"0198f0ae-1111-7000-8000-0000000000f1","turnId":"018f6a1e-9b3c-7c21-a54a-2f30bd3c9f20","itemId":"0198f0ae-2222-7000-8000-0000000000f2","toolCallId":"call_ab31","toolName":"request_user_input","viewCursor":"v:0198f0aa-1111-7000-8000-0000000000bb:502","questions":[{"id":"db_choice","header":"Database","question":"Which database should the new service use?","selection":{"mode":"single"},"options":[{"label":"Postgres","description":"Matches the other services."},{"label":"SQLite","description":"Zero-ops, single node only."}]}],"autoResolutionMs":120000}}"#;

/// The seed's settlement.
const SEED_SETTLED: &str = r#"{"jsonrpc":"2.0","method":"userInput/settled","params":{"sessionId":"0198f0aa-1111-7000-8000-0000000000bb","viewCursor":"v:0198f0aa-1111-7000-8000-0000000000bb:503","sourceRange":{"stream":{"kind":"run","id":"018f6a1e-9b3c-7c21-a54a-2f30bd3c9f20"},"first":{"id":"018f9008-71aa-7000-8000-0000000000f3","sequence":142},"last":{"id":"018f9008-71aa-7000-8000-0000000000f3","sequence":142}},"userInputId":"0198f0ae-1111-7000-8000-0000000000f1","outcome":"answered","answers":[{"questionId":"db_choice","selectedLabel":"Postgres"}],"clarification":null,"reason":null,"decidedByCommandId":"018f6a2b-3333-7abc-8def-00000000d002"},"emittedAtMs":1754591000100}"#;

fn sent(endpoint: &mut Endpoint<impl msp_rpc::Role>) -> Vec<Value> {
    std::iter::from_fn(|| endpoint.poll_transmit())
        .map(|line| serde_json::from_str(&line).unwrap())
        .collect()
}

fn events<R: msp_rpc::Role>(endpoint: &mut Endpoint<R>) -> Vec<Event<R>> {
    std::iter::from_fn(|| endpoint.poll_event()).collect()
}

fn answer_params(n: usize) -> UserInputAnswerParams {
    UserInputAnswerParams::builder()
        .answers(vec![])
        .command_id(format!("cmd-{n}"))
        .session_id("sess")
        .user_input_id(format!("q-{n}"))
        .build()
}

#[test]
fn concurrent_requests_answered_out_of_order_get_their_own_typed_results() {
    let mut client = Endpoint::<Client>::new();
    let calls: Vec<_> = (0..5)
        .map(|n| {
            client
                .request::<methods::UserInputAnswerMethod>(&answer_params(n), None)
                .unwrap()
        })
        .collect();
    let frames = sent(&mut client);
    assert_eq!(frames.len(), 5);
    let ids: Vec<i64> = frames.iter().map(|f| f["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, vec![1, 2, 3, 4, 5], "ids are minted by the endpoint");
    assert_eq!(frames[0]["method"], "userInput/answer");
    for frame in frames.iter().rev() {
        let id = &frame["id"];
        let echoed = &frame["params"]["userInputId"];
        client.handle_line(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"commandId":"c","status":"accepted","userInputId":{echoed}}}}}"#
        ));
    }
    let mut responses = events(&mut client);
    assert_eq!(client.pending_requests(), 0);
    responses.reverse();
    for (n, (call, event)) in calls.iter().zip(responses).enumerate() {
        let Event::Response(response) = event else {
            panic!("not a response")
        };
        assert_eq!(&response.id, call.id());
        let result = call.decode(response).unwrap();
        assert_eq!(result.user_input_id, format!("q-{n}"));
    }
}

#[test]
fn a_request_times_out_at_its_deadline_and_its_late_response_is_dropped() {
    let mut client = Endpoint::<Client>::new();
    let start = Instant::now();
    let slow = client
        .request::<methods::ModelList>(
            &ModelListParams::new(),
            Some(start + Duration::from_secs(30)),
        )
        .unwrap();
    let fast = client
        .request::<methods::ModelList>(
            &ModelListParams::new(),
            Some(start + Duration::from_secs(5)),
        )
        .unwrap();
    assert_eq!(client.poll_timeout(), Some(start + Duration::from_secs(5)));
    client.handle_timeout(start + Duration::from_secs(4));
    assert!(events(&mut client).is_empty());
    client.handle_timeout(start + Duration::from_secs(5));
    let timed_out = events(&mut client);
    let [Event::Response(response)] = &timed_out[..] else {
        panic!("{timed_out:?}")
    };
    assert_eq!(&response.id, fast.id());
    assert!(matches!(
        &response.outcome,
        Err(RpcError::TimedOut {
            method: "model/list",
            ..
        })
    ));
    assert_eq!(client.poll_timeout(), Some(start + Duration::from_secs(30)));
    // The late response answers a forgotten request: dropped without an event.
    client.handle_line(r#"{"jsonrpc":"2.0","id":2,"result":{"models":[],"providerId":"fake","source":"fakeCatalog"}}"#);
    assert!(events(&mut client).is_empty());
    assert_eq!(client.pending_requests(), 1);
    drop(slow);
}

#[test]
fn cancelling_forgets_the_request() {
    let mut client = Endpoint::<Client>::new();
    let call = client
        .request::<methods::ModelList>(&ModelListParams::new(), Some(Instant::now()))
        .unwrap();
    assert!(client.cancel(call.id()));
    assert!(!client.cancel(call.id()));
    assert_eq!(client.poll_timeout(), None);
    client.handle_timeout(Instant::now() + Duration::from_secs(1));
    client.handle_line(r#"{"jsonrpc":"2.0","id":1,"result":{"models":[],"providerId":"fake","source":"fakeCatalog"}}"#);
    assert!(events(&mut client).is_empty());
}

#[test]
fn closing_fails_every_pending_request_with_the_reason() {
    let mut client = Endpoint::<Client>::new();
    for _ in 0..3 {
        client
            .request::<methods::ModelList>(&ModelListParams::new(), None)
            .unwrap();
    }
    let exit = HostExit::from_parts(Some(4), None, "lease held by pid 7".into());
    client.close(CloseReason::HostExited(exit.clone()));
    let failed = events(&mut client);
    assert_eq!(failed.len(), 3);
    let mut ids = Vec::new();
    for event in failed {
        let Event::Response(response) = event else {
            panic!()
        };
        ids.push(response.id.clone());
        let error = response.decode::<methods::ModelList>().unwrap_err();
        let got = error.host_exit().expect("the exit says why");
        assert_eq!(got.kind, ExitKind::LeaseUnavailable);
        assert_eq!(got.stderr_tail, "lease held by pid 7");
        assert!(error.to_string().contains("exit code 4"), "{error}");
    }
    // In the order they were made.
    assert_eq!(ids, [Id::from(1), Id::from(2), Id::from(3)]);
    let again = client.request::<methods::ModelList>(&ModelListParams::new(), None);
    assert!(matches!(
        again,
        Err(RpcError::Closed(CloseReason::HostExited(_)))
    ));
}

#[test]
fn a_server_request_nothing_handles_gets_method_not_found() {
    let mut client = Endpoint::<Client>::new();
    client.handle_line(SEED_REQUEST);
    assert!(events(&mut client).is_empty());
    let replies = sent(&mut client);
    assert_eq!(replies.len(), 1);
    assert_eq!(replies[0]["id"], 18);
    assert_eq!(replies[0]["error"]["code"], -32601);
    assert!(replies[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("userInput/request"));
}

#[test]
fn a_handled_server_request_is_typed_by_direction_and_answered_once() {
    let mut client = Endpoint::<Client>::new();
    client.handle_requests(Handled::Methods(vec!["userInput/request".into()]));
    client.handle_line(SEED_REQUEST);
    // A method this program does not handle, and one in no table: both answered -32601.
    client.handle_line(r#"{"jsonrpc":"2.0","id":19,"method":"approval/request","params":{}}"#);
    client.handle_line(r#"{"jsonrpc":"2.0","id":20,"method":"future/ask","params":{"x":1}}"#);
    let got = events(&mut client);
    let [Event::Request {
        id,
        request: ServerRequest::UserInputRequest(params),
    }, Event::Undecodable(refused)] = &got[..]
    else {
        panic!("{got:?}")
    };
    assert_eq!(params.questions[0].options[0].label, "Postgres");
    assert_eq!(
        refused.replied,
        Some(-32601),
        "not handled, whatever its params"
    );
    assert_eq!(client.owed_replies(), 1);
    let refusals = sent(&mut client);
    assert_eq!(refusals.len(), 2);
    assert!(refusals.iter().all(|r| r["error"]["code"] == -32601));
    client
        .respond(id, Reply::ok(&RequestReceipt::new()))
        .unwrap();
    assert_eq!(
        sent(&mut client),
        vec![json!({"jsonrpc": "2.0", "id": 18, "result": {}})]
    );
    assert_eq!(
        client.respond(id, Reply::ok(&RequestReceipt::new())),
        Err(RespondError::NotOwed(Id::Number(18)))
    );
}

#[test]
fn notifications_arrive_typed_and_in_wire_order_before_the_response() {
    let mut client = Endpoint::<Client>::new();
    let call = client
        .request::<methods::ModelList>(&ModelListParams::new(), None)
        .unwrap();
    client.handle_line(SEED_SETTLED);
    client.handle_line(r#"{"jsonrpc":"2.0","method":"session/newThing","params":{"a":1}}"#);
    client.handle_line(r#"{"jsonrpc":"2.0","id":1,"result":{"models":[],"providerId":"fake","source":"fakeCatalog"}}"#);
    let got = events(&mut client);
    assert_eq!(got.len(), 3);
    let Event::Notification {
        notification: ProtocolNotification::UserInputSettled(settled),
        extra,
    } = &got[0]
    else {
        panic!("{:?}", got[0])
    };
    assert_eq!(
        settled.decided_at, None,
        "absent required-nullable member tolerated"
    );
    assert_eq!(extra["emittedAtMs"], 1754591000100u64);
    assert!(matches!(
        &got[1],
        Event::Notification {
            notification: ProtocolNotification::Unknown { method, .. },
            ..
        } if method == "session/newThing"
    ));
    let mut got = got;
    let Event::Response(response) = got.remove(2) else {
        panic!()
    };
    assert!(call.decode(response).unwrap().models.is_empty());
}

#[test]
fn an_undecodable_notification_is_an_event_and_the_connection_goes_on() {
    let mut client = Endpoint::<Client>::new();
    let bad = SEED_SETTLED.replace(r#""outcome":"answered""#, r#""outcome":7"#);
    client.handle_line(&bad);
    client.handle_line("not json at all");
    client.handle_line(SEED_SETTLED);
    let got = events(&mut client);
    assert_eq!(got.len(), 3);
    let Event::Undecodable(frame) = &got[0] else {
        panic!()
    };
    assert_eq!(frame.line, bad, "the raw line is kept");
    assert_eq!(frame.method(), Some("userInput/settled"));
    assert_eq!(frame.replied, None);
    let Problem::Decode(error) = &frame.problem else {
        panic!()
    };
    assert_eq!(error.pointer, "/params/outcome");
    assert!(matches!(&got[1], Event::Undecodable(f) if f.method().is_none()));
    assert!(matches!(&got[2], Event::Notification { .. }));
    assert!(
        sent(&mut client).is_empty(),
        "a client never answers a host's garbage"
    );
}

#[test]
fn an_undecodable_request_gets_invalid_params_with_its_id() {
    let mut client = Endpoint::<Client>::new();
    client.handle_requests(Handled::All);
    let bad = SEED_REQUEST.replace(r#""mode":"single""#, r#""mode":"several""#);
    client.handle_line(&bad);
    let got = events(&mut client);
    let [Event::Undecodable(frame)] = &got[..] else {
        panic!("{got:?}")
    };
    assert_eq!(frame.replied, Some(-32602));
    assert_eq!(frame.id(), Some(&Id::Number(18)));
    let replies = sent(&mut client);
    assert_eq!(replies[0]["id"], 18);
    assert_eq!(replies[0]["error"]["code"], -32602);
    let message = replies[0]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("/params/questions/0/selection/mode"),
        "{message}"
    );
    assert_eq!(client.owed_replies(), 0, "answered: nothing is owed");
}

#[test]
fn an_error_response_is_typed_with_its_registry_entry() {
    let mut client = Endpoint::<Client>::new();
    let call = client
        .request::<methods::ModelList>(&ModelListParams::new(), None)
        .unwrap();
    client.handle_line(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"busy","data":{"kind":"overloaded"}}}"#);
    let Some(Event::Response(response)) = client.poll_event() else {
        panic!()
    };
    let error = call.decode(response).unwrap_err();
    let remote = error.remote().unwrap();
    assert_eq!(remote.code(), -32001);
    assert_eq!(remote.kind(), Some("overloaded"));
    assert_eq!(remote.retryable(), Some(true));
    assert_eq!(remote.method, "model/list");
}

#[test]
fn an_errors_own_retryable_overrides_its_codes_default() {
    let mut client = Endpoint::<Client>::new();
    for (n, (data, retryable)) in [
        (r#"{"kind":"overloaded","retryable":false}"#, Some(false)),
        (r#"{"kind":"internal","retryable":true}"#, Some(true)),
        (r#"{"kind":"overloaded"}"#, Some(true)),
    ]
    .into_iter()
    .enumerate()
    {
        let call = client
            .request::<methods::ModelList>(&ModelListParams::new(), None)
            .unwrap();
        let id = n + 1;
        client.handle_line(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32001,"message":"no","data":{data}}}}}"#
        ));
        let Some(Event::Response(response)) = client.poll_event() else {
            panic!("{data}")
        };
        let error = call.decode(response).unwrap_err();
        assert_eq!(error.remote().unwrap().retryable(), retryable, "{data}");
    }
}

#[test]
fn a_response_nobody_asked_for_is_reported() {
    let mut client = Endpoint::<Client>::new();
    client.handle_line(r#"{"jsonrpc":"2.0","id":99,"result":{}}"#);
    client.handle_line(
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#,
    );
    let got = events(&mut client);
    assert!(
        matches!(&got[0], Event::Undecodable(f) if matches!(f.problem, Problem::UnknownResponse { .. }))
    );
    assert!(
        matches!(&got[1], Event::Undecodable(f) if matches!(f.problem, Problem::UnattributedError(_)))
    );
}

#[test]
fn a_host_endpoint_types_client_requests_and_answers_garbage_as_json_rpc_asks() {
    let mut host = Endpoint::<Host>::new();
    host.handle_requests(Handled::All);
    host.handle_line(r#"{"jsonrpc":"2.0","id":1,"method":"model/list","params":{}}"#);
    host.handle_line("{not json");
    host.handle_line(r#"{"jsonrpc":"2.0","id":2}"#);
    let got = events(&mut host);
    assert!(matches!(
        &got[0],
        Event::Request {
            request: ClientRequest::ModelList(_),
            ..
        }
    ));
    let replies = sent(&mut host);
    assert_eq!(replies[0]["error"]["code"], -32700);
    assert_eq!(replies[0]["id"], Value::Null);
    assert_eq!(replies[1]["error"]["code"], -32600);
    // And the host sends its own table's requests.
    let ask = host
        .request::<requests::UserInputRequest>(
            &serde_json::from_value(
                serde_json::from_str::<Value>(SEED_REQUEST).unwrap()["params"].clone(),
            )
            .unwrap(),
            None,
        )
        .unwrap();
    assert_eq!(sent(&mut host)[0]["method"], "userInput/request");
    host.handle_line(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    let Some(Event::Response(response)) = host.poll_event() else {
        panic!()
    };
    ask.decode(response).unwrap();
}

#[test]
fn notifications_without_params_leave_the_member_out() {
    let mut client = Endpoint::<Client>::new();
    client.notify::<notifications::Initialized>(&None).unwrap();
    assert_eq!(
        sent(&mut client),
        vec![json!({"jsonrpc": "2.0", "method": "initialized"})]
    );
}

/// A host request whose envelope does not read (an id no `Id` types, a wrong `jsonrpc`) or
/// whose line is not UTF-8 is answered all the same, `-32600` with its id as sent: the host
/// would otherwise wait on it for ever. A response, a notification or a batch gets no reply.
#[test]
fn a_host_request_that_does_not_read_is_answered_with_its_id_as_sent() {
    let mut client = Endpoint::<Client>::new();
    client.handle_requests(Handled::All);
    client.handle_line(r#"{"jsonrpc":"2.0","id":1.5,"method":"approval/request","params":{}}"#);
    client.handle_line(r#"{"jsonrpc":2,"id":7,"method":"userInput/request","params":{}}"#);
    client.handle_line(r#"{"jsonrpc":"2.0","id":{"n":1},"result":{}}"#);
    client.handle_line(r#"{"jsonrpc":"2.0","method":7}"#);
    client.handle_line(r#"[{"jsonrpc":"2.0","id":8,"method":"userInput/request","params":{}}]"#);
    client.handle_line(r#"{"jsonrpc":"2.0","id":2.5,"method":"x","result":{}}"#);
    client.handle_bad_line(msp_rpc::framing::LineError::NotUtf8 {
        lossy: "{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"method\":\"userInput/request\",\"params\":{\"x\":\"caf\u{FFFD}\"}}".to_owned(),
    });
    let replies = sent(&mut client);
    let ids: Vec<&Value> = replies.iter().map(|r| &r["id"]).collect();
    assert_eq!(ids, [&json!(1.5), &json!(7), &json!("q")], "{replies:?}");
    assert!(replies.iter().all(|r| r["error"]["code"] == -32600));
    let got = events(&mut client);
    let replied: Vec<Option<i64>> = got
        .iter()
        .map(|event| match event {
            Event::Undecodable(frame) => frame.replied,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        replied,
        [
            Some(-32600),
            Some(-32600),
            None,
            None,
            None,
            None,
            Some(-32600)
        ]
    );
    // Too long to read: a request whose head holds its id and method is answered; one whose
    // method the head does not hold, or a response, is not.
    let mut client = Endpoint::<Client>::new();
    client.handle_requests(Handled::All);
    for head in [
        r#"{"jsonrpc":"2.0","id":"big","method":"approval/request","params":{"x":"yy"#,
        r#"{"jsonrpc":"2.0","id":"late","params":{"x":"yy"#,
        r#"{"jsonrpc":"2.0","id":"ans","result":{"x":"yy"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"approval/request","params":{"#,
    ] {
        client.handle_bad_line(msp_rpc::framing::LineError::TooLong {
            length: 1 << 30,
            max: 1 << 24,
            head: head.to_owned(),
        });
    }
    let replies = sent(&mut client);
    let ids: Vec<&Value> = replies.iter().map(|r| &r["id"]).collect();
    assert_eq!(ids, [&json!("big")], "{replies:?}");
    // An id the program owes a reply for (the peer reused it) gets that reply only.
    let mut client = Endpoint::<Client>::new();
    client.handle_requests(Handled::All);
    client.handle_line(SEED_REQUEST);
    client.handle_line(r#"{"jsonrpc":2,"id":18,"method":"userInput/request","params":{}}"#);
    client.handle_line(r#"{"jsonrpc":"2.0","id":18,"method":"userInput/request","params":{}}"#);
    assert!(
        sent(&mut client).is_empty(),
        "its params do not decode either"
    );
    assert_eq!(client.owed_replies(), 1);
    let got = events(&mut client);
    assert!(
        matches!(got.last(), Some(Event::Undecodable(f)) if matches!(f.problem, Problem::DuplicateRequest { .. })),
        "{got:?}"
    );
}

//! Decode errors say where: the method and id when they could be read, the JSON pointer of
//! the failing member, the reason, and the frame's envelope when it reads.

use msp_types::protocol::methods;
use msp_types::rpc::{decode_payload, DecodeError, Id, PendingRequests, RawJson};
use msp_types::{ErrorObject, Frame, Message, Sender, UserInputRequestParams};
use serde_json::json;

/// The seed's re-issued `userInput/request`, with `edit` applied to its params.
fn seed_request(edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let mut frame = json!({
        "jsonrpc": "2.0",
        "id": 18,
        "method": "userInput/request",
        "params": {
            "sessionId": "0198f0aa-1111-7000-8000-0000000000bb",
            "userInputId": "0198f0ae-1111-7000-8000-0000000000f1",
            "turnId": "018f6a1e-9b3c-7c21-a54a-2f30bd3c9f20",
            "itemId": "0198f0ae-2222-7000-8000-0000000000f2",
            "toolCallId": "call_ab31",
            "toolName": "request_user_input",
            "viewCursor": "v:0198f0aa-1111-7000-8000-0000000000bb:502",
            "questions": [
                {"id": "db_choice", "header": "Database", "question": "Which database?",
                 "selection": {"mode": "single"},
                 "options": [{"label": "Postgres"}, {"label": "SQLite"}]},
                {"id": "cache", "header": "Cache", "question": "Which cache?",
                 "selection": {"mode": "single"},
                 "options": [{"label": "Redis"}]}
            ],
            "autoResolutionMs": 120000
        }
    });
    edit(&mut frame["params"]);
    frame.to_string()
}

fn server_error(line: &str) -> DecodeError {
    Frame::parse(Sender::Server, line).expect_err("should not decode")
}

#[test]
fn a_bad_request_names_method_id_and_member_and_keeps_its_envelope() {
    let line = seed_request(|p| p["questions"][1]["header"] = json!(5));
    let error = server_error(&line);
    assert_eq!(error.method.as_deref(), Some("userInput/request"));
    assert_eq!(error.id, Some(Id::Number(18)));
    assert_eq!(error.pointer, "/params/questions/1/header");
    assert!(
        error.reason.contains("expected a string"),
        "{}",
        error.reason
    );
    assert!(error.is_bad_request_params());
    let frame = error.frame.as_deref().expect("the envelope survives");
    assert_eq!(frame.params.as_ref().unwrap()["questions"][1]["header"], 5);
    assert_eq!(
        error.to_string(),
        format!(
            "userInput/request (id 18) at /params/questions/1/header: {}",
            error.reason
        )
    );
}

#[test]
fn a_missing_member_is_pointed_at_by_name() {
    let line = seed_request(|p| {
        p.as_object_mut().unwrap().remove("itemId");
    });
    let error = server_error(&line);
    assert_eq!(error.pointer, "/params/itemId");
    assert_eq!(error.reason, "missing field `itemId`");
}

#[test]
fn a_closed_enum_value_is_pointed_at_with_the_type_in_the_reason() {
    let line = seed_request(|p| p["questions"][0]["selection"]["mode"] = json!("several"));
    let error = server_error(&line);
    assert_eq!(error.pointer, "/params/questions/0/selection/mode");
    assert!(
        error
            .reason
            .starts_with("unknown UserInputSelectionMode value `several`"),
        "{}",
        error.reason
    );
}

#[test]
fn a_bad_notification_names_its_method_and_member() {
    let line = r#"{"jsonrpc":"2.0","method":"userInput/settled","params":{"sessionId":"s","viewCursor":"v","sourceRange":{"stream":{"kind":"run","id":"t"},"last":{"id":"r","sequence":1}},"userInputId":"u","outcome":"answered","answers":[],"clarification":null,"reason":null,"decidedByCommandId":null},"emittedAtMs":1}"#;
    let error = server_error(line);
    assert_eq!(error.method.as_deref(), Some("userInput/settled"));
    assert_eq!(error.id, None);
    assert_eq!(error.pointer, "/params/sourceRange/first");
    assert!(!error.is_bad_request_params());
    assert_eq!(error.frame.as_ref().unwrap().extra["emittedAtMs"], 1);
}

#[test]
fn params_before_the_method_are_pointed_at_too() {
    let line =
        r#"{"params":{"sessionId":7},"jsonrpc":"2.0","method":"userInput/request","id":"r-1"}"#;
    let error = server_error(line);
    assert_eq!(error.method.as_deref(), Some("userInput/request"));
    assert_eq!(error.id, Some(Id::String("r-1".into())));
    assert_eq!(error.pointer, "/params/sessionId");
    assert!(error.is_bad_request_params());
}

#[test]
fn a_bad_response_names_the_method_of_the_request_it_answers() {
    for line in [
        r#"{"jsonrpc":"2.0","id":4,"result":{"commandId":"c","status":7,"userInputId":"u"}}"#,
        r#"{"result":{"commandId":"c","status":7,"userInputId":"u"},"jsonrpc":"2.0","id":4}"#,
    ] {
        let mut pending = PendingRequests::default();
        pending.insert(Id::Number(4), "userInput/answer");
        let error = Frame::parse_tracked(Sender::Server, line, &mut pending).unwrap_err();
        assert_eq!(error.method.as_deref(), Some("userInput/answer"), "{line}");
        assert_eq!(error.id, Some(Id::Number(4)));
        assert_eq!(error.pointer, "/result/status");
        // It answered the request all the same.
        assert!(pending.is_empty(), "{line}");
    }
}

#[test]
fn a_bad_error_object_is_pointed_at() {
    let error = server_error(r#"{"jsonrpc":"2.0","id":2,"error":{"code":"x","message":"m"}}"#);
    assert_eq!(error.pointer, "/error/code");
    assert_eq!(error.id, Some(Id::Number(2)));
}

#[test]
fn lines_that_are_not_frames_have_no_envelope() {
    let error = server_error("this is not json");
    assert_eq!((error.method, error.id, error.frame), (None, None, None));
    assert_eq!(error.pointer, "");
    let error = server_error(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"m"}"#);
    assert_eq!(error.pointer, "/id");
    assert!(error.frame.is_none());
    let error = server_error(r#"{"jsonrpc":"2.0","id":1}"#);
    assert!(error.reason.contains("not a JSON-RPC"), "{}", error.reason);
}

#[test]
fn payload_decoders_point_into_the_payload() {
    let params: serde_json::Value = serde_json::from_str::<serde_json::Value>(&seed_request(|p| {
        p["questions"][0]["id"] = json!(null)
    }))
    .unwrap()["params"]
        .clone();
    let error = decode_payload::<UserInputRequestParams>("userInput/request", Some(params.clone()))
        .unwrap_err();
    assert_eq!(error.pointer, "/questions/0/id");
    assert_eq!(error.method.as_deref(), Some("userInput/request"));
    let answer = RawJson::from_value(&json!({"commandId": "c", "status": 1, "userInputId": "u"}));
    let error = answer
        .decode_result::<methods::UserInputAnswerMethod>()
        .unwrap_err();
    assert_eq!(error.pointer, "/status");
}

#[test]
fn an_error_object_is_an_error_that_knows_its_registry_entry() {
    fn answer() -> Result<(), Box<dyn std::error::Error>> {
        let line = r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32010,"message":"sessionMcp not granted","data":{"kind":"capabilityRequired"}}}"#;
        let frame = Frame::parse(Sender::Server, line)?;
        if let Message::Error { error, .. } = frame.message {
            Err(error)?;
        }
        Ok(())
    }
    let error = answer().unwrap_err();
    assert_eq!(error.to_string(), "sessionMcp not granted (-32010)");
    let object = error.downcast_ref::<ErrorObject>().unwrap();
    let entry = object.registry_entry().unwrap();
    assert_eq!((entry.code, entry.kind), (-32010, "capabilityRequired"));
    // A kind that shares its code with others is found by the kind.
    let not_initialized: ErrorObject = serde_json::from_value(
        json!({"code": -32600, "message": "m", "data": {"kind": "notInitialized"}}),
    )
    .unwrap();
    assert_eq!(
        not_initialized.registry_entry().unwrap().kind,
        "invalidRequest"
    );
    let unknown = ErrorObject::builder().code(-1).message("m").build();
    assert_eq!(unknown.registry_entry(), None);
}

/// A text nested deeper than serde_json reads (a million arrays) is an error like any
/// other, its place no deeper than serde_json read: finding it neither recurses as deep as
/// the text nor overflows the stack.
#[test]
fn a_frame_nested_past_any_depth_read_is_an_error_with_its_place() {
    let depth = 1_000_000;
    let params = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let line = format!(r#"{{"jsonrpc":"2.0","method":"item/started","params":{params}}}"#);
    let error = server_error(&line);
    assert!(
        error.pointer.starts_with("/params"),
        "{}",
        &error.pointer[..40.min(error.pointer.len())]
    );
    assert!(
        error.pointer.len() < 1_000,
        "as deep as read, not as deep as sent"
    );
    // A response's result and an error's data, likewise.
    for (line, at) in [
        (
            format!(r#"{{"jsonrpc":"2.0","id":4,"result":{params}}}"#),
            "/result",
        ),
        (
            format!(
                r#"{{"jsonrpc":"2.0","id":4,"error":{{"code":1,"message":"m","data":{params}}}}}"#
            ),
            "/error/data",
        ),
    ] {
        let mut pending = PendingRequests::default();
        pending.insert(Id::Number(4), "userInput/answer");
        let error = Frame::parse_tracked(Sender::Server, &line, &mut pending).unwrap_err();
        assert!(
            error.pointer.starts_with(at),
            "{at}: {}",
            &error.pointer[..40.min(error.pointer.len())]
        );
        assert!(error.pointer.len() < 1_000, "{at}");
    }
}

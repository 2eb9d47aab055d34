//! Each mapping rule of the generator, observed on the generated crate.

use msp_types::rpc::{Id, Request};
use msp_types::{
    ApprovalDecideParams, ClientInfo, ClientRequest, Frame, Message, ProtocolNotification,
    RequestId, SessionConfig, StringEnum, Tristate, TurnInputPart, UserInputOutcome,
    UserInputSelectionMode, UserInputSettledParams, Validate, ViewPageParams,
};
use serde_json::{json, Value};

/// The seed's settlement, as a JSON value, with `decidedAt` taken out.
fn settled_without_decided_at() -> Value {
    json!({
        "sessionId": "0198f0aa-1111-7000-8000-0000000000bb",
        "viewCursor": "v:0198f0aa-1111-7000-8000-0000000000bb:503",
        "sourceRange": {
            "stream": {"kind": "run", "id": "018f6a1e-9b3c-7c21-a54a-2f30bd3c9f20"},
            "first": {"id": "018f9008-71aa-7000-8000-0000000000f3", "sequence": 142},
            "last": {"id": "018f9008-71aa-7000-8000-0000000000f3", "sequence": 142}
        },
        "userInputId": "0198f0ae-1111-7000-8000-0000000000f1",
        "outcome": "answered",
        "answers": [{"questionId": "db_choice", "selectedLabel": "Postgres"}],
        "clarification": null,
        "reason": null,
        "decidedByCommandId": "018f6a2b-3333-7abc-8def-00000000d002"
    })
}

fn reencode<T: serde::Serialize + serde::de::DeserializeOwned>(value: &Value) -> Value {
    let typed: T = serde_json::from_value(value.clone()).expect("decodes");
    serde_json::to_value(typed).expect("encodes")
}

#[test]
fn required_nullable_absent_decodes_as_none_and_is_written_as_null() {
    let input = settled_without_decided_at();
    let typed: UserInputSettledParams = serde_json::from_value(input.clone()).unwrap();
    assert_eq!(typed.decided_at, None);
    let output = serde_json::to_value(&typed).unwrap();
    assert_eq!(output["decidedAt"], Value::Null);
    assert!(output.as_object().unwrap().contains_key("decidedAt"));
    let mut expected = input;
    expected["decidedAt"] = Value::Null;
    assert_eq!(output, expected);
}

#[test]
fn required_nullable_none_is_written_as_null() {
    let mut input = settled_without_decided_at();
    input["decidedAt"] = json!("2026-11-30T10:00:00Z");
    let mut typed: UserInputSettledParams = serde_json::from_value(input).unwrap();
    typed.clarification = None;
    typed.reason = None;
    typed.decided_by_command_id = None;
    let text = serde_json::to_string(&typed).unwrap();
    for member in [
        "\"clarification\":null",
        "\"reason\":null",
        "\"decidedByCommandId\":null",
    ] {
        assert!(text.contains(member), "{member} missing from {text}");
    }
    assert!(text.contains("\"decidedAt\":\"2026-11-30T10:00:00Z\""));
}

#[test]
fn open_enum_keeps_unknown_values() {
    let mut input = settled_without_decided_at();
    input["decidedAt"] = Value::Null;
    input["outcome"] = json!("escalatedToHuman");
    let typed: UserInputSettledParams = serde_json::from_value(input.clone()).unwrap();
    assert_eq!(
        typed.outcome,
        UserInputOutcome::Unknown("escalatedToHuman".into())
    );
    assert_eq!(serde_json::to_value(&typed).unwrap(), input);
    assert_eq!(
        "timedOut".parse::<UserInputOutcome>().unwrap(),
        UserInputOutcome::TimedOut
    );
    assert_eq!(UserInputOutcome::TimedOut.to_string(), "timedOut");
    assert!(UserInputOutcome::KNOWN_VALUES.contains(&"answered"));
}

#[test]
fn closed_enum_rejects_unknown_values_naming_type_and_value() {
    let err = serde_json::from_value::<UserInputSelectionMode>(json!("several")).unwrap_err();
    let message = err.to_string();
    assert!(message.contains("UserInputSelectionMode"), "{message}");
    assert!(message.contains("`several`"), "{message}");
    assert!(message.contains("single"), "{message}");
    let err = "several".parse::<UserInputSelectionMode>().unwrap_err();
    assert_eq!(err.value, "several");
    assert_eq!(err.type_name, "UserInputSelectionMode");
    assert_eq!(
        UserInputSelectionMode::from_known("single"),
        Some(UserInputSelectionMode::Single)
    );
}

#[test]
fn unknown_members_round_trip_at_every_depth() {
    let mut input = settled_without_decided_at();
    input["decidedAt"] = Value::Null;
    input["futureTop"] = json!({"nested": [1, 2]});
    input["answers"][0]["futureAnswerField"] = json!(true);
    input["sourceRange"]["stream"]["futureStreamField"] = json!("x");
    let typed: UserInputSettledParams = serde_json::from_value(input.clone()).unwrap();
    assert_eq!(typed.unknown["futureTop"], json!({"nested": [1, 2]}));
    assert_eq!(serde_json::to_value(&typed).unwrap(), input);
}

#[test]
fn optional_members_are_omitted_when_absent() {
    let info = ClientInfo::builder()
        .name("desk_app")
        .version("1.0.0")
        .build();
    assert_eq!(
        serde_json::to_value(&info).unwrap(),
        json!({"name": "desk_app", "version": "1.0.0"})
    );
}

/// A `null` sent for an optional member that is not nullable reads as `None` and is written
/// back; once the member is set, the member is written, once.
#[test]
fn a_null_kept_for_an_optional_member_gives_way_once_it_is_set() {
    let sent = json!({"name": "desk_app", "version": "1.0.0", "title": null});
    let mut info: ClientInfo = serde_json::from_value(sent.clone()).unwrap();
    assert_eq!(info.title, None);
    assert_eq!(serde_json::to_value(&info).unwrap(), sent);
    info.title = Some("Desk".to_owned());
    assert_eq!(
        serde_json::to_string(&info).unwrap(),
        r#"{"name":"desk_app","title":"Desk","version":"1.0.0"}"#
    );
}

#[test]
fn optional_nullable_keeps_absent_null_and_value_apart() {
    let base = json!({
        "sessionId": "s", "approvalId": "a", "choiceId": "c", "commandId": "k",
        "requirementId": {"approvalId": "a", "sourceIndex": 0}
    });
    for (feedback, expected) in [
        (None, Tristate::Absent),
        (Some(Value::Null), Tristate::Null),
        (
            Some(json!("too risky")),
            Tristate::Value("too risky".to_owned()),
        ),
    ] {
        let mut input = base.clone();
        if let Some(feedback) = feedback {
            input["feedback"] = feedback;
        }
        let typed: ApprovalDecideParams = serde_json::from_value(input.clone()).unwrap();
        assert_eq!(typed.feedback, expected);
        assert_eq!(serde_json::to_value(&typed).unwrap(), input);
    }
}

#[test]
fn tagged_union_decodes_by_tag_and_closed_union_rejects_unknown_tags() {
    let input = json!({"mcpServers": {
        "b": {"transport": "streamableHttp", "url": "https://example.invalid/mcp"},
        "a": {"transport": "stdio", "command": "srv", "args": ["--x"], "futureMember": 1}
    }});
    let typed: SessionConfig = serde_json::from_value(input.clone()).unwrap();
    let servers = typed.mcp_servers.as_ref().unwrap();
    assert_eq!(servers.keys().collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(servers["a"].tag(), "stdio");
    assert_eq!(serde_json::to_value(&typed).unwrap(), input);
    let err = serde_json::from_value::<SessionConfig>(
        json!({"mcpServers": {"a": {"transport": "carrierPigeon"}}}),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("SessionMcpServerConfig") && err.contains("carrierPigeon"),
        "{err}"
    );
}

/// An open union keeps an object whose tag it does not know as sent, the tag too, whatever
/// the tag's type.
#[test]
fn open_tagged_union_keeps_an_unknown_tag_as_sent() {
    for family in [json!("futureFamily"), json!(7), Value::Null] {
        let receipt = json!({"family": family, "operation": "x", "outcome": "y"});
        let typed: msp_types::ToolReceipt = serde_json::from_value(receipt.clone()).unwrap();
        assert!(
            matches!(typed, msp_types::ToolReceipt::Unknown(_)),
            "{family}"
        );
        assert_eq!(serde_json::to_value(&typed).unwrap(), receipt, "{family}");
    }
}

#[test]
fn untagged_union_takes_the_shape_that_fits() {
    assert_eq!(
        serde_json::from_value::<RequestId>(json!(7)).unwrap(),
        RequestId::Integer(7)
    );
    assert_eq!(
        serde_json::from_value::<RequestId>(json!("a")).unwrap(),
        RequestId::String("a".into())
    );
    assert_eq!(reencode::<RequestId>(&json!("a")), json!("a"));
}

#[test]
fn validate_reports_pattern_bounds_and_dependent_members_with_pointers() {
    let info: ClientInfo =
        serde_json::from_value(json!({"name": "Desk App", "version": "1"})).unwrap();
    let violations = info.validate().unwrap_err();
    assert_eq!(violations.len(), 1);
    assert_eq!(violations[0].pointer, "/name");

    let page: ViewPageParams =
        serde_json::from_value(json!({"sessionId": "s", "limit": 0})).unwrap();
    let violations = page.validate().unwrap_err();
    assert_eq!(violations[0].pointer, "/limit");
    assert!(
        violations[0].message.contains("minimum"),
        "{}",
        violations[0].message
    );
    let page: ViewPageParams =
        serde_json::from_value(json!({"sessionId": "s", "limit": 1000})).unwrap();
    assert!(page.validate().is_ok());

    let part: TurnInputPart =
        serde_json::from_value(json!({"type": "image", "height": 10})).unwrap();
    let violations = part.validate().unwrap_err();
    assert!(
        violations[0].message.contains("`width`"),
        "{}",
        violations[0].message
    );
}

#[test]
fn keyword_members_get_valid_rust_names_and_keep_wire_names() {
    let part: TurnInputPart =
        serde_json::from_value(json!({"type": "text", "text": "hi"})).unwrap();
    assert_eq!(part.type_.as_str(), "text");
    assert_eq!(
        serde_json::to_value(&part).unwrap(),
        json!({"type": "text", "text": "hi"})
    );
}

#[test]
fn frames_type_their_payload_through_the_tables() {
    let line = r#"{"jsonrpc":"2.0","method":"userInput/settled","params":{"sessionId":"s","viewCursor":"v","sourceRange":{"stream":{"kind":"run","id":"r"},"first":{"id":"e","sequence":1},"last":{"id":"e","sequence":1}},"userInputId":"u","outcome":"timedOut","answers":[],"clarification":null,"reason":null,"decidedByCommandId":null},"emittedAtMs":1754591000100}"#;
    // A leading byte-order mark (some Windows writers put one first) is no part of it.
    let bom = Frame::parse_guessing_sender(&format!("\u{feff}{line}")).unwrap();
    let raw = msp_types::rpc::RawFrame::parse_line(&format!("\u{feff}{line}")).unwrap();
    assert_eq!(raw.method.as_deref(), Some("userInput/settled"));
    let frame = Frame::parse_guessing_sender(&format!("{line}\r")).unwrap();
    assert_eq!(bom.to_line(), frame.to_line());
    match &frame.message {
        Message::Notification(ProtocolNotification::UserInputSettled(params)) => {
            assert_eq!(params.outcome, UserInputOutcome::TimedOut);
            assert_eq!(params.decided_at, None);
        }
        other => panic!("not typed as userInput/settled: {other:?}"),
    }
    assert_eq!(frame.extra["emittedAtMs"], json!(1754591000100u64));
    let mut expected: Value = serde_json::from_str(line).unwrap();
    expected["params"]["decidedAt"] = Value::Null;
    assert_eq!(
        serde_json::from_str::<Value>(&frame.to_line()).unwrap(),
        expected
    );
}

#[test]
fn unknown_methods_keep_name_and_params() {
    let line =
        r#"{"jsonrpc":"2.0","id":"x-1","method":"future/thing","params":{"a":[1,{"b":null}]}}"#;
    let frame = Frame::parse_guessing_sender(line).unwrap();
    match &frame.message {
        Message::ClientRequest {
            id,
            request: ClientRequest::Unknown { method, params },
        } => {
            assert_eq!(id, &Id::String("x-1".into()));
            assert_eq!(method, "future/thing");
            assert_eq!(params.as_ref().unwrap()["a"][1], json!({"b": null}));
        }
        other => panic!("not kept as unknown: {other:?}"),
    }
    assert_eq!(
        serde_json::from_str::<Value>(&frame.to_line()).unwrap(),
        serde_json::from_str::<Value>(line).unwrap()
    );
}

#[test]
fn payloads_decode_alike_before_and_after_the_method_and_absent_stays_absent() {
    // Params after the method decode as the frame is read; before it, from their wire text.
    let frames = [
        (
            r#"{"jsonrpc":"2.0","method":"userInput/settled","params":{"sessionId":"s","viewCursor":"v","sourceRange":{"stream":{"kind":"run","id":"r"},"first":{"id":"e","sequence":1},"last":{"id":"e","sequence":1}},"userInputId":"u","outcome":"timedOut","answers":[],"clarification":null,"reason":null,"decidedByCommandId":null}}"#,
            r#"{"params":{"sessionId":"s","viewCursor":"v","sourceRange":{"stream":{"kind":"run","id":"r"},"first":{"id":"e","sequence":1},"last":{"id":"e","sequence":1}},"userInputId":"u","outcome":"timedOut","answers":[],"clarification":null,"reason":null,"decidedByCommandId":null},"jsonrpc":"2.0","method":"userInput/settled"}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"initialized","params":{"x":1}}"#,
            r#"{"params":{"x":1},"jsonrpc":"2.0","method":"initialized"}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"future/thing","params":[1]}"#,
            r#"{"params":[1],"id":1,"jsonrpc":"2.0","method":"future/thing"}"#,
        ),
    ];
    for (after, before) in frames {
        let a = Frame::parse_guessing_sender(after).unwrap();
        let b = Frame::parse_guessing_sender(before).unwrap();
        assert_eq!(a.message, b.message, "{after}");
    }
    // No params member: an untyped payload stays absent and is not written back.
    let line = r#"{"jsonrpc":"2.0","method":"initialized"}"#;
    let frame = Frame::parse_guessing_sender(line).unwrap();
    assert_eq!(
        frame.message,
        Message::Notification(ProtocolNotification::Initialized(None))
    );
    assert_eq!(frame.to_line(), line);
    assert_eq!(
        ProtocolNotification::decode_raw("initialized", None).unwrap(),
        ProtocolNotification::Initialized(None)
    );
    assert!(matches!(
        ClientRequest::decode_raw("future/thing", None).unwrap(),
        ClientRequest::Unknown { params: None, .. }
    ));
    // A typed payload is required: its absence fails, naming the method.
    let error = ProtocolNotification::decode_raw("userInput/settled", None).unwrap_err();
    assert!(error.to_string().contains("userInput/settled"), "{error}");
}

#[test]
fn method_markers_name_their_types() {
    use msp_types::protocol::methods;
    assert_eq!(
        <methods::UserInputAnswerMethod as Request>::METHOD,
        "userInput/answer"
    );
    let params: <methods::Initialize as Request>::Params =
        serde_json::from_value(json!({"clientInfo": {"name": "desk", "version": "1"}})).unwrap();
    assert_eq!(params.client_info.name, "desk");
}

#[test]
fn a_method_named_at_run_time_gives_its_marker() {
    use msp_types::protocol::{methods, requests};
    struct Name;
    impl methods::WithMethod for Name {
        type Output = &'static str;
        fn call<M: msp_types::rpc::ClientMethod>(self) -> &'static str {
            M::METHOD
        }
    }
    impl requests::WithMethod for Name {
        type Output = &'static str;
        fn call<M: msp_types::rpc::ServerMethod>(self) -> &'static str {
            M::METHOD
        }
    }
    let schema: Value = serde_json::from_str(include_str!("../schema/msp.schema.json")).unwrap();
    let experimental = cfg!(feature = "experimental");
    for (table, find) in [
        (
            "methods",
            methods::with_method::<Name> as fn(&str, Name) -> Option<&'static str>,
        ),
        ("requests", requests::with_method::<Name>),
    ] {
        let entries = schema[table].as_object().unwrap();
        for (method, entry) in entries {
            let built = experimental || entry["x-msp-stability"] != "experimental";
            let found = find(method, Name);
            assert_eq!(found, built.then_some(method.as_str()), "{table} {method}");
        }
        assert_eq!(find("no/suchMethod", Name), None);
    }
}

#[test]
fn registry_answers_codes_kinds_and_version() {
    let entry = msp_types::registry::error_by_code(-32601).unwrap();
    assert_eq!(entry.kind, "methodNotFound");
    assert_eq!(
        msp_types::registry::error_by_kind("notInitialized")
            .unwrap()
            .code,
        -32600
    );
    assert_eq!(msp_types::registry::PROTOCOL_VERSION, Some("1.4.14"));
    // Interrupted and cancelled operations say nothing of retrying (1.4.14's registry).
    for code in [-32013, -32014] {
        assert_eq!(
            msp_types::registry::error_by_code(code).unwrap().retryable,
            None
        );
    }
    let draining = msp_types::registry::error_by_kind("daemonDraining").unwrap();
    assert_eq!((draining.code, draining.retryable), (-32039, Some(true)));
    let releases: Vec<_> = msp_types::registry::HOST_RELEASES
        .iter()
        .map(|r| r.release)
        .collect();
    assert_eq!(releases, ["1.4.13", "1.4.14"]);
    assert_eq!(
        msp_types::registry::host_release(msp_types::registry::SERVED_FINGERPRINT.unwrap())
            .map(|r| r.release),
        Some("1.4.14")
    );
    let fingerprint = msp_types::registry::SCHEMA_CONTENT_HASH;
    assert!(
        fingerprint.starts_with("sha256:") && fingerprint.len() == 71,
        "{fingerprint}"
    );
    assert!(msp_types::registry::GRANTABLE_CAPABILITIES.contains(&"userShell"));
}

#[cfg(not(feature = "experimental"))]
#[test]
fn experimental_methods_fall_to_the_unknown_arm_without_the_feature() {
    let request = ClientRequest::decode("account/read", None).unwrap();
    assert!(matches!(request, ClientRequest::Unknown { .. }));
}

#[cfg(feature = "experimental")]
#[test]
fn experimental_methods_are_typed_with_the_feature() {
    let request = ClientRequest::decode("account/read", None).unwrap();
    assert_eq!(request.method(), "account/read");
    assert!(!matches!(request, ClientRequest::Unknown { .. }));
}

#[test]
fn a_known_sender_types_requests_in_no_table_as_its_own() {
    let line = r#"{"jsonrpc":"2.0","id":9,"method":"future/ask","params":{}}"#;
    let frame = Frame::parse(msp_types::Sender::Server, line).unwrap();
    assert!(matches!(
        frame.message,
        Message::ServerRequest {
            request: msp_types::ServerRequest::Unknown { .. },
            ..
        }
    ));
    let frame = Frame::parse(msp_types::Sender::Client, line).unwrap();
    assert!(matches!(
        frame.message,
        Message::ClientRequest {
            request: ClientRequest::Unknown { .. },
            ..
        }
    ));
}

#[test]
fn numbers_keep_how_they_were_written() {
    for input in [
        json!({"partial": false, "usd": 2}),
        json!({"partial": true, "usd": 2.5}),
        json!({"partial": false, "usd": 18446744073709551615u64}),
    ] {
        assert_eq!(reencode::<msp_types::CumulativeCost>(&input), input);
    }
}

#[test]
fn struct_decoding_reads_text_and_values_alike_and_names_bad_members() {
    let value = settled_without_decided_at();
    let text = value.to_string();
    // From text (member names borrowed) and from a `Value` (names handed over owned).
    let from_text: UserInputSettledParams = serde_json::from_str(&text).unwrap();
    let from_value: UserInputSettledParams = serde_json::from_value(value.clone()).unwrap();
    assert_eq!(from_text, from_value);

    // A member name with an escape is not borrowed; it still lands in its field or in `unknown`.
    let escaped = text
        .replacen("\"outcome\"", "\"out\\u0063ome\"", 1)
        .replacen('{', "{\"x\\u002dextra\":[1,{\"a\":null}],", 1);
    let typed: UserInputSettledParams = serde_json::from_str(&escaped).unwrap();
    assert_eq!(typed.outcome, UserInputOutcome::Answered);
    assert_eq!(typed.unknown["x-extra"], json!([1, {"a": null}]));

    let mut missing = value.clone();
    missing.as_object_mut().unwrap().remove("outcome");
    let error = serde_json::from_value::<UserInputSettledParams>(missing).unwrap_err();
    assert_eq!(error.to_string(), "missing field `outcome`");

    let twice = text.replacen('{', "{\"sessionId\":\"s\",", 1);
    let error = serde_json::from_str::<UserInputSettledParams>(&twice).unwrap_err();
    assert!(
        error.to_string().starts_with("duplicate field `sessionId`"),
        "{error}"
    );

    let error = serde_json::from_str::<UserInputSettledParams>("[]").unwrap_err();
    assert!(
        error
            .to_string()
            .contains("a `UserInputSettledParams` object"),
        "{error}"
    );
}

#[test]
fn tracked_parsing_types_results_by_the_request_they_answer() {
    use msp_types::rpc::PendingRequests;
    use msp_types::{ClientResult, Sender};

    let result = r#"{"commandId":"c-1","status":"accepted","userInputId":"u-1","x-new":1}"#;
    let mut pending = PendingRequests::default();
    pending.insert(Id::Number(4), "userInput/answer");
    pending.insert(Id::Number(5), "userInput/answer");
    pending.insert(Id::Number(6), "userInput/answer");

    // Id before result, as hosts write it: typed in the same pass; the entry is taken out.
    let line = format!(r#"{{"jsonrpc":"2.0","id":4,"result":{result},"emittedAtMs":9}}"#);
    let frame = Frame::parse_tracked(Sender::Server, &line, &mut pending).unwrap();
    let Message::ClientResult {
        id,
        result: ClientResult::UserInputAnswer(typed),
    } = &frame.message
    else {
        panic!("not typed: {:?}", frame.message);
    };
    assert_eq!(*id, Id::Number(4));
    assert_eq!(typed.command_id, "c-1");
    assert_eq!(typed.unknown["x-new"], json!(1));
    assert_eq!(
        serde_json::from_str::<Value>(&frame.to_line()).unwrap(),
        serde_json::from_str::<Value>(&line).unwrap()
    );
    assert_eq!(pending.len(), 2);

    // Result before id: typed after the pass, the same way.
    let line = format!(r#"{{"result":{result},"id":5,"jsonrpc":"2.0"}}"#);
    let frame = Frame::parse_tracked(Sender::Server, &line, &mut pending).unwrap();
    assert!(matches!(
        frame.message,
        Message::ClientResult {
            result: ClientResult::UserInputAnswer(_),
            ..
        }
    ));

    // An error response also answers its request.
    let line = r#"{"jsonrpc":"2.0","id":6,"error":{"code":-32601,"message":"no"}}"#;
    let frame = Frame::parse_tracked(Sender::Server, line, &mut pending).unwrap();
    assert!(matches!(frame.message, Message::Error { .. }));
    assert!(pending.is_empty());

    // An id nobody waits for: the result stays wire text.
    let line = format!(r#"{{"jsonrpc":"2.0","id":7,"result":{result}}}"#);
    let frame = Frame::parse_tracked(Sender::Server, &line, &mut pending).unwrap();
    assert!(matches!(frame.message, Message::Result { .. }));
}

#[test]
fn request_ids_are_integers_or_strings_kept_apart() {
    assert_eq!(serde_json::from_str::<Id>("7").unwrap(), Id::Number(7));
    assert_eq!(serde_json::from_str::<Id>("-7").unwrap(), Id::Number(-7));
    assert_eq!(
        serde_json::from_str::<Id>(r#""7""#).unwrap(),
        Id::String("7".into())
    );
    assert_eq!(
        serde_json::from_value::<Id>(json!("a")).unwrap(),
        Id::String("a".into())
    );
    for bad in ["1.5", "true", "null", "{}", "18446744073709551615"] {
        let error = serde_json::from_str::<Id>(bad).unwrap_err().to_string();
        assert!(
            error.contains("request id"),
            "{bad}: {error} should name the request id"
        );
    }
}

#[test]
fn params_typed_before_the_id_arrives_are_retyped_for_the_frame_kind() {
    // `params` comes before `id`, so the params are first read as a notification's; the frame
    // turns out to be a request and is typed as one, losing nothing.
    let line = r#"{"jsonrpc":"2.0","method":"userInput/answer","params":{"sessionId":"s","userInputId":"u","commandId":"c","answers":[],"x":[1]},"id":3}"#;
    let frame = Frame::parse_guessing_sender(line).unwrap();
    let Message::ClientRequest {
        id,
        request: ClientRequest::UserInputAnswer(params),
    } = &frame.message
    else {
        panic!("not a typed request: {:?}", frame.message);
    };
    assert_eq!(*id, Id::Number(3));
    assert_eq!(params.command_id, "c");
    assert_eq!(params.unknown["x"], json!([1]));
    assert_eq!(
        serde_json::from_str::<Value>(&frame.to_line()).unwrap(),
        serde_json::from_str::<Value>(line).unwrap()
    );
}

#[test]
fn params_written_as_null_stay_null() {
    for line in [
        r#"{"jsonrpc":"2.0","method":"initialized","params":null}"#,
        r#"{"jsonrpc":"2.0","method":"initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"made/up","params":null}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"made/up","params":null}"#,
        r#"{"jsonrpc":"2.0","params":null,"method":"initialized"}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":null}"#,
    ] {
        let frame = Frame::parse_guessing_sender(line).unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&frame.to_line()).unwrap(),
            serde_json::from_str::<Value>(line).unwrap(),
            "{line}"
        );
    }
}

/// One boxing rule: every typed payload of every dispatch enum is a `Box`, so a pattern that
/// destructures one method's payload reads the same for every other. (A method without params
/// carries whatever was sent as `NoParams`, an `Option<Value>`: nothing typed to box.)
#[test]
fn every_typed_dispatch_payload_is_boxed() {
    let text = include_str!("../generated/protocol.rs");
    let mut arms = 0;
    for name in [
        "ClientRequest",
        "ServerRequest",
        "ProtocolNotification",
        "ClientResult",
        "ServerResult",
    ] {
        let start = text
            .find(&format!("pub enum {name} {{"))
            .unwrap_or_else(|| panic!("{name} not generated"));
        let body = &text[start..start + text[start..].find("\n}").unwrap()];
        for line in body.lines().map(str::trim) {
            if line.starts_with("//") || line.starts_with('#') || !line.ends_with("),") {
                continue;
            }
            let payload = &line[line.find('(').unwrap() + 1..line.len() - 2];
            if payload == "crate::rpc::NoParams" {
                continue;
            }
            assert!(payload.starts_with("Box<"), "{name}: `{line}` is not boxed");
            arms += 1;
        }
    }
    assert!(arms > 200, "only {arms} arms seen");

    // The same pattern shape for a large payload and a small one.
    let settled = Frame::parse(
        msp_types::Sender::Server,
        &json!({"jsonrpc": "2.0", "method": "userInput/settled", "params": settled_without_decided_at()})
            .to_string(),
    )
    .unwrap();
    let Message::Notification(ProtocolNotification::UserInputSettled(params)) = settled.message
    else {
        panic!("not a settlement");
    };
    let params: UserInputSettledParams = *params;
    assert_eq!(params.outcome, UserInputOutcome::Answered);
}

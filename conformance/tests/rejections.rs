//! Frames the schema does not allow fail to decode, with the JSON pointer of the offending member.

mod support;

use msp_conformance::{decode, Dir, Runner};
use serde_json::{json, Value};

fn answer(params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 4, "method": "userInput/answer", "params": params})
}

fn good_answer_params() -> Value {
    json!({
        "sessionId": "0198f0aa-1111-7000-8000-0000000000bb",
        "commandId": "018f6a2b-3333-7abc-8def-00000000d002",
        "userInputId": "0198f0ae-1111-7000-8000-0000000000f1",
        "answers": [{"questionId": "db_choice", "selectedLabel": "Postgres"}]
    })
}

/// Checks `frames` as one transcript; the last must fail at `pointer` with `message` in its reason.
fn rejected(frames: &[(Dir, Value)], pointer: &str, message: &str) {
    let runner = Runner::new().expect("the schema builds a model");
    let checked = support::play_frames(&runner, frames);
    let (last, before) = checked.split_last().expect("frames");
    for (i, c) in before.iter().enumerate() {
        assert!(c.lossless, "frame {}: {:?}", i + 1, c.failure);
    }
    assert!(!last.decoded, "decoded although invalid: {last:?}");
    assert!(!last.lossless);
    let (at, reason) = last.failure.as_ref().expect("a failure");
    assert_eq!(at, pointer, "{reason}");
    assert!(reason.contains(message), "{reason:?} lacks {message:?}");
}

#[test]
fn the_valid_frame_these_cases_start_from_round_trips() {
    let runner = Runner::new().expect("the schema builds a model");
    let checked = support::play_frames(&runner, &[(Dir::Client, answer(good_answer_params()))]);
    assert!(checked[0].lossless, "{:?}", checked[0].failure);
}

#[test]
fn a_closed_enum_value_the_schema_does_not_list() {
    let page = json!({"jsonrpc": "2.0", "id": 3, "method": "view/page",
        "params": {"sessionId": "s", "direction": "sideways", "limit": 200}});
    rejected(
        &[(Dir::Client, page)],
        "/params/direction",
        "unknown ViewPageDirection value `sideways`",
    );

    let request = json!({"jsonrpc": "2.0", "id": 18, "method": "userInput/request", "params": {
        "sessionId": "s", "userInputId": "u", "turnId": "t", "itemId": "i",
        "toolCallId": "c", "toolName": "request_user_input", "viewCursor": "v:s:1",
        "questions": [{"id": "q", "header": "H", "question": "Q?",
            "selection": {"mode": "ranked"}, "options": []}],
        "autoResolutionMs": 1000}});
    rejected(
        &[(Dir::Server, request)],
        "/params/questions/0/selection/mode",
        "unknown UserInputSelectionMode value `ranked`",
    );
}

#[test]
fn a_missing_required_member() {
    let mut params = good_answer_params();
    params.as_object_mut().unwrap().remove("commandId");
    rejected(
        &[(Dir::Client, answer(params))],
        "/params/commandId",
        "missing field `commandId`",
    );

    let mut params = good_answer_params();
    params["answers"][0]
        .as_object_mut()
        .unwrap()
        .remove("questionId");
    rejected(
        &[(Dir::Client, answer(params))],
        "/params/answers/0/questionId",
        "missing field `questionId`",
    );

    // In a result, typed by the request it answers.
    let ack =
        json!({"jsonrpc": "2.0", "id": 4, "result": {"status": "accepted", "userInputId": "u"}});
    rejected(
        &[
            (Dir::Client, answer(good_answer_params())),
            (Dir::Server, ack),
        ],
        "/result/commandId",
        "missing field `commandId`",
    );
}

#[test]
fn a_member_of_the_wrong_type() {
    let mut params = good_answer_params();
    params["answers"][0]["questionId"] = json!(5);
    rejected(
        &[(Dir::Client, answer(params))],
        "/params/answers/0/questionId",
        "invalid type: integer `5`, expected a string",
    );

    let page = json!({"jsonrpc": "2.0", "id": 3, "method": "view/page",
        "params": {"sessionId": "s", "direction": "forward", "limit": "200"}});
    rejected(
        &[(Dir::Client, page)],
        "/params/limit",
        "invalid type: string",
    );

    let error = json!({"jsonrpc": "2.0", "id": 4, "error": {"code": "-32600", "message": "bad"}});
    rejected(
        &[
            (Dir::Client, answer(good_answer_params())),
            (Dir::Server, error),
        ],
        "/error/code",
        "invalid type: string",
    );
}

#[test]
fn payload_errors_name_their_pointer_below_the_given_base() {
    let value = json!({"sessionId": "s", "direction": "up"});
    let error = decode::check("ViewPageParams", &value, "")
        .expect("the definition exists")
        .expect_err("an unlisted direction");
    assert_eq!(error.pointer, "/direction");
    assert!(error
        .to_string()
        .starts_with("/direction: unknown ViewPageDirection value `up`"));
    assert!(decode::check("NoSuchDefinition", &value, "").is_none());
}

#[test]
fn a_response_to_no_request_is_a_failure_not_a_guess() {
    let runner = Runner::new().expect("the schema builds a model");
    let orphan = json!({"jsonrpc": "2.0", "id": 99, "result": {}});
    let checked = support::play_frames(&runner, &[(Dir::Server, orphan)]);
    let (pointer, reason) = checked[0].failure.as_ref().expect("a failure");
    assert_eq!(pointer, "/id");
    assert!(reason.contains("no pending request"), "{reason}");
}

#[test]
fn a_request_from_the_wrong_side_is_a_failure() {
    let runner = Runner::new().expect("the schema builds a model");
    let checked = support::play_frames(&runner, &[(Dir::Server, answer(good_answer_params()))]);
    let (pointer, reason) = checked[0].failure.as_ref().expect("a failure");
    assert_eq!(pointer, "/method");
    assert!(reason.contains("the server sent it"), "{reason}");
}

#[test]
fn a_frame_that_is_not_json_rpc_is_a_failure_of_that_frame() {
    let runner = Runner::new().expect("the schema builds a model");
    let mut session = msp_conformance::Session::new(runner.shapes());
    for raw in ["not json", "[1, 2]", r#"{"jsonrpc": "2.0", "id": 1}"#] {
        let checked = session.check(Dir::Client, raw);
        assert!(!checked.decoded && checked.typed.is_none(), "{raw}");
        let (pointer, _) = checked.failure.expect("a failure");
        assert_eq!(pointer, "", "{raw}");
    }
}

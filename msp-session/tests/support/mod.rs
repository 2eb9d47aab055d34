//! Frames for the fold's tests, built as the host writes them (every required member there).
#![allow(dead_code)]

use msp_session::{Fold, FoldRules, Outcome};
use msp_types::{ProtocolNotification, ServerRequest, ViewPageResult};
use serde_json::{json, Value};

pub const SESSION: &str = "s1";

pub fn cursor(n: u32) -> String {
    format!("v:{SESSION}:{n}")
}

fn range() -> Value {
    json!({"stream": {"kind": "run", "id": "t1"}, "first": {"id": "r1", "sequence": 1}, "last": {"id": "r1", "sequence": 1}})
}

/// A notification of `method` with `params` (`sessionId` and `sourceRange` added).
pub fn event(method: &str, mut params: Value) -> ProtocolNotification {
    let object = params.as_object_mut().expect("params are an object");
    object.entry("sessionId").or_insert_with(|| json!(SESSION));
    if method != "item/delta" && method != "view/gap" {
        object.entry("sourceRange").or_insert_with(range);
    }
    ProtocolNotification::decode(method, Some(params)).unwrap_or_else(|e| panic!("{method}: {e}"))
}

pub fn item(id: &str, revision: i64, status: &str, text: &str) -> Value {
    json!({"itemId": id, "kind": "agentMessage", "revision": revision, "status": status, "turnId": "t1", "text": text})
}

pub fn started(id: &str, revision: i64, at: u32) -> ProtocolNotification {
    event(
        "item/started",
        json!({"item": item(id, revision, "inProgress", ""), "viewCursor": cursor(at)}),
    )
}

pub fn updated(id: &str, revision: i64, status: &str, at: u32) -> ProtocolNotification {
    event(
        "item/updated",
        json!({"item": item(id, revision, status, ""), "viewCursor": cursor(at)}),
    )
}

pub fn completed(id: &str, revision: i64, text: &str, at: u32) -> ProtocolNotification {
    event(
        "item/completed",
        json!({"item": item(id, revision, "completed", text), "viewCursor": cursor(at)}),
    )
}

/// A delta; `at` names its (ephemeral) cursor.
pub fn delta(id: &str, text: &str, at: &str) -> ProtocolNotification {
    event(
        "item/delta",
        json!({"itemId": id, "field": "text", "delta": text, "viewCursor": format!("v:{SESSION}:{at}")}),
    )
}

pub fn turn_started(turn: &str, at: u32) -> ProtocolNotification {
    event(
        "turn/started",
        json!({"turnId": turn, "commandId": format!("c-{turn}"), "viewCursor": cursor(at)}),
    )
}

pub fn turn_completed(turn: &str, terminal: &str, at: u32) -> ProtocolNotification {
    let mut params = json!({"turnId": turn, "terminal": terminal, "viewCursor": cursor(at)});
    if terminal == "failed" {
        params["error"] = json!({"kind": "modelError", "message": "boom", "retryable": false});
    }
    event("turn/completed", params)
}

pub fn retracted(turn: &str, outcome: &str, at: u32) -> ProtocolNotification {
    event(
        "turn/retracted",
        json!({"turnId": turn, "commandId": format!("r-{turn}"), "outcome": outcome, "viewCursor": cursor(at)}),
    )
}

pub fn unqueued(turn: &str, at: u32) -> ProtocolNotification {
    event(
        "turn/unqueued",
        json!({"turnId": turn, "commandId": format!("u-{turn}"), "viewCursor": cursor(at)}),
    )
}

pub fn requirement(approval: &str, index: i64) -> Value {
    json!({"approvalId": approval, "sourceIndex": index})
}

pub fn choices(prefix: &str) -> Value {
    json!([
        {"choiceId": format!("{prefix}-allow"), "label": "Allow once", "decision": "approved", "scope": "once"},
        {"choiceId": format!("{prefix}-deny"), "label": "Deny", "decision": "denied", "scope": "once", "acceptsFeedback": true}
    ])
}

pub fn approval_params(id: &str, at: u32) -> Value {
    json!({
        "approvalId": id, "turnId": "t1", "taskId": "task", "itemId": "tool-1", "toolCallId": "call_1",
        "toolName": "shell", "rawArgs": "{}", "subject": {"kind": "fileAccess", "toolName": "shell", "path": "/x", "access": "write"},
        "currentRequirementId": requirement(id, 0), "availableChoices": choices("s0"),
        "protectedWrite": false, "judgeEscalated": false, "viewCursor": cursor(at), "sourceRange": range(), "sessionId": SESSION
    })
}

pub fn approval_requested(id: &str, at: u32) -> ProtocolNotification {
    event("approval/requested", approval_params(id, at))
}

pub fn approval_request(id: &str, at: u32) -> ServerRequest {
    let params = serde_json::from_value(approval_params(id, at)).expect("approval/request params");
    ServerRequest::ApprovalRequest(Box::new(params))
}

pub fn approval_updated(id: &str, stage: i64, at: u32) -> ProtocolNotification {
    event(
        "approval/updated",
        json!({
            "approvalId": id, "change": {"kind": "stageApproved", "requirementId": requirement(id, stage - 1)},
            "currentRequirementId": requirement(id, stage), "availableChoices": choices(&format!("s{stage}")),
            "subject": {"kind": "fileAccess", "toolName": "shell", "path": "/x", "access": "write"},
            "viewCursor": cursor(at)
        }),
    )
}

pub fn approval_resolved(id: &str, decision: &str, at: u32) -> ProtocolNotification {
    event(
        "approval/resolved",
        json!({
            "approvalId": id, "itemId": "tool-1", "turnId": "t1", "decision": decision, "policyResult": "allow",
            "resolvedBy": "user", "decidedByCommandId": "cmd-1", "stageEvidence": [], "viewCursor": cursor(at)
        }),
    )
}

pub fn prompt_params(id: &str, at: u32) -> Value {
    json!({
        "userInputId": id, "turnId": "t1", "itemId": "tool-2", "toolCallId": "call_2", "toolName": "request_user_input",
        "questions": [{"id": "q", "header": "H", "question": "Which?", "selection": {"mode": "single"},
                       "options": [{"label": "A", "description": "a"}, {"label": "B", "description": "b"}]}],
        "viewCursor": cursor(at), "sessionId": SESSION
    })
}

pub fn prompt_request(id: &str, at: u32) -> ServerRequest {
    let params = serde_json::from_value(prompt_params(id, at)).expect("userInput/request params");
    ServerRequest::UserInputRequest(Box::new(params))
}

pub fn prompt_settled(id: &str, outcome: &str, by: Option<&str>, at: u32) -> ProtocolNotification {
    event(
        "userInput/settled",
        json!({
            "userInputId": id, "outcome": outcome, "answers": [], "clarification": null, "reason": null,
            "decidedByCommandId": by, "decidedAt": null, "viewCursor": cursor(at)
        }),
    )
}

pub fn goal_changed(goal: Option<&str>, at: u32) -> ProtocolNotification {
    let goal =
        goal.map(|text| json!({"objective": text, "status": "active", "percentComplete": 0}));
    event(
        "session/goalChanged",
        json!({"goal": goal, "viewCursor": cursor(at)}),
    )
}

pub fn gap(after: u32, next: u32) -> ProtocolNotification {
    event(
        "view/gap",
        json!({"after": cursor(after), "next": cursor(next)}),
    )
}

/// A `view/page` result serving `events` (as `(method, params)`), then `next`.
pub fn page(events: &[ProtocolNotification], next: Option<String>) -> ViewPageResult {
    let events: Vec<Value> = events
        .iter()
        .map(|e| json!({"method": e.method(), "params": e.params().expect("params")}))
        .collect();
    serde_json::from_value(json!({"events": events, "nextCursor": next})).expect("a page")
}

pub fn fold() -> Fold {
    Fold::for_session(SESSION, FoldRules::default())
}

pub fn python() -> Fold {
    Fold::new(FoldRules::python_sdk_1_4_13())
}

/// Applies every input, returning the outcomes.
pub fn feed(
    fold: &mut Fold,
    events: impl IntoIterator<Item = ProtocolNotification>,
) -> Vec<Outcome> {
    events.into_iter().map(|e| fold.apply(e)).collect()
}

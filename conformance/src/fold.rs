//! A transcript folded by `msp-session`, rendered as one JSON document: what
//! `msp-conformance fold` prints, in the form the Python SDK's fold dump uses for the same
//! state (its names and order), so that the two can be compared field by field.
//!
//! Under the Python SDK 1.4.13 rules the fold takes what that SDK's own replay takes: the
//! server's notifications, in wire order. Under the default rules it takes what a client sees:
//! the server's notifications and requests, the `session/start` and `session/resume` results
//! (which seed it), and the recorded `view/page` results that answer the refill's requests,
//! matched by cursor (a refill whose request no recorded page answers fails at the end).

use std::collections::BTreeMap;
use std::path::Path;

use msp_session::{Fold, FoldRules, Input, Outcome, Refill, TurnState};
use msp_types::rpc::{Id, RawJson};
use msp_types::{Frame, Message, ProtocolNotification, Sender, ViewPageParams};
use serde_json::{json, Map, Value};

use crate::transcript::{self, Dir, InputError};

/// Which rules to fold by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rules {
    /// The project's rules ([`FoldRules::default`]).
    Default,
    /// The Python SDK 1.4.13's ([`FoldRules::python_sdk_1_4_13`]).
    PythonSdk1413,
}

impl Rules {
    /// The rules by their command-line name (`default`, `python-sdk-1.4.13`).
    pub fn by_name(name: &str) -> Option<Self> {
        match name {
            "default" => Some(Rules::Default),
            "python-sdk-1.4.13" => Some(Rules::PythonSdk1413),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Rules::Default => "default",
            Rules::PythonSdk1413 => "python-sdk-1.4.13",
        }
    }

    fn fold_rules(self) -> FoldRules {
        match self {
            Rules::Default => FoldRules::default(),
            Rules::PythonSdk1413 => FoldRules::python_sdk_1_4_13(),
        }
    }
}

/// Folds the transcript at `file` (named `scenario`) and renders the document.
pub fn fold_file(file: &Path, scenario: &str, rules: Rules) -> Result<Value, InputError> {
    let text = std::fs::read_to_string(file).map_err(|e| InputError::Io(file.to_owned(), e))?;
    let records = transcript::records(file, &text)?;
    let mut play = Play::new(rules);
    for (_, record) in records {
        let raw = record.raw.trim_end_matches('\r');
        match record.dir {
            Dir::Client => play.client(raw),
            Dir::Server => play.server(raw),
        }
    }
    play.end();
    Ok(play.render(scenario))
}

/// The scenario's name: its folder's, for a `transcript.ndjson`, else the file's stem.
pub fn scenario_name(file: &Path) -> String {
    let stem = file
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    match (stem, file.parent().and_then(Path::file_name)) {
        ("transcript", Some(folder)) => folder.to_string_lossy().into_owned(),
        _ => stem.to_owned(),
    }
}

struct Play {
    rules: Rules,
    fold: Fold,
    outcomes: Vec<Outcome>,
    /// The client's requests by id: method and params.
    asked: BTreeMap<Id, (String, Value)>,
    refill: Option<Refill>,
    /// The refill's request awaiting a recorded page.
    waiting: Option<ViewPageParams>,
    pages_asked: usize,
}

impl Play {
    fn new(rules: Rules) -> Self {
        Play {
            rules,
            fold: Fold::new(rules.fold_rules()),
            outcomes: Vec::new(),
            asked: BTreeMap::new(),
            refill: None,
            waiting: None,
            pages_asked: 0,
        }
    }

    fn live(&self) -> bool {
        self.rules == Rules::Default
    }

    fn client(&mut self, raw: &str) {
        let Ok(frame) = serde_json::from_str::<Map<String, Value>>(raw) else {
            return;
        };
        let (Some(id), Some(Value::String(method))) = (frame.get("id"), frame.get("method")) else {
            return;
        };
        if let Ok(id) = serde_json::from_value::<Id>(id.clone()) {
            let params = frame.get("params").cloned().unwrap_or(Value::Null);
            self.asked.insert(id, (method.clone(), params));
        }
    }

    fn server(&mut self, raw: &str) {
        match Frame::parse(Sender::Server, raw) {
            Ok(frame) => match frame.message {
                Message::Notification(notification) => {
                    self.input(Input::Notification(notification))
                }
                Message::ServerRequest { request, .. } if self.live() => {
                    self.input(Input::Request(request))
                }
                Message::Result { id, result } if self.live() => self.result(&id, &result),
                Message::Error {
                    id: Some(id),
                    error,
                } if self.live() && self.asked_method(&id) == Some("view/page") => {
                    self.page_error(&id, Some(error.code), error.message);
                }
                _ => {}
            },
            Err(error) => {
                let notification = error.id.is_none() && error.method.is_some();
                if notification || self.live() {
                    self.input(Input::Undecodable {
                        method: error.method.clone(),
                        pointer: error.pointer.clone(),
                        reason: error.reason.clone(),
                        session_id: None,
                    });
                }
            }
        }
    }

    fn asked_method(&self, id: &Id) -> Option<&str> {
        self.asked.get(id).map(|(method, _)| method.as_str())
    }

    fn input(&mut self, input: Input) {
        if let Some(refill) = &mut self.refill {
            // During a refill a view/gap folds at once (the hole grows), the rest waits.
            if let Input::Notification(ProtocolNotification::ViewGap(_)) = &input {
                let outcome = self.fold.apply(input);
                if let Some((_, next)) = self.fold.gap().pending() {
                    refill.retarget(next);
                }
                self.outcomes.push(outcome);
                self.walk();
                return;
            }
            refill.hold(input);
            return;
        }
        let outcome = self.fold.apply(input);
        let gap = matches!(outcome, Outcome::Gap { .. } | Outcome::GapRepeated { .. });
        self.outcomes.push(outcome);
        if gap && self.live() {
            self.refill = self.fold.begin_refill();
            self.walk();
        }
    }

    fn result(&mut self, id: &Id, result: &RawJson) {
        let Some((method, params)) = self.asked.get(id).cloned() else {
            return;
        };
        match method.as_str() {
            "session/start" => {
                if let Ok(started) = result.decode() {
                    let outcome = self.fold.seed_started(&started);
                    self.outcomes.push(outcome);
                }
            }
            "session/resume" => {
                if let Ok(resumed) = result.decode() {
                    let outcome = self.fold.seed_resumed(&resumed);
                    self.outcomes.push(outcome);
                }
            }
            "view/page" => {
                if !self.answers_waiting(&params) {
                    return;
                }
                self.waiting = None;
                let refill = self.refill.as_mut().expect("a request waits");
                match result.decode() {
                    Ok(page) => refill.page(page),
                    Err(e) => refill.failed(None, e.to_string()),
                }
                self.walk();
            }
            _ => {}
        }
    }

    fn page_error(&mut self, id: &Id, code: Option<i64>, message: String) {
        let params = self.asked.get(id).map(|(_, params)| params.clone());
        if params.is_some_and(|params| self.answers_waiting(&params)) {
            self.waiting = None;
            if let Some(refill) = &mut self.refill {
                refill.failed(code, message);
            }
            self.walk();
        }
    }

    /// Whether a recorded `view/page` request (its params) asked what the refill waits for.
    fn answers_waiting(&self, recorded: &Value) -> bool {
        let Some(waiting) = &self.waiting else {
            return false;
        };
        waiting.cursor.is_some()
            && recorded.get("cursor").and_then(Value::as_str) == waiting.cursor.as_deref()
    }

    /// Moves the refill on: its next request waits for a recorded page; a finished one is
    /// applied, and another starts if a hole remains open with a new target.
    fn walk(&mut self) {
        let Some(refill) = &mut self.refill else {
            return;
        };
        if self.waiting.is_none() {
            if let Some(request) = refill.next_request() {
                self.pages_asked += 1;
                self.waiting = Some(request);
                return;
            }
        }
        if self.waiting.is_some() || !refill.is_over() {
            return;
        }
        let refill = self.refill.take().expect("a refill");
        let outcomes = self.fold.finish_refill(refill);
        self.outcomes.extend(outcomes);
    }

    fn end(&mut self) {
        if let Some(refill) = &mut self.refill {
            if self.waiting.take().is_some() {
                refill.failed(None, "no recorded page answers the request");
            }
            let refill = self.refill.take().expect("a refill");
            let outcomes = self.fold.finish_refill(refill);
            self.outcomes.extend(outcomes);
        }
    }

    fn render(&self, scenario: &str) -> Value {
        render(
            &self.fold,
            scenario,
            self.rules,
            self.outcomes.len(),
            self.pages_asked,
        )
    }
}

/// The document of `fold`'s state.
fn render(fold: &Fold, scenario: &str, rules: Rules, inputs: usize, pages: usize) -> Value {
    let items: Vec<Value> = fold
        .items()
        .iter()
        .map(|entry| {
            let item = entry.item();
            json!({
                "itemId": item.item_id,
                "kind": item.kind.as_str(),
                "revision": item.revision,
                "status": item.status.as_str(),
                "accumulated": entry.texts(),
                "terminalUnknown": entry.terminal_unknown(),
            })
        })
        .collect();
    let turns: Vec<Value> = fold
        .turns()
        .iter()
        .map(|turn| {
            let state = match turn.state() {
                TurnState::Queued => "queued",
                TurnState::Running => "running",
                TurnState::Ended => "settled",
                TurnState::Retracted => "retracted",
                TurnState::Unqueued => "unqueued",
                _ => "unknown",
            };
            json!({
                "turnId": turn.id(),
                "state": state,
                "terminal": turn.completed().map(|c| c.terminal.as_str()),
            })
        })
        .collect();
    let pending_approvals: Vec<Value> = fold
        .pending_approvals()
        .iter()
        .map(|a| {
            json!({
                "approvalId": a.id(),
                "latestUpdate": a.latest_update().map(|u| serde_json::to_value(u).unwrap_or(Value::Null)),
            })
        })
        .collect();
    let resolved: Vec<Value> = fold
        .resolved_approvals()
        .iter()
        .map(|r| json!({"approvalId": r.approval_id}))
        .collect();
    let pending_prompts: Vec<Value> = fold
        .pending_prompts()
        .iter()
        .map(|p| json!({"userInputId": p.id()}))
        .collect();
    let settled: Vec<Value> = fold
        .settled_prompts()
        .iter()
        .map(|s| json!({"userInputId": s.user_input_id, "outcome": s.outcome.as_str()}))
        .collect();
    let gap = fold.gap();
    json!({
        "scenario": scenario,
        "rules": rules.name(),
        "inputs": inputs,
        "refillPages": pages,
        "items": items,
        "turns": turns,
        "activeTurnId": fold.active_turn().map(|t| t.id()),
        "pendingApprovals": pending_approvals,
        "resolvedApprovals": resolved,
        "pendingUserInputs": pending_prompts,
        "settledUserInputs": settled,
        "gap": {
            "current": gap.is_current(),
            "pending": gap.pending().map(|(after, next)| json!({"after": after, "next": next})),
            "failure": gap.failure().map(|f| f.to_string()),
        },
    })
}

/// The document as text: sorted keys, one space of indent, a trailing newline (the Python
/// dump's form).
pub fn to_text(document: &Value) -> String {
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    serde::Serialize::serialize(document, &mut serializer).expect("a Value always encodes");
    let mut text = String::from_utf8(out).expect("serde_json writes UTF-8");
    text.push('\n');
    text
}

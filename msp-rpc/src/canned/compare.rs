//! Structural matching of a client frame against the recorded one, and id bindings.

use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;

use msp_types::support::pointer_push;
use serde_json::Value;

/// One difference between the recorded and the sent frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diff {
    /// Where, as a JSON pointer into the frame.
    pub pointer: String,
    /// What differs.
    pub detail: String,
    /// What sort of difference it is.
    pub kind: DiffKind,
}

/// What sort of difference a [`Diff`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DiffKind {
    /// A member the recording has and the sent frame lacks.
    Missing,
    /// A member the sent frame has and the recording lacks.
    Added,
    /// Another JSON type.
    Type,
    /// Another array length.
    Length,
    /// Another value of the same type.
    Value,
}

impl fmt::Display for Diff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() {
            "(the frame)"
        } else {
            &self.pointer
        };
        write!(f, "at {pointer}: {}", self.detail)
    }
}

/// Every difference between `recorded` and `sent`, skipping the `free` pointers (values that
/// may differ between runs).
pub fn compare(recorded: &Value, sent: &Value, free: &[String]) -> Vec<Diff> {
    let mut out = Vec::new();
    walk(recorded, sent, "", free, &mut out);
    out
}

fn walk(want: &Value, got: &Value, pointer: &str, free: &[String], out: &mut Vec<Diff>) {
    if free.iter().any(|p| p == pointer) {
        return;
    }
    let diff = |pointer: &str, detail: String, kind: DiffKind| Diff {
        pointer: pointer.to_owned(),
        detail,
        kind,
    };
    match (want, got) {
        (Value::Object(want), Value::Object(got)) => {
            let member = |key: &str| pointer_push(pointer, key);
            for key in want.keys().filter(|k| !got.contains_key(*k)) {
                out.push(diff(
                    &member(key),
                    "the member is missing".into(),
                    DiffKind::Missing,
                ));
            }
            for key in got.keys().filter(|k| !want.contains_key(*k)) {
                out.push(diff(
                    &member(key),
                    "the member was not recorded".into(),
                    DiffKind::Added,
                ));
            }
            for (key, want) in want {
                if let Some(got) = got.get(key) {
                    walk(want, got, &member(key), free, out);
                }
            }
        }
        (Value::Array(want), Value::Array(got)) if want.len() != got.len() => out.push(diff(
            pointer,
            format!("{} items, recorded {}", got.len(), want.len()),
            DiffKind::Length,
        )),
        (Value::Array(want), Value::Array(got)) => {
            for (index, (want, got)) in want.iter().zip(got).enumerate() {
                walk(want, got, &format!("{pointer}/{index}"), free, out);
            }
        }
        (want, got) if json_type(want) != json_type(got) => out.push(diff(
            pointer,
            format!("sent a {}, recorded a {}", json_type(got), json_type(want)),
            DiffKind::Type,
        )),
        (want, got) if want != got => out.push(diff(
            pointer,
            format!("sent {got}, recorded {want}"),
            DiffKind::Value,
        )),
        _ => {}
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// What sort of JSON-RPC frame a value is, by its members.
pub fn kind(frame: &Value) -> &'static str {
    match (frame.get("method"), frame.get("id"), frame.get("error")) {
        (Some(_), Some(_), _) => "request",
        (Some(_), None, _) => "notification",
        (None, _, Some(_)) => "error reply",
        (None, _, None) => "result",
    }
}

/// A short name for a frame in messages: `request view/page (id 3)`.
pub fn describe(frame: &Value) -> String {
    let id = frame
        .get("id")
        .map_or(String::new(), |id| format!(" (id {id})"));
    match frame.get("method").and_then(Value::as_str) {
        Some(method) => format!("{} {method}{id}", kind(frame)),
        None => format!("{}{id}", kind(frame)),
    }
}

/// A one-to-one binding of recorded values to the ones the client minted.
#[derive(Debug)]
pub struct Binding<T> {
    to_client: HashMap<T, T>,
    to_recorded: HashMap<T, T>,
}

impl<T> Default for Binding<T> {
    fn default() -> Self {
        Binding {
            to_client: HashMap::new(),
            to_recorded: HashMap::new(),
        }
    }
}

impl<T: Clone + Eq + Hash + fmt::Display> Binding<T> {
    /// Binds `recorded` to `client`; refuses to bind either twice to different values.
    pub fn bind(&mut self, recorded: &T, client: &T) -> Result<(), String> {
        match (self.to_client.get(recorded), self.to_recorded.get(client)) {
            (None, None) => {
                self.to_client.insert(recorded.clone(), client.clone());
                self.to_recorded.insert(client.clone(), recorded.clone());
                Ok(())
            }
            (Some(bound), _) if bound == client => Ok(()),
            (Some(bound), _) => Err(format!(
                "recorded {recorded} is already the client's {bound}, now {client}"
            )),
            (None, Some(bound)) => Err(format!(
                "the client reused {client}, already standing for recorded {bound}"
            )),
        }
    }

    /// The client's value for a recorded one.
    pub fn client_of(&self, recorded: &T) -> Option<&T> {
        self.to_client.get(recorded)
    }
}

//! A host made of a recorded transcript, so the example needs no real host and no network.
//!
//! It plays the recorded server frames in order and checks every frame the client sends
//! against the next recorded client frame. Ids the client mints (request ids and
//! `params.commandId`) cannot equal the recorded ones, so the first time each one is seen
//! it is bound to the recorded id, and from then on the recorded server frames speak the
//! client's ids: a response carries the client's request id, and every string equal to a
//! bound recorded `commandId` (the ack's `commandId`, `decidedByCommandId`, ...) is the
//! client's command id.
//!
//! A client frame must have the recorded shape: same method and id (after binding), same
//! members, same JSON types, same array lengths. Other values may differ (another label, a
//! reason in other words); each difference is noted, and the host still plays what it
//! recorded next.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::path::Path;

use msp_types::rpc::Id;
use serde::Deserialize;
use serde_json::Value;

/// One line of `transcript.ndjson`.
#[derive(Deserialize)]
struct Line {
    dir: String,
    raw: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dir {
    Client,
    Server,
}

#[derive(Clone, Debug)]
struct Recorded {
    dir: Dir,
    line: usize,
    raw: String,
    value: Value,
}

/// The frames of one transcript, in wire order.
#[derive(Clone, Debug)]
pub struct Transcript {
    origin: String,
    frames: Vec<Recorded>,
}

impl Transcript {
    /// Reads `transcript.ndjson` from a scenario folder (or the file itself).
    pub fn load(path: &Path) -> Result<Self, HostError> {
        let file = if path.is_dir() {
            path.join("transcript.ndjson")
        } else {
            path.to_path_buf()
        };
        let origin = file.display().to_string();
        let text = std::fs::read_to_string(&file)
            .map_err(|e| HostError(format!("cannot read {origin}: {e}")))?;
        Self::parse(&text, &origin)
    }

    /// Parses transcript lines; `origin` names them in messages.
    pub fn parse(text: &str, origin: &str) -> Result<Self, HostError> {
        let mut frames = Vec::new();
        for (index, text) in text.lines().enumerate() {
            let line = index + 1;
            if text.trim().is_empty() {
                continue;
            }
            let bad = |what: String| HostError(format!("{origin}:{line}: {what}"));
            let entry: Line = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
            let dir = match entry.dir.as_str() {
                "client" => Dir::Client,
                "server" => Dir::Server,
                other => return Err(bad(format!("unknown dir {other:?}"))),
            };
            let value: Value = serde_json::from_str(&entry.raw).map_err(|e| bad(e.to_string()))?;
            frames.push(Recorded {
                dir,
                line,
                raw: entry.raw,
                value,
            });
        }
        Ok(Transcript {
            origin: origin.to_owned(),
            frames,
        })
    }
}

/// Why the canned host could not go on.
#[derive(Debug)]
pub struct HostError(pub String);

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "canned host: {}", self.0)
    }
}

/// A one-to-one binding of recorded ids to the ids the client minted.
#[derive(Debug)]
struct Binding<T> {
    to_client: HashMap<T, T>,
    to_recorded: HashMap<T, T>,
}

impl<T: Clone + Eq + std::hash::Hash + fmt::Debug> Binding<T> {
    fn new() -> Self {
        Binding {
            to_client: HashMap::new(),
            to_recorded: HashMap::new(),
        }
    }

    fn bind(&mut self, recorded: T, client: T) -> Result<(), String> {
        match (self.to_client.get(&recorded), self.to_recorded.get(&client)) {
            (None, None) => {
                self.to_client.insert(recorded.clone(), client.clone());
                self.to_recorded.insert(client, recorded);
                Ok(())
            }
            (Some(bound), _) if *bound == client => Ok(()),
            (Some(bound), _) => Err(format!(
                "recorded {recorded:?} is already the client's {bound:?}, now {client:?}"
            )),
            (None, Some(bound)) => Err(format!(
                "the client reused {client:?}, already bound to recorded {bound:?}"
            )),
        }
    }
}

/// The host side of the connection.
pub struct CannedHost {
    origin: String,
    frames: VecDeque<Recorded>,
    ids: Binding<Id>,
    commands: Binding<String>,
    notes: Vec<String>,
}

impl CannedHost {
    pub fn new(transcript: Transcript) -> Self {
        CannedHost {
            origin: transcript.origin,
            frames: transcript.frames.into(),
            ids: Binding::new(),
            commands: Binding::new(),
            notes: Vec::new(),
        }
    }

    /// The next server frame, or `None` while the host waits for the client (or is done).
    pub fn recv(&mut self) -> Option<String> {
        if self.frames.front()?.dir != Dir::Server {
            return None;
        }
        let recorded = self.frames.pop_front()?;
        let mut value = recorded.value;
        let mut changed = false;
        // A response answers the id the client used; a server request keeps the host's id.
        if value.get("method").is_none() {
            let recorded_id = value.get("id").cloned().map(serde_json::from_value::<Id>);
            if let Some(Ok(id)) = recorded_id {
                if let Some(client_id) = self.ids.to_client.get(&id) {
                    value["id"] = serde_json::to_value(client_id).unwrap_or(Value::Null);
                    changed |= *client_id != id;
                }
            }
        }
        changed |= replace_strings(&mut value, &self.commands.to_client);
        Some(if changed {
            value.to_string()
        } else {
            recorded.raw
        })
    }

    /// Takes one client frame; it must match the next recorded client frame.
    pub fn send(&mut self, line: &str) -> Result<(), HostError> {
        let sent: Value = serde_json::from_str(line)
            .map_err(|e| HostError(format!("the client sent a line that is not JSON: {e}")))?;
        // Frames may cross on the wire: the client can answer before reading what the
        // host recorded next, so match the first recorded client frame still to come.
        let Some(index) = self.frames.iter().position(|f| f.dir == Dir::Client) else {
            return Err(HostError(format!(
                "{}: the recording has no more client frames, got {}",
                self.origin,
                describe(&sent)
            )));
        };
        let recorded = self.frames.remove(index).expect("index from position");
        let at = format!("{}:{}", self.origin, recorded.line);
        let mut expected = recorded.value;
        let method = |frame: &Value| frame.get("method").cloned();
        if kind(&expected) != kind(&sent) || method(&expected) != method(&sent) {
            return Err(HostError(format!(
                "{at}: the recording has the client send {} here, not {}",
                describe(&expected),
                describe(&sent)
            )));
        }
        self.unify(&mut expected, &sent)
            .map_err(|e| HostError(format!("{at}: {e}")))?;
        let mut diffs = Vec::new();
        compare(&expected, &sent, String::new(), &mut diffs);
        for diff in diffs {
            let hard =
                diff.shape || ["/jsonrpc", "/method", "/id"].contains(&diff.pointer.as_str());
            let message = format!("{} ({at}): {}", pointer_or_root(&diff.pointer), diff.detail);
            if hard {
                return Err(HostError(format!(
                    "client frame does not match the recording at {message}; sent {}",
                    describe(&sent)
                )));
            }
            self.notes.push(message);
        }
        Ok(())
    }

    /// The method the host waits for the client to send next, if it waits for a request
    /// or notification (a real host would not say; the recording does).
    pub fn next_client_method(&self) -> Option<&str> {
        let next = self.frames.front()?;
        if next.dir != Dir::Client {
            return None;
        }
        next.value.get("method")?.as_str()
    }

    /// The session the recorded client resumed: what a real client would remember from
    /// its last run.
    pub fn remembered_session(&self) -> Option<String> {
        self.frames
            .iter()
            .filter(|f| f.dir == Dir::Client)
            .find(|f| f.value.get("method").and_then(Value::as_str) == Some("session/resume"))
            .and_then(|f| {
                f.value
                    .pointer("/params/sessionId")?
                    .as_str()
                    .map(str::to_owned)
            })
    }

    /// Values the client sent that differ from the recording (its shape matched).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Binds the ids the client minted to the recorded ones, and writes the client's ids
    /// into `expected` so that only real differences remain.
    fn unify(&mut self, expected: &mut Value, sent: &Value) -> Result<(), String> {
        let is_request = expected.get("method").is_some();
        if is_request {
            if let (Some(recorded), Some(client)) = (expected.get("id"), sent.get("id")) {
                let ids = (
                    serde_json::from_value::<Id>(recorded.clone()),
                    serde_json::from_value::<Id>(client.clone()),
                );
                if let (Ok(recorded_id), Ok(client_id)) = ids {
                    self.ids.bind(recorded_id, client_id)?;
                    expected["id"] = client.clone();
                }
            }
        }
        let commands = (
            expected
                .pointer("/params/commandId")
                .and_then(Value::as_str),
            sent.pointer("/params/commandId").and_then(Value::as_str),
        );
        if let (Some(recorded), Some(client)) = commands {
            let client = client.to_owned();
            self.commands.bind(recorded.to_owned(), client.clone())?;
            expected["params"]["commandId"] = Value::String(client);
        }
        Ok(())
    }
}

/// One difference between the recorded and the sent frame.
struct Diff {
    pointer: String,
    detail: String,
    /// A different shape (members, types, lengths) rather than a different value.
    shape: bool,
}

fn compare(expected: &Value, sent: &Value, pointer: String, out: &mut Vec<Diff>) {
    let shape = |detail: String| Diff {
        pointer: pointer.clone(),
        detail,
        shape: true,
    };
    match (expected, sent) {
        (Value::Object(want), Value::Object(got)) => {
            for key in want.keys().filter(|k| !got.contains_key(*k)) {
                out.push(shape(format!("member {key:?} is missing")));
            }
            for key in got.keys().filter(|k| !want.contains_key(*k)) {
                out.push(shape(format!("member {key:?} was not recorded")));
            }
            for (key, want) in want {
                if let Some(got) = got.get(key) {
                    let escaped = key.replace('~', "~0").replace('/', "~1");
                    compare(want, got, format!("{pointer}/{escaped}"), out);
                }
            }
        }
        (Value::Array(want), Value::Array(got)) if want.len() != got.len() => {
            out.push(shape(format!(
                "{} items, recorded {}",
                got.len(),
                want.len()
            )));
        }
        (Value::Array(want), Value::Array(got)) => {
            for (index, (want, got)) in want.iter().zip(got).enumerate() {
                compare(want, got, format!("{pointer}/{index}"), out);
            }
        }
        (want, got) if json_type(want) != json_type(got) => out.push(shape(format!(
            "sent a {}, recorded a {}",
            json_type(got),
            json_type(want)
        ))),
        (want, got) if want != got => out.push(Diff {
            pointer: pointer.clone(),
            detail: format!("sent {got}, recorded {want}"),
            shape: false,
        }),
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

fn pointer_or_root(pointer: &str) -> &str {
    if pointer.is_empty() {
        "(the frame)"
    } else {
        pointer
    }
}

/// Replaces every string that is a key of `map`; whether anything changed.
fn replace_strings(value: &mut Value, map: &HashMap<String, String>) -> bool {
    match value {
        Value::String(s) => match map.get(s.as_str()) {
            Some(client) if client != s => {
                *s = client.clone();
                true
            }
            _ => false,
        },
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, item| replace_strings(item, map) | changed),
        Value::Object(members) => members
            .values_mut()
            .fold(false, |changed, item| replace_strings(item, map) | changed),
        _ => false,
    }
}

/// What sort of JSON-RPC frame this is, by its members.
fn kind(frame: &Value) -> &'static str {
    match (frame.get("method"), frame.get("id"), frame.get("error")) {
        (Some(_), Some(_), _) => "request",
        (Some(_), None, _) => "notification",
        (None, _, Some(_)) => "error reply",
        (None, _, None) => "result",
    }
}

/// A short name for a frame in messages.
fn describe(frame: &Value) -> String {
    let id = frame
        .get("id")
        .map_or(String::new(), |id| format!(" (id {id})"));
    match frame.get("method") {
        Some(method) => format!("{} {method}{id}", kind(frame)),
        None => format!("{}{id}", kind(frame)),
    }
}

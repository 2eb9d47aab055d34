//! One frame through the typed API and back: classify, decode, re-encode, compare.

use msp_codegen::model::FieldKind;
use msp_types::rpc::{FrameKind, PendingRequests, RawFrame, RawJson};
use msp_types::{
    ClientRequest, ClientResult, Frame, Message, ProtocolNotification, ServerRequest, ServerResult,
};
use serde_json::Value;

use crate::decode;
use crate::diff::diff;
use crate::shape::{Shapes, Step, Table};
use crate::transcript::Dir;

/// What became of one frame.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Checked {
    /// The method of the frame, or of the request a response answers, when known.
    pub method: Option<String>,
    /// `Some(true)`: the method tables give the payload a schema type; `Some(false)`: the
    /// method is in no table; `None`: the frame could not be classified.
    pub typed: Option<bool>,
    /// The frame decoded into `msp_types::Frame` (and its result into `ClientResult` or
    /// `ServerResult`).
    pub decoded: bool,
    /// The re-encoded frame equals the input, modulo required-nullable members written as `null`.
    pub lossless: bool,
    /// Why it is not lossless: a JSON pointer into the frame and a reason.
    pub failure: Option<(String, String)>,
    /// The re-encoded frame, when it decoded.
    pub output: Option<Value>,
}

/// The state of one transcript: the requests each side sent that await a response.
pub struct Session<'s> {
    shapes: &'s Shapes,
    sent_by_client: PendingRequests,
    sent_by_server: PendingRequests,
}

/// Where a frame's payload sits and which definition types it.
struct Payload {
    member: &'static str,
    def: Option<String>,
}

impl<'s> Session<'s> {
    /// A fresh transcript.
    pub fn new(shapes: &'s Shapes) -> Self {
        Session {
            shapes,
            sent_by_client: PendingRequests::default(),
            sent_by_server: PendingRequests::default(),
        }
    }

    fn sent_by(&mut self, dir: Dir) -> &mut PendingRequests {
        match dir {
            Dir::Client => &mut self.sent_by_client,
            Dir::Server => &mut self.sent_by_server,
        }
    }

    /// Checks the frame `raw` written by `dir`.
    pub fn check(&mut self, dir: Dir, raw: &str) -> Checked {
        let mut checked = Checked::default();
        if let Err((pointer, reason)) = self.run(dir, raw, &mut checked) {
            checked.failure = Some((pointer, reason));
        }
        checked
    }

    fn run(&mut self, dir: Dir, raw: &str, checked: &mut Checked) -> Result<(), (String, String)> {
        let text = raw.strip_suffix('\n').unwrap_or(raw);
        let text = text.strip_suffix('\r').unwrap_or(text);
        let input: Value = serde_json::from_str(text)
            .map_err(|e| (String::new(), format!("frame is not JSON: {e}")))?;
        let frame = RawFrame::parse_line(raw).map_err(|e| (String::new(), e.to_string()))?;
        let kind = frame.kind().map_err(|e| (String::new(), e.to_string()))?;
        let payload = self.classify(dir, kind, &frame, checked)?;

        let mut typed = Frame::from_raw_guessing_sender(frame)
            .map_err(|e| self.pointed(&payload, &input, e))?;
        let mut known = decoded_arm_is_typed(&typed.message);
        if let Message::Result { result, .. } = &mut typed.message {
            let method = checked.method.as_deref().unwrap_or_default();
            // A server's result answers a client's request, and the other way round.
            let (typed_arm, encoded) = match dir {
                Dir::Server => ClientResult::decode_raw(method, result.as_raw())
                    .map(|r| (!matches!(r, ClientResult::Unknown { .. }), r.result())),
                Dir::Client => ServerResult::decode_raw(method, result.as_raw())
                    .map(|r| (!matches!(r, ServerResult::Unknown { .. }), r.result())),
            }
            .map_err(|e| self.pointed(&payload, &input, e))?;
            known = Some(typed_arm);
            *result = RawJson::from_value(&encoded);
        }
        checked.decoded = true;
        if let Some(known) = known {
            if known != (checked.typed == Some(true)) {
                return Err(tables_disagree(&payload, known));
            }
        }

        let output = serde_json::to_value(typed.to_raw())
            .map_err(|e| (String::new(), format!("frame does not encode: {e}")))?;
        let payload_value = input.get(payload.member);
        let mut allow_null = |path: &[Step<'_>], member: &str| {
            let (Some(def), Some(value)) = (&payload.def, payload_value) else {
                return false;
            };
            path.first() == Some(&Step::Member(payload.member))
                && self.shapes.member_kind(def, value, &path[1..], member)
                    == Some(FieldKind::RequiredNullable)
        };
        let differences = diff(&input, &output, &mut allow_null);
        checked.output = Some(output);
        match differences.split_first() {
            None => {
                checked.lossless = true;
                Ok(())
            }
            Some((first, rest)) => {
                let mut reason = first.reason.clone();
                if !rest.is_empty() {
                    reason.push_str(&format!(" (and {} more differences)", rest.len()));
                }
                Err((first.pointer.clone(), reason))
            }
        }
    }

    /// Finds the method and payload type of a frame, and keeps track of pending requests.
    fn classify(
        &mut self,
        dir: Dir,
        kind: FrameKind,
        frame: &RawFrame,
        checked: &mut Checked,
    ) -> Result<Payload, (String, String)> {
        let method = frame.method.as_deref().unwrap_or_default();
        match kind {
            FrameKind::Request => {
                if let Some(id) = frame.id() {
                    self.sent_by(dir).insert(id.clone(), method);
                }
                checked.method = Some(method.to_owned());
                let entry = self.shapes.request(method);
                checked.typed = Some(entry.is_some());
                match (entry, dir) {
                    (Some((Table::Requests, _)), Dir::Client)
                    | (Some((Table::Methods, _)), Dir::Server) => {
                        return Err(wrong_side(method, dir))
                    }
                    _ => {}
                }
                Ok(Payload {
                    member: "params",
                    def: entry.and_then(|(_, m)| m.params.clone()),
                })
            }
            FrameKind::Notification => {
                checked.method = Some(method.to_owned());
                let entry = self.shapes.notification(method);
                checked.typed = Some(entry.is_some());
                Ok(Payload {
                    member: "params",
                    def: entry.and_then(|m| m.params.clone()),
                })
            }
            FrameKind::Result => {
                let answered = frame.id().and_then(|id| self.sent_by(dir.other()).take(id));
                let Some(answered) = answered else {
                    return Err((
                        "/id".to_owned(),
                        format!("answers no pending request sent by the {}", dir.other()),
                    ));
                };
                let table = match dir {
                    Dir::Server => Table::Methods,
                    Dir::Client => Table::Requests,
                };
                let entry = self.shapes.method(table, &answered);
                checked.typed = Some(entry.is_some());
                let def = entry.and_then(|m| m.result.clone());
                checked.method = Some(answered);
                Ok(Payload {
                    member: "result",
                    def,
                })
            }
            FrameKind::Error => {
                if let Some(id) = frame.id() {
                    checked.method = self.sent_by(dir.other()).take(id);
                }
                checked.typed = Some(true);
                Ok(Payload {
                    member: "error",
                    def: Some("ErrorObject".to_owned()),
                })
            }
        }
    }

    /// A decode error, with the pointer found by decoding the payload again, path-tracked.
    fn pointed(
        &self,
        payload: &Payload,
        input: &Value,
        error: impl std::fmt::Display,
    ) -> (String, String) {
        let base = format!("/{}", payload.member);
        let found = payload.def.as_deref().and_then(|def| {
            let value = input.get(payload.member).unwrap_or(&Value::Null);
            decode::check(def, value, &base)?.err()
        });
        match found {
            Some(e) => (e.pointer, format!("does not decode: {}", e.message)),
            None => (base, format!("does not decode: {error}")),
        }
    }
}

/// Whether the decoder typed the payload (`Some(false)`: it took an `Unknown` arm); `None`
/// for messages whose payload is typed later (results) or always (errors).
fn decoded_arm_is_typed(message: &Message) -> Option<bool> {
    match message {
        Message::ClientRequest { request, .. } => {
            Some(!matches!(request, ClientRequest::Unknown { .. }))
        }
        Message::ServerRequest { request, .. } => {
            Some(!matches!(request, ServerRequest::Unknown { .. }))
        }
        Message::Notification(n) => Some(!matches!(n, ProtocolNotification::Unknown { .. })),
        _ => None,
    }
}

/// The generated dispatch and the schema's tables disagree about a method.
fn tables_disagree(payload: &Payload, decoder_knows: bool) -> (String, String) {
    let (decoder, schema) = if decoder_knows {
        ("a typed arm", "in no table")
    } else {
        ("the Unknown arm", "in a table")
    };
    let pointer = match payload.member {
        "result" => "/result",
        _ => "/method",
    };
    (
        pointer.to_owned(),
        format!("decoded through {decoder} but the schema has the method {schema}"),
    )
}

fn wrong_side(method: &str, dir: Dir) -> (String, String) {
    (
        "/method".to_owned(),
        format!(
            "`{method}` is a request the {} sends, but the {dir} sent it",
            dir.other()
        ),
    )
}

//! JSON-RPC 2.0 framing: ids, the method traits, and one lossless frame type for any line.

use std::fmt;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A request id: a number or a string, kept as sent.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(untagged)]
pub enum Id {
    /// A numeric id.
    Number(i64),
    /// A string id.
    String(String),
}

// By hand rather than `untagged`, which buffers the value before trying each shape.
impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IdVisitor;

        impl serde::de::Visitor<'_> for IdVisitor {
            type Value = Id;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a request id (an integer or a string)")
            }

            fn visit_i64<E: serde::de::Error>(self, value: i64) -> Result<Id, E> {
                Ok(Id::Number(value))
            }

            fn visit_u64<E: serde::de::Error>(self, value: u64) -> Result<Id, E> {
                i64::try_from(value)
                    .map(Id::Number)
                    .map_err(|_| E::custom(format_args!("request id {value} is out of range")))
            }

            fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<Id, E> {
                Ok(Id::String(value.to_owned()))
            }

            fn visit_string<E: serde::de::Error>(self, value: String) -> Result<Id, E> {
                Ok(Id::String(value))
            }
        }

        deserializer.deserialize_any(IdVisitor)
    }
}

impl From<i64> for Id {
    fn from(value: i64) -> Self {
        Id::Number(value)
    }
}

impl From<&str> for Id {
    fn from(value: &str) -> Self {
        Id::String(value.to_owned())
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Number(n) => write!(f, "{n}"),
            Id::String(s) => write!(f, "{s:?}"),
        }
    }
}

/// Params of a method that takes none: whatever the peer sent (usually nothing) is kept.
pub type NoParams = Option<Value>;

/// A request method: its name and the types of its params and result.
///
/// Each method of the tables has a marker type implementing it (in `protocol::methods` and
/// `protocol::requests`); code generic over `M: Request` gets typed params and results.
///
/// ```
/// use msp_types::rpc::{RawFrame, Request};
///
/// // A method of one's own, for a test double or an extension.
/// enum Ping {}
/// impl Request for Ping {
///     const METHOD: &'static str = "test/ping";
///     type Params = Vec<u32>;
///     type Result = u32;
/// }
///
/// let line = RawFrame::request::<Ping>(1, &vec![2, 3]).to_line();
/// assert_eq!(line, r#"{"jsonrpc":"2.0","id":1,"method":"test/ping","params":[2,3]}"#);
/// let reply = RawFrame::parse_line(r#"{"jsonrpc":"2.0","id":1,"result":5}"#)?;
/// assert_eq!(reply.result_as::<Ping>()?, 5);
/// # Ok::<(), msp_types::rpc::DecodeError>(())
/// ```
pub trait Request {
    /// The JSON-RPC method name.
    const METHOD: &'static str;
    /// The `params` member (plain data, so that code generic over the method can move it
    /// to another thread or task).
    type Params: Serialize + DeserializeOwned + Send + Sync + 'static;
    /// The `result` member of a successful response.
    type Result: Serialize + DeserializeOwned + Send + Sync + 'static;
}

/// A request a client sends to the server (the `methods` table).
pub trait ClientMethod: Request {}

/// A request the server sends to a client (the `requests` table).
pub trait ServerMethod: Request {}

/// A notification method: its name and the type of its params.
///
/// ```
/// use msp_types::rpc::{Notification, RawFrame};
///
/// enum Tick {}
/// impl Notification for Tick {
///     const METHOD: &'static str = "test/tick";
///     type Params = u64;
/// }
///
/// let frame = RawFrame::notification::<Tick>(&7);
/// assert_eq!(frame.to_line(), r#"{"jsonrpc":"2.0","method":"test/tick","params":7}"#);
/// assert_eq!(frame.params_as::<u64>()?, 7);
/// # Ok::<(), msp_types::rpc::DecodeError>(())
/// ```
pub trait Notification {
    /// The JSON-RPC method name.
    const METHOD: &'static str;
    /// The `params` member.
    type Params: Serialize + DeserializeOwned;
}

/// Why a frame or a payload could not be decoded, and where.
///
/// ```
/// use msp_types::rpc::{decode_text, RawFrame};
///
/// let error = decode_text::<Vec<u32>>("test/counts", "[1, \"two\"]").unwrap_err();
/// assert_eq!(error.method.as_deref(), Some("test/counts"));
/// assert_eq!(error.pointer, "/1");
///
/// // A line that is not JSON has no envelope to keep.
/// let error = RawFrame::parse_line("{\"jsonrpc\": \"2.0\",").unwrap_err();
/// assert!(error.method.is_none() && error.frame.is_none());
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct DecodeError {
    /// The method of the frame (or of the payload), when it could be read.
    pub method: Option<String>,
    /// The frame's id, when it could be read.
    pub id: Option<Id>,
    /// JSON pointer of the member that failed: within the frame for frame decoders
    /// (`/params/questions/0/selection/mode`), within the payload for payload decoders. Empty
    /// when the input as a whole is at fault (not JSON, not a JSON-RPC frame).
    pub pointer: String,
    /// What went wrong, without a position.
    pub reason: String,
    /// The frame with its payloads as plain JSON, when its envelope reads: enough to answer
    /// a request with its id, or to pass the frame on untouched.
    pub frame: Option<Box<RawFrame>>,
}

impl DecodeError {
    pub(crate) fn new(method: Option<&str>, reason: impl fmt::Display) -> Self {
        DecodeError {
            method: method.map(str::to_owned),
            id: None,
            pointer: String::new(),
            reason: reason.to_string(),
            frame: None,
        }
    }

    /// An error of serde_json's while decoding `text`, located by its position in it.
    pub(crate) fn json(method: Option<&str>, text: &str, error: &serde_json::Error) -> Self {
        let full = error.to_string();
        let position = format!(" at line {} column {}", error.line(), error.column());
        let reason = full.strip_suffix(&position).unwrap_or(&full).to_owned();
        let mut pointer = match error.line() {
            0 => String::new(),
            line => crate::pointer::at(text, crate::pointer::offset(text, line, error.column())),
        };
        // The position of a missing member is the end of its object: name the member itself.
        if let Some(member) = reason
            .strip_prefix("missing field `")
            .and_then(|rest| rest.strip_suffix('`'))
        {
            pointer = crate::support::pointer_push(&pointer, member);
        }
        DecodeError {
            reason,
            pointer,
            ..DecodeError::new(method, "")
        }
    }

    /// The same error, its pointer taken as relative to member `part` of a frame.
    pub(crate) fn under(mut self, part: &str) -> Self {
        self.pointer.insert_str(0, part);
        self
    }

    /// The same error, with what the frame's envelope tells (method, id, the frame itself)
    /// read again from `line`, leniently.
    pub(crate) fn in_frame(mut self, line: &str) -> Self {
        if let Ok(frame) = serde_json::from_str::<RawFrame>(line) {
            if frame.kind().is_ok() {
                self.method = self.method.or_else(|| frame.method.clone());
                self.id = self.id.or_else(|| frame.id().cloned());
                self.frame = Some(Box::new(frame));
            }
        }
        self
    }

    /// Whether the frame is a request whose params did not decode: the request to answer
    /// with `-32602` (invalid params), its id in [`DecodeError::id`].
    pub fn is_bad_request_params(&self) -> bool {
        let request = self.frame.as_ref().and_then(|f| f.kind().ok()) == Some(FrameKind::Request);
        request && (self.pointer == "/params" || self.pointer.starts_with("/params/"))
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.method.as_deref().unwrap_or("frame"))?;
        if let Some(id) = &self.id {
            write!(f, " (id {id})")?;
        }
        if !self.pointer.is_empty() {
            write!(f, " at {}", self.pointer)?;
        }
        write!(f, ": {}", self.reason)
    }
}

impl std::error::Error for DecodeError {}

/// Decodes a params or result payload into `T`; an absent payload decodes from `null`.
pub fn decode_payload<T: DeserializeOwned>(method: &str, payload: Option<Value>) -> Result<T, DecodeError> {
    let payload = payload.unwrap_or(Value::Null);
    // Only a failure pays for the text: a `Value` carries no positions to point with.
    serde_json::from_value(payload.clone()).map_err(|e| {
        let text = payload.to_string();
        match serde_json::from_str::<T>(&text) {
            Err(located) => DecodeError::json(Some(method), &text, &located),
            Ok(_) => DecodeError::new(Some(method), e),
        }
    })
}

/// Decodes payload text into `T`, an error pointing into the text.
pub fn decode_text<T: DeserializeOwned>(method: &str, text: &str) -> Result<T, DecodeError> {
    serde_json::from_str(text).map_err(|e| DecodeError::json(Some(method), text, &e))
}

/// Decodes `text` with `decode` (a dispatch enum's streaming decoder), all of it; an error
/// names `method` and points into the text.
pub fn decode_with<T>(
    method: &str,
    text: &str,
    decode: impl FnOnce(&mut serde_json::Deserializer<serde_json::de::StrRead<'_>>) -> Result<T, serde_json::Error>,
) -> Result<T, DecodeError> {
    let mut de = serde_json::Deserializer::from_str(text);
    decode(&mut de)
        .and_then(|value| de.end().map(|()| value))
        .map_err(|e| DecodeError::json(Some(method), text, &e))
}

/// Where a payload comes from: a parsed `Value`, or the wire text of one (`RawValue`).
pub trait PayloadSource {
    /// Decodes the payload (absent: from `null`) as `T`.
    fn decode<T: DeserializeOwned>(self, method: &str) -> Result<T, DecodeError>;
    /// The payload as a `Value`, `None` when absent.
    fn into_value(self) -> Option<Value>;
}

impl PayloadSource for Option<Value> {
    fn decode<T: DeserializeOwned>(self, method: &str) -> Result<T, DecodeError> {
        decode_payload(method, self)
    }

    fn into_value(self) -> Option<Value> {
        self
    }
}

impl PayloadSource for Option<&RawValue> {
    fn decode<T: DeserializeOwned>(self, method: &str) -> Result<T, DecodeError> {
        decode_text(method, self.map_or("null", RawValue::get))
    }

    fn into_value(self) -> Option<Value> {
        // The text came from a parsed document, so it is valid JSON.
        self.and_then(|raw| serde_json::from_str(raw.get()).ok())
    }
}

/// Encodes a typed payload back to JSON.
pub fn encode_payload<T: Serialize>(payload: &T) -> Value {
    // Generated types serialize to JSON infallibly: string keys, no non-finite floats.
    serde_json::to_value(payload).unwrap_or(Value::Null)
}

/// One JSON-RPC frame as read from the wire, before the method tables type its payload.
///
/// Every member, including the ones JSON-RPC does not define (`emittedAtMs`, `trace`, ...),
/// survives a decode and re-encode.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RawFrame {
    /// The protocol version; `"2.0"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jsonrpc: Option<String>,
    /// The id of a request or response; `null` on an error response to an unreadable request.
    #[serde(default, skip_serializing_if = "crate::Tristate::is_absent")]
    pub id: crate::Tristate<Id>,
    /// The method of a request or notification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The params of a request or notification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
    /// The result of a successful response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The error of a failed response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
    /// Members outside JSON-RPC 2.0, kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

pub(crate) const NOT_A_FRAME: &str = "not a JSON-RPC 2.0 request, notification, result or error";

pub(crate) fn classify(method: bool, id: &crate::Tristate<Id>, result: bool, error: bool) -> Option<FrameKind> {
    match (method, id, result, error) {
        (true, crate::Tristate::Value(_), false, false) => Some(FrameKind::Request),
        (true, crate::Tristate::Absent, false, false) => Some(FrameKind::Notification),
        (false, crate::Tristate::Value(_), true, false) => Some(FrameKind::Result),
        (false, _, false, true) => Some(FrameKind::Error),
        _ => None,
    }
}

/// A JSON value kept as its wire text: a result not typed yet (its method is known only from
/// the request with the same id). Equal when the texts are equal.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RawJson(Box<RawValue>);

impl RawJson {
    /// The JSON text.
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// The text as a borrowed `RawValue`, as `ClientResult::decode_raw` takes it.
    pub fn as_raw(&self) -> &RawValue {
        &self.0
    }

    /// Decodes the text as `T`.
    pub fn decode<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.0.get())
    }

    /// Decodes the text as the result of request method `M`, an error naming the method and
    /// pointing into the text.
    pub fn decode_result<M: Request>(&self) -> Result<M::Result, DecodeError> {
        decode_text(M::METHOD, self.0.get())
    }

    /// The value, parsed.
    pub fn to_value(&self) -> Value {
        // The text came from a parsed document (or `from_value`), so it is valid JSON.
        serde_json::from_str(self.0.get()).unwrap_or(Value::Null)
    }

    /// The wire text of `value`.
    pub fn from_value(value: &Value) -> Self {
        RawJson(serde_json::value::to_raw_value(value).unwrap_or_else(|_| null_raw()))
    }
}

fn null_raw() -> Box<RawValue> {
    serde_json::value::to_raw_value(&Value::Null).unwrap_or_default()
}

impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Eq for RawJson {}

/// What kind of frame a [`RawFrame`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrameKind {
    /// A method call that expects a response.
    Request,
    /// A method call without an id.
    Notification,
    /// A successful response.
    Result,
    /// A failed response.
    Error,
}

impl RawFrame {
    /// Parses one line; a trailing `\r` (or `\r\n`) and a leading byte-order mark are
    /// tolerated.
    pub fn parse_line(line: &str) -> Result<Self, DecodeError> {
        let line = line.strip_suffix('\n').unwrap_or(line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        let line = line.strip_prefix('\u{feff}').unwrap_or(line);
        let frame: RawFrame = serde_json::from_str(line).map_err(|e| DecodeError::json(None, line, &e))?;
        frame.kind()?;
        Ok(frame)
    }

    /// Classifies the frame by the members it has.
    pub fn kind(&self) -> Result<FrameKind, DecodeError> {
        classify(self.method.is_some(), &self.id, self.result.is_some(), self.error.is_some())
            .ok_or_else(|| DecodeError::new(self.method.as_deref(), NOT_A_FRAME))
    }

    /// The id of a request or response, if it has one.
    pub fn id(&self) -> Option<&Id> {
        self.id.as_value()
    }

    /// Encodes the frame as one line of JSON, without a line ending.
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

impl RawFrame {
    /// A request for method `M` with `id`.
    pub fn request<M: Request>(id: impl Into<Id>, params: &M::Params) -> Self {
        RawFrame {
            jsonrpc: Some("2.0".to_owned()),
            id: crate::Tristate::Value(id.into()),
            method: Some(M::METHOD.to_owned()),
            params: payload_member(params),
            ..RawFrame::default()
        }
    }

    /// A notification of method `N`.
    pub fn notification<N: Notification>(params: &N::Params) -> Self {
        RawFrame {
            jsonrpc: Some("2.0".to_owned()),
            method: Some(N::METHOD.to_owned()),
            params: payload_member(params),
            ..RawFrame::default()
        }
    }

    /// A successful response to the request `id` of method `M`.
    pub fn result<M: Request>(id: impl Into<Id>, result: &M::Result) -> Self {
        RawFrame {
            jsonrpc: Some("2.0".to_owned()),
            id: crate::Tristate::Value(id.into()),
            result: Some(encode_payload(result)),
            ..RawFrame::default()
        }
    }

    /// A failed response to the request `id` (`None`: the request could not be read).
    pub fn error(id: Option<Id>, code: i64, message: &str, data: Option<Value>) -> Self {
        let mut error = Map::new();
        error.insert("code".to_owned(), Value::from(code));
        error.insert("message".to_owned(), Value::from(message));
        if let Some(data) = data {
            error.insert("data".to_owned(), data);
        }
        RawFrame {
            jsonrpc: Some("2.0".to_owned()),
            id: id.into(),
            error: Some(Value::Object(error)),
            ..RawFrame::default()
        }
    }

    /// The params decoded as `P` (a method's or notification's params type).
    pub fn params_as<P: DeserializeOwned>(&self) -> Result<P, DecodeError> {
        decode_payload(self.method.as_deref().unwrap_or_default(), self.params.clone())
    }

    /// The result typed as method `M`'s result.
    pub fn result_as<M: Request>(&self) -> Result<M::Result, DecodeError> {
        decode_payload(M::METHOD, self.result.clone())
    }
}

// `NoParams` that are `None` leave the member out; everything else is written.
fn payload_member<T: Serialize>(payload: &T) -> Option<Value> {
    match encode_payload(payload) {
        Value::Null => None,
        value => Some(value),
    }
}

/// Remembers the method of each request sent, so that the response answering it can be typed.
#[derive(Clone, Debug, Default)]
pub struct PendingRequests {
    by_id: std::collections::HashMap<Id, String>,
}

impl PendingRequests {
    /// Records that a request `id` of `method` was sent.
    pub fn insert(&mut self, id: Id, method: &str) {
        self.by_id.insert(id, method.to_owned());
    }

    /// The method of the request `id`, forgetting it: a response answers a request once.
    pub fn take(&mut self, id: &Id) -> Option<String> {
        self.by_id.remove(id)
    }

    /// How many requests await a response.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Whether no request awaits a response.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }
}

//! JSON-RPC 2.0 framing: ids, the method traits, and one lossless frame type for any line.

use std::fmt;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A request id: a number or a string, kept as sent.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Id {
    /// A numeric id.
    Number(i64),
    /// A string id.
    String(String),
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
pub trait Request {
    /// The JSON-RPC method name.
    const METHOD: &'static str;
    /// The `params` member.
    type Params: Serialize + DeserializeOwned;
    /// The `result` member of a successful response.
    type Result: Serialize + DeserializeOwned;
}

/// A notification method: its name and the type of its params.
pub trait Notification {
    /// The JSON-RPC method name.
    const METHOD: &'static str;
    /// The `params` member.
    type Params: Serialize + DeserializeOwned;
}

/// Why a frame or a payload could not be decoded.
#[derive(Debug)]
pub struct DecodeError {
    /// The method whose payload failed, when known.
    pub method: Option<String>,
    /// What went wrong.
    pub message: String,
}

impl DecodeError {
    pub(crate) fn new(method: Option<&str>, message: impl fmt::Display) -> Self {
        DecodeError {
            method: method.map(str::to_owned),
            message: message.to_string(),
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.method {
            Some(method) => write!(f, "{method}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Decodes a params or result payload into `T`; an absent payload decodes from `null`.
pub fn decode_payload<T: DeserializeOwned>(method: &str, payload: Option<Value>) -> Result<T, DecodeError> {
    serde_json::from_value(payload.unwrap_or(Value::Null)).map_err(|e| DecodeError::new(Some(method), e))
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
    /// Parses one line; a trailing `\r` (or `\r\n`) is tolerated.
    pub fn parse_line(line: &str) -> Result<Self, DecodeError> {
        let line = line.strip_suffix('\n').unwrap_or(line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        let frame: RawFrame = serde_json::from_str(line).map_err(|e| DecodeError::new(None, e))?;
        frame.kind()?;
        Ok(frame)
    }

    /// Classifies the frame by the members it has.
    pub fn kind(&self) -> Result<FrameKind, DecodeError> {
        match (&self.method, &self.id, &self.result, &self.error) {
            (Some(_), crate::Tristate::Value(_), None, None) => Ok(FrameKind::Request),
            (Some(_), crate::Tristate::Absent, None, None) => Ok(FrameKind::Notification),
            (None, crate::Tristate::Value(_), Some(_), None) => Ok(FrameKind::Result),
            (None, _, None, Some(_)) => Ok(FrameKind::Error),
            _ => Err(DecodeError::new(
                self.method.as_deref(),
                "not a JSON-RPC 2.0 request, notification, result or error",
            )),
        }
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

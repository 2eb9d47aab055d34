//! A JSON-RPC frame read without typing its payload: known members by hand, the payload
//! borrowed as raw text and members outside JSON-RPC kept in a map. This is how the typify
//! side of the wire bench reads a frame (typify generates payload types only); the same reader
//! feeds msp-types' payload types directly, to show what a frame costs without `Value`.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// One frame with its payload still as text.
#[derive(Debug, Default)]
pub struct Envelope<'a> {
    /// `jsonrpc`.
    pub jsonrpc: Option<Cow<'a, str>>,
    /// `id`; `Some(Value::Null)` when sent as `null`.
    pub id: Option<Value>,
    /// `method`.
    pub method: Option<Cow<'a, str>>,
    /// `params`, `result` or `error`, whichever the frame has.
    pub payload: Option<(Member, &'a RawValue)>,
    /// Members outside JSON-RPC.
    pub extra: Map<String, Value>,
}

/// Which member carries the payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Member {
    /// `params` of a request or notification.
    Params,
    /// `result` of a response.
    Result,
    /// `error` of a response.
    Error,
}

impl Member {
    /// The member's name on the wire.
    pub fn key(self) -> &'static str {
        match self {
            Member::Params => "params",
            Member::Result => "result",
            Member::Error => "error",
        }
    }
}

impl<'a> Envelope<'a> {
    /// Parses one line; a trailing `\r` is whitespace to the JSON parser.
    pub fn parse(line: &'a str) -> serde_json::Result<Self> {
        serde_json::from_str(line)
    }
}

/// A string borrowed from the input when it has no escapes.
struct Text<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(V)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Envelope<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Envelope<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON-RPC frame")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut frame = Envelope::default();
                while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
                    let member = match &*key {
                        "jsonrpc" => {
                            frame.jsonrpc = Some(map.next_value::<Text<'de>>()?.0);
                            continue;
                        }
                        "id" => {
                            frame.id = Some(map.next_value()?);
                            continue;
                        }
                        "method" => {
                            frame.method = Some(map.next_value::<Text<'de>>()?.0);
                            continue;
                        }
                        "params" => Member::Params,
                        "result" => Member::Result,
                        "error" => Member::Error,
                        _ => {
                            frame.extra.insert(key.into_owned(), map.next_value()?);
                            continue;
                        }
                    };
                    if frame.payload.is_some() {
                        return Err(de::Error::custom("more than one of params, result, error"));
                    }
                    frame.payload = Some((member, map.next_value()?));
                }
                Ok(frame)
            }
        }
        deserializer.deserialize_map(V)
    }
}

/// Writes a frame: the JSON-RPC members, the payload (written by `payload`) and the extra
/// members, as one line without a line ending.
pub fn write_frame(
    out: &mut Vec<u8>,
    head: &Head,
    payload: impl FnOnce(&mut Vec<u8>) -> serde_json::Result<()>,
) -> serde_json::Result<()> {
    out.extend_from_slice(b"{\"jsonrpc\":");
    serde_json::to_writer(&mut *out, head.jsonrpc.as_deref().unwrap_or("2.0"))?;
    if let Some(id) = &head.id {
        out.extend_from_slice(b",\"id\":");
        serde_json::to_writer(&mut *out, id)?;
    }
    if let Some(method) = &head.method {
        out.extend_from_slice(b",\"method\":");
        serde_json::to_writer(&mut *out, method)?;
    }
    if let Some(member) = head.member {
        out.push(b',');
        serde_json::to_writer(&mut *out, member.key())?;
        out.push(b':');
        payload(out)?;
    }
    for (key, value) in &head.extra {
        out.push(b',');
        serde_json::to_writer(&mut *out, key)?;
        out.push(b':');
        serde_json::to_writer(&mut *out, value)?;
    }
    out.push(b'}');
    Ok(())
}

/// The owned, untyped part of a frame, kept for the encode benches.
#[derive(Clone, Debug, Default)]
pub struct Head {
    /// `jsonrpc`.
    pub jsonrpc: Option<String>,
    /// `id`.
    pub id: Option<Value>,
    /// `method`.
    pub method: Option<String>,
    /// Which member the payload goes in, if any.
    pub member: Option<Member>,
    /// Members outside JSON-RPC.
    pub extra: Map<String, Value>,
}

impl Envelope<'_> {
    /// The owned, untyped part.
    pub fn head(&self) -> Head {
        Head {
            jsonrpc: self.jsonrpc.as_deref().map(str::to_owned),
            id: self.id.clone(),
            method: self.method.as_deref().map(str::to_owned),
            member: self.payload.map(|(member, _)| member),
            extra: self.extra.clone(),
        }
    }
}

//! The ways the wire bench decodes and encodes a frame or a payload, each as one function so
//! that the same code checks acceptance once and is then timed.

use std::any::Any;

use msp_types::rpc::PendingRequests;
use msp_types::{
    ClientRequest, ClientResult, ErrorObject, Frame, ProtocolNotification, Sender, ServerRequest,
    ServerResult,
};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::codec::Codec;
use crate::corpus::{Kind, Line};
use crate::envelope::{write_frame, Envelope, Head};

/// A decode or encode failure, as text.
pub type Outcome<T = ()> = Result<T, String>;

/// The method a payload is typed by; responses to no known request have none.
fn method(line: &Line) -> Outcome<&str> {
    line.method
        .as_deref()
        .ok_or_else(|| format!("{}: response to no known request", line.source))
}

/// A payload typed through msp-types' public API (the dispatch enums).
// Kept unboxed: the bench holds exactly what the API returns.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum ApiPayload {
    /// `ClientRequest::decode`.
    ClientRequest(ClientRequest),
    /// `ServerRequest::decode`.
    ServerRequest(ServerRequest),
    /// `ProtocolNotification::decode`.
    Notification(ProtocolNotification),
    /// `ClientResult::decode`.
    ClientResult(ClientResult),
    /// `ServerResult::decode`.
    ServerResult(ServerResult),
    /// `ErrorObject`.
    Error(ErrorObject),
}

/// What the API's `decode` functions are given.
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    /// `decode(method, Value)`: the text, parsed to a `serde_json::Value` first (timed).
    Value(&'a str),
    /// `decode_raw(method, &RawValue)`: the wire text as a frame reader hands it over.
    Raw(&'a RawValue),
}

/// Payload text to its type through the public API.
pub fn api_payload_decode(line: &Line, source: Source) -> Outcome<ApiPayload> {
    let method = method(line);
    Ok(match source {
        Source::Value(text) => {
            let value: Value = serde_json::from_str(text).map_err(text_err)?;
            match line.kind {
                Kind::ClientRequest => ApiPayload::ClientRequest(
                    ClientRequest::decode(method?, Some(value)).map_err(err)?,
                ),
                Kind::ServerRequest => ApiPayload::ServerRequest(
                    ServerRequest::decode(method?, Some(value)).map_err(err)?,
                ),
                Kind::Notification => ApiPayload::Notification(
                    ProtocolNotification::decode(method?, Some(value)).map_err(err)?,
                ),
                Kind::ClientResult => {
                    ApiPayload::ClientResult(ClientResult::decode(method?, value).map_err(err)?)
                }
                Kind::ServerResult => {
                    ApiPayload::ServerResult(ServerResult::decode(method?, value).map_err(err)?)
                }
                Kind::Error => ApiPayload::Error(serde_json::from_value(value).map_err(err)?),
            }
        }
        Source::Raw(raw) => match line.kind {
            Kind::ClientRequest => ApiPayload::ClientRequest(
                ClientRequest::decode_raw(method?, Some(raw)).map_err(err)?,
            ),
            Kind::ServerRequest => ApiPayload::ServerRequest(
                ServerRequest::decode_raw(method?, Some(raw)).map_err(err)?,
            ),
            Kind::Notification => ApiPayload::Notification(
                ProtocolNotification::decode_raw(method?, Some(raw)).map_err(err)?,
            ),
            Kind::ClientResult => {
                ApiPayload::ClientResult(ClientResult::decode_raw(method?, raw).map_err(err)?)
            }
            Kind::ServerResult => {
                ApiPayload::ServerResult(ServerResult::decode_raw(method?, raw).map_err(err)?)
            }
            Kind::Error => ApiPayload::Error(serde_json::from_str(raw.get()).map_err(err)?),
        },
    })
}

/// [`api_payload_decode`] with the value dropped where it is made, so that the timing holds no
/// moves of the bench's own (large) enum.
pub fn api_payload_check(line: &Line, source: Source) -> Outcome {
    let method = method(line);
    match source {
        Source::Value(text) => {
            let value: Value = serde_json::from_str(text).map_err(text_err)?;
            match line.kind {
                Kind::ClientRequest => {
                    drop(ClientRequest::decode(method?, Some(value)).map_err(err)?)
                }
                Kind::ServerRequest => {
                    drop(ServerRequest::decode(method?, Some(value)).map_err(err)?)
                }
                Kind::Notification => {
                    drop(ProtocolNotification::decode(method?, Some(value)).map_err(err)?)
                }
                Kind::ClientResult => drop(ClientResult::decode(method?, value).map_err(err)?),
                Kind::ServerResult => drop(ServerResult::decode(method?, value).map_err(err)?),
                Kind::Error => drop(serde_json::from_value::<ErrorObject>(value).map_err(err)?),
            }
        }
        Source::Raw(raw) => match line.kind {
            Kind::ClientRequest => {
                drop(ClientRequest::decode_raw(method?, Some(raw)).map_err(err)?)
            }
            Kind::ServerRequest => {
                drop(ServerRequest::decode_raw(method?, Some(raw)).map_err(err)?)
            }
            Kind::Notification => {
                drop(ProtocolNotification::decode_raw(method?, Some(raw)).map_err(err)?)
            }
            Kind::ClientResult => drop(ClientResult::decode_raw(method?, raw).map_err(err)?),
            Kind::ServerResult => drop(ServerResult::decode_raw(method?, raw).map_err(err)?),
            Kind::Error => drop(serde_json::from_str::<ErrorObject>(raw.get()).map_err(err)?),
        },
    }
    Ok(())
}

fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

fn text_err(e: serde_json::Error) -> String {
    e.to_string()
}

/// A typed payload back to text through the public API: `params()` (a `Value`) for requests
/// and notifications, the `Serialize` impls of results and errors.
pub fn api_payload_encode(payload: &ApiPayload) -> Outcome<String> {
    let params = match payload {
        ApiPayload::ClientRequest(p) => p.params(),
        ApiPayload::ServerRequest(p) => p.params(),
        ApiPayload::Notification(p) => p.params(),
        ApiPayload::ClientResult(r) => return serde_json::to_string(r).map_err(err),
        ApiPayload::ServerResult(r) => return serde_json::to_string(r).map_err(err),
        ApiPayload::Error(e) => return serde_json::to_string(e).map_err(err),
    };
    serde_json::to_string(&params).map_err(err)
}

/// `Frame::parse`, or for a response `Frame::parse_tracked` with the request recorded in
/// `pending` first (as a client records it when sending), so the result is typed in the same
/// pass; nothing kept.
pub fn api_frame_check(line: &Line, pending: &mut PendingRequests) -> Outcome {
    api_frame_decode(line, pending).map(drop)
}

/// As [`api_frame_check`], the frame kept (for the encode bench and the lossless check).
pub fn api_frame_decode(line: &Line, pending: &mut PendingRequests) -> Outcome<Frame> {
    let sender = match line.kind {
        Kind::ClientResult => Sender::Server,
        Kind::ServerResult => Sender::Client,
        _ => return Frame::parse_guessing_sender(&line.raw).map_err(err),
    };
    match (&line.answers, line.method.as_deref()) {
        (Some(id), Some(method)) => {
            pending.insert(id.clone(), method);
            Frame::parse_tracked(sender, &line.raw, pending).map_err(err)
        }
        _ => Frame::parse_guessing_sender(&line.raw).map_err(err),
    }
}

/// `Frame::to_line` (a result goes back out as the wire text it was read as).
pub fn api_frame_encode(frame: &Frame) -> String {
    frame.to_line()
}

/// A payload decoded as one Rust type, or as `Value` when no type is known for it.
pub enum Typed {
    /// The type's value, and its codec.
    Value(Box<dyn Any>, Codec),
    /// No type: the JSON value.
    Json(Value),
}

/// Payload text as `codec`'s type (or `Value`), dropped at once.
pub fn typed_check(codec: Option<Codec>, text: &str) -> Outcome {
    match codec {
        Some(codec) => (codec.check)(text).map_err(text_err),
        None => serde_json::from_str::<Value>(text)
            .map(drop)
            .map_err(text_err),
    }
}

/// Payload text as `codec`'s type (or `Value`), kept.
pub fn typed_decode(codec: Option<Codec>, text: &str) -> Outcome<Typed> {
    match codec {
        Some(codec) => (codec.decode)(text)
            .map(|v| Typed::Value(v, codec))
            .map_err(text_err),
        None => serde_json::from_str(text)
            .map(Typed::Json)
            .map_err(text_err),
    }
}

/// A typed payload to text, appended to `out`.
pub fn typed_encode(payload: &Typed, out: &mut Vec<u8>) -> Outcome {
    match payload {
        Typed::Value(value, codec) => (codec.encode)(&**value, out).map_err(text_err),
        Typed::Json(value) => serde_json::to_writer(out, value).map_err(text_err),
    }
}

/// A line read with [`Envelope`], its payload as `codec`'s type, dropped at once.
pub fn envelope_check(codec: Option<Codec>, line: &Line) -> Outcome {
    let frame = Envelope::parse(&line.raw).map_err(text_err)?;
    match frame.payload {
        Some((_, raw)) => typed_check(codec, raw.get()),
        None => Ok(()),
    }
}

/// A line read with [`Envelope`], kept: the untyped part and the typed payload.
pub fn envelope_decode(codec: Option<Codec>, line: &Line) -> Outcome<(Head, Option<Typed>)> {
    let frame = Envelope::parse(&line.raw).map_err(text_err)?;
    let payload = match frame.payload {
        Some((_, raw)) => Some(typed_decode(codec, raw.get())?),
        None => None,
    };
    Ok((frame.head(), payload))
}

/// The untyped part and a typed payload back to one line.
pub fn envelope_encode(head: &Head, payload: Option<&Typed>) -> Outcome<Vec<u8>> {
    // The start `serde_json::to_string` gives itself.
    let mut out = Vec::with_capacity(128);
    write_frame(&mut out, head, |out| match payload {
        Some(payload) => typed_encode(payload, out).map_err(serde::ser::Error::custom),
        None => Ok(()),
    })
    .map_err(text_err)?;
    Ok(out)
}

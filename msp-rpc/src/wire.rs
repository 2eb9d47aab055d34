//! Outgoing frames, written straight from the typed payload into one line.

use msp_types::rpc::Id;
use serde::Serialize;

/// `{"jsonrpc":"2.0","id":…,"method":…,"params":…}`; `id: None` makes a notification.
/// Params that encode as `null` (a method that takes none) are left out.
pub(crate) fn call<P: Serialize + ?Sized>(
    id: Option<&Id>,
    method: &str,
    params: &P,
) -> Result<String, serde_json::Error> {
    let mut out = Vec::with_capacity(128);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","#);
    if let Some(id) = id {
        out.extend_from_slice(br#""id":"#);
        serde_json::to_writer(&mut out, id)?;
        out.push(b',');
    }
    out.extend_from_slice(br#""method":"#);
    serde_json::to_writer(&mut out, method)?;
    let before_params = out.len();
    out.extend_from_slice(br#","params":"#);
    let value_at = out.len();
    serde_json::to_writer(&mut out, params)?;
    if &out[value_at..] == b"null" {
        out.truncate(before_params);
    }
    out.push(b'}');
    Ok(into_line(out))
}

/// `{"jsonrpc":"2.0","id":…,"result":…}`, the result already wire text.
pub(crate) fn result(id: &Id, result: &str) -> String {
    let mut out = Vec::with_capacity(32 + result.len());
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    // An `Id` is an integer or a string: it always encodes.
    let _ = serde_json::to_writer(&mut out, id);
    out.extend_from_slice(br#","result":"#);
    out.extend_from_slice(result.as_bytes());
    out.push(b'}');
    into_line(out)
}

/// `{"jsonrpc":"2.0","id":…,"error":…}`; `id: None` writes `null` (the request was unreadable).
pub(crate) fn error<E: Serialize>(id: Option<&Id>, error: &E) -> String {
    // An `Id` always encodes.
    let id = |out: &mut Vec<u8>| {
        let _ = serde_json::to_writer(out, &id);
    };
    error_with(id, error)
}

/// An error response whose id is echoed as the request sent it (any JSON value: an id this
/// side cannot read as an [`Id`] is answered all the same).
pub(crate) fn error_to_raw<E: Serialize>(id: &serde_json::value::RawValue, error: &E) -> String {
    error_with(|out| out.extend_from_slice(id.get().as_bytes()), error)
}

/// An error response, its id written by `id`.
fn error_with<E: Serialize>(id: impl FnOnce(&mut Vec<u8>), error: &E) -> String {
    let mut out = Vec::with_capacity(96);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    id(&mut out);
    out.extend_from_slice(br#","error":"#);
    if serde_json::to_writer(&mut out, error).is_err() {
        out.extend_from_slice(br#"{"code":-32603,"message":"error did not encode"}"#);
    }
    out.push(b'}');
    into_line(out)
}

fn into_line(bytes: Vec<u8>) -> String {
    // serde_json writes UTF-8, and the literals above are ASCII.
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    #[test]
    fn frames_are_json_rpc_and_leave_out_null_params() {
        let parse = |line: String| serde_json::from_str::<Value>(&line).unwrap();
        assert_eq!(
            parse(call(Some(&Id::Number(3)), "a/b", &json!({"x": 1})).unwrap()),
            json!({"jsonrpc": "2.0", "id": 3, "method": "a/b", "params": {"x": 1}})
        );
        assert_eq!(
            parse(call(None, "initialized", &None::<Value>).unwrap()),
            json!({"jsonrpc": "2.0", "method": "initialized"})
        );
        assert_eq!(
            parse(result(&Id::String("r".into()), "{}")),
            json!({"jsonrpc": "2.0", "id": "r", "result": {}})
        );
        assert_eq!(
            parse(error(None, &json!({"code": -32700, "message": "m"}))),
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "m"}})
        );
    }
}

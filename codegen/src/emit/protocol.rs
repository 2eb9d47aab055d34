//! The method tables: marker types, dispatch enums for each direction, and typed frames.

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::{cfg, doc_attrs, ident, Ctx};
use crate::model::{DefKind, FieldKind, Method, Ty};

pub fn emit(ctx: &Ctx<'_>) -> TokenStream {
    let model = ctx.model;
    let methods = markers(ctx, &model.methods, "methods", Some(quote!(ClientMethod)));
    let requests = markers(ctx, &model.requests, "requests", Some(quote!(ServerMethod)));
    let notifications = markers(ctx, &model.notifications, "notifications", None);
    let client_request = dispatch(
        ctx,
        &model.methods,
        "ClientRequest",
        "A client-to-server request (the `methods` table), typed by its method.",
        Part::Params,
    );
    let server_request = dispatch(
        ctx,
        &model.requests,
        "ServerRequest",
        "A server-to-client request (the `requests` table), typed by its method.",
        Part::Params,
    );
    let notification = dispatch(
        ctx,
        &model.notifications,
        "ProtocolNotification",
        "A notification (the `notifications` table), typed by its method.",
        Part::Params,
    );
    let client_result = dispatch(
        ctx,
        &model.methods,
        "ClientResult",
        "The result of a client-to-server request, typed by the request's method.",
        Part::Result,
    );
    let server_result = dispatch(
        ctx,
        &model.requests,
        "ServerResult",
        "The result of a server-to-client request, typed by the request's method.",
        Part::Result,
    );
    let error_ty = match ctx.lookup("ErrorObject").map(|d| &d.kind) {
        Some(DefKind::Struct(_)) => quote!(crate::ErrorObject),
        _ => quote!(serde_json::Value),
    };
    let error_impls = error_object_impls(ctx);
    let client_methods: Vec<&str> = model.methods.iter().map(|m| m.name.as_str()).collect();
    let server_methods: Vec<&str> = model.requests.iter().map(|m| m.name.as_str()).collect();
    let notification_methods: Vec<&str> = model
        .notifications
        .iter()
        .map(|m| m.name.as_str())
        .collect();
    quote! {
        //! The protocol's method tables as types, the lsp-types way, and typed JSON-RPC frames.

        use serde::ser::{SerializeMap, Serializer};
        use serde::Serialize;
        use serde_json::value::RawValue;
        use serde_json::{Map, Value};
        use std::borrow::Cow;

        use serde::de::DeserializeSeed;
        use serde::Deserialize;

        use crate::rpc::{encode_payload, DecodeError, FrameKind, Id, PayloadSource, PendingRequests, RawFrame, RawJson};

        #methods
        #requests
        #notifications
        #error_impls
        #client_request
        #server_request
        #notification
        #client_result
        #server_result

        /// A JSON-RPC message with its payload typed through the method tables.
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub enum Message {
            /// A request from the client, or one whose method is in no table.
            ClientRequest { id: Id, request: ClientRequest },
            /// A request from the server.
            ServerRequest { id: Id, request: ServerRequest },
            /// A notification.
            Notification(ProtocolNotification),
            /// A successful response, its result still wire text: type it with
            /// [`ClientResult::decode_raw`] or [`ServerResult::decode_raw`] and the method of the
            /// request with the same id, or parse with [`Frame::parse_tracked`].
            Result { id: Id, result: RawJson },
            /// A successful response from the server to a client's request, typed by the
            /// request's method ([`Frame::parse_tracked`]).
            ClientResult { id: Id, result: ClientResult },
            /// A successful response from the client to a server's request, typed by the
            /// request's method ([`Frame::parse_tracked`]).
            ServerResult { id: Id, result: ServerResult },
            /// A failed response.
            Error { id: Option<Id>, error: #error_ty },
        }

        /// Which side wrote a frame.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Sender {
            /// The client (written to the host's stdin).
            Client,
            /// The server (read from the host's stdout).
            Server,
        }

        /// One frame: a typed message plus every member outside JSON-RPC, kept as sent.
        ///
        /// ```
        /// use msp_types::{Frame, Message, ServerRequest, Sender};
        ///
        /// // A host's request for a method this version does not know is still a request
        /// // of the host, to be answered (with `-32601`), and survives a re-encode.
        /// let line = r#"{"jsonrpc":"2.0","id":3,"method":"future/ask","params":{"x":1},"trace":"t"}"#;
        /// let frame = Frame::parse(Sender::Server, line)?;
        /// let Message::ServerRequest { id, request: ServerRequest::Unknown { method, .. } } = &frame.message else {
        ///     panic!("not an unknown server request");
        /// };
        /// assert_eq!((id, method.as_str()), (&3.into(), "future/ask"));
        /// assert_eq!(frame.to_line(), line);
        /// # Ok::<(), msp_types::rpc::DecodeError>(())
        /// ```
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct Frame {
            /// The message.
            pub message: Message,
            /// The `jsonrpc` member as sent; written as `"2.0"` when absent.
            pub jsonrpc: Option<Cow<'static, str>>,
            /// Members such as `emittedAtMs` or `trace`.
            pub extra: Map<String, Value>,
        }

        // The codec's entries are `#[inline]`: like generic code they are compiled in the crate
        // that calls them, with every payload's serde code beneath them, so a build of msp-types
        // alone instantiates none of it (as a derive leaves it). A program pays for the codec in
        // the crate that first uses it (msp-rpc for the connection); in a debug build, crates
        // depending on that one reuse its instantiations.
        impl Frame {
            /// Parses one line that `sender` wrote (a trailing `\r` and a leading byte-order
            /// mark tolerated) and types its payload: a request by the table of the side that
            /// sent it (a host's request for a method in no table is a `ServerRequest::Unknown`,
            /// to be answered), a notification by the notifications table. A result stays wire
            /// text (see [`Frame::parse_tracked`]).
            ///
            /// ```
            /// use msp_types::{Frame, Message, Sender, ServerRequest};
            ///
            /// let line = r#"{"jsonrpc":"2.0","id":5,"method":"host/newKindOfAsk","params":{}}"#;
            /// let frame = Frame::parse(Sender::Server, line).unwrap();
            /// assert!(matches!(frame.message, Message::ServerRequest { request: ServerRequest::Unknown { .. }, .. }));
            /// assert_eq!(frame.to_line(), line);
            /// ```
            #[inline]
            pub fn parse(sender: Sender, line: &str) -> Result<Self, DecodeError> {
                Self::decode_line(line, Some(sender), None)
            }

            /// Parses a line whose sender is not known (a log of mixed frames): a request is
            /// typed by whichever table lists its method, and one in no table counts as a
            /// client's, so a host's request for a method in no table is misfiled. Prefer
            /// [`Frame::parse`].
            #[inline]
            pub fn parse_guessing_sender(line: &str) -> Result<Self, DecodeError> {
                Self::decode_line(line, None, None)
            }

            /// Types the payload of a frame `sender` wrote, already parsed.
            #[inline]
            pub fn from_raw(sender: Sender, raw: RawFrame) -> Result<Self, DecodeError> {
                Self::decode_line(&raw.to_line(), Some(sender), None)
            }

            /// Types the payload of a parsed frame whose sender is not known (see
            /// [`Frame::parse_guessing_sender`]).
            #[inline]
            pub fn from_raw_guessing_sender(raw: RawFrame) -> Result<Self, DecodeError> {
                Self::decode_line(&raw.to_line(), None, None)
            }

            /// Like [`Frame::parse`], and a response is typed in the same pass by the method
            /// of the request it answers: `pending` holds the requests the other side has not
            /// answered yet (record each one as it is sent), and the answered one is taken out,
            /// also for an error response. A result whose id is not in `pending` stays
            /// [`Message::Result`].
            #[inline]
            pub fn parse_tracked(sender: Sender, line: &str, pending: &mut PendingRequests) -> Result<Self, DecodeError> {
                Self::decode_line(line, Some(sender), Some(pending))
            }

            #[inline]
            fn decode_line(line: &str, sender: Option<Sender>, mut pending: Option<&mut PendingRequests>) -> Result<Self, DecodeError> {
                let line = line.strip_suffix('\n').unwrap_or(line);
                let line = line.strip_suffix('\r').unwrap_or(line);
                // A byte-order mark some Windows writers put first.
                let line = line.strip_prefix('\u{feff}').unwrap_or(line);
                let mut de = serde_json::Deserializer::from_str(line);
                let seed = FrameSeed { sender, pending: pending.as_deref_mut() };
                // On failure only: where it failed, and the envelope read again leniently.
                let located = |e: serde_json::Error| DecodeError::json(None, line, &e).in_frame(line);
                let parts = match seed.deserialize(&mut de) {
                    Ok(parts) => parts,
                    Err(e) => return Err(answered(located(e), pending)),
                };
                de.end().map_err(located)?;
                parts.finish(sender, pending.as_deref_mut()).map_err(|e| answered(e.in_frame(line), pending))
            }

            /// Back to an untyped frame, losing nothing that was read.
            #[inline]
            pub fn to_raw(&self) -> RawFrame {
                let mut raw = RawFrame {
                    jsonrpc: Some(self.jsonrpc.as_deref().unwrap_or("2.0").to_owned()),
                    extra: self.extra.clone(),
                    ..RawFrame::default()
                };
                match &self.message {
                    Message::ClientRequest { id, request } => {
                        raw.id = crate::Tristate::Value(id.clone());
                        raw.method = Some(request.method().to_owned());
                        raw.params = request.params();
                    }
                    Message::ServerRequest { id, request } => {
                        raw.id = crate::Tristate::Value(id.clone());
                        raw.method = Some(request.method().to_owned());
                        raw.params = request.params();
                    }
                    Message::Notification(notification) => {
                        raw.method = Some(notification.method().to_owned());
                        raw.params = notification.params();
                    }
                    Message::Result { id, result } => {
                        raw.id = crate::Tristate::Value(id.clone());
                        raw.result = Some(result.to_value());
                    }
                    Message::ClientResult { id, result } => {
                        raw.id = crate::Tristate::Value(id.clone());
                        raw.result = Some(result.result());
                    }
                    Message::ServerResult { id, result } => {
                        raw.id = crate::Tristate::Value(id.clone());
                        raw.result = Some(result.result());
                    }
                    Message::Error { id, error } => {
                        raw.id = id.clone().into();
                        raw.error = Some(encode_payload(error));
                    }
                }
                raw
            }

            /// Encodes the frame as one line of JSON, without a line ending.
            #[inline]
            pub fn to_line(&self) -> String {
                serde_json::to_string(self).unwrap_or_default()
            }
        }

        // Written straight from the typed payload: no intermediate `Value`.
        impl Serialize for Frame {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(None)?;
                map.serialize_entry("jsonrpc", self.jsonrpc.as_deref().unwrap_or("2.0"))?;
                match &self.message {
                    Message::ClientRequest { id, request } => {
                        map.serialize_entry("id", id)?;
                        map.serialize_entry("method", request.method())?;
                        request.write_payload(&mut map, "params")?;
                    }
                    Message::ServerRequest { id, request } => {
                        map.serialize_entry("id", id)?;
                        map.serialize_entry("method", request.method())?;
                        request.write_payload(&mut map, "params")?;
                    }
                    Message::Notification(notification) => {
                        map.serialize_entry("method", notification.method())?;
                        notification.write_payload(&mut map, "params")?;
                    }
                    Message::Result { id, result } => {
                        map.serialize_entry("id", id)?;
                        map.serialize_entry("result", result)?;
                    }
                    Message::ClientResult { id, result } => {
                        map.serialize_entry("id", id)?;
                        map.serialize_entry("result", result)?;
                    }
                    Message::ServerResult { id, result } => {
                        map.serialize_entry("id", id)?;
                        map.serialize_entry("result", result)?;
                    }
                    Message::Error { id, error } => {
                        map.serialize_entry("id", id)?;
                        map.serialize_entry("error", error)?;
                    }
                }
                for (key, value) in &self.extra {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
        }


        // One pass over the frame: when `method` comes before `params` (as hosts write it), the
        // params decode straight into their type; otherwise they wait as wire text.
        struct FrameSeed<'p> {
            sender: Option<Sender>,
            pending: Option<&'p mut PendingRequests>,
        }

        struct Parts<'de> {
            jsonrpc: Option<Cow<'static, str>>,
            id: crate::Tristate<Id>,
            method: Option<crate::support::Key<'de>>,
            // Params or a result typed during the pass (one slot: a frame has one payload).
            typed: Option<Message>,
            params: Option<RawJson>,
            result: Option<RawJson>,
            error: Option<RawJson>,
            extra: Map<String, Value>,
        }

        impl<'de> serde::de::DeserializeSeed<'de> for FrameSeed<'_> {
            type Value = Parts<'de>;

            fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Parts<'de>, D::Error> {
                deserializer.deserialize_map(self)
            }
        }

        impl<'de> serde::de::Visitor<'de> for FrameSeed<'_> {
            type Value = Parts<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON-RPC 2.0 frame")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Parts<'de>, A::Error> {
                let mut parts = Parts {
                    jsonrpc: None,
                    id: crate::Tristate::Absent,
                    method: None,
                    typed: None,
                    params: None,
                    result: None,
                    error: None,
                    extra: Map::new(),
                };
                let mut pending = self.pending;
                while let Some(key) = map.next_key::<crate::support::Key<'de>>()? {
                    match key.as_str() {
                        // "2.0" (every frame) costs no allocation.
                        "jsonrpc" => {
                            parts.jsonrpc = map.next_value::<Option<crate::support::Key<'de>>>()?.map(|v| match v.as_str() {
                                "2.0" => Cow::Borrowed("2.0"),
                                _ => Cow::Owned(v.into_string()),
                            })
                        }
                        "id" => parts.id = map.next_value::<Option<Id>>()?.into(),
                        "method" => parts.method = Some(map.next_value()?),
                        "params" => {
                            match parts.method.as_ref().map(crate::support::Key::as_str) {
                                Some(method) => {
                                    let seed = ParamsSeed { method, sender: self.sender, has_id: !parts.id.is_absent() };
                                    parts.typed = Some(map.next_value_seed(seed)?);
                                }
                                None => parts.params = Some(map.next_value()?),
                            }
                        }
                        "result" => {
                            // The id came first (as hosts write it): type the result now.
                            let answered = match (&mut pending, &parts.id, self.sender) {
                                (Some(pending), crate::Tristate::Value(id), Some(sender)) => {
                                    pending.take(id).map(|method| (id.clone(), method, sender))
                                }
                                _ => None,
                            };
                            match answered {
                                Some((id, method, sender)) => {
                                    match map.next_value_seed(ResultSeed { id: id.clone(), method: &method, sender }) {
                                        Ok(typed) => parts.typed = Some(typed),
                                        Err(e) => {
                                            // The error names the method through `answered`.
                                            if let Some(pending) = pending.as_deref_mut() {
                                                pending.insert(id, &method);
                                            }
                                            return Err(e);
                                        }
                                    }
                                }
                                None => parts.result = Some(map.next_value()?),
                            }
                        }
                        "error" => parts.error = Some(map.next_value()?),
                        _ => {
                            let value = map.next_value()?;
                            parts.extra.insert(key.into_string(), value);
                        }
                    }
                }
                Ok(parts)
            }
        }

        // Params typed by the table that lists the method; unknown methods stay wire text.
        struct ParamsSeed<'a> {
            method: &'a str,
            sender: Option<Sender>,
            has_id: bool,
        }

        impl<'de> serde::de::DeserializeSeed<'de> for ParamsSeed<'_> {
            type Value = Message;

            fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Message, D::Error> {
                let method = self.method;
                let table = if !self.has_id {
                    Table::Notification
                } else if self.sender == Some(Sender::Server) || (self.sender.is_none() && SERVER_METHODS.contains(&method)) {
                    Table::Server
                } else {
                    Table::Client
                };
                // A method the table does not list becomes its `Unknown` arm, as `finish` would.
                Ok(match table {
                    Table::Notification => Message::Notification(ProtocolNotification::deserialize_params(method, deserializer)?),
                    Table::Server => Message::ServerRequest { id: Id::Number(0), request: ServerRequest::deserialize_params(method, deserializer)? },
                    Table::Client => Message::ClientRequest { id: Id::Number(0), request: ClientRequest::deserialize_params(method, deserializer)? },
                })
            }
        }

        // A result typed by the method of the request it answers; the sender says whose.
        struct ResultSeed<'a> {
            id: Id,
            method: &'a str,
            sender: Sender,
        }

        impl<'de> serde::de::DeserializeSeed<'de> for ResultSeed<'_> {
            type Value = Message;

            fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Message, D::Error> {
                let id = self.id;
                Ok(match self.sender {
                    Sender::Server => Message::ClientResult { id, result: ClientResult::deserialize_result(self.method, deserializer)? },
                    Sender::Client => Message::ServerResult { id, result: ServerResult::deserialize_result(self.method, deserializer)? },
                })
            }
        }

        #[derive(Clone, Copy)]
        enum Table {
            Notification,
            Server,
            Client,
        }

        impl Parts<'_> {
            #[inline]
            fn finish(self, sender: Option<Sender>, pending: Option<&mut PendingRequests>) -> Result<Frame, DecodeError> {
                let typed_result = matches!(self.typed, Some(Message::ClientResult { .. } | Message::ServerResult { .. }));
                let has_result = self.result.is_some() || typed_result;
                let kind = crate::rpc::classify(self.method.is_some(), &self.id, has_result, self.error.is_some())
                    .ok_or_else(|| DecodeError::new(self.method.as_ref().map(crate::support::Key::as_str), crate::rpc::NOT_A_FRAME))?;
                let method = self.method.as_ref().map_or("", crate::support::Key::as_str);
                let id = self.id.into_option();
                // A payload typed early stands when the frame turned out the kind it was typed as.
                let params = match (self.typed, kind, &id) {
                    (Some(Message::Notification(n)), FrameKind::Notification, _) => {
                        return Ok(Frame { message: Message::Notification(n), jsonrpc: self.jsonrpc, extra: self.extra });
                    }
                    (Some(Message::ClientRequest { request, .. }), FrameKind::Request, Some(id)) => {
                        let message = Message::ClientRequest { id: id.clone(), request };
                        return Ok(Frame { message, jsonrpc: self.jsonrpc, extra: self.extra });
                    }
                    (Some(Message::ServerRequest { request, .. }), FrameKind::Request, Some(id)) => {
                        let message = Message::ServerRequest { id: id.clone(), request };
                        return Ok(Frame { message, jsonrpc: self.jsonrpc, extra: self.extra });
                    }
                    (Some(message @ (Message::ClientResult { .. } | Message::ServerResult { .. })), FrameKind::Result, _) => {
                        return Ok(Frame { message, jsonrpc: self.jsonrpc, extra: self.extra });
                    }
                    (Some(message), _, _) => typed_params(message),
                    (None, _, _) => self.params,
                };
                let params = params.as_ref().map(RawJson::as_raw);
                let message = match (kind, id, self.result) {
                    (FrameKind::Request, Some(id), _) => {
                        let from_server = match sender {
                            Some(sender) => sender == Sender::Server,
                            None => SERVER_METHODS.contains(&method),
                        };
                        let in_params = |e: DecodeError| e.under("/params");
                        if from_server {
                            Message::ServerRequest { id, request: ServerRequest::decode_raw(method, params).map_err(in_params)? }
                        } else {
                            Message::ClientRequest { id, request: ClientRequest::decode_raw(method, params).map_err(in_params)? }
                        }
                    }
                    (FrameKind::Notification, _, _) => {
                        Message::Notification(ProtocolNotification::decode_raw(method, params).map_err(|e| e.under("/params"))?)
                    }
                    // The result came before the id: type it now from its text.
                    (FrameKind::Result, Some(id), Some(result)) => {
                        let in_result = |e: DecodeError| e.under("/result");
                        match (pending.and_then(|p| p.take(&id)), sender) {
                            (Some(method), Some(Sender::Server)) => {
                                Message::ClientResult { id, result: ClientResult::decode_raw(&method, result.as_raw()).map_err(in_result)? }
                            }
                            (Some(method), Some(Sender::Client)) => {
                                Message::ServerResult { id, result: ServerResult::decode_raw(&method, result.as_raw()).map_err(in_result)? }
                            }
                            _ => Message::Result { id, result },
                        }
                    }
                    (_, id, _) => {
                        if let (Some(pending), Some(id)) = (pending, &id) {
                            pending.take(id);
                        }
                        let error = self.error.as_ref().map_or("null", RawJson::get);
                        let error = serde_json::from_str(error).map_err(|e| DecodeError::json(None, error, &e).under("/error"))?;
                        Message::Error { id, error }
                    }
                };
                Ok(Frame { message, jsonrpc: self.jsonrpc, extra: self.extra })
            }
        }

        // A response that did not decode still answers its request: the error names the
        // request's method, and the request is no longer pending.
        fn answered(mut error: DecodeError, pending: Option<&mut PendingRequests>) -> DecodeError {
            let response = error.frame.as_ref().is_some_and(|f| f.method.is_none());
            if let (true, Some(pending), Some(id)) = (response, pending, &error.id) {
                if let Some(method) = pending.take(id) {
                    error.method.get_or_insert(method);
                }
            }
            error
        }

        // Params typed as another kind than the frame turned out to be, back to wire text. Rare,
        // so it goes through the frame's own encoding rather than a `Value` encoder per type.
        #[inline]
        fn typed_params(message: Message) -> Option<RawJson> {
            let line = Frame { message, jsonrpc: None, extra: Map::new() }.to_line();
            let raw: RawFrame = serde_json::from_str(&line).ok()?;
            raw.params.as_ref().map(RawJson::from_value)
        }

        /// Methods of the `methods` table: requests a client sends.
        pub const CLIENT_METHODS: &[&str] = &[#(#client_methods),*];

        /// Methods of the `requests` table: requests a server sends.
        pub const SERVER_METHODS: &[&str] = &[#(#server_methods),*];

        /// Methods of the `notifications` table.
        pub const NOTIFICATION_METHODS: &[&str] = &[#(#notification_methods),*];
    }
}

/// `Display`, `std::error::Error` and the registry lookup for `ErrorObject`, when it has the
/// JSON-RPC members `code` (integer) and `message` (string). The lookup prefers `data.kind`
/// (several kinds share a code) when `data` is a struct with a required `kind`.
fn error_object_impls(ctx: &Ctx<'_>) -> TokenStream {
    let Some(DefKind::Struct(object)) = ctx.lookup("ErrorObject").map(|d| &d.kind) else {
        return TokenStream::new();
    };
    let member = |s: &crate::model::Struct, wire: &str, ty: Option<&Ty>| {
        s.fields
            .iter()
            .find(|f| {
                f.wire == wire && f.kind == FieldKind::Required && ty.map_or(true, |t| &f.ty == t)
            })
            .map(|f| ident(&f.rust))
    };
    let (Some(code), Some(message)) = (
        member(object, "code", Some(&Ty::Integer)),
        member(object, "message", Some(&Ty::String)),
    ) else {
        return TokenStream::new();
    };
    let data_kind = object
        .fields
        .iter()
        .find(|f| f.wire == "data")
        .and_then(|data| {
            let Ty::Ref(name) = &data.ty else { return None };
            let Some(DefKind::Struct(inner)) = ctx.lookup(name).map(|d| &d.kind) else {
                return None;
            };
            let kind = member(inner, "kind", None)?;
            let field = ident(&data.rust);
            Some(match data.kind {
                FieldKind::Required => quote!(Some(self.#field.#kind.as_str())),
                FieldKind::OptionalNullable => {
                    quote!(self.#field.as_value().map(|data| data.#kind.as_str()))
                }
                _ => quote!(self.#field.as_ref().map(|data| data.#kind.as_str())),
            })
        });
    let by_kind = data_kind.map(|kind| {
        quote! {
            if let Some(entry) = #kind.and_then(crate::registry::error_by_kind) {
                return Some(entry);
            }
        }
    });
    quote! {
        impl std::fmt::Display for crate::ErrorObject {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{} ({})", self.#message, self.#code)
            }
        }

        impl std::error::Error for crate::ErrorObject {}

        impl crate::ErrorObject {
            /// The entry of the error registry this error stands for: by its `data.kind` when
            /// it has one the registry lists, else by its code.
            pub fn registry_entry(&self) -> Option<&'static crate::registry::ErrorCode> {
                #by_kind
                crate::registry::error_by_code(self.#code)
            }
        }
    }
}

/// `direction`: the trait saying which side sends the table's requests; `None` for
/// notifications, which either side may send.
fn markers(
    ctx: &Ctx<'_>,
    table: &[Method],
    module: &str,
    direction: Option<TokenStream>,
) -> TokenStream {
    let module_ident = ident(module);
    let items = table.iter().map(|m| {
        let cfg = cfg(m.experimental);
        let name = ident(&m.marker);
        let method = &m.name;
        let doc = doc_attrs(Some(&format!(
            "`{method}`: {}",
            m.doc.as_deref().unwrap_or("")
        )));
        let params = payload_ty(ctx, m.params.as_deref());
        if let Some(direction) = &direction {
            let result = payload_ty(ctx, m.result.as_deref());
            quote! {
                #doc
                #cfg
                #[derive(Debug)]
                pub enum #name {}

                #cfg
                impl crate::rpc::Request for #name {
                    const METHOD: &'static str = #method;
                    type Params = #params;
                    type Result = #result;
                }

                #cfg
                impl crate::rpc::#direction for #name {}
            }
        } else {
            quote! {
                #doc
                #cfg
                #[derive(Debug)]
                pub enum #name {}

                #cfg
                impl crate::rpc::Notification for #name {
                    const METHOD: &'static str = #method;
                    type Params = #params;
                }
            }
        }
    });
    let doc = format!(
        " Marker types of the `{module}` table: one a method, named after it in UpperCamelCase \
         (`userInput/answer`: `UserInputAnswer`, the dispatch enums' variant too), with `Method` \
         added where a type at the crate root has that name (`OrderEvent` the type, \
         `OrderEventMethod` the marker, `OrderEvent` the variant)."
    );
    let by_name = direction.as_ref().map(|direction| {
        let arms = table.iter().map(|m| {
            let cfg = cfg(m.experimental);
            let name = ident(&m.marker);
            let method = &m.name;
            quote! { #cfg #method => Some(f.call::<#name>()), }
        });
        // An empty table (a schema with no requests) has nothing to call `f` with.
        let body = if table.is_empty() {
            quote! { let _ = (method, f); None }
        } else {
            quote! { match method { #(#arms)* _ => None } }
        };
        quote! {
            /// Something to do with the marker type of a method of this table, chosen by its
            /// name at run time ([`with_method`]).
            pub trait WithMethod {
                /// What doing it yields.
                type Output;
                /// Does it with `M`.
                fn call<M: crate::rpc::#direction>(self) -> Self::Output;
            }

            /// Runs `f` with the marker type of `method`; `None` for a method this build does
            /// not have.
            pub fn with_method<F: WithMethod>(method: &str, f: F) -> Option<F::Output> {
                #body
            }
        }
    });
    quote! {
        #[doc = #doc]
        pub mod #module_ident {
            #(#items)*
            #by_name
        }
    }
}

fn payload_ty(ctx: &Ctx<'_>, def: Option<&str>) -> TokenStream {
    match def {
        Some(def) => {
            let name = ctx.rust_name(def);
            quote!(crate::#name)
        }
        None => quote!(crate::rpc::NoParams),
    }
}

#[derive(Clone, Copy)]
enum Part {
    Params,
    Result,
}

fn dispatch(ctx: &Ctx<'_>, table: &[Method], name: &str, doc: &str, part: Part) -> TokenStream {
    let name: Ident = ident(name);
    let mut variants = Vec::new();
    let mut decode = Vec::new();
    let mut method_arms = Vec::new();
    let mut encode = Vec::new();
    let mut write = Vec::new();
    for m in table {
        let cfg = cfg(m.experimental);
        let variant = ident(&m.rust);
        let method = &m.name;
        let payload = match part {
            Part::Params => m.params.as_deref(),
            Part::Result => m.result.as_deref(),
        };
        let ty = payload_ty(ctx, payload);
        // Every typed payload is boxed: one rule a pattern can rely on, and an enum that is
        // cheap to move whatever the payload.
        let boxed = payload.is_some();
        let ty = if boxed { quote!(Box<#ty>) } else { ty };
        let vdoc = doc_attrs(Some(&format!("`{method}`")));
        variants.push(quote!(#vdoc #cfg #variant(#ty),));
        let decode_arm = match (part, payload) {
            (Part::Params, None) => quote!(Ok(#name::#variant(payload.into_value()))),
            // A box decodes as what it holds.
            _ => quote!(payload.decode(method).map(#name::#variant)),
        };
        decode.push(quote!(#cfg #method => #decode_arm,));
        method_arms.push(quote!(#cfg #name::#variant(_) => #method,));
        let (to_value, write_arm) = match (part, payload) {
            (Part::Params, None) => (
                quote!(payload.clone()),
                quote!(payload
                    .as_ref()
                    .map_or(Ok(()), |p| map.serialize_entry(key, p))),
            ),
            (Part::Params, Some(_)) => (
                quote!(Some(encode_payload(payload))),
                quote!(map.serialize_entry(key, payload)),
            ),
            (Part::Result, _) => (
                quote!(encode_payload(payload)),
                quote!(map.serialize_entry(key, payload)),
            ),
        };
        encode.push(quote!(#cfg #name::#variant(payload) => #to_value,));
        write.push(quote!(#cfg #name::#variant(payload) => #write_arm,));
    }
    let unknown = match part {
        Part::Params => Unknown {
            variant: quote! {
                /// A method in no table (or behind a feature this build lacks), with its raw params.
                Unknown { method: String, params: Option<Value> },
            },
            decode: quote!(_ => Ok(#name::Unknown { method: method.to_owned(), params: payload.into_value() }),),
            encode: quote!(#name::Unknown { params, .. } => params.clone(),),
            write: quote!(#name::Unknown { params, .. } => params.as_ref().map_or(Ok(()), |p| map.serialize_entry(key, p)),),
        },
        Part::Result => Unknown {
            variant: quote! {
                /// The result of a method in no table, kept as sent.
                Unknown { method: String, result: Value },
            },
            decode: quote! {
                _ => Ok(#name::Unknown { method: method.to_owned(), result: payload.into_value().unwrap_or(Value::Null) }),
            },
            encode: quote!(#name::Unknown { result, .. } => result.clone(),),
            write: TokenStream::new(),
        },
    };
    let Unknown {
        variant: unknown_variant,
        decode: unknown_decode,
        encode: unknown_encode,
        write: unknown_write,
    } = unknown;
    let (out_ty, encode_name, encode_doc, decode_doc, raw_doc, raw_arg, value_in) = match part {
        Part::Params => (
            quote!(Option<Value>),
            ident("params"),
            "The params as JSON; `None` when the message has no params member.",
            "Types the params of `method`; a method in no table is kept as `Unknown`.",
            "Types params still in their wire text (`None`: no params member), without building a `Value` first.",
            quote!(payload: Option<&RawValue>),
            quote!(payload),
        ),
        Part::Result => (
            quote!(Value),
            ident("result"),
            "The result as JSON.",
            "Types the result of a request for `method`; a method in no table is kept as `Unknown`.",
            "Types a result still in its wire text, without building a `Value` first.",
            quote!(payload: &RawValue),
            quote!(Some(payload)),
        ),
    };
    // Wire text decodes through the streaming decoder `Frame` uses, so each payload's serde
    // code is compiled once, for one deserializer.
    let untyped: Vec<TokenStream> = table
        .iter()
        .filter(|m| m.params.is_none())
        .map(|m| {
            let cfg = cfg(m.experimental);
            let variant = ident(&m.rust);
            quote!(#cfg #name::#variant(_) => #name::#variant(None),)
        })
        .collect();
    let (raw_decode, absent) = match part {
        Part::Params => (
            quote! {
                let text = payload.map_or("null", RawValue::get);
                let decoded = crate::rpc::decode_with(method, text, |de| Self::deserialize_params(method, de))?;
                Ok(if payload.is_some() { decoded } else { decoded.absent() })
            },
            quote! {
                // What decoded from `null` for a frame without params: an untyped payload is
                // kept absent (a typed one was decoded from `null`).
                #[allow(unreachable_patterns)]
                #[inline]
                fn absent(self) -> Self {
                    match self {
                        #(#untyped)*
                        #name::Unknown { method, .. } => #name::Unknown { method, params: None },
                        typed => typed,
                    }
                }
            },
        ),
        Part::Result => (
            quote!(crate::rpc::decode_with(method, payload.get(), |de| {
                Self::deserialize_result(method, de)
            })),
            TokenStream::new(),
        ),
    };
    // With an empty table every match has the unknown arm alone.
    let allow = table
        .is_empty()
        .then(|| quote!(#[allow(clippy::match_single_binding)]));
    let deser_arms = table.iter().map(|m| {
        let cfg = cfg(m.experimental);
        let variant = ident(&m.rust);
        let method = &m.name;
        let payload = match part {
            Part::Params => m.params.as_deref(),
            Part::Result => m.result.as_deref(),
        };
        match payload {
            // The member is on the wire (even as `null`): kept as `Some`, so it is written back.
            None => quote!(#cfg #method => Value::deserialize(deserializer).map(|v| #name::#variant(Some(v))),),
            // The variant's box decodes as what it holds.
            Some(_) => quote!(#cfg #method => Deserialize::deserialize(deserializer).map(#name::#variant),),
        }
    });
    let (write_payload, serialize) = match part {
        Part::Params => (
            quote! {
                // Decodes the params of `method` straight from the frame being parsed.
                fn deserialize_params<'de, D: serde::Deserializer<'de>>(method: &str, deserializer: D) -> Result<Self, D::Error> {
                    match method {
                        #(#deser_arms)*
                        _ => Value::deserialize(deserializer)
                            .map(|params| #name::Unknown { method: method.to_owned(), params: Some(params) }),
                    }
                }

                // Writes the params as the member `key`, straight from the typed value.
                fn write_payload<M: SerializeMap>(&self, map: &mut M, key: &'static str) -> Result<(), M::Error> {
                    match self {
                        #(#write)*
                        #unknown_write
                    }
                }
            },
            TokenStream::new(),
        ),
        Part::Result => {
            let arms = table.iter().map(|m| {
                let cfg = cfg(m.experimental);
                let variant = ident(&m.rust);
                quote!(#cfg #name::#variant(payload) => payload.serialize(serializer),)
            });
            (
                quote! {
                    // Decodes the result of a request for `method` straight from the frame being parsed.
                    fn deserialize_result<'de, D: serde::Deserializer<'de>>(method: &str, deserializer: D) -> Result<Self, D::Error> {
                        match method {
                            #(#deser_arms)*
                            _ => Value::deserialize(deserializer)
                                .map(|result| #name::Unknown { method: method.to_owned(), result }),
                        }
                    }
                },
                quote! {
                    /// Encodes the result alone, straight from the typed value.
                    #allow
                    impl Serialize for #name {
                        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                            match self {
                                #(#arms)*
                                #name::Unknown { result, .. } => result.serialize(serializer),
                            }
                        }
                    }
                },
            )
        }
    };
    let doc = doc_attrs(Some(doc));
    let decode_doc = doc_attrs(Some(decode_doc));
    let raw_doc = doc_attrs(Some(raw_doc));
    let encode_doc = doc_attrs(Some(encode_doc));
    let unknown_method = quote!(#name::Unknown { method, .. } => method,);
    // Every entry that types a payload (`decode`, `decode_raw`, `params`/`result`) is
    // `#[inline]`: like generic code it is compiled in the crate that calls it, so msp-types
    // itself instantiates no payload's serde code, as a derive leaves it (as `impl Frame`, in
    // `emit`).
    quote! {
        #doc
        #[derive(Clone, Debug, PartialEq, Eq)]
        #[non_exhaustive]
        pub enum #name {
            #(#variants)*
            #unknown_variant
        }

        #allow
        impl #name {
            #decode_doc
            #[inline]
            pub fn decode(method: &str, payload: #out_ty) -> Result<Self, DecodeError> {
                Self::decode_from(method, #value_in)
            }

            #raw_doc
            #[inline]
            pub fn decode_raw(method: &str, #raw_arg) -> Result<Self, DecodeError> {
                #raw_decode
            }

            fn decode_from<P: PayloadSource>(method: &str, payload: P) -> Result<Self, DecodeError> {
                match method {
                    #(#decode)*
                    #unknown_decode
                }
            }

            /// The method name.
            pub fn method(&self) -> &str {
                match self {
                    #(#method_arms)*
                    #unknown_method
                }
            }

            #encode_doc
            #[inline]
            pub fn #encode_name(&self) -> #out_ty {
                match self {
                    #(#encode)*
                    #unknown_encode
                }
            }

            #write_payload

            #absent
        }

        #serialize
    }
}

// The unknown arm of a dispatch enum and its share of each method.
struct Unknown {
    variant: TokenStream,
    decode: TokenStream,
    encode: TokenStream,
    write: TokenStream,
}

//! The method tables: marker types, dispatch enums for each direction, and typed frames.

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::{cfg, doc_attrs, ident, Ctx};
use crate::model::{DefKind, Method};

pub fn emit(ctx: &Ctx<'_>) -> TokenStream {
    let model = ctx.model;
    let methods = markers(ctx, &model.methods, "methods", true);
    let requests = markers(ctx, &model.requests, "requests", true);
    let notifications = markers(ctx, &model.notifications, "notifications", false);
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
    let client_methods: Vec<&str> = model.methods.iter().map(|m| m.name.as_str()).collect();
    let server_methods: Vec<&str> = model.requests.iter().map(|m| m.name.as_str()).collect();
    quote! {
        //! The protocol's method tables as types, the lsp-types way, and typed JSON-RPC frames.

        use serde_json::{Map, Value};

        use crate::rpc::{decode_payload, encode_payload, DecodeError, FrameKind, Id, RawFrame};

        #methods
        #requests
        #notifications
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
            /// A successful response; type its result with [`ClientResult::decode`] or
            /// [`ServerResult::decode`] and the method of the request with the same id.
            Result { id: Id, result: Value },
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
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct Frame {
            /// The message.
            pub message: Message,
            /// The `jsonrpc` member as sent; written as `"2.0"` when absent.
            pub jsonrpc: Option<String>,
            /// Members such as `emittedAtMs` or `trace`.
            pub extra: Map<String, Value>,
        }

        impl Frame {
            /// Parses one line (a trailing `\r` tolerated) and types its payload. A request is
            /// typed by whichever table lists its method; one in no table counts as a client's.
            pub fn parse(line: &str) -> Result<Self, DecodeError> {
                Self::from_raw(RawFrame::parse_line(line)?)
            }

            /// Like [`Frame::parse`], for a line whose sender is known: a request with a method
            /// in no table becomes that sender's `Unknown` request.
            pub fn parse_from(sender: Sender, line: &str) -> Result<Self, DecodeError> {
                Self::decode(RawFrame::parse_line(line)?, Some(sender))
            }

            /// Types the payload of a frame that is already parsed.
            pub fn from_raw(raw: RawFrame) -> Result<Self, DecodeError> {
                Self::decode(raw, None)
            }

            /// Types the payload of a parsed frame from a known sender.
            pub fn from_raw_from(sender: Sender, raw: RawFrame) -> Result<Self, DecodeError> {
                Self::decode(raw, Some(sender))
            }

            fn decode(raw: RawFrame, sender: Option<Sender>) -> Result<Self, DecodeError> {
                let kind = raw.kind()?;
                let RawFrame { jsonrpc, id, method, params, result, error, extra } = raw;
                let method = method.unwrap_or_default();
                let message = match (kind, id.into_option()) {
                    (FrameKind::Request, Some(id)) => {
                        let from_server = match sender {
                            Some(sender) => sender == Sender::Server,
                            None => SERVER_METHODS.contains(&method.as_str()),
                        };
                        if from_server {
                            Message::ServerRequest { id, request: ServerRequest::decode(&method, params)? }
                        } else {
                            Message::ClientRequest { id, request: ClientRequest::decode(&method, params)? }
                        }
                    }
                    (FrameKind::Notification, _) => Message::Notification(ProtocolNotification::decode(&method, params)?),
                    (FrameKind::Result, Some(id)) => Message::Result { id, result: result.unwrap_or(Value::Null) },
                    (_, id) => {
                        let error = serde_json::from_value(error.unwrap_or(Value::Null))
                            .map_err(|e| DecodeError::new(None, format_args!("error object: {e}")))?;
                        Message::Error { id, error }
                    }
                };
                Ok(Frame { message, jsonrpc, extra })
            }

            /// Back to an untyped frame, losing nothing that was read.
            pub fn to_raw(&self) -> RawFrame {
                let mut raw = RawFrame {
                    jsonrpc: Some(self.jsonrpc.clone().unwrap_or_else(|| "2.0".to_owned())),
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
                        raw.result = Some(result.clone());
                    }
                    Message::Error { id, error } => {
                        raw.id = id.clone().into();
                        raw.error = Some(encode_payload(error));
                    }
                }
                raw
            }

            /// Encodes the frame as one line of JSON, without a line ending.
            pub fn to_line(&self) -> String {
                self.to_raw().to_line()
            }
        }

        /// Methods of the `methods` table: requests a client sends.
        pub const CLIENT_METHODS: &[&str] = &[#(#client_methods),*];

        /// Methods of the `requests` table: requests a server sends.
        pub const SERVER_METHODS: &[&str] = &[#(#server_methods),*];
    }
}

fn markers(ctx: &Ctx<'_>, table: &[Method], module: &str, request: bool) -> TokenStream {
    let module_ident = ident(module);
    let items = table.iter().map(|m| {
        let cfg = cfg(m.experimental);
        let name = ident(&m.rust);
        let method = &m.name;
        let doc = doc_attrs(Some(&format!(
            "`{method}`: {}",
            m.doc.as_deref().unwrap_or("")
        )));
        let params = payload_ty(ctx, m.params.as_deref());
        if request {
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
    let doc = format!(" Marker types of the `{module}` table.");
    quote! {
        #[doc = #doc]
        pub mod #module_ident {
            #(#items)*
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
    for m in table {
        let cfg = cfg(m.experimental);
        let variant = ident(&m.rust);
        let method = &m.name;
        let payload = match part {
            Part::Params => m.params.as_deref(),
            Part::Result => m.result.as_deref(),
        };
        let ty = payload_ty(ctx, payload);
        let vdoc = doc_attrs(Some(&format!("`{method}`")));
        variants.push(quote!(#vdoc #cfg #variant(#ty),));
        let decode_arm = match (part, payload) {
            (Part::Params, None) => quote!(Ok(#name::#variant(payload))),
            (Part::Params, Some(_)) => quote!(decode_payload(method, payload).map(#name::#variant)),
            (Part::Result, _) => quote!(decode_payload(method, Some(payload)).map(#name::#variant)),
        };
        decode.push(quote!(#cfg #method => #decode_arm,));
        method_arms.push(quote!(#cfg #name::#variant(_) => #method,));
        let to_value = match (part, payload) {
            (Part::Params, None) => quote!(payload.clone()),
            (Part::Params, Some(_)) => quote!(Some(encode_payload(payload))),
            (Part::Result, _) => quote!(encode_payload(payload)),
        };
        encode.push(quote!(#cfg #name::#variant(payload) => #to_value,));
    }
    let (payload_param, unknown_variant, unknown_decode, unknown_encode, out_ty, encode_doc) =
        match part {
            Part::Params => (
                quote!(payload: Option<Value>),
                quote! {
                    /// A method in no table (or behind a feature this build lacks), with its raw params.
                    Unknown { method: String, params: Option<Value> },
                },
                quote!(_ => Ok(#name::Unknown { method: method.to_owned(), params: payload }),),
                quote!(#name::Unknown { params, .. } => params.clone(),),
                quote!(Option<Value>),
                "The params as JSON; `None` when the message has no params member.",
            ),
            Part::Result => (
                quote!(payload: Value),
                quote! {
                    /// The result of a method in no table, kept as sent.
                    Unknown { method: String, result: Value },
                },
                quote!(_ => Ok(#name::Unknown { method: method.to_owned(), result: payload }),),
                quote!(#name::Unknown { result, .. } => result.clone(),),
                quote!(Value),
                "The result as JSON.",
            ),
        };
    let decode_doc = match part {
        Part::Params => "Types the params of `method`; a method in no table is kept as `Unknown`.",
        Part::Result => {
            "Types the result of a request for `method`; a method in no table is kept as `Unknown`."
        }
    };
    let encode_name = match part {
        Part::Params => ident("params"),
        Part::Result => ident("result"),
    };
    let doc = doc_attrs(Some(doc));
    let decode_doc = doc_attrs(Some(decode_doc));
    let encode_doc = doc_attrs(Some(encode_doc));
    let unknown_method = quote!(#name::Unknown { method, .. } => method,);
    // With an empty table every match has the unknown arm alone.
    let allow = table
        .is_empty()
        .then(|| quote!(#[allow(clippy::match_single_binding)]));
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
            pub fn decode(method: &str, #payload_param) -> Result<Self, DecodeError> {
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
            pub fn #encode_name(&self) -> #out_ty {
                match self {
                    #(#encode)*
                    #unknown_encode
                }
            }
        }
    }
}

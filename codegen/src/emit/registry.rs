//! The error registry, capability names, and the schema's version and fingerprint.

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::Model;

pub fn emit(model: &Model) -> TokenStream {
    let version = match &model.version {
        Some(v) => quote!(Some(#v)),
        None => quote!(None),
    };
    let fingerprint = &model.fingerprint;
    let errors = model.errors.iter().map(|e| {
        let code = e.code;
        let kind = &e.kind;
        let retryable = match e.retryable {
            Some(b) => quote!(Some(#b)),
            None => quote!(None),
        };
        let overrides = &e.override_kinds;
        quote! {
            ErrorCode { code: #code, kind: #kind, retryable: #retryable, override_kinds: &[#(#overrides),*] },
        }
    });
    let grantable = &model.grantable;
    let (rc_names, rc_why): (Vec<&String>, Vec<&String>) = model
        .reserved_capabilities
        .iter()
        .map(|(a, b)| (a, b))
        .unzip();
    let (r_names, r_why): (Vec<&String>, Vec<&String>) =
        model.reserved.iter().map(|(a, b)| (a, b)).unzip();
    quote! {
        //! The error registry, capability names, and the schema's version and fingerprint.

        /// The protocol version the schema states (`x-msp-version`), if it states one.
        pub const PROTOCOL_VERSION: Option<&str> = #version;

        /// `sha256:` and the hex SHA-256 of the schema's wire facts as canonical JSON: every
        /// `description`, `title`, `$comment` and `examples` member removed at every depth,
        /// object keys sorted, no whitespace. Prose edits keep it; wire changes change it.
        pub const SCHEMA_FINGERPRINT: &str = #fingerprint;

        /// One entry of the error registry.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub struct ErrorCode {
            /// The JSON-RPC error code.
            pub code: i64,
            /// The error kind the code stands for.
            pub kind: &'static str,
            /// Whether the same call may succeed later; `None` when the schema does not say.
            pub retryable: Option<bool>,
            /// More specific kinds that may arrive with this code.
            pub override_kinds: &'static [&'static str],
        }

        /// Every error the protocol defines, in schema order.
        pub const ERRORS: &[ErrorCode] = &[#(#errors)*];

        /// The registry entry for a code.
        pub fn error_by_code(code: i64) -> Option<&'static ErrorCode> {
            ERRORS.iter().find(|e| e.code == code)
        }

        /// The registry entry whose kind, or one of whose override kinds, is `kind`.
        pub fn error_by_kind(kind: &str) -> Option<&'static ErrorCode> {
            ERRORS
                .iter()
                .find(|e| e.kind == kind)
                .or_else(|| ERRORS.iter().find(|e| e.override_kinds.contains(&kind)))
        }

        /// Capability names a client may ask for in `initialize`.
        pub const GRANTABLE_CAPABILITIES: &[&str] = &[#(#grantable),*];

        /// Capability names reserved for later, with the reason.
        pub const RESERVED_CAPABILITIES: &[(&str, &str)] = &[#((#rc_names, #rc_why)),*];

        /// Method names and error codes reserved for later, with the reason.
        pub const RESERVED: &[(&str, &str)] = &[#((#r_names, #r_why)),*];
    }
}

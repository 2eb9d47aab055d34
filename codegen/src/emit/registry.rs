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
    let some = |value: Option<TokenStream>| value.map_or(quote!(None), |v| quote!(Some(#v)));
    let served_version = some(model.served.version.map(|v| quote!(#v)));
    let served_fingerprint = some(model.served.fingerprint.as_ref().map(|v| quote!(#v)));
    let served_experimental = some(
        model
            .served
            .experimental_fingerprint
            .as_ref()
            .map(|v| quote!(#v)),
    );
    let text = |value: &Option<String>| some(value.as_ref().map(|v| quote!(#v)));
    let releases = model.served.releases.iter().map(|r| {
        let (release, stable, experimental) = (&r.release, text(&r.stable), text(&r.experimental));
        quote! {
            HostRelease { release: #release, stable: #stable, experimental: #experimental },
        }
    });
    let fixtures = &model.served.fixtures;
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
        //! The error registry, capability names, the schema's version and fingerprint, and
        //! the host releases it knows.

        /// The protocol version the schema states (`x-msp-version`), if it states one.
        pub const PROTOCOL_VERSION: Option<&str> = #version;

        /// `sha256:` and the hex SHA-256 of the schema's wire facts as canonical JSON: every
        /// `description`, `title`, `$comment` and `examples` member removed at every depth,
        /// object keys sorted, no whitespace. Prose edits keep it; wire changes change it.
        ///
        /// A hash of this schema's text, not what a host serves: compare a host's
        /// `schema.fingerprint` with [`SERVED_FINGERPRINT`].
        pub const SCHEMA_CONTENT_HASH: &str = #fingerprint;

        /// The envelope schema version hosts of this protocol version report as
        /// `schema.version` in the `initialize` result (`x-msp-served-schema`); a connection
        /// refuses a host that reports another.
        pub const SERVED_SCHEMA_VERSION: Option<i64> = #served_version;

        /// The `schema.fingerprint` hosts of this protocol version serve: the published
        /// fingerprint of its stable surface (`x-msp-served-schema`). Another value means
        /// the host was built from another schema: worth a warning, not a refusal.
        pub const SERVED_FINGERPRINT: Option<&str> = #served_fingerprint;

        /// The published fingerprint of this protocol version's experimental surface
        /// (`x-msp-served-schema`).
        pub const SERVED_FINGERPRINT_EXPERIMENTAL: Option<&str> = #served_experimental;

        /// A host release and the fingerprints its hosts serve as `schema.fingerprint`
        /// (`x-msp-host-releases`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub struct HostRelease {
            /// The release, such as `1.4.14`.
            pub release: &'static str,
            /// Its stable surface's fingerprint, the one its hosts serve.
            pub stable: Option<&'static str>,
            /// Its experimental surface's fingerprint, when published.
            pub experimental: Option<&'static str>,
        }

        /// The host releases this schema knows, oldest first; hosts of any of them speak
        /// with a client of this schema (newer members are absent from older hosts' frames).
        pub const HOST_RELEASES: &[HostRelease] = &[#(#releases)*];

        /// Fingerprints that recorded hosts serve (test fixtures such as golden transcripts):
        /// known, but no release.
        pub const FIXTURE_FINGERPRINTS: &[&str] = &[#(#fixtures),*];

        /// The known release whose hosts serve `fingerprint` (stable or experimental).
        pub fn host_release(fingerprint: &str) -> Option<&'static HostRelease> {
            HOST_RELEASES
                .iter()
                .find(|r| r.stable == Some(fingerprint) || r.experimental == Some(fingerprint))
        }

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

/// Decoding by definition name, for tools and table-driven tests (feature `reflect`).
pub fn reflect(ctx: &super::Ctx<'_>) -> TokenStream {
    let arms = ctx.model.defs.iter().map(|def| {
        let name = &def.name;
        let rust = super::ident(&def.rust);
        let cfg = super::cfg(def.experimental);
        quote!(#cfg #name => f.call::<crate::#rust>(),)
    });
    let samples = ctx.model.defs.iter().map(|def| {
        let name = &def.name;
        let rust = super::ident(&def.rust);
        let cfg = super::cfg(def.experimental);
        quote!(#cfg #name => encode::<crate::#rust>(seed),)
    });
    let infos = ctx.model.defs.iter().map(|def| {
        let name = &def.name;
        let experimental = def.experimental;
        let pointer = &def.pointer;
        quote!(definition(#name, #pointer, #experimental),)
    });
    quote! {
        //! Every definition by its schema name: decode, re-encode and validate a JSON value
        //! as the type a name stands for, without naming the type in code.

        use serde::de::DeserializeOwned;
        use serde::Serialize;
        use serde_json::Value;

        use crate::{Validate, Violation};

        /// A definition of the schema.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub struct Definition {
            /// Its name in the schema (and at the crate root).
            pub name: &'static str,
            /// JSON pointer of its schema node (a member's, for types named after a member).
            pub pointer: &'static str,
            /// Whether it needs the `experimental` feature.
            pub experimental: bool,
        }

        /// Every definition, sorted by name.
        pub const DEFINITIONS: &[Definition] = &[#(#infos)*];

        // One line an entry of `DEFINITIONS`.
        const fn definition(name: &'static str, pointer: &'static str, experimental: bool) -> Definition {
            Definition { name, pointer, experimental }
        }

        /// Something to do with the type a definition name stands for.
        pub trait WithType {
            /// What doing it yields.
            type Output;
            /// Does it with `T`.
            fn call<T: Serialize + DeserializeOwned + Validate + 'static>(self) -> Self::Output;
        }

        /// Runs `f` with the type of `definition`; `None` for a name this build does not have.
        pub fn with_type<F: WithType>(definition: &str, f: F) -> Option<F::Output> {
            Some(match definition {
                #(#arms)*
                _ => return None,
            })
        }

        /// Decodes `value` as `definition` and encodes it again.
        pub fn reencode(definition: &str, value: Value) -> Option<Result<Value, serde_json::Error>> {
            struct Reencode(Value);
            impl WithType for Reencode {
                type Output = Result<Value, serde_json::Error>;
                fn call<T: Serialize + DeserializeOwned + Validate + 'static>(self) -> Self::Output {
                    serde_json::to_value(serde_json::from_value::<T>(self.0)?)
                }
            }
            with_type(definition, Reencode(value))
        }

        /// A random value of `definition` as JSON, from `seed` (feature `sample`).
        #[cfg(feature = "sample")]
        pub fn sample(definition: &str, seed: u64) -> Option<Value> {
            fn encode<T: crate::sample::Sample + Serialize>(seed: u64) -> Value {
                crate::rpc::encode_payload(&T::sample(&mut crate::sample::Sampler::new(seed)))
            }
            Some(match definition {
                #(#samples)*
                _ => return None,
            })
        }

        /// Decodes `value` as `definition` and reports its constraint violations.
        pub fn validate(definition: &str, value: Value) -> Option<Result<Vec<Violation>, serde_json::Error>> {
            struct Check(Value);
            impl WithType for Check {
                type Output = Result<Vec<Violation>, serde_json::Error>;
                fn call<T: Serialize + DeserializeOwned + Validate + 'static>(self) -> Self::Output {
                    let typed = serde_json::from_value::<T>(self.0)?;
                    Ok(typed.validate().err().unwrap_or_default())
                }
            }
            with_type(definition, Check(value))
        }
    }
}

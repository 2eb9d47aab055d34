//! The model to token streams: one module per protocol area, plus the tables and the runtime.

mod builders;
mod code;
pub(crate) mod docs;
mod enums;
mod protocol;
mod registry;
mod sample;
mod structs;
mod unions;

use std::collections::BTreeMap;

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use crate::model::{Def, DefKind, FieldKind, Model, Struct, Ty};

pub use code::{Code, Piece};
pub use docs::doc_attrs;

/// A generated file before formatting.
pub enum Unit {
    /// Tokens to format, and tables written out.
    Code(Code),
    /// Source text written as it is (the runtime support files).
    Verbatim(&'static str),
    /// Source text made here, written as it is.
    Text(String),
}

/// The runtime files every generated crate carries unchanged.
const RUNTIME: &[(&str, &str)] = &[
    ("support.rs", include_str!("../../runtime/support.rs")),
    ("pattern.rs", include_str!("../../runtime/pattern.rs")),
    ("rpc.rs", include_str!("../../runtime/rpc.rs")),
    ("pointer.rs", include_str!("../../runtime/pointer.rs")),
    ("sample.rs", include_str!("../../runtime/sample.rs")),
];

/// One output file to produce: its path and what goes into it.
pub struct Job {
    /// Path under the output folder.
    pub path: String,
    /// A rough size of the work, for ordering the largest first.
    pub weight: usize,
    part: Part,
}

enum Part {
    Runtime(&'static str),
    Area(Vec<usize>),
    Protocol,
    Registry,
    Reflect,
    JsonSchema,
    Members,
    Lib(Vec<(String, bool)>),
}

/// Every output file, by path. Each job is independent of the others, so callers may run
/// them on several threads (tokens are not `Send`; each thread makes its own [`Emitter`]).
pub fn jobs(model: &Model) -> Vec<Job> {
    let mut jobs: Vec<Job> = RUNTIME
        .iter()
        .map(|(path, text)| Job {
            path: (*path).to_owned(),
            weight: 0,
            part: Part::Runtime(text),
        })
        .collect();
    let mut areas: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (index, def) in model.defs.iter().enumerate() {
        areas.entry(def.area.as_str()).or_default().push(index);
    }
    let defs = model.defs.len();
    let modules = areas
        .iter()
        .map(|(area, members)| {
            let experimental = members.iter().all(|&i| model.defs[i].experimental);
            ((*area).to_owned(), experimental)
        })
        .collect();
    for (area, members) in areas {
        jobs.push(Job {
            path: format!("{area}.rs"),
            weight: members.len() * 4,
            part: Part::Area(members),
        });
    }
    let methods = model.methods.len() + model.requests.len() + model.notifications.len();
    jobs.push(Job {
        path: "protocol.rs".into(),
        weight: methods * 8,
        part: Part::Protocol,
    });
    jobs.push(Job {
        path: "registry.rs".into(),
        weight: model.errors.len(),
        part: Part::Registry,
    });
    jobs.push(Job {
        path: "reflect.rs".into(),
        weight: defs * 2,
        part: Part::Reflect,
    });
    jobs.push(Job {
        path: "json_schema.rs".into(),
        weight: 1,
        part: Part::JsonSchema,
    });
    jobs.push(Job {
        path: "members.rs".into(),
        weight: 1,
        part: Part::Members,
    });
    jobs.push(Job {
        path: "lib.rs".into(),
        weight: 1,
        part: Part::Lib(modules),
    });
    jobs
}

/// Turns jobs into units; one per thread.
pub struct Emitter<'a> {
    ctx: Ctx<'a>,
    protocol: Option<&'a str>,
    crate_doc: Option<&'a str>,
    module: bool,
}

impl<'a> Emitter<'a> {
    /// An emitter for `model`.
    pub fn new(model: &'a Model) -> Self {
        Emitter {
            ctx: Ctx::new(model),
            protocol: None,
            crate_doc: None,
            module: false,
        }
    }

    /// Emits the root as a module of a bigger crate (`mod.rs`): what a partial use of it leaves
    /// dead is allowed there, so that a private `mod protocol;` builds warning-free.
    pub fn module(mut self, module: bool) -> Self {
        self.module = module;
        self
    }

    /// Names the protocol in the crate docs of `lib.rs`.
    pub fn protocol(mut self, name: Option<&'a str>) -> Self {
        self.protocol = name;
        self
    }

    /// Adds Markdown to the crate docs of `lib.rs`.
    pub fn crate_doc(mut self, markdown: Option<&'a str>) -> Self {
        self.crate_doc = markdown;
        self
    }

    /// The unit of one job.
    pub fn unit(&self, job: &Job) -> Unit {
        let ctx = &self.ctx;
        let model = ctx.model;
        match &job.part {
            Part::Runtime(text) if job.path == "support.rs" => Unit::Text(support_for(model, text)),
            Part::Runtime(text) => Unit::Verbatim(text),
            Part::Area(members) => {
                let items = members.iter().map(|&i| ctx.def(&model.defs[i]));
                // Unions derive or implement `Serialize` (structs through `impl_serde!`).
                let serialize = members
                    .iter()
                    .any(|&i| {
                        matches!(
                            model.defs[i].kind,
                            DefKind::Tagged(_) | DefKind::Untagged(_)
                        )
                    })
                    .then(|| {
                        quote!(
                            use serde::Serialize;
                        )
                    });
                let mut code = Code::from(quote! {
                    #[allow(unused_imports)]
                    use crate::*;
                    #serialize
                });
                for item in items {
                    code.append(item);
                }
                Unit::Code(code)
            }
            Part::Protocol => Unit::Code(protocol::emit(ctx).into()),
            Part::Registry => Unit::Code(registry::emit(model).into()),
            Part::Reflect => Unit::Code(registry::reflect(ctx).into()),
            Part::JsonSchema => Unit::Text(json_schema_module(model)),
            Part::Members => Unit::Code(members_module(ctx).into()),
            Part::Lib(modules) => Unit::Code(
                lib(
                    model,
                    modules.iter().map(|(area, exp)| (area.as_str(), *exp)),
                    self.protocol,
                    self.crate_doc,
                    self.module,
                )
                .into(),
            ),
        }
    }
}

fn lib<'a>(
    model: &Model,
    areas: impl Iterator<Item = (&'a str, bool)>,
    protocol: Option<&str>,
    crate_doc: Option<&str>,
    module: bool,
) -> TokenStream {
    // Mounted privately in a binary or a library, a module uses only part of itself, and
    // clippy holds its names to what it spares an exported API.
    let partial = module.then(|| {
        quote! {
            #![allow(
                dead_code,
                unused_imports,
                clippy::wrong_self_convention,
                clippy::enum_variant_names,
                clippy::upper_case_acronyms,
                clippy::option_option,
                clippy::vec_box,
                clippy::box_collection,
                clippy::redundant_allocation
            )]
        }
    });
    let (areas, gates): (Vec<Ident>, Vec<TokenStream>) =
        areas.map(|(a, exp)| (ident(a), cfg(exp))).unzip();
    let doc = docs::inner_doc_attrs(&format!(
        "Typed messages of {}{}, generated from its JSON Schema.\n\n{}\n\n\
         Every definition of the schema is a type at the crate root; the method tables are in \
         [`protocol`], the error registry and capability names in [`registry`], JSON-RPC framing \
         in [`rpc`].{}",
        protocol.map_or_else(|| "a protocol".to_owned(), |name| format!("the {name}")),
        model
            .version
            .as_ref()
            .map(|v| format!(" {v}"))
            .unwrap_or_default(),
        model.doc.as_deref().unwrap_or(""),
        crate_doc
            .map(|d| format!("\n\n{}", d.trim_end()))
            .unwrap_or_default()
    ));
    quote! {
        #doc
        #![allow(
            clippy::large_enum_variant,
            clippy::should_implement_trait,
            clippy::type_complexity,
            clippy::module_inception
        )]
        // The features `experimental`, `reflect` and `sample` need not be declared to build.
        #![allow(unexpected_cfgs)]
        #partial
        // Generated files keep the generator's formatting; `cargo fmt` leaves them alone.
        #![cfg_attr(rustfmt, rustfmt::skip)]

        #[rustfmt::skip]
        pub mod pattern;
        #[rustfmt::skip]
        mod pointer;
        #[rustfmt::skip]
        pub mod protocol;
        #[rustfmt::skip]
        pub mod registry;
        #[cfg(feature = "reflect")]
        #[rustfmt::skip]
        pub mod reflect;
        #[cfg(feature = "sample")]
        #[rustfmt::skip]
        pub mod sample;
        #[cfg(feature = "schemars")]
        #[rustfmt::skip]
        pub mod json_schema;
        #[rustfmt::skip]
        pub mod rpc;
        #[rustfmt::skip]
        pub mod support;
        #[doc(hidden)]
        #[rustfmt::skip]
        pub mod members;
        #(#gates #[rustfmt::skip] pub mod #areas;)*

        pub use protocol::{
            ClientRequest, ClientResult, Frame, Message, ProtocolNotification, Sender, ServerRequest, ServerResult,
        };
        pub use support::{StringEnum, Tristate, UnknownValue, Validate, Violation};
        #(#gates #[doc(inline)] pub use #areas::*;)*
    }
}

/// The runtime's `support.rs` without the macros of kinds of definitions the schema has none of
/// (an unused macro is a warning in the output).
fn support_for(model: &Model, text: &str) -> String {
    let structs = model
        .defs
        .iter()
        .any(|d| matches!(d.kind, DefKind::Struct(_) | DefKind::Tagged(_)));
    let enums = model
        .defs
        .iter()
        .any(|d| matches!(d.kind, DefKind::Enum(_)));
    let mut out = String::with_capacity(text.len());
    let mut keep = true;
    for line in text.split_inclusive('\n') {
        if let Some(region) = line.strip_prefix("// msp-codegen: begin ") {
            keep = match region {
                r if r.starts_with("structs") => structs,
                r if r.starts_with("string enums") => enums,
                _ => true,
            };
            continue;
        }
        if line.starts_with("// msp-codegen: end ") {
            keep = true;
            continue;
        }
        if keep {
            out.push_str(line);
        }
    }
    out
}

/// `schemars::JsonSchema` (feature `schemars`) giving the definition as the schema states it.
/// An alias is its target type, which has its own.
fn json_schema_impl(def: &Def, name: &Ident, cfg: &TokenStream) -> TokenStream {
    if matches!(def.kind, DefKind::Alias(_)) {
        return TokenStream::new();
    }
    let wire = &def.name;
    quote! {
        #cfg
        #[cfg(feature = "schemars")]
        crate::json_schema::impl_json_schema!(#name, #wire);
    }
}

/// The `json_schema` module: the runtime part, the source document, and `root_schema(name)`.
fn json_schema_module(model: &Model) -> String {
    let longest_hashes = model
        .document
        .split('"')
        .skip(1)
        .map(|rest| rest.len() - rest.trim_start_matches('#').len())
        .max()
        .unwrap_or(0);
    let hashes = "#".repeat(longest_hashes + 1);
    let mut arms = String::new();
    for def in model
        .defs
        .iter()
        .filter(|d| !matches!(d.kind, DefKind::Alias(_)))
    {
        if def.experimental {
            arms.push_str("        #[cfg(feature = \"experimental\")]\n");
        }
        arms.push_str(&format!(
            "        {:?} => root::<crate::{}>(),\n",
            def.name, def.rust
        ));
    }
    format!(
        "{}\n/// The schema document the types were generated from (inline types moved into `$defs`).\n\
         pub const DOCUMENT: &str = r{hashes}\"{}\"{hashes};\n\n\
         /// The root schema of the type generated for definition `name` (`None` for an alias, whose\n\
         /// schema is its target type's, or a name the schema does not define).\n\
         pub fn root_schema(name: &str) -> Option<schemars::Schema> {{\n    \
         fn root<T: schemars::JsonSchema>() -> Option<schemars::Schema> {{\n        \
         Some(schemars::SchemaGenerator::default().into_root_schema_for::<T>())\n    }}\n    \
         match name {{\n{arms}        _ => None,\n    }}\n}}\n",
        RUNTIME_JSON_SCHEMA, model.document
    )
}

const RUNTIME_JSON_SCHEMA: &str = include_str!("../../runtime/json_schema.rs");

/// The `members` module: a marker type for each required member name, which a builder's
/// `build()` names when that member is missing.
fn members_module(ctx: &Ctx<'_>) -> TokenStream {
    let markers = ctx.markers.values().map(|marker| {
        let marker = ident(marker);
        quote!(pub enum #marker {})
    });
    quote! {
        //! Marker types named after required members, for the messages of builders' `build()`.
        #![allow(non_camel_case_types)]
        #(#markers)*
    }
}

/// The marker of each required member name (its wire name, made an identifier).
fn member_markers(model: &Model) -> BTreeMap<String, String> {
    let mut wires = std::collections::BTreeSet::new();
    for def in &model.defs {
        let bodies: Vec<&Struct> = match &def.kind {
            DefKind::Struct(body) => vec![body],
            DefKind::Tagged(t) => t.arms.iter().map(|a| &a.body).collect(),
            _ => Vec::new(),
        };
        for field in bodies.into_iter().flat_map(|b| &b.fields) {
            if field.kind == FieldKind::Required {
                wires.insert(field.wire.clone());
            }
        }
    }
    let mut taken = std::collections::BTreeSet::new();
    wires
        .into_iter()
        .map(|wire| {
            let mut base: String = wire
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit()) {
                base.insert(0, '_');
            }
            if syn::parse_str::<syn::Ident>(&base).is_err() || base == "_" {
                base.push('_');
            }
            let mut marker = base.clone();
            let mut n = 2;
            while !taken.insert(marker.clone()) {
                marker = format!("{base}{n}");
                n += 1;
            }
            (wire, marker)
        })
        .collect()
}

/// Shared lookups while emitting.
pub struct Ctx<'a> {
    model: &'a Model,
    by_name: BTreeMap<&'a str, &'a Def>,
    /// Required member name -> its marker in `members`.
    markers: BTreeMap<String, String>,
}

impl<'a> Ctx<'a> {
    fn new(model: &'a Model) -> Self {
        let by_name = model.defs.iter().map(|d| (d.name.as_str(), d)).collect();
        Ctx {
            model,
            by_name,
            markers: member_markers(model),
        }
    }

    fn def(&self, def: &Def) -> Code {
        let cfg = cfg(def.experimental);
        let doc = doc_attrs(def.doc.as_deref());
        let name = ident(&def.rust);
        let json_schema = json_schema_impl(def, &name, &cfg);
        let mut code = match &def.kind {
            DefKind::Struct(s) => structs::emit(self, def, s, &name, &def.doc),
            DefKind::Enum(e) => enums::emit(def, e),
            DefKind::Tagged(t) => unions::tagged(self, def, t),
            DefKind::Untagged(arms) => unions::untagged(self, def, arms).into(),
            DefKind::Alias(ty) => {
                let ty = self.ty(ty);
                quote! { #doc #cfg pub type #name = #ty; }.into()
            }
        };
        code.push(json_schema);
        code
    }

    /// The Rust type of a type expression.
    pub fn ty(&self, ty: &Ty) -> TokenStream {
        match ty {
            Ty::String => quote!(String),
            Ty::Integer => quote!(i64),
            // `Number` keeps `2` and `2.0` apart, and integers beyond 2^53 exact.
            Ty::Number => quote!(serde_json::Number),
            Ty::Boolean => quote!(bool),
            Ty::Any => quote!(serde_json::Value),
            Ty::Object => quote!(serde_json::Map<String, serde_json::Value>),
            Ty::Ref(name) => {
                let rust = self
                    .by_name
                    .get(name.as_str())
                    .map_or(name.as_str(), |d| d.rust.as_str());
                let id = ident(rust);
                quote!(#id)
            }
            Ty::Array(inner) => {
                let inner = self.ty(inner);
                quote!(Vec<#inner>)
            }
            Ty::Map(inner) => {
                let inner = self.ty(inner);
                quote!(std::collections::BTreeMap<String, #inner>)
            }
            Ty::Nullable(inner) => {
                let inner = self.ty(inner);
                quote!(Option<#inner>)
            }
            // Named by the converter; never reaches emission.
            Ty::Inline(_) => quote!(serde_json::Value),
        }
    }

    /// The Rust name of a definition.
    pub fn rust_name(&self, def: &str) -> Ident {
        ident(self.by_name.get(def).map_or(def, |d| d.rust.as_str()))
    }

    /// Whether a definition is behind the `experimental` feature.
    pub fn is_experimental(&self, def: &str) -> bool {
        self.by_name.get(def).is_some_and(|d| d.experimental)
    }

    /// The definition named `name`.
    pub fn lookup(&self, name: &str) -> Option<&'a Def> {
        self.by_name.get(name).copied()
    }
}

/// An identifier token.
pub fn ident(name: &str) -> Ident {
    Ident::new(name, Span::call_site())
}

/// `#[cfg(feature = "experimental")]` when `experimental`.
pub fn cfg(experimental: bool) -> TokenStream {
    if experimental {
        quote!(#[cfg(feature = "experimental")])
    } else {
        TokenStream::new()
    }
}

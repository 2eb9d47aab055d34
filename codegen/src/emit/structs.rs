//! Object definitions to structs: the four field kinds, unknown members, `new`, `validate`.

use std::collections::BTreeSet;

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::code::{lit, table, Code};
use super::{cfg, doc_attrs, ident, Ctx};
use crate::model::{Def, Field, FieldKind, Struct, Ty};

/// A struct definition (or a tagged union's arm) with its decoder, sampler, constructor and
/// `Validate` impl.
pub fn emit(ctx: &Ctx<'_>, def: &Def, body: &Struct, name: &Ident, doc: &Option<String>) -> Code {
    let cfg = cfg(def.experimental);
    let doc = doc_attrs(doc.as_deref());
    let decl = declaration(ctx, body, name);
    let new = constructor(body);
    let new = (!new.is_empty()).then(|| quote!(#cfg impl #name { #new }));
    let validate = validate_body(ctx, body);
    let mut code = Code::from(quote!(#doc #cfg #decl));
    code.text(serde_table(body, name, def.experimental));
    code.text(super::sample::structure(body, name, def.experimental));
    code.push(quote!(#new));
    code.text(super::builders::emit(ctx, body, name, def.experimental));
    code.push(quote! {
        #cfg
        impl Validate for #name {
            #validate
        }
    });
    code
}

/// The struct item alone (also used for the arms of tagged unions).
pub fn declaration(ctx: &Ctx<'_>, body: &Struct, name: &Ident) -> TokenStream {
    let fields = body.fields.iter().map(|field| {
        let doc = doc_attrs(Some(&field_doc(field)));
        let rust = ident(&field.rust);
        let ty = field_ty(ctx, field);
        let gate = cfg(field.experimental);
        quote! { #doc #gate pub #rust: #ty, }
    });
    let unknown = ident(&body.unknown_field);
    let derive_default = body.fields.iter().all(|f| f.kind != FieldKind::Required);
    let default = derive_default.then(|| quote!(Default,));
    quote! {
        #[derive(Clone, Debug, #default PartialEq, Eq)]
        #[non_exhaustive]
        pub struct #name {
            #(#fields)*
            /// Members this version of the schema does not define, and `null`s sent for optional members it does not make nullable (those read as `None`), kept so that re-encoding loses nothing.
            pub #unknown: serde_json::Map<String, serde_json::Value>,
        }
    }
}

/// The `Serialize` and `Deserialize` impls: one `impl_serde!` entry per member (see the
/// runtime's `support.rs`), which reads members in one pass without buffering.
fn serde_table(body: &Struct, name: &Ident, experimental: bool) -> String {
    let entries: Vec<String> = body
        .fields
        .iter()
        .map(|field| {
            format!(
                "{}{} {} = {}",
                gate(field.experimental),
                kind_word(field.kind),
                field.rust,
                lit(&field.wire)
            )
        })
        .collect();
    let tail = format!(" {}", body.unknown_field);
    table(
        gate(experimental).trim_end(),
        "crate::support::impl_serde",
        &name.to_string(),
        &entries,
        &tail,
    )
}

/// An experimental member's gate in a table entry, a space after it; nothing for the others.
pub(super) fn gate(experimental: bool) -> &'static str {
    if experimental {
        "#[cfg(feature = \"experimental\")] "
    } else {
        ""
    }
}

/// A member's kind as the runtime's table macros name it (`impl_serde!`,
/// `impl_sample!`).
pub(super) fn kind_word(kind: FieldKind) -> &'static str {
    match kind {
        FieldKind::Required => "required",
        FieldKind::RequiredNullable => "nullable",
        FieldKind::Optional => "optional",
        FieldKind::OptionalNullable => "tristate",
    }
}

// The description, plus what the field kind means on the wire.
fn field_doc(field: &Field) -> String {
    let note = match field.kind {
        FieldKind::Required | FieldKind::Optional => "",
        FieldKind::RequiredNullable => {
            "Always on the wire: `None` is written as `null`, and a message without the member decodes as `None`."
        }
        FieldKind::OptionalNullable => "Absent, `null` and a value are kept apart (see `Tristate`).",
    };
    match (field.doc.as_deref(), note) {
        (Some(doc), "") => doc.to_owned(),
        (Some(doc), note) => format!("{doc}\n\n{note}"),
        (None, note) => note.to_owned(),
    }
}

pub(super) fn field_ty(ctx: &Ctx<'_>, field: &Field) -> TokenStream {
    let inner = ctx.ty(&field.ty);
    let inner = if field.boxed {
        quote!(Box<#inner>)
    } else {
        inner
    };
    match field.kind {
        FieldKind::Required => inner,
        FieldKind::RequiredNullable | FieldKind::Optional => quote!(Option<#inner>),
        FieldKind::OptionalNullable => quote!(Tristate<#inner>),
    }
}

/// `new()` for a struct without required members (every member absent); the others are built
/// by name, through their builder, so that no two members can be swapped.
pub fn constructor(body: &Struct) -> TokenStream {
    let required = |f: &Field| matches!(f.kind, FieldKind::Required | FieldKind::RequiredNullable);
    if body.fields.iter().any(required) {
        return TokenStream::new();
    }
    let inits = body.fields.iter().map(|f| {
        let rust = ident(&f.rust);
        let gate = cfg(f.experimental);
        match f.kind {
            FieldKind::OptionalNullable => quote!(#gate #rust: Tristate::Absent,),
            _ => quote!(#gate #rust: None,),
        }
    });
    let unknown = ident(&body.unknown_field);
    let doc = doc_attrs(Some("A value with every optional member absent."));
    quote! {
        #doc
        #[inline]
        pub fn new() -> Self {
            Self {
                #(#inits)*
                #unknown: serde_json::Map::new(),
            }
        }
    }
}

/// The body of `validate_into` for a struct: its own constraints, then its members'.
pub fn validate_body(ctx: &Ctx<'_>, body: &Struct) -> TokenStream {
    let mut checks = Vec::new();
    for field in &body.fields {
        let rust = ident(&field.rust);
        let wire = &field.wire;
        let access = match field.kind {
            FieldKind::Required => quote!(Some(&self.#rust)),
            FieldKind::RequiredNullable | FieldKind::Optional => quote!(self.#rust.as_ref()),
            FieldKind::OptionalNullable => quote!(self.#rust.as_value()),
        };
        let own = own_checks(field);
        let nested =
            nests(ctx, &field.ty).then(|| quote!(Validate::validate_into(value, &at, out);));
        if own.is_empty() && nested.is_none() {
            continue;
        }
        let gate = cfg(field.experimental);
        checks.push(quote! {
            #gate
            if let Some(value) = #access {
                let at = crate::support::pointer_push(pointer, #wire);
                #own
                #nested
            }
        });
    }
    for (member, needs) in &body.dependent_required {
        let Some(field) = body.fields.iter().find(|f| &f.wire == member) else {
            continue;
        };
        let present = presence(field);
        for need in needs {
            let Some(needed) = body.fields.iter().find(|f| &f.wire == need) else {
                continue;
            };
            let Some(needed_absent) = absence(needed) else {
                continue;
            };
            let message = format!("`{member}` is present, so `{need}` must be too");
            checks.push(quote! {
                if #present && #needed_absent {
                    out.push(crate::Violation { pointer: pointer.to_owned(), message: #message.to_owned() });
                }
            });
        }
    }
    if checks.is_empty() {
        return TokenStream::new();
    }
    quote! {
        fn validate_into(&self, pointer: &str, out: &mut Vec<crate::Violation>) {
            #(#checks)*
        }
    }
}

fn presence(field: &Field) -> TokenStream {
    let rust = ident(&field.rust);
    match field.kind {
        FieldKind::Required | FieldKind::RequiredNullable => quote!(true),
        FieldKind::Optional => quote!(self.#rust.is_some()),
        FieldKind::OptionalNullable => quote!(!self.#rust.is_absent()),
    }
}

fn absence(field: &Field) -> Option<TokenStream> {
    let rust = ident(&field.rust);
    match field.kind {
        FieldKind::Required | FieldKind::RequiredNullable => None,
        FieldKind::Optional => Some(quote!(self.#rust.is_none())),
        FieldKind::OptionalNullable => Some(quote!(self.#rust.is_absent())),
    }
}

fn own_checks(field: &Field) -> TokenStream {
    let checks = &field.checks;
    let mut out = TokenStream::new();
    if let Some(pattern) = &checks.pattern {
        if field.ty == Ty::String {
            let message = format!("does not match the pattern `{pattern}`");
            out.extend(quote! {
                if !crate::pattern::pattern_matches(#pattern, value) {
                    out.push(crate::Violation { pointer: at.clone(), message: #message.to_owned() });
                }
            });
        }
    }
    let numeric = match field.ty {
        Ty::Integer => Some(quote!(*value as f64)),
        Ty::Number => Some(quote!(value.as_f64().unwrap_or(f64::NAN))),
        _ => None,
    };
    if let Some(number) = numeric {
        let mut bounds = TokenStream::new();
        for (bound, cmp, word) in [
            (checks.minimum, quote!(<), "below the minimum"),
            (checks.maximum, quote!(>), "above the maximum"),
            (
                checks.exclusive_minimum,
                quote!(<=),
                "not above the exclusive minimum",
            ),
            (
                checks.exclusive_maximum,
                quote!(>=),
                "not below the exclusive maximum",
            ),
        ] {
            if let Some(bound) = bound {
                let message = format!("is {word} {bound}");
                bounds.extend(quote! {
                    if number #cmp #bound {
                        out.push(crate::Violation { pointer: at.clone(), message: format!("{} {}", value, #message) });
                    }
                });
            }
        }
        if let Some(step) = checks.multiple_of {
            let message = format!("is not a multiple of {step}");
            bounds.extend(quote! {
                if !crate::support::is_multiple(number, #step) {
                    out.push(crate::Violation { pointer: at.clone(), message: format!("{} {}", value, #message) });
                }
            });
        }
        if !bounds.is_empty() {
            out.extend(quote! {
                let number: f64 = #number;
                #bounds
            });
        }
    }
    // Sizes: of a string in characters, of an array in items, of a map in members.
    let sized = match &field.ty {
        Ty::String => Some((
            quote!(value.chars().count()),
            "characters",
            checks.min_length,
            checks.max_length,
        )),
        Ty::Array(_) => Some((
            quote!(value.len()),
            "items",
            checks.min_items,
            checks.max_items,
        )),
        Ty::Map(_) | Ty::Object => Some((
            quote!(value.len()),
            "members",
            checks.min_properties,
            checks.max_properties,
        )),
        _ => None,
    };
    if let Some((size, unit, min, max)) =
        sized.filter(|(_, _, min, max)| min.is_some() || max.is_some())
    {
        out.extend(quote!(let size: usize = #size;));
        for (bound, cmp, word) in [(min, quote!(<), "at least"), (max, quote!(>), "at most")] {
            if let Some(bound) = bound {
                let bound = bound as usize;
                let message = format!("{unit}, expected {word} {bound}");
                out.extend(quote! {
                    if size #cmp #bound {
                        out.push(crate::Violation { pointer: at.clone(), message: format!("has {} {}", size, #message) });
                    }
                });
            }
        }
    }
    if checks.unique_items && matches!(field.ty, Ty::Array(_)) {
        out.extend(quote! {
            if let Some((first, again)) = crate::support::first_duplicate(value) {
                out.push(crate::Violation { pointer: at.clone(), message: format!("items {} and {} are equal, expected unique items", first, again) });
            }
        });
    }
    out
}

fn nests(ctx: &Ctx<'_>, ty: &Ty) -> bool {
    let mut refs = BTreeSet::new();
    ty.refs(&mut refs);
    refs.iter()
        .any(|r| ctx.lookup(r).is_some_and(|def| def.validates))
}

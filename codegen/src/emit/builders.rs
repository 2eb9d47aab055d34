//! Builders: every member set by name, with `impl Into` setters; the builder's type says which
//! required members are set, so `build()` compiles only once all are (a missing one is a
//! compile error naming it, through `support::Has` and its marker in `members`; an added
//! one too, where values are built; an added optional member is neither).

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use super::{cfg, ident, Ctx};
use crate::model::{Field, FieldKind, Struct};

/// `Foo::builder()`, `FooBuilder` and its setters, under `gate` (the definition's). A stable
/// struct with a required member only the experimental surface has gets a builder for each
/// surface.
pub fn emit(ctx: &Ctx<'_>, body: &Struct, name: &Ident, gate: &TokenStream) -> TokenStream {
    let gated = body
        .fields
        .iter()
        .any(|f| f.experimental && f.kind == FieldKind::Required);
    if !gated {
        return builder(ctx, body, name, true, gate);
    }
    let with = builder(
        ctx,
        body,
        name,
        true,
        &quote!(#[cfg(feature = "experimental")]),
    );
    let without = builder(
        ctx,
        body,
        name,
        false,
        &quote!(#[cfg(not(feature = "experimental"))]),
    );
    quote!(#with #without)
}

fn builder(
    ctx: &Ctx<'_>,
    body: &Struct,
    name: &Ident,
    experimental: bool,
    gate: &TokenStream,
) -> TokenStream {
    let fields: Vec<&Field> = body
        .fields
        .iter()
        .filter(|f| experimental || !f.experimental)
        .collect();
    let builder = ident(&body.builder);
    let rest = format_ident!("{}Rest", body.builder);
    let unknown = ident(&body.unknown_field);
    let (required, others): (Vec<&Field>, Vec<&Field>) = fields
        .iter()
        .copied()
        .partition(|f| f.kind == FieldKind::Required);
    let required_entries = required.iter().enumerate().map(|(index, field)| {
        let param = format_ident!("T{index}");
        let rust = ident(&field.rust);
        let setter = setter_name(field);
        let (into, stored) = (ctx.ty(&field.ty), stored(ctx, field));
        let wire = &field.wire;
        let marker = ident(&ctx.markers[&field.wire]);
        quote!(#param #rust #setter: #into => #stored, #wire, #marker;)
    });
    let optional_entries = others.iter().map(|field| {
        let gate = cfg(field.experimental);
        let rust = ident(&field.rust);
        let setter = setter_name(field);
        let (into, stored) = (ctx.ty(&field.ty), stored(ctx, field));
        let wire = &field.wire;
        let (kind, null) = match field.kind {
            FieldKind::OptionalNullable => {
                let null = format_ident!("{}_null", setter);
                (quote!(tristate), Some(quote!([#null])))
            }
            FieldKind::RequiredNullable => (quote!(nullable), None),
            _ => (quote!(optional), None),
        };
        quote!(#gate #kind #rust #setter #null: #into => #stored, #wire;)
    });
    let wire: Vec<String> = required.iter().map(|f| format!("`{}`", f.wire)).collect();
    let doc = match wire.is_empty() {
        true => format!(" A builder of [`{name}`]: set members by name, then `build()`."),
        false => format!(
            " A builder of [`{name}`]: set members by name; `build()` compiles once the required ones ({}) are.",
            wire.join(", ")
        ),
    };
    quote! {
        crate::support::builder! {
            #gate
            #name, #builder, #rest, #unknown, #doc;
            required [#(#required_entries)*]
            optional [#(#optional_entries)*]
        }
    }
}

/// The type a member is kept as (boxed where the struct boxes it).
fn stored(ctx: &Ctx<'_>, field: &Field) -> TokenStream {
    let inner = ctx.ty(&field.ty);
    match field.boxed {
        true => quote!(Box<#inner>),
        false => inner,
    }
}

/// The setter's name: the field's, but never `build` or `unknown_member`.
fn setter_name(field: &Field) -> Ident {
    match field.rust.as_str() {
        "build" | "unknown_member" => format_ident!("{}_", field.rust),
        rust => ident(rust),
    }
}

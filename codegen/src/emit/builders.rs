//! Builders: every member set by name, with `impl Into` setters; the builder's type says which
//! required members are set, so `build()` compiles only once all are (a missing one is a
//! compile error naming it, through `support::Has` and its marker in `members`; an added
//! one too, where values are built; an added optional member is neither).

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::code::{lit, text};
use super::structs::gate;
use super::Ctx;
use crate::model::{Field, FieldKind, Struct};

/// `Foo::builder()`, `FooBuilder` and its setters, gated as the definition (`experimental`).
/// A stable struct with a required member only the experimental surface has gets a builder
/// for each surface.
pub fn emit(ctx: &Ctx<'_>, body: &Struct, name: &Ident, experimental: bool) -> String {
    let gated = body
        .fields
        .iter()
        .any(|f| f.experimental && f.kind == FieldKind::Required);
    if !gated {
        return builder(ctx, body, name, true, gate(experimental).trim_end());
    }
    let with = builder(ctx, body, name, true, gate(true).trim_end());
    let without = builder(
        ctx,
        body,
        name,
        false,
        "#[cfg(not(feature = \"experimental\"))]",
    );
    with + &without
}

fn builder(
    ctx: &Ctx<'_>,
    body: &Struct,
    name: &Ident,
    experimental: bool,
    surface: &str,
) -> String {
    let fields: Vec<&Field> = body
        .fields
        .iter()
        .filter(|f| experimental || !f.experimental)
        .collect();
    let (required, others): (Vec<&Field>, Vec<&Field>) = fields
        .iter()
        .copied()
        .partition(|f| f.kind == FieldKind::Required);
    let types = |field: &Field| (text(&ctx.ty(&field.ty)), text(&stored(ctx, field)));
    let required_entries = required.iter().enumerate().map(|(index, field)| {
        let (into, stored) = types(field);
        format!(
            "T{index} {} {}: {into} => {stored}, {}, {};",
            field.rust,
            setter_name(field),
            lit(&field.wire),
            ctx.markers[&field.wire]
        )
    });
    let optional_entries = others.iter().map(|field| {
        let setter = setter_name(field);
        let (kind, null) = match field.kind {
            FieldKind::OptionalNullable => ("tristate", format!(" [{setter}_null]")),
            FieldKind::RequiredNullable => ("nullable", String::new()),
            _ => ("optional", String::new()),
        };
        let (into, stored) = types(field);
        format!(
            "{}{kind} {} {setter}{null}: {into} => {stored}, {};",
            gate(field.experimental),
            field.rust,
            lit(&field.wire)
        )
    });
    let wire: Vec<String> = required.iter().map(|f| format!("`{}`", f.wire)).collect();
    let doc = match wire.is_empty() {
        true => format!(" A builder of [`{name}`]: set members by name, then `build()`."),
        false => format!(
            " A builder of [`{name}`]: set members by name; `build()` compiles once the required ones ({}) are.",
            wire.join(", ")
        ),
    };
    let surface = match surface {
        "" => String::new(),
        surface => format!("{surface} "),
    };
    let mut out = format!(
        "crate::support::builder! {{\n    {surface}{name}, {}, {}Rest, {}, {};\n",
        body.builder,
        body.builder,
        body.unknown_field,
        lit(&doc)
    );
    for (list, entries) in [
        ("required", required_entries.collect::<Vec<_>>()),
        ("optional", optional_entries.collect()),
    ] {
        if entries.is_empty() {
            out.push_str(&format!("    {list} []\n"));
            continue;
        }
        out.push_str(&format!("    {list} [\n"));
        for entry in entries {
            out.push_str(&format!("        {entry}\n"));
        }
        out.push_str("    ]\n");
    }
    out.push_str("}\n");
    out
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
fn setter_name(field: &Field) -> String {
    match field.rust.as_str() {
        "build" | "unknown_member" => format!("{}_", field.rust),
        rust => rust.to_owned(),
    }
}

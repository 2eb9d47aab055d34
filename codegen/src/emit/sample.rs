//! `Sample` impls (feature `sample`): random values that respect the schema, for property tests.

use proc_macro2::{Ident, Literal, TokenStream};
use quote::quote;

use super::code::{lit, table, text};
use super::ident;
use crate::model::{Arm, Field, FieldKind, Struct, Tagged, Ty};

const GATE: &str = "sample";

fn gate(experimental: bool) -> TokenStream {
    if experimental {
        quote!(#[cfg(all(feature = #GATE, feature = "experimental"))])
    } else {
        quote!(#[cfg(feature = #GATE)])
    }
}

/// `impl Sample` for a struct: one `impl_sample!` entry a member (see the runtime's
/// `sample.rs`), drawn by its type or within its constraints, and a `needs` rule for each
/// `dependentRequired` rule that can drop a member.
pub fn structure(body: &Struct, name: &Ident, experimental: bool) -> String {
    let entries: Vec<String> = body
        .fields
        .iter()
        .map(|field| {
            let draw = draw(field).map(|draw| format!(" => {draw}"));
            format!(
                "{}{} {} = {}{}",
                super::structs::gate(field.experimental),
                super::structs::kind_word(field.kind),
                field.rust,
                lit(&field.wire),
                draw.unwrap_or_default()
            )
        })
        .collect();
    // Only an optional member can be dropped, and only an optional one can be absent.
    let optional = |wire: &String| {
        body.fields
            .iter()
            .find(|f| &f.wire == wire)
            .filter(|f| matches!(f.kind, FieldKind::Optional | FieldKind::OptionalNullable))
            .map(|f| f.rust.as_str())
    };
    let mut tail = format!(" {}", body.unknown_field);
    for (member, needs) in &body.dependent_required {
        let Some(member) = optional(member) else {
            continue;
        };
        let needs: Vec<&str> = needs.iter().filter_map(optional).collect();
        if !needs.is_empty() {
            tail.push_str(&format!("; {member} needs {}", needs.join(" ")));
        }
    }
    table(
        &text(&gate(experimental)),
        "crate::sample::impl_sample",
        &name.to_string(),
        &entries,
        &tail,
    )
}

// How a member is drawn within its constraints; `None` to draw it by its type.
fn draw(field: &Field) -> Option<String> {
    let checks = &field.checks;
    let bound =
        |word: &str, b: Option<f64>| b.map(|b| format!("{word} {}", Literal::f64_suffixed(b)));
    let bounds = [bound("min", checks.minimum), bound("max", checks.maximum)]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    match (&field.ty, &checks.pattern) {
        (Ty::String, Some(pattern)) => Some(format!("matching({})", lit(pattern))),
        (Ty::Integer, _) => Some(format!("integer({bounds})")),
        (Ty::Number, _) => Some(format!("number({bounds})")),
        _ => None,
    }
}

/// `impl Sample` for a tagged union: a known arm, or (open unions) an object with an unknown tag.
pub fn tagged(t: &Tagged, name: &Ident, experimental: bool) -> TokenStream {
    let gate = gate(experimental);
    let count = t.arms.len();
    let arms = t.arms.iter().enumerate().map(|(i, arm)| {
        let variant = ident(&arm.rust);
        if i + 1 == count && !t.open {
            quote!(_ => #name::#variant(g.nested()),)
        } else {
            quote!(#i => #name::#variant(g.nested()),)
        }
    });
    let tag = &t.tag;
    let tags: Vec<&String> = t.arms.iter().map(|a| &a.tag_value).collect();
    let unknown = t.open.then(|| {
        quote! {
            _ => {
                let mut object = g.unknown_members(&[#tag]);
                object.insert(#tag.to_owned(), serde_json::Value::String(g.unknown_value(&[#(#tags),*])));
                #name::Unknown(object)
            }
        }
    });
    let choices = count + usize::from(t.open);
    let allow = (choices == 1).then(|| quote!(#[allow(clippy::match_single_binding)]));
    quote! {
        #gate
        impl crate::sample::Sample for #name {
            #allow
            fn sample(g: &mut crate::sample::Sampler) -> Self {
                match g.below(#choices) {
                    #(#arms)*
                    #unknown
                }
            }
        }
    }
}

/// `impl Sample` for an untagged union: any arm.
pub fn untagged(arms: &[Arm], name: &Ident, experimental: bool) -> TokenStream {
    let gate = gate(experimental);
    let count = arms.len();
    let allow = (count == 1).then(|| quote!(#[allow(clippy::match_single_binding)]));
    let choices = arms.iter().enumerate().map(|(i, arm)| {
        let variant = ident(&arm.rust);
        if i + 1 == count {
            quote!(_ => #name::#variant(g.nested()),)
        } else {
            quote!(#i => #name::#variant(g.nested()),)
        }
    });
    quote! {
        #gate
        impl crate::sample::Sample for #name {
            #allow
            fn sample(g: &mut crate::sample::Sampler) -> Self {
                match g.below(#count) {
                    #(#choices)*
                }
            }
        }
    }
}

//! `Sample` impls (feature `sample`): random values that respect the schema, for property tests.

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::{cfg, ident};
use crate::model::{Arm, Field, FieldKind, Struct, Tagged, Ty};

const GATE: &str = "sample";

fn gate(experimental: bool) -> TokenStream {
    if experimental {
        quote!(#[cfg(all(feature = #GATE, feature = "experimental"))])
    } else {
        quote!(#[cfg(feature = #GATE)])
    }
}

/// `impl Sample` for a struct: each member by its kind, unknown members now and then, and
/// `dependentRequired` honoured by dropping a dependent member whose partner is absent.
pub fn structure(body: &Struct, name: &Ident, experimental: bool) -> TokenStream {
    let gate = gate(experimental);
    let inits = body.fields.iter().map(|field| {
        let rust = ident(&field.rust);
        let field_cfg = cfg(field.experimental);
        let value = value(field);
        let init = match field.kind {
            FieldKind::Required => value,
            FieldKind::RequiredNullable => quote!(if g.coin() { Some(#value) } else { None }),
            FieldKind::Optional => quote!(if g.present() { Some(#value) } else { None }),
            FieldKind::OptionalNullable => quote! {
                match g.below(3) {
                    0 => Tristate::Absent,
                    1 => Tristate::Null,
                    _ if g.present() => Tristate::Value(#value),
                    _ => Tristate::Absent,
                }
            },
        };
        quote!(#field_cfg #rust: #init,)
    });
    let wires: Vec<&String> = body.fields.iter().map(|f| &f.wire).collect();
    let unknown = ident(&body.unknown_field);
    let fixups = body
        .dependent_required
        .iter()
        .filter_map(|(member, needs)| {
            let field = body.fields.iter().find(|f| &f.wire == member)?;
            let rust = ident(&field.rust);
            let clear = match field.kind {
                FieldKind::Optional => quote!(value.#rust = None;),
                FieldKind::OptionalNullable => quote!(value.#rust = Tristate::Absent;),
                _ => return None,
            };
            let absent: Vec<TokenStream> = needs
                .iter()
                .filter_map(|need| {
                    let needed = body.fields.iter().find(|f| &f.wire == need)?;
                    let n = ident(&needed.rust);
                    match needed.kind {
                        FieldKind::Optional => Some(quote!(value.#n.is_none())),
                        FieldKind::OptionalNullable => Some(quote!(value.#n.is_absent())),
                        _ => None,
                    }
                })
                .collect();
            (!absent.is_empty()).then(|| quote!(if #(#absent)||* { #clear }))
        });
    quote! {
        #gate
        impl crate::sample::Sample for #name {
            fn sample(g: &mut crate::sample::Sampler) -> Self {
                #[allow(unused_mut)]
                let mut value = Self {
                    #(#inits)*
                    #unknown: g.unknown_members(&[#(#wires),*]),
                };
                #(#fixups)*
                value
            }
        }
    }
}

// A value of the member's type, within its constraints.
fn value(field: &Field) -> TokenStream {
    let checks = &field.checks;
    let bound = |b: Option<f64>| match b {
        Some(b) => quote!(Some(#b)),
        None => quote!(None),
    };
    let (min, max) = (bound(checks.minimum), bound(checks.maximum));
    let inner = match (&field.ty, &checks.pattern) {
        (Ty::String, Some(pattern)) => quote!(g.matching(#pattern)),
        (Ty::Integer, _) => quote!(g.integer(#min, #max)),
        (Ty::Number, _) => quote!(g.json_number(#min, #max)),
        _ => quote!(g.nested()),
    };
    if field.boxed {
        quote!(Box::new(#inner))
    } else {
        inner
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

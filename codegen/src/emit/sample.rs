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

/// `impl Sample` for a struct: one `impl_sample!` entry a member (see the runtime's
/// `sample.rs`), drawn by its type or within its constraints, and a `needs` rule for each
/// `dependentRequired` rule that can drop a member.
pub fn structure(body: &Struct, name: &Ident, experimental: bool) -> TokenStream {
    let gate = gate(experimental);
    let entries = body.fields.iter().map(|field| {
        let rust = ident(&field.rust);
        let wire = &field.wire;
        let field_cfg = cfg(field.experimental);
        let kind = ident(super::structs::kind_word(field.kind));
        let draw = draw(field).map(|draw| quote!(=> #draw));
        quote!(#field_cfg #kind #rust = #wire #draw,)
    });
    let unknown = ident(&body.unknown_field);
    // Only an optional member can be dropped, and only an optional one can be absent.
    let optional = |wire: &String| {
        body.fields
            .iter()
            .find(|f| &f.wire == wire)
            .filter(|f| matches!(f.kind, FieldKind::Optional | FieldKind::OptionalNullable))
            .map(|f| ident(&f.rust))
    };
    let rules = body
        .dependent_required
        .iter()
        .filter_map(|(member, needs)| {
            let member = optional(member)?;
            let needs: Vec<Ident> = needs.iter().filter_map(optional).collect();
            (!needs.is_empty()).then(|| quote!(; #member needs #(#needs)*))
        });
    quote! {
        #gate
        crate::sample::impl_sample!(#name { #(#entries)* } #unknown #(#rules)*);
    }
}

// How a member is drawn within its constraints; `None` to draw it by its type.
fn draw(field: &Field) -> Option<TokenStream> {
    let checks = &field.checks;
    let min = checks.minimum.map(|b| quote!(min #b));
    let max = checks.maximum.map(|b| quote!(max #b));
    match (&field.ty, &checks.pattern) {
        (Ty::String, Some(pattern)) => Some(quote!(matching(#pattern))),
        (Ty::Integer, _) => Some(quote!(integer(#min #max))),
        (Ty::Number, _) => Some(quote!(number(#min #max))),
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

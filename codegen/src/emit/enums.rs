//! String enumerations: closed ones reject unlisted values, open ones keep them.

use proc_macro2::TokenStream;
use quote::quote;

use super::code::{lit, table, text, Code};
use super::{cfg, doc_attrs, ident};
use crate::model::{Def, StringEnum};

/// The enum declaration; `as_str`, the [`StringEnum`](crate) impl, serde, text and sample impls
/// come from the crate's `impl_string_enum!`, given the variants and their wire values.
pub fn emit(def: &Def, e: &StringEnum) -> Code {
    let cfg = cfg(def.experimental);
    let name = ident(&def.rust);
    let type_name = &def.name;
    let variants = e.variants.iter().map(|v| {
        let text = v
            .doc
            .clone()
            .unwrap_or_else(|| format!("`\"{}\"` on the wire.", v.wire));
        let doc = doc_attrs(Some(&text));
        let rust = ident(&v.rust);
        quote!(#doc #rust,)
    });
    let unknown = ident(&e.unknown_variant);
    let (unknown_variant, openness, kind) = if e.open {
        (
            quote! {
                /// A value this version of the schema does not list, kept as sent.
                #unknown(String),
            },
            "Open: values this version does not list decode as `Unknown` and are written back unchanged.",
            format!(" open {unknown}"),
        )
    } else {
        (
            TokenStream::new(),
            "Closed: decoding a value this version does not list fails.",
            " closed".to_owned(),
        )
    };
    let entries: Vec<String> = e
        .variants
        .iter()
        .map(|v| format!("{} = {}", v.rust, lit(&v.wire)))
        .collect();
    let eq = if e.open {
        quote!(Eq, Hash, PartialOrd, Ord,)
    } else {
        quote!(Copy, Eq, Hash, PartialOrd, Ord,)
    };
    let doc = doc_attrs(Some(&match &def.doc {
        Some(text) => format!("{text}\n\n{openness}"),
        None => openness.to_owned(),
    }));
    let mut code = Code::from(quote! {
        #doc
        #cfg
        #[derive(Clone, Debug, PartialEq, #eq)]
        #[non_exhaustive]
        pub enum #name {
            #(#variants)*
            #unknown_variant
        }
    });
    code.text(table(
        &text(&cfg),
        "crate::support::impl_string_enum",
        &format!("{name} {}", lit(type_name)),
        &entries,
        &kind,
    ));
    code
}

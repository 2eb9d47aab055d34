//! String enumerations: closed ones reject unlisted values, open ones keep them.

use proc_macro2::TokenStream;
use quote::quote;

use super::{cfg, doc_attrs, ident};
use crate::model::{Def, StringEnum};

/// The enum, its `as_str`, and the [`StringEnum`](crate) impl; serde and text impls come from
/// the crate's `impl_string_enum!`.
pub fn emit(def: &Def, e: &StringEnum) -> TokenStream {
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
    let wires: Vec<&String> = e.variants.iter().map(|v| &v.wire).collect();
    let rusts: Vec<_> = e.variants.iter().map(|v| ident(&v.rust)).collect();
    let unknown = ident(&e.unknown_variant);
    let (unknown_variant, unknown_as_str, from_unknown, openness) = if e.open {
        (
            quote! {
                /// A value this version of the schema does not list, kept as sent.
                #unknown(String),
            },
            quote!(#name::#unknown(value) => value,),
            quote!(Some(#name::#unknown(value.to_owned()))),
            "Open: values this version does not list decode as `Unknown` and are written back unchanged.",
        )
    } else {
        (
            TokenStream::new(),
            TokenStream::new(),
            quote!({
                let _ = value;
                None
            }),
            "Closed: decoding a value this version does not list fails.",
        )
    };
    let sample = super::sample::string_enum(e, &name, def.experimental);
    let eq = if e.open {
        quote!(Eq, Hash, PartialOrd, Ord,)
    } else {
        quote!(Copy, Eq, Hash, PartialOrd, Ord,)
    };
    let doc = doc_attrs(Some(&match &def.doc {
        Some(text) => format!("{text}\n\n{openness}"),
        None => openness.to_owned(),
    }));
    quote! {
        #doc
        #cfg
        #[derive(Clone, Debug, PartialEq, #eq)]
        #[non_exhaustive]
        pub enum #name {
            #(#variants)*
            #unknown_variant
        }

        #cfg
        impl #name {
            /// Every value this version of the schema lists.
            pub const KNOWN_VALUES: &'static [&'static str] = &[#(#wires),*];

            /// The wire value.
            pub fn as_str(&self) -> &str {
                match self {
                    #(#name::#rusts => #wires,)*
                    #unknown_as_str
                }
            }
        }

        #cfg
        impl StringEnum for #name {
            const TYPE_NAME: &'static str = #type_name;
            const KNOWN_VALUES: &'static [&'static str] = #name::KNOWN_VALUES;

            fn from_known(value: &str) -> Option<Self> {
                match value {
                    #(#wires => Some(#name::#rusts),)*
                    _ => None,
                }
            }

            fn from_unknown(value: &str) -> Option<Self> {
                #from_unknown
            }

            fn as_str(&self) -> &str {
                #name::as_str(self)
            }
        }

        #cfg
        crate::support::impl_string_enum!(#name);

        #sample
    }
}

//! Unions: `oneOf` told apart by a `const` member, and `anyOf` told apart by shape.

use proc_macro2::TokenStream;
use quote::quote;

use super::code::Code;
use super::{cfg, doc_attrs, ident, structs, Ctx};
use crate::model::{Arm, Def, Tagged};

/// A tagged union: one struct per arm (without the tag) and an enum over them.
pub fn tagged(ctx: &Ctx<'_>, def: &Def, t: &Tagged) -> Code {
    let cfg = cfg(def.experimental);
    let name = ident(&def.rust);
    let type_name = &def.name;
    let tag = &t.tag;
    let mut code = Code::default();
    let mut variants = Vec::new();
    let mut ser = Vec::new();
    let mut de = Vec::new();
    let mut tags = Vec::new();
    for arm in &t.arms {
        let struct_name = ident(&arm.struct_name);
        let variant = ident(&arm.rust);
        let value = &arm.tag_value;
        let arm_text = arm
            .doc
            .clone()
            .unwrap_or_else(|| format!("The `{tag}: \"{value}\"` arm of `{type_name}`."));
        let arm_doc = doc_attrs(Some(&arm_text));
        code.append(structs::emit(
            ctx,
            def,
            &arm.body,
            &struct_name,
            &Some(arm_text),
        ));
        variants.push(quote! { #arm_doc #variant(#struct_name), });
        ser.push(quote! { #name::#variant(body) => crate::support::serialize_tagged(serializer, #tag, #value, body), });
        de.push(quote! { Some(#value) => crate::support::deserialize_arm(object).map(#name::#variant), });
        tags.push(quote! { #name::#variant(_) => #value, });
    }
    let (unknown_variant, unknown_ser, unknown_de, unknown_tag, openness) = if t.open {
        (
            quote! {
                /// An arm this version of the schema does not know: the whole object, kept as sent.
                Unknown(serde_json::Map<String, serde_json::Value>),
            },
            quote!(#name::Unknown(object) => object.serialize(serializer),),
            quote! {
                _ => {
                    // The tag as sent, whatever its type: nothing read is lost.
                    if let Some(value) = tag_value {
                        object.insert(#tag.to_owned(), value);
                    }
                    Ok(#name::Unknown(object))
                }
            },
            quote!(#name::Unknown(object) => object.get(#tag).and_then(serde_json::Value::as_str).unwrap_or_default(),),
            "Open: an object with a tag this version does not know decodes as `Unknown`.",
        )
    } else {
        let message = format!("unknown {type_name} `{tag}`");
        (
            TokenStream::new(),
            TokenStream::new(),
            quote! {
                other => Err(serde::de::Error::custom(format_args!("{} {:?}", #message, other.unwrap_or("(missing)")))),
            },
            TokenStream::new(),
            "Closed: an object with any other tag fails to decode.",
        )
    };
    let validate_arms = t.arms.iter().map(|arm| {
        let variant = ident(&arm.rust);
        quote!(#name::#variant(body) => body.validate_into(pointer, out),)
    });
    let validate_unknown = t.open.then(|| quote!(#name::Unknown(_) => {}));
    let doc = doc_attrs(Some(&match &def.doc {
        Some(text) => format!("{text}\n\n{openness}"),
        None => openness.to_owned(),
    }));
    let sample = super::sample::tagged(t, &name, def.experimental);
    code.push(quote! {
        #sample

        #doc
        #cfg
        #[derive(Clone, Debug, PartialEq, Eq)]
        #[non_exhaustive]
        pub enum #name {
            #(#variants)*
            #unknown_variant
        }

        #cfg
        impl #name {
            /// The member whose value tells the arms apart.
            pub const TAG: &'static str = #tag;

            /// The tag value of this arm.
            pub fn tag(&self) -> &str {
                match self {
                    #(#tags)*
                    #unknown_tag
                }
            }
        }

        #cfg
        impl Serialize for #name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self {
                    #(#ser)*
                    #unknown_ser
                }
            }
        }

        #cfg
        impl<'de> serde::Deserialize<'de> for #name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let mut object = serde_json::Map::<String, serde_json::Value>::deserialize(deserializer)?;
                let tag_value = object.remove(#tag);
                let tag = tag_value.as_ref().and_then(serde_json::Value::as_str);
                match tag {
                    #(#de)*
                    #unknown_de
                }
            }
        }

        #cfg
        impl Validate for #name {
            fn validate_into(&self, pointer: &str, out: &mut Vec<crate::Violation>) {
                match self {
                    #(#validate_arms)*
                    #validate_unknown
                }
            }
        }
    });
    code
}

/// An untagged union: the first arm that decodes wins.
pub fn untagged(ctx: &Ctx<'_>, def: &Def, arms: &[Arm]) -> TokenStream {
    let cfg = cfg(def.experimental);
    let doc = doc_attrs(def.doc.as_deref());
    let name = ident(&def.rust);
    let variants = arms.iter().map(|arm| {
        let variant = ident(&arm.rust);
        let ty = ctx.ty(&arm.ty);
        let doc = doc_attrs(Some(&match (&arm.doc, &arm.ty) {
            (Some(doc), _) => doc.clone(),
            (None, crate::model::Ty::Ref(name)) => format!("A `{name}`."),
            (None, _) => format!("The `{}` arm.", arm.rust),
        }));
        quote!(#doc #variant(#ty),)
    });
    let validate_arms = arms.iter().map(|arm| {
        let variant = ident(&arm.rust);
        quote!(#name::#variant(value) => Validate::validate_into(value, pointer, out),)
    });
    let needs_validate = def.validates;
    let validate = needs_validate.then(|| {
        quote! {
            fn validate_into(&self, pointer: &str, out: &mut Vec<crate::Violation>) {
                match self {
                    #(#validate_arms)*
                }
            }
        }
    });
    let sample = super::sample::untagged(arms, &name, def.experimental);
    quote! {
        #sample

        #doc
        #cfg
        #[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
        #[serde(untagged)]
        pub enum #name {
            #(#variants)*
        }

        #cfg
        impl Validate for #name {
            #validate
        }
    }
}

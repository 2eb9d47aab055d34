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
    let required: Vec<&Field> = fields
        .iter()
        .copied()
        .filter(|f| f.kind == FieldKind::Required)
        .collect();
    let others: Vec<&Field> = fields
        .iter()
        .copied()
        .filter(|f| f.kind != FieldKind::Required)
        .collect();
    // The required members' slots: `Unset` until set, then the member's type.
    let slots: Vec<TokenStream> = required
        .iter()
        .map(|_| quote!(crate::support::Unset))
        .collect();
    let tuple = |items: &[TokenStream]| quote!((#(#items,)*));
    let unset = tuple(&slots);
    let params: Vec<Ident> = (0..required.len()).map(|i| format_ident!("T{i}")).collect();
    // `build()`: every slot must hold its member; a missing one is named by its marker.
    let provided = required.iter().zip(&params).map(|(field, param)| {
        let marker = ident(&ctx.markers[&field.wire]);
        let ty = super::structs::field_ty(ctx, field);
        quote!(#param: crate::support::Has<crate::members::#marker, #ty>,)
    });
    let bound: Vec<TokenStream> = provided.collect();
    let where_clause = (!bound.is_empty()).then(|| quote!(where #(#bound)*));
    let setters_required = required.iter().enumerate().map(|(index, field)| {
        let setter = setter_name(field);
        let arg = ident(&field.rust);
        let (into, value) = into_value(ctx, field, &arg);
        let mut before: Vec<TokenStream> = params.iter().map(|p| quote!(#p)).collect();
        let mut after = before.clone();
        before[index] = quote!(crate::support::Unset);
        after[index] = super::structs::field_ty(ctx, field);
        let generics: Vec<&Ident> = params
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != index)
            .map(|(_, p)| p)
            .collect();
        let bindings: Vec<TokenStream> = params
            .iter()
            .enumerate()
            .map(|(i, p)| {
                if i == index {
                    quote!(_)
                } else {
                    let v = format_ident!("{}", p.to_string().to_lowercase());
                    quote!(#v)
                }
            })
            .collect();
        let values: Vec<TokenStream> = params
            .iter()
            .enumerate()
            .map(|(i, p)| {
                if i == index {
                    value.clone()
                } else {
                    let v = format_ident!("{}", p.to_string().to_lowercase());
                    quote!(#v)
                }
            })
            .collect();
        let (before, after) = (tuple(&before), tuple(&after));
        let (bindings, values) = (tuple(&bindings), tuple(&values));
        let doc = setter_doc(field);
        quote! {
            #gate
            impl<#(#generics),*> #builder<#before> {
                #doc
                pub fn #setter(self, #arg: impl Into<#into>) -> #builder<#after> {
                    let #bindings = self.required;
                    #builder { required: #values, rest: self.rest }
                }
            }
        }
    });
    let setters_optional = others.iter().map(|field| {
        let setter = setter_name(field);
        let rust = ident(&field.rust);
        let (into, value) = into_value(ctx, field, &rust);
        let slot = match field.kind {
            FieldKind::OptionalNullable => quote!(crate::Tristate::Value(#value)),
            _ => quote!(Some(#value)),
        };
        let gate = cfg(field.experimental);
        let doc = setter_doc(field);
        // Optional and nullable: `null` is a third state, set by its own setter.
        let null = (field.kind == FieldKind::OptionalNullable).then(|| {
            let null_setter = format_ident!("{}_null", setter);
            let doc = format!(" Sets `{}` to `null` (else it is left out).", field.wire);
            quote! {
                #[doc = #doc]
                #gate
                pub fn #null_setter(mut self) -> Self {
                    self.rest.#rust = crate::Tristate::Null;
                    self
                }
            }
        });
        quote! {
            #doc
            #gate
            pub fn #setter(mut self, #rust: impl Into<#into>) -> Self {
                self.rest.#rust = #slot;
                self
            }
            #null
        }
    });
    let rest_fields = others.iter().map(|field| {
        let rust = ident(&field.rust);
        let ty = super::structs::field_ty(ctx, field);
        let gate = cfg(field.experimental);
        quote!(#gate #rust: #ty,)
    });
    // Written out rather than derived: an `#[inline]` constructor is compiled only where used.
    let rest_init = others.iter().map(|field| {
        let rust = ident(&field.rust);
        let gate = cfg(field.experimental);
        match field.kind {
            FieldKind::OptionalNullable => quote!(#gate #rust: crate::Tristate::Absent,),
            _ => quote!(#gate #rust: None,),
        }
    });
    let required_names: Vec<Ident> = required.iter().map(|f| ident(&f.rust)).collect();
    let init_required = required_names.iter().map(|n| quote!(#n: #n.value(),));
    let init_others = others.iter().map(|field| {
        let rust = ident(&field.rust);
        let gate = cfg(field.experimental);
        quote!(#gate #rust: rest.#rust,)
    });
    let wire: Vec<String> = required.iter().map(|f| format!("`{}`", f.wire)).collect();
    let builder_doc = match wire.is_empty() {
        true => format!(" A builder of [`{name}`]: set members by name, then `build()`."),
        false => format!(
            " A builder of [`{name}`]: set members by name; `build()` is there once the required ones ({}) are.",
            wire.join(", ")
        ),
    };
    let start_doc = format!(" Starts a [`{builder}`]; every member is set by name.");
    quote! {
        #gate
        impl #name {
            #[doc = #start_doc]
            #[inline]
            pub fn builder() -> #builder {
                #builder {
                    required: #unset,
                    rest: #rest { #(#rest_init)* #unknown: serde_json::Map::new() },
                }
            }
        }

        #gate
        #[doc = #builder_doc]
        #[must_use]
        pub struct #builder<R = #unset> {
            required: R,
            rest: #rest,
        }

        #gate
        struct #rest {
            #(#rest_fields)*
            #unknown: serde_json::Map<String, serde_json::Value>,
        }

        #(#setters_required)*

        #gate
        impl<R> #builder<R> {
            #(#setters_optional)*

            /// Adds a member this version of the schema does not define, written as given.
            pub fn unknown_member(mut self, name: impl Into<String>, value: serde_json::Value) -> Self {
                self.rest.#unknown.insert(name.into(), value);
                self
            }
        }

        #gate
        impl<#(#params),*> #builder<(#(#params,)*)> {
            /// The value, every required member set (else the compile error names each one
            /// missing).
            #[inline]
            pub fn build(self) -> #name #where_clause {
                let (#(#required_names,)*) = self.required;
                let rest = self.rest;
                #name {
                    #(#init_required)*
                    #(#init_others)*
                    #unknown: rest.#unknown,
                }
            }
        }
    }
}

/// The setter's name: the field's, but never `build` or `unknown_member`.
fn setter_name(field: &Field) -> Ident {
    match field.rust.as_str() {
        "build" | "unknown_member" => format_ident!("{}_", field.rust),
        rust => ident(rust),
    }
}

/// What the setter takes (`impl Into<_>` of it) and the stored value made from `arg`.
fn into_value(ctx: &Ctx<'_>, field: &Field, arg: &Ident) -> (TokenStream, TokenStream) {
    let inner = ctx.ty(&field.ty);
    match ctx.boxed(field) {
        true => (inner, quote!(Box::new(#arg.into()))),
        false => (inner, quote!(#arg.into())),
    }
}

fn setter_doc(field: &Field) -> TokenStream {
    let what = match field.kind {
        FieldKind::Required => "Sets",
        FieldKind::RequiredNullable => "Sets (else it is written as `null`)",
        FieldKind::Optional => "Sets (else it is left out)",
        FieldKind::OptionalNullable => "Sets to a value (else it is left out)",
    };
    let doc = format!(" {what} `{}`.", field.wire);
    quote!(#[doc = #doc])
}

//! Generates typify's Rust into OUT_DIR, with a table from definition name to type, for the
//! wire benches: for the experimental bundle under `$MSP_SHARED_DIR` (cfg `typify_bundle`)
//! and for our own schema (cfg `typify_schema`, the like-for-like comparison).

use std::path::Path;

#[path = "src/typify_gen.rs"]
mod typify_gen;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(typify_bundle, typify_schema)");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/typify_gen.rs");
    println!("cargo:rerun-if-env-changed=MSP_SHARED_DIR");
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let schema = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema/msp.schema.json");
    generate(&schema, &out, "typify_schema");
    match std::env::var_os("MSP_SHARED_DIR").filter(|d| !d.is_empty()) {
        Some(shared) => {
            let bundle = Path::new(&shared).join("msp-upstream/experimental/msp.schema.json");
            generate(&bundle, &out, "typify_bundle");
        }
        None => println!("cargo:warning=typify bundle comparison skipped: MSP_SHARED_DIR not set"),
    }
}

/// `<name>.rs` (the types) and `<name>_codecs.rs` in `out`, and cfg `<name>`; a warning
/// instead when the schema is missing or typify rejects it.
fn generate(schema: &Path, out: &Path, name: &str) {
    println!("cargo:rerun-if-changed={}", schema.display());
    let Ok(text) = std::fs::read_to_string(schema) else {
        println!("cargo:warning={name} skipped: {} missing", schema.display());
        return;
    };
    match typify_gen::typify_source(&text) {
        Ok(source) => {
            let codecs = codec_table(&source);
            std::fs::write(out.join(format!("{name}.rs")), source).expect("write types");
            std::fs::write(out.join(format!("{name}_codecs.rs")), codecs).expect("write codecs");
            println!("cargo:rustc-cfg={name}");
        }
        Err(e) => println!("cargo:warning={name} skipped: typify failed: {e}"),
    }
}

/// `pub fn codec(name) -> Option<Codec>` over every top-level type typify derived
/// `Deserialize` for; typify names a definition's type after the definition.
fn codec_table(source: &str) -> String {
    let file = syn::parse_file(source).expect("typify output parses");
    let mut arms = String::new();
    for item in &file.items {
        let (ident, attrs) = match item {
            syn::Item::Struct(s) => (&s.ident, &s.attrs),
            syn::Item::Enum(e) => (&e.ident, &e.attrs),
            _ => continue,
        };
        let derives_deserialize = attrs
            .iter()
            .any(|a| a.path().is_ident("derive") && quote_free(a).contains("Deserialize"));
        if derives_deserialize {
            arms.push_str(&format!(
                "        \"{ident}\" => Some(crate::codec::Codec::of::<{ident}>()),\n"
            ));
        }
    }
    format!(
        "/// typify's type for definition `name`.\n\
         pub fn codec(name: &str) -> Option<crate::codec::Codec> {{\n    match name {{\n{arms}        _ => None,\n    }}\n}}\n"
    )
}

fn quote_free(attr: &syn::Attribute) -> String {
    match &attr.meta {
        syn::Meta::List(list) => list.tokens.to_string(),
        _ => String::new(),
    }
}

//! Benchmarks of msp-codegen and msp-types against typify and `serde_json::Value`.
//!
//! The bench binaries are `benches/generation.rs` and `benches/wire.rs`; `scripts/bench_all.sh`
//! runs them with the build-time script and prints the ratios against their targets.

pub mod alloc;
pub mod codec;
pub mod corpus;
pub mod envelope;
pub mod measure;
pub mod streamed;
pub mod typify_gen;
pub mod wire;

/// typify's Rust for the experimental bundle, made by `build.rs`, and [`typify_types::codec`]
/// from definition name to its type.
#[cfg(typify_bundle)]
#[allow(clippy::all, clippy::pedantic, dead_code, missing_docs, unused)]
pub mod typify_types {
    include!(concat!(env!("OUT_DIR"), "/typify_bundle.rs"));
    include!(concat!(env!("OUT_DIR"), "/typify_bundle_codecs.rs"));
}

/// typify's Rust for our own `schema/msp.schema.json`, the same input msp-types is generated
/// from, made by `build.rs`.
#[cfg(typify_schema)]
#[allow(clippy::all, clippy::pedantic, dead_code, missing_docs, unused)]
pub mod typify_schema_types {
    include!(concat!(env!("OUT_DIR"), "/typify_schema.rs"));
    include!(concat!(env!("OUT_DIR"), "/typify_schema_codecs.rs"));
}

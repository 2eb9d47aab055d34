//! The reference generator: typify's library on a schema bundle, formatted with prettyplease.
//! Shared by `build.rs` (types for the wire benches) and the generation bench.

/// Schema text in, formatted Rust out, as a typify user would get it.
pub fn typify_source(schema_text: &str) -> Result<String, String> {
    let root: schemars::schema::RootSchema =
        serde_json::from_str(schema_text).map_err(|e| format!("schema: {e}"))?;
    let mut settings = typify::TypeSpaceSettings::default();
    settings.with_struct_builder(false);
    let mut space = typify::TypeSpace::new(&settings);
    space.add_root_schema(root).map_err(|e| e.to_string())?;
    let file: syn::File = syn::parse2(space.to_stream()).map_err(|e| format!("tokens: {e}"))?;
    Ok(prettyplease::unparse(&file))
}

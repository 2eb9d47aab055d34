//! Regenerates `generated/` from `schema/msp.schema.json` when the schema or the generator
//! changed (feature `regenerate`: the generator is then a build-dependency, so a change to it
//! reruns this script). Files are rewritten only when their bytes change, each through a
//! rename.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // Only in this repository: a packaged msp-types holds the generated files, not the schema.
    if std::path::Path::new("schema/msp.schema.json").is_file() {
        println!("cargo:rerun-if-changed=schema/msp.schema.json");
        #[cfg(feature = "regenerate")]
        regenerate();
    }
}

#[cfg(feature = "regenerate")]
fn regenerate() {
    let root = std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let path = root.join("schema/msp.schema.json");
    let output = match std::fs::read_to_string(&path)
        .map_err(|e| msp_codegen::Error::io(msp_codegen::PROJECT_SCHEMA_PATH, &e))
        .and_then(|text| msp_codegen::generate(&text, &msp_codegen::Options::project()))
    {
        Ok(output) => output,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    if let Err(e) = msp_codegen::write(&root.join("generated"), &output.files) {
        eprintln!("{e}");
        std::process::exit(1);
    }
}

//! The names the output keeps for itself at its crate root are the ones the model makes
//! definitions and areas yield to (`model::names::{ROOT_RESERVED, ROOT_MODULES}`): a fixed
//! module or type added to the output without its name in those lists fails here, before a
//! schema that uses the name makes the output fail to compile.

use std::collections::BTreeSet;
use std::path::Path;

use msp_codegen::model::names::{ROOT_MODULES, ROOT_RESERVED};

#[test]
fn every_name_the_crate_root_keeps_for_itself_is_reserved() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema/msp.schema.json");
    let text = std::fs::read_to_string(path).unwrap();
    let doc = msp_codegen::schema::load::parse(&text).unwrap();
    let model = msp_codegen::model::build_document(&doc).unwrap();
    let output =
        msp_codegen::generate(&text, &msp_codegen::Options::new("msp.schema.json")).unwrap();
    let lib = &output.files["lib.rs"];
    let areas: BTreeSet<&str> = model.defs.iter().map(|d| d.area.as_str()).collect();
    let types: BTreeSet<&str> = model.defs.iter().map(|d| d.rust.as_str()).collect();

    let modules: Vec<&str> = lib
        .lines()
        .filter_map(|line| line.strip_prefix("pub mod ").or(line.strip_prefix("mod ")))
        .map(|rest| rest.trim_end_matches(';'))
        .filter(|module| !areas.contains(module))
        .collect();
    assert!(
        modules.len() >= 8,
        "the fixed modules were found: {modules:?}"
    );
    for module in modules {
        assert!(
            ROOT_MODULES.contains(&module),
            "the output's root module `{module}` is not in ROOT_MODULES"
        );
    }

    // `pub use module::{A, B};` re-exports of fixed types (definitions come through globs).
    let mut named = Vec::new();
    for statement in lib.split(';') {
        let Some(list) = statement.trim().strip_prefix("pub use ") else {
            continue;
        };
        if let Some((_, names)) = list.split_once('{') {
            named.extend(
                names
                    .trim_end_matches('}')
                    .split(',')
                    .map(str::trim)
                    .filter(|name| !name.is_empty() && !types.contains(name)),
            );
        }
    }
    assert!(named.len() >= 8, "the fixed types were found: {named:?}");
    for name in named {
        assert!(
            ROOT_RESERVED.contains(&name),
            "the output's root type `{name}` is not in ROOT_RESERVED"
        );
    }
}

//! Every Rust example of the workspace README compiles and runs: the `no_run` ones are doc tests
//! of msp-client's README (`msp-client/tests/examples.rs` checks them, and runs the examples
//! that hold the same lines), the others are doc tests of msp-types' crate docs
//! (`docs/msp-types.md`), where each must appear exactly as the README shows it.

fn rust_blocks(text: &str) -> Vec<&str> {
    text.split("```rust\n")
        .skip(1)
        .filter_map(|rest| rest.split_once("```").map(|(code, _)| code))
        .collect()
}

#[test]
fn the_readme_shows_doc_tested_code() {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let docs = std::fs::read_to_string(format!("{root}/docs/msp-types.md")).unwrap();
    let tested = rust_blocks(&docs);
    let shown = rust_blocks(&readme);
    assert_eq!(shown.len(), 2, "the README's msp-types examples");
    for block in shown {
        assert!(
            tested.contains(&block),
            "this README example is not in docs/msp-types.md, so no doc test runs it:\n{block}"
        );
    }
}

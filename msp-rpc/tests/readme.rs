//! The workspace README shows the same code as this crate's README, whose examples compile as
//! doc tests.

fn rust_blocks(text: &str) -> Vec<&str> {
    text.split("```rust,no_run\n")
        .skip(1)
        .filter_map(|rest| rest.split_once("```").map(|(code, _)| code))
        .collect()
}

#[test]
fn the_workspace_readme_shows_the_doc_tested_code() {
    let ours = include_str!("../README.md");
    let workspace =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let blocks = rust_blocks(ours);
    assert_eq!(blocks.len(), 2, "blocking and async");
    let shown = rust_blocks(&workspace);
    for block in blocks {
        assert!(
            shown.contains(&block),
            "the workspace README lacks this doc-tested example of msp-rpc:\n{block}"
        );
    }
}

//! The workspace README leads to this crate's README, whose examples compile as doc tests.

fn rust_blocks(text: &str) -> Vec<&str> {
    text.split("```rust,no_run\n")
        .skip(1)
        .filter_map(|rest| rest.split_once("```").map(|(code, _)| code))
        .collect()
}

#[test]
fn the_workspace_readme_points_to_the_doc_tested_examples() {
    let ours = include_str!("../README.md");
    let workspace =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    // This README's examples compile as doc tests (`ReadmeExamples` in lib.rs).
    assert_eq!(rust_blocks(ours).len(), 2, "blocking and async");
    assert!(
        workspace.contains("(msp-rpc/README.md)"),
        "the workspace README links the connection's examples"
    );
}

//! The README shows the quickstart example's code, exactly.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

#[test]
fn the_readme_shows_the_quickstart_example() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let example = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/quickstart.rs"
    ))
    .unwrap();
    let library = readme
        .split("## Library")
        .nth(1)
        .expect("a Library section");
    let shown = library
        .split("```rust\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a rust block");
    // The example opens with its doc comment and a blank line.
    let code: String = example
        .lines()
        .skip_while(|l| l.starts_with("//!") || l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(shown, code);
}

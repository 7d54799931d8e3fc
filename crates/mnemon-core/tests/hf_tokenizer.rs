//! The HuggingFace loader, on small tokenizer.json files made for these
//! tests (no model hub is reachable here; a real Qwen or Llama file loads
//! through the same code).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]
#![cfg(feature = "hf-tokenizer")]

use mnemon_core::tokens::{HfTokenizer, TokenCounter};

#[test]
fn padding_and_truncation_in_the_file_are_ignored() {
    let tok =
        HfTokenizer::from_bytes("wordlevel", include_bytes!("data/wordlevel_padded.json")).unwrap();
    // The file truncates at 2 and pads to 16; honest counts do neither.
    assert_eq!(tok.count("hello world hello"), 3);
    assert_eq!(tok.count("hello"), 1);
    assert_eq!(tok.count(""), 0);
    assert_eq!(
        tok.count("hello stranger"),
        2,
        "unknown words count as [UNK]"
    );
    assert!(tok.is_exact());
    assert_eq!(tok.name(), "hf:wordlevel");
}

#[test]
fn bpe_merges_apply() {
    let tok = HfTokenizer::from_bytes("tiny", include_bytes!("data/bpe_tiny.json")).unwrap();
    assert_eq!(tok.encode("hello"), vec![8]);
    assert_eq!(tok.encode("hel"), vec![5, 3]);
    assert_eq!(tok.count("hello hell hel"), 4);
    assert_eq!(tok.count_up_to("hello hell hel", 4), Some(4));
    assert_eq!(tok.count_up_to("hello hell hel", 3), None);
}

#[test]
fn a_broken_file_is_refused_with_its_name() {
    let err = HfTokenizer::from_bytes("models/qwen/tokenizer.json", b"{\"model\": 3}").unwrap_err();
    assert!(
        err.to_string().contains("models/qwen/tokenizer.json"),
        "{err}"
    );
}

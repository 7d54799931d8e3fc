//! mnemon's OpenAI counters must agree with tiktoken token for token.
//! tiktoken-rs is the reference here and nowhere else (a dev-dependency).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic with its message is the failure report"
)]

mod support;

use mnemon_core::tokens::{Encoding, OpenAiBpe, TokenCounter};
use std::sync::LazyLock;

use proptest::prelude::*;
use support::corpus;
use tiktoken_rs::CoreBPE;

/// Building tiktoken's tables takes a quarter second; build each once.
fn reference(e: Encoding) -> &'static CoreBPE {
    static CL: LazyLock<CoreBPE> = LazyLock::new(|| tiktoken_rs::cl100k_base().unwrap());
    static O2: LazyLock<CoreBPE> = LazyLock::new(|| tiktoken_rs::o200k_base().unwrap());
    match e {
        Encoding::Cl100kBase => &CL,
        Encoding::O200kBase => &O2,
    }
}

#[test]
fn identical_on_a_multi_megabyte_mixed_corpus_and_every_chunk() {
    let text = corpus::mixed(0x6d6e_656d_6f6e, 3 << 20);
    assert!(text.len() >= 3 << 20);
    let pieces = corpus::chunks(&text, 7, 4_096);
    for e in Encoding::ALL {
        let ours = OpenAiBpe::new(e);
        let theirs = reference(e);
        let ids = theirs.encode_ordinary(&text);
        assert_eq!(ours.count(&text), ids.len(), "{e}: whole corpus");
        assert_eq!(ours.encode(&text), ids, "{e}: ids of the whole corpus");
        for (i, piece) in pieces.iter().enumerate() {
            let expected = theirs.encode_ordinary(piece).len();
            assert_eq!(ours.count(piece), expected, "{e}: chunk {i} {piece:?}");
            assert_eq!(
                ours.count_up_to(piece, expected),
                Some(expected),
                "{e}: chunk {i} at its own count"
            );
            if expected > 0 {
                assert_eq!(
                    ours.count_up_to(piece, expected - 1),
                    None,
                    "{e}: chunk {i} one under"
                );
            }
        }
    }
}

#[test]
fn identical_on_edge_cases() {
    let cases = [
        "",
        " ",
        "\n",
        "\r\n",
        "\r\n\r\n",
        "   \n",
        "\t\t\t",
        "a",
        "'s",
        "'S",
        "I'm",
        "<|endoftext|>",
        "hello<|endoftext|>world",
        "\u{feff}bom",
        "\u{0}",
        "x\u{0}y",
        "                                                                        ",
        "1234567890123",
        "3.14159",
        "$100.00",
        "ℵ₀",
        "🧑🏿‍💻🧑🏿‍💻",
        "é",
        "e\u{301}",
    ];
    for e in Encoding::ALL {
        let ours = OpenAiBpe::new(e);
        let theirs = reference(e);
        for case in cases {
            assert_eq!(
                ours.encode(case),
                theirs.encode_ordinary(case),
                "{e}: {case:?}"
            );
        }
    }
}

/// Pieces longer than 128 bytes merge by a heap rather than by rescanning:
/// long runs of one letter, of punctuation, of whitespace, and words with
/// no space in them must come out as tiktoken's.
#[test]
fn identical_on_long_pieces() {
    let mut cases = vec![
        "a".repeat(5_000),
        "=".repeat(3_000),
        " ".repeat(2_000) + "x",
        "\n".repeat(700),
        "ab".repeat(1_500),
        "\u{4e2d}\u{6587}".repeat(400),
        "🧑🏿‍💻".repeat(100),
    ];
    // A pseudo-random identifier of 20,000 letters.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    cases.push(
        (0..20_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                char::from(b'a' + (x % 26) as u8)
            })
            .collect(),
    );
    for e in Encoding::ALL {
        let ours = OpenAiBpe::new(e);
        for case in &cases {
            let theirs = reference(e).encode_ordinary(case);
            assert_eq!(
                ours.encode(case),
                theirs,
                "{e}: {:?}…",
                &case[..40.min(case.len())]
            );
            assert_eq!(ours.count(case), theirs.len(), "{e}: count");
        }
    }
}

#[test]
fn every_token_is_its_own_id() {
    for e in Encoding::ALL {
        let ours = OpenAiBpe::new(e);
        let mut id = 0;
        while let Ok(bytes) = reference(e).decode_bytes(&[id]) {
            if let Ok(text) = std::str::from_utf8(&bytes) {
                // A token's text encodes to itself only when the pattern
                // keeps it in one piece; the ids must still be tiktoken's.
                assert_eq!(
                    ours.encode(text),
                    reference(e).encode_ordinary(text),
                    "{e}: {id}"
                );
            }
            id += 1;
        }
        assert!(id > 100_000, "{e}: {id} tokens");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn identical_on_long_words(text in "[a-z]{100,600}|[!-/]{100,400}|[a-zA-Z0-9_]{120,500}") {
        for e in Encoding::ALL {
            let ours = OpenAiBpe::new(e);
            prop_assert_eq!(ours.encode(&text), reference(e).encode_ordinary(&text));
        }
    }

    #[test]
    fn identical_on_arbitrary_text(text in "\\PC{0,300}|[ \\t\\r\\n]{0,64}|[a-z' ]{0,80}") {
        for e in Encoding::ALL {
            let ours = OpenAiBpe::new(e);
            prop_assert_eq!(ours.count(&text), reference(e).encode_ordinary(&text).len());
        }
    }

    #[test]
    fn count_up_to_agrees_with_count(text in "\\PC{0,400}", limit in 0usize..200) {
        for e in Encoding::ALL {
            let ours = OpenAiBpe::new(e);
            let n = ours.count(&text);
            prop_assert_eq!(ours.count_up_to(&text, limit), (n <= limit).then_some(n));
        }
    }
}

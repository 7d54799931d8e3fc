//! Writes OpenAI's vocabularies as the flat tables `tokens::vocab` reads in
//! place. The ranks and bytes come from tiktoken-rs (a build dependency
//! only: none of it is linked into mnemon), one token at a time, so the
//! tables hold exactly the vocabulary tiktoken encodes with.

#![allow(
    clippy::expect_used,
    clippy::panic,
    reason = "a build script reports a failure by panicking with what went wrong"
)]

use std::path::PathBuf;

/// A vocabulary: its name, tiktoken's encoder for it, its ordinary tokens.
type Encoder = (&'static str, fn() -> tiktoken_rs::CoreBPE, usize);

#[allow(dead_code)]
#[path = "src/tokens/vocab.rs"]
mod vocab;

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let encodings: [Encoder; 2] = [
        (
            "cl100k_base",
            || tiktoken_rs::cl100k_base().expect("cl100k_base"),
            100_256,
        ),
        (
            "o200k_base",
            || tiktoken_rs::o200k_base().expect("o200k_base"),
            199_998,
        ),
    ];
    for (name, load, expected) in encodings {
        let bpe = load();
        // Ordinary tokens are ranks 0.. without a gap; the first rank with
        // no bytes ends them (special tokens sit past a gap).
        let mut tokens = Vec::with_capacity(expected);
        while let Ok(bytes) = bpe.decode_bytes(&[tokens.len() as u32]) {
            tokens.push(bytes);
        }
        assert_eq!(tokens.len(), expected, "{name}: ordinary tokens");
        let table = vocab::write(&tokens).expect("every bucket finds a pilot");
        let written = vocab::Vocab::new(Box::leak(table.clone().into_boxed_slice()))
            .expect("the table reads back");
        for (rank, t) in tokens.iter().enumerate() {
            assert_eq!(written.rank(t), Some(rank as u32), "{name}: rank {rank}");
        }
        std::fs::write(out.join(format!("{name}.bpe")), table).expect("OUT_DIR is writable");
    }
    classes(&out);
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/tokens/vocab.rs");
}

/// The Unicode classes tiktoken's patterns test, per code point, as the
/// bits `tokens::split` reads (`L`, `N`, `WS`, `U`, `W`), in a two-level
/// table: a `u16` block number per 128 code points, then the distinct
/// blocks of 128 bytes. The classes are regex-syntax's, the tables the
/// regex engines (and so tiktoken-rs) match with. Also the characters each
/// letter of a contraction matches case-insensitively (`'ſ` is `'s`).
fn classes(out: &std::path::Path) {
    use regex_syntax::hir::{Class, HirKind};
    let ranges = |pat: &str| -> Vec<(u32, u32)> {
        let hir = regex_syntax::Parser::new().parse(pat).expect("a class");
        match hir.kind() {
            HirKind::Class(Class::Unicode(c)) => c
                .ranges()
                .iter()
                .map(|r| (r.start() as u32, r.end() as u32))
                .collect(),
            HirKind::Literal(l) => {
                let c = std::str::from_utf8(&l.0)
                    .expect("utf-8")
                    .chars()
                    .next()
                    .expect("a char");
                vec![(c as u32, c as u32)]
            }
            k => panic!("{pat}: not a class: {k:?}"),
        }
    };
    let bits = [
        (1u8, r"\p{L}"),
        (2, r"\p{N}"),
        (4, r"\s"),
        (8, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"),
        (16, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"),
    ];
    let mut table = vec![0u8; 0x11_0000];
    for (bit, pat) in bits {
        for (start, end) in ranges(pat) {
            for cp in start..=end {
                table[cp as usize] |= bit;
            }
        }
    }
    let mut index: Vec<u16> = Vec::new();
    let mut blocks: Vec<&[u8]> = Vec::new();
    let mut seen = std::collections::HashMap::new();
    for block in table.chunks(128) {
        let n = *seen.entry(block).or_insert_with(|| {
            blocks.push(block);
            blocks.len() - 1
        });
        index.push(u16::try_from(n).expect("fewer than 65,536 distinct blocks"));
    }
    let mut bin: Vec<u8> = index.iter().flat_map(|i| i.to_le_bytes()).collect();
    for b in blocks {
        bin.extend_from_slice(b);
    }
    std::fs::write(out.join("classes.bin"), bin).expect("OUT_DIR is writable");

    let mut folds = String::from("/// What each letter of a contraction matches, ignoring case.\n");
    for letter in ['s', 't', 'r', 'e', 'v', 'm', 'l', 'd'] {
        let chars: Vec<String> = ranges(&format!("(?i:{letter})"))
            .into_iter()
            .flat_map(|(a, b)| a..=b)
            .map(|cp| format!("'\\u{{{cp:x}}}'"))
            .collect();
        folds.push_str(&format!(
            "const FOLD_{}: &[char] = &[{}];\n",
            letter.to_ascii_uppercase(),
            chars.join(", ")
        ));
    }
    std::fs::write(out.join("folds.rs"), folds).expect("OUT_DIR is writable");
}

//! A deterministic mixed-script corpus for tokenizer parity tests and
//! benchmarks: English prose, code, CJK, emoji (with ZWJ sequences, flags and
//! skin tones), other scripts, CRLF line endings, long whitespace runs,
//! numbers and contractions. Generated, so nothing large is committed.

/// xorshift64*: small, seedable, and the same on every machine.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const WORDS: &[&str] = &[
    "the",
    "context",
    "window",
    "orchestrator",
    "memory",
    "checkpoint",
    "token",
    "budget",
    "agent",
    "session",
    "We'll",
    "don't",
    "it's",
    "they're",
    "I've",
    "summary",
    "decision",
    "Epic",
    "#12",
    "story",
    "task",
    "refresh",
    "compaction",
    "pinned",
    "facts",
    "retrieval",
    "BM25",
    "SQLite",
    "PostgreSQL",
    "Ollama",
    "naïve",
    "café",
    "résumé",
    "Zürich",
    "straße",
    "coöperate",
    "HTTP/1.1",
    "e.g.",
    "i.e.",
    "U.S.A.",
];
const CODE: &[&str] = &[
    "fn main() {\n    let x: Vec<u32> = (0..10).map(|i| i * 2).collect();\n    println!(\"{x:?}\");\n}\n",
    "def count(text: str) -> int:\n\treturn len(enc.encode(text))  # exact\n",
    "if (a != b && c >= 0x1F) { return -1; } else { i++; }\n",
    "SELECT id, kind, tokens FROM operations WHERE session_id = ?1 ORDER BY seq DESC LIMIT 50;\n",
    "const re = /^(?:[a-z0-9!#$%&'*+/=?^_`{|}~-]+)@example\\.com$/i;\n",
    "    <div class=\"zone zone--red\">{{ usage | percent }}</div>\n",
    "let s = r#\"raw \"string\" with # hashes\"#;\n",
];
const CJK: &[&str] = &[
    "上下文窗口管理器",
    "记住这个决定",
    "トークンを数える",
    "日本語のテキストです。",
    "한국어 문장입니다",
    "中文，标点符号！",
    "「引用」と『二重引用』",
    "漢字かなカナ混じり文",
];
const EMOJI: &[&str] = &[
    "😀",
    "👍🏽",
    "👨‍👩‍👧‍👦",
    "🏳️‍🌈",
    "🇯🇵",
    "🇺🇸",
    "❤️",
    "🧑🏿‍💻",
    "✅",
    "🔥🔥🔥",
    "🟢🟡🟠🔴",
];
const OTHER: &[&str] = &[
    "Привет, мир",
    "مرحبا بالعالم",
    "नमस्ते दुनिया",
    "Γειά σου κόσμε",
    "שלום עולם",
    "สวัสดีชาวโลก",
    "Ελληνικά",
    "Tiếng Việt có dấu",
];
const PUNCT: &[&str] = &[
    ".",
    ",",
    "!",
    "?",
    ";",
    ":",
    " -- ",
    "...",
    "’",
    "“quoted”",
    "(parens)",
    "[brackets]",
    "{braces}",
    "\u{a0}",
    "\u{200b}",
];

/// About `bytes` bytes of mixed text from `seed`.
pub fn mixed(seed: u64, bytes: usize) -> String {
    let mut r = Rng::new(seed);
    let mut s = String::with_capacity(bytes + 256);
    while s.len() < bytes {
        match r.below(20) {
            0..=7 => {
                for _ in 0..(3 + r.below(15)) {
                    s.push_str(r.pick(WORDS));
                    s.push(' ');
                }
                s.push_str(r.pick(PUNCT));
            }
            8..=9 => s.push_str(r.pick(CODE)),
            10..=11 => s.push_str(r.pick(CJK)),
            12 => s.push_str(r.pick(EMOJI)),
            13 => s.push_str(r.pick(OTHER)),
            14 => s.push_str("\r\n"),
            15 => {
                let run = 1 + r.below(300);
                let ch = [" ", "\t", "\n", "\r\n", " \n"][r.below(5)];
                for _ in 0..run {
                    s.push_str(ch);
                }
            }
            16 => {
                let n = r.next() % 10_000_000_000;
                s.push_str(&n.to_string());
                s.push_str(r.pick(&[" ", ".5 ", ",000 ", "% "]));
            }
            17 => s.push_str(r.pick(&["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL"])),
            18 => s.push('\n'),
            _ => {
                // Arbitrary Unicode scalars, including rare planes.
                for _ in 0..(1 + r.below(8)) {
                    let c = char::from_u32((r.next() % 0x2_FFFF) as u32).unwrap_or('\u{fffd}');
                    s.push(c);
                }
            }
        }
    }
    s
}

/// Splits `text` into pieces of 1..=`max` bytes at char boundaries.
pub fn chunks(text: &str, seed: u64, max: usize) -> Vec<&str> {
    let mut r = Rng::new(seed);
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + 1 + r.below(max)).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
}

//! `mnemon tokens count`: exact token counts for a file or stdin.

use std::io::Read;

use anyhow::{Context, Result, bail};
use mnemon_core::tokens::{ChatMessage, Encoding, TokenCounter, TokenizerSpec, count_chat};
use serde_json::json;

use crate::cli::{CountArgs, EncodingArg, Global};
use crate::output::{BOLD, DIM, json, thousands};
use crate::project::{Project, load_hf};

pub fn count(g: &Global, args: &CountArgs) -> Result<()> {
    let project = Project::find(g.dir.as_deref())?;
    // The project's chat format applies unless another model is named.
    let setup = project.setup(args.model.as_deref())?;
    let counter: Box<dyn TokenCounter> = match (&args.encoding, &args.tokenizer) {
        (Some(EncodingArg::Cl100kBase), _) => {
            project.counter(&TokenizerSpec::OpenAi(Encoding::Cl100kBase))?
        }
        (Some(EncodingArg::O200kBase), _) => {
            project.counter(&TokenizerSpec::OpenAi(Encoding::O200kBase))?
        }
        (None, Some(path)) => load_hf(path)?,
        (None, None) => project.counter(&setup.tokenizer)?,
    };

    // With a limit, reading stops once the input is certainly over it: no
    // token is longer than MAX_TOKEN_BYTES, so more bytes than limit × that
    // are more tokens than the limit, and an endless stream ends there.
    let cap = match (args.limit, args.chat) {
        (Some(limit), false) => (limit as u64).saturating_mul(MAX_TOKEN_BYTES),
        _ => MAX_INPUT_BYTES,
    };
    let (mut bytes, source) = read_input(args, cap)?;
    let over = bytes.len() as u64 > cap;
    if over && (args.limit.is_none() || args.chat) {
        bail!(
            "{source} is larger than {} bytes, more than mnemon counts in one go: split it, or give --limit N to check that it fits",
            thousands(MAX_INPUT_BYTES)
        );
    }
    if over {
        // Cut at a character boundary; the rest is not needed.
        bytes.truncate(cap as usize);
        while !bytes.is_empty()
            && std::str::from_utf8(&bytes).is_err_and(|e| e.error_len().is_none())
        {
            bytes.pop();
        }
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        anyhow::anyhow!("{source} is not UTF-8 text (the first invalid byte is at offset {at}); convert it first, for example with `iconv -t UTF-8`")
    })?;

    let (tokens, messages) = if args.chat {
        let messages: Vec<ChatMessage> = serde_json::from_str(&text).with_context(|| {
            format!("{source} is not a JSON array of chat messages like [{{\"role\": \"user\", \"content\": \"hi\"}}]")
        })?;
        (
            Some(count_chat(counter.as_ref(), setup.chat_format, &messages)),
            Some(messages.len()),
        )
    } else if let Some(limit) = args.limit {
        let counted = if over {
            None
        } else {
            counter.count_up_to(&text, limit)
        };
        (counted, None)
    } else {
        (Some(counter.count(&text)), None)
    };
    let fits = args.limit.map(|limit| tokens.is_some_and(|t| t <= limit));

    if g.json {
        return json(&json!({
            "tokens": tokens,
            "limit": args.limit,
            "fits": fits,
            "tokenizer": counter.name(),
            "exact": counter.is_exact(),
            "chat_format": args.chat.then_some(&setup.chat_format_name),
            "messages": messages,
            "bytes": text.len(),
            "chars": text.chars().count(),
        }));
    }
    let kind = if counter.is_exact() {
        "exact"
    } else {
        "estimate"
    };
    let detail = format!(
        "{}, {kind}; {} bytes",
        counter.name(),
        thousands(text.len() as u64)
    );
    match (tokens, args.limit) {
        (Some(n), Some(limit)) => println!(
            "{BOLD}{}{BOLD:#} tokens: fits in {}  {DIM}({detail}){DIM:#}",
            thousands(n as u64),
            thousands(limit as u64)
        ),
        (None, Some(limit)) => {
            println!(
                "more than {} tokens: does not fit  {DIM}({detail}){DIM:#}",
                thousands(limit as u64)
            )
        }
        (Some(n), None) => {
            let chat = messages
                .map(|m| format!(", {m} messages framed as {}", setup.chat_format_name))
                .unwrap_or_default();
            println!(
                "{BOLD}{}{BOLD:#} tokens  {DIM}({detail}{chat}){DIM:#}",
                thousands(n as u64)
            )
        }
        (None, None) => unreachable!("a count without a limit always has a value"),
    }
    Ok(())
}

/// Longer than any token of the supported tokenizers (OpenAI's longest
/// are a few hundred bytes of whitespace or punctuation).
const MAX_TOKEN_BYTES: u64 = 1_024;
/// The most a count without a limit reads.
const MAX_INPUT_BYTES: u64 = 512 * 1024 * 1024;

/// The input, read up to `cap + 1` bytes (one more tells that it is over).
fn read_input(args: &CountArgs, cap: u64) -> Result<(Vec<u8>, String)> {
    match args.file.as_deref() {
        Some(p) if p.as_os_str() != "-" => {
            if p.is_dir() {
                bail!(
                    "{} is a directory; give a file, or - for standard input",
                    p.display()
                );
            }
            let mut bytes = Vec::new();
            std::fs::File::open(p)
                .and_then(|f| f.take(cap.saturating_add(1)).read_to_end(&mut bytes))
                .with_context(|| format!("cannot read {}", p.display()))?;
            Ok((bytes, p.display().to_string()))
        }
        _ => {
            let mut bytes = Vec::new();
            std::io::stdin()
                .lock()
                .take(cap.saturating_add(1))
                .read_to_end(&mut bytes)
                .context("cannot read standard input")?;
            Ok((bytes, "standard input".to_string()))
        }
    }
}

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

    let (bytes, source) = read_input(args)?;
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
        (counter.count_up_to(&text, limit), None)
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
        (Some(n), Some(limit)) => anstream::println!(
            "{BOLD}{}{BOLD:#} tokens: fits in {}  {DIM}({detail}){DIM:#}",
            thousands(n as u64),
            thousands(limit as u64)
        ),
        (None, Some(limit)) => {
            anstream::println!(
                "more than {} tokens: does not fit  {DIM}({detail}){DIM:#}",
                thousands(limit as u64)
            )
        }
        (Some(n), None) => {
            let chat = messages
                .map(|m| format!(", {m} messages framed as {}", setup.chat_format_name))
                .unwrap_or_default();
            anstream::println!(
                "{BOLD}{}{BOLD:#} tokens  {DIM}({detail}{chat}){DIM:#}",
                thousands(n as u64)
            )
        }
        (None, None) => unreachable!("a count without a limit always has a value"),
    }
    Ok(())
}

fn read_input(args: &CountArgs) -> Result<(Vec<u8>, String)> {
    match args.file.as_deref() {
        Some(p) if p.as_os_str() != "-" => {
            if p.is_dir() {
                bail!(
                    "{} is a directory; give a file, or - for standard input",
                    p.display()
                );
            }
            let bytes = std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?;
            Ok((bytes, p.display().to_string()))
        }
        _ => {
            let mut bytes = Vec::new();
            std::io::stdin()
                .read_to_end(&mut bytes)
                .context("cannot read standard input")?;
            Ok((bytes, "standard input".to_string()))
        }
    }
}

//! What goes upstream: the request as sent while it fits, else the same
//! request with its older turns compacted into one fenced block.
//!
//! Everything here is blocking work (the store, the tokenizer, the
//! summarizer) and runs on the blocking pool, one request of a
//! conversation at a time.

use mnemon::mnemon_core::config::{Inject, ProxySection};
use mnemon::mnemon_core::memory::MessageQuery;
use mnemon::mnemon_core::tokens::ChatMessage;
use mnemon::mnemon_core::window::Zone;
use mnemon::{ContextQuery, Format, Mnemon, NewMessage, NewOperation, Role};
use serde_json::json;
use serde_json::value::RawValue;

use super::turns::{known_prefix, turn_hash};
use super::wire::{MEDIA_TOKENS, ProxyError, Request, Turn, Wire, raw_array};

/// What the proxy knows of one conversation between requests.
#[derive(Debug, Default)]
pub struct Conversation {
    /// The recorded turns, oldest first: their hash and message `seq`.
    /// Read from the store the first time the conversation is seen.
    recorded: Option<Vec<(u64, i64)>>,
    /// The request whose answer was recorded last (hash of its turns): a
    /// retry of it records no second answer.
    answered: Option<u64>,
    /// The compaction in force: its prefix is sent again, byte for byte,
    /// until the conversation outgrows it.
    compacted: Option<Compacted>,
    /// The most the upstream took, on mnemon's count, as a refusal for
    /// length showed it: kept, so the next requests are not refused too.
    upstream_cap: Option<u64>,
}

#[derive(Debug, Clone)]
struct Compacted {
    /// How many of the conversation's turns the block stands for.
    cut: usize,
    /// Their hash, to know the client still sends the same history.
    replaced: u64,
    block: String,
}

/// A request ready to go upstream.
#[derive(Debug)]
pub struct Outgoing {
    pub body: Vec<u8>,
    /// Tokens of what is sent, counted with the project's tokenizer.
    pub tokens: u64,
    pub compacted: bool,
    pub zone: Zone,
    /// The hash of the request's turns, for recording its answer once.
    pub request_hash: u64,
    /// The room asked for the answer.
    pub answer: u64,
}

fn store_error(e: mnemon::Error) -> ProxyError {
    ProxyError::new(
        axum::http::StatusCode::SERVICE_UNAVAILABLE,
        "api_error",
        format!("mnemon could not use the project's memory: {e}"),
    )
}

fn hash_all(turns: &[&Turn]) -> u64 {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut h = DefaultHasher::new();
    for t in turns {
        turn_hash(t.role, &t.text).hash(&mut h);
    }
    h.finish()
}

/// Records the request's new turns in the conversation's session.
/// Returns the `seq` of each of the conversation's turns (`None` for a
/// turn older than anything recorded).
pub fn record_new(
    m: &Mnemon,
    title: &str,
    conv: &mut Conversation,
    turns: &[&Turn],
) -> Result<Vec<Option<i64>>, ProxyError> {
    if conv.recorded.is_none() {
        let session = match m.session(None) {
            Ok(s) => s,
            Err(mnemon::Error::Store(mnemon::mnemon_core::memory::StoreError::NotFound {
                ..
            })) => m.start_session(Some(title)).map_err(store_error)?.value,
            Err(e) => return Err(store_error(e)),
        };
        let mut messages = m
            .messages(&MessageQuery {
                session_id: Some(session.id),
                limit: Some(mnemon::MAX_LIST as usize),
                ..MessageQuery::default()
            })
            .map_err(store_error)?;
        messages.sort_by_key(|m| m.seq);
        conv.recorded = Some(
            messages
                .iter()
                .map(|m| (turn_hash(m.role, &m.content), m.seq))
                .collect(),
        );
    }
    let recorded = conv.recorded.get_or_insert_with(Vec::new);
    let hashes: Vec<u64> = turns.iter().map(|t| turn_hash(t.role, &t.text)).collect();
    let known: Vec<u64> = recorded.iter().map(|r| r.0).collect();
    let start = known_prefix(&known, &hashes);
    // The known turns' seqs, matched from the end of what is recorded.
    let mut seqs: Vec<Option<i64>> = vec![None; turns.len()];
    let mut r = recorded.len();
    for i in (0..start).rev() {
        while r > 0 && recorded[r - 1].0 != hashes[i] {
            r -= 1;
        }
        if r == 0 {
            break;
        }
        seqs[i] = Some(recorded[r - 1].1);
        r -= 1;
    }
    for (i, t) in turns.iter().enumerate().skip(start) {
        if t.text.trim().is_empty() {
            continue;
        }
        let w = m
            .message(NewMessage::new(t.role, t.text.clone()))
            .map_err(|e| match e.class() {
                mnemon::ErrorClass::Input => ProxyError::too_long(format!(
                    "messages: a turn cannot be kept in the window: {e}"
                )),
                _ => store_error(e),
            })?;
        recorded.push((hashes[i], w.value.seq));
        seqs[i] = Some(w.value.seq);
    }
    Ok(seqs)
}

/// The answer, recorded once per request, and the upstream's count of
/// the prompt reported as the conversation's usage.
pub fn record_answer(
    m: &Mnemon,
    conv: &mut Conversation,
    request_hash: u64,
    text: &str,
    prompt_tokens: Option<u64>,
    sent_tokens: u64,
) -> Result<(), mnemon::Error> {
    if conv.answered != Some(request_hash) && !text.trim().is_empty() {
        let w = m.message(NewMessage::new(Role::Assistant, text))?;
        if let Some(r) = conv.recorded.as_mut() {
            r.push((turn_hash(Role::Assistant, text), w.value.seq));
        }
        conv.answered = Some(request_hash);
    }
    if let Some(prompt) = prompt_tokens
        && sent_tokens > 0
    {
        // The server counted what was sent; calibration compares with the
        // live context, so the report is scaled to it (as `ask` does).
        let live = m.status()?.local_usage;
        let scaled = (u128::from(prompt) * u128::from(live) / u128::from(sent_tokens)) as u64;
        m.report_usage(scaled.max(1))?;
    }
    Ok(())
}

/// Counts what a list of turns costs as a request, media included.
fn cost(m: &Mnemon, system: &str, turns: &[&Turn], extra: &[&str]) -> Result<u64, ProxyError> {
    let mut msgs: Vec<ChatMessage> = Vec::new();
    if !system.is_empty() {
        msgs.push(counted("system", system));
    }
    msgs.extend(extra.iter().map(|b| counted("system", b)));
    msgs.extend(turns.iter().map(|t| counted(&t.wire_role, &t.text)));
    let media: u64 = turns.iter().map(|t| t.media * MEDIA_TOKENS).sum();
    Ok(m.count_chat(&msgs).map_err(store_error)? + media)
}

/// Tokens of the request's tool definitions, as sent.
fn tools_cost(m: &Mnemon, req: &Request) -> Result<u64, ProxyError> {
    if req.tools.is_empty() {
        return Ok(0);
    }
    m.count_tokens(&req.tools).map_err(store_error)
}

/// Tokens of the whole request as the client sent it: system prompt,
/// every turn with its framing, media and tool definitions. What
/// `count_tokens` answers and what pass-through is decided on.
pub fn request_tokens(m: &Mnemon, req: &Request) -> Result<u64, ProxyError> {
    let all: Vec<&Turn> = req.turns.iter().collect();
    Ok(cost(m, &req.system, &all, &[])? + tools_cost(m, req)?)
}

fn counted(role: &str, content: &str) -> ChatMessage {
    ChatMessage {
        role: role.into(),
        content: content.into(),
        name: None,
    }
}

/// The first token count of `zone`.
fn zone_start(m: &Mnemon, zone: Zone) -> u64 {
    let t = m.setup().window.token_thresholds();
    match zone {
        Zone::Green => 0,
        Zone::Yellow => t.yellow_from,
        Zone::Orange => t.orange_from,
        Zone::Red => t.red_from,
    }
}

/// The smallest block worth a compaction's summary and retrieval.
const MIN_BLOCK: u64 = 48;

/// Decides what goes upstream for `req` (its new turns already recorded,
/// `seqs` their messages). `harder`: the upstream refused the last try for
/// length, and this is the most it takes, on mnemon's count with the
/// answer's room: the request is compacted to fit well under it.
#[allow(clippy::too_many_arguments)]
pub fn outgoing(
    m: &Mnemon,
    proxy: &ProxySection,
    answer_default: u64,
    conv: &mut Conversation,
    req: &Request,
    seqs: &[Option<i64>],
    conversation: &str,
    harder: Option<u64>,
) -> Result<Outgoing, ProxyError> {
    let window = &m.setup().window;
    let effective = window.effective_max();
    let answer = req.max_tokens.unwrap_or(answer_default);
    let limit = zone_start(m, proxy.compact_at);
    // What no request may reach: the zone, or what the upstream showed.
    if harder.is_some() {
        conv.upstream_cap = harder;
    }
    let ceiling = conv.upstream_cap.map_or(limit, |cap| cap.min(limit));
    let standing: Vec<&Turn> = req.turns.iter().filter(|t| t.standing).collect();
    let talk: Vec<&Turn> = req.turns.iter().filter(|t| !t.standing).collect();
    let request_hash = hash_all(&talk);
    let tools = tools_cost(m, req)?;
    let last_user = talk
        .iter()
        .rev()
        .find(|t| t.opens)
        .map(|t| t.text.clone())
        .unwrap_or_default();
    let injected = inject(m, proxy, &last_user)?;
    let extra: Vec<&str> = injected.iter().map(String::as_str).collect();
    let all: Vec<&Turn> = req.turns.iter().collect();
    let whole = cost(m, &req.system, &all, &extra)? + tools;
    let done = |body: Vec<u8>, tokens: u64, compacted: bool| Outgoing {
        body,
        tokens,
        compacted,
        zone: window.zone(tokens + answer),
        request_hash,
        answer,
    };
    let compacted = |kept: &[&Turn], block: &str, tokens: u64| {
        let frame = Frame {
            m,
            req,
            standing: &standing,
            extra: &extra,
            question: &last_user,
            answer,
            limit: ceiling,
        };
        frame.finish(kept, block, seqs_of(seqs, &talk, kept), tokens, &done)
    };
    if harder.is_none() && whole + answer < ceiling {
        return Ok(done(
            build(req, &standing, &extra, &all, None, None),
            whole,
            false,
        ));
    }
    // The compaction in force, while the client sends the same history
    // and what follows it still fits: the same prefix as last time.
    let in_force = conv
        .compacted
        .as_ref()
        .filter(|c| c.cut < talk.len() && hash_all(&talk[..c.cut]) == c.replaced)
        .cloned();
    if harder.is_none()
        && let Some(c) = &in_force
    {
        let kept = &talk[c.cut..];
        let mut blocks = extra.clone();
        blocks.push(&c.block);
        let tokens = cost(m, &req.system, &[&standing[..], kept].concat(), &blocks)? + tools;
        if tokens + answer + recall_room(&last_user) < ceiling {
            return compacted(kept, &c.block, tokens);
        }
    }
    // A new compaction: what stays verbatim, then what stands for the rest.
    let fixed = cost(m, &req.system, &standing, &extra)? + tools;
    let mut target = zone_start(m, Zone::Yellow).max(limit / 2);
    if let Some(cap) = conv.upstream_cap {
        target = target.min(cap * 3 / 4);
    }
    let room = target.saturating_sub(answer + fixed);
    let each: Vec<u64> = talk
        .iter()
        .map(|t| cost(m, "", &[t], &[]).map(|c| c.saturating_sub(cost_of_nothing(m))))
        .collect::<Result<_, _>>()?;
    let suffix = |i: usize| each[i..].iter().sum::<u64>();
    // Each compaction cuts later than the one in force.
    let from = in_force.as_ref().map_or(1, |c| c.cut + 1);
    let mut cuts: Vec<usize> = (from..talk.len()).filter(|&i| talk[i].opens).collect();
    if cuts.is_empty()
        && let Some(c) = &in_force
    {
        cuts.push(c.cut);
    }
    let cut = cuts
        .iter()
        .copied()
        .find(|&i| suffix(i) <= room / 2)
        .or_else(|| cuts.last().copied());
    let hard_room = conv
        .upstream_cap
        .unwrap_or(effective)
        .min(effective)
        .saturating_sub(answer + fixed);
    let Some(cut) = cut.filter(|&i| suffix(i) <= hard_room) else {
        return Err(ProxyError::too_long(format!(
            "this request needs {} tokens with {answer} for the answer, but the window mnemon manages is {effective} tokens and its newest turns alone do not fit; send a shorter message, ask for fewer max_tokens, or serve the model with a larger window",
            whole + answer
        )));
    };
    let kept = &talk[cut..];
    let budget = room.saturating_sub(suffix(cut)).max(
        // Room the target does not give may still be in the window.
        if harder.is_some() {
            0
        } else {
            MIN_BLOCK.min(hard_room - suffix(cut))
        },
    );
    let block = if budget >= MIN_BLOCK {
        compaction_block(
            m,
            proxy,
            &last_user,
            budget,
            seqs.get(cut).copied().flatten(),
        )?
    } else {
        String::new()
    };
    let mut blocks = extra.clone();
    blocks.push(&block);
    let tokens = cost(m, &req.system, &[&standing[..], kept].concat(), &blocks)? + tools;
    let _ = m.record(NewOperation::new(
        "proxy_compaction",
        json!({
            "conversation": conversation,
            "replaced_turns": cut,
            "kept_turns": kept.len(),
            "tokens_before": whole,
            "tokens_after": tokens,
            "block_tokens": m.count_tokens(&block).unwrap_or(0),
            "upstream_cap": harder,
        }),
    ));
    conv.compacted = Some(Compacted {
        cut,
        replaced: hash_all(&talk[..cut]),
        block: block.clone(),
    });
    compacted(kept, &block, tokens)
}

/// The `seq` of the first kept turn: retrieval leaves it and what follows
/// out, as they are sent verbatim.
fn seqs_of(seqs: &[Option<i64>], talk: &[&Turn], kept: &[&Turn]) -> Option<i64> {
    let first = talk.len() - kept.len();
    seqs.get(first).copied().flatten()
}

/// What every compacted request of one call shares.
struct Frame<'a> {
    m: &'a Mnemon,
    req: &'a Request,
    standing: &'a [&'a Turn],
    extra: &'a [&'a str],
    /// The last user turn.
    question: &'a str,
    answer: u64,
    limit: u64,
}

impl Frame<'_> {
    /// A compacted request, with the older turns the last user turn needs
    /// (retrieved now, in the room the zone leaves) just before that turn:
    /// everything ahead of it is the compaction's stable prefix.
    fn finish(
        &self,
        kept: &[&Turn],
        block: &str,
        first_kept: Option<i64>,
        mut tokens: u64,
        done: &dyn Fn(Vec<u8>, u64, bool) -> Outgoing,
    ) -> Result<Outgoing, ProxyError> {
        let Frame {
            m,
            req,
            standing,
            extra,
            question,
            answer,
            limit,
        } = *self;
        let spare = limit.saturating_sub(tokens + answer + RECALL_MARGIN);
        let budget = spare.min(m.setup().window.effective_max() * RECALL_SHARE / 100);
        let at = kept.iter().rposition(|t| t.opens);
        let mut recall = None;
        if budget >= MIN_BLOCK
            && let Some(at) = at
            && !question.trim().is_empty()
        {
            let text = m
                .context(&ContextQuery {
                    budget: Some(budget),
                    preset: "recall".into(),
                    query: Some(question.to_string()),
                    format: Format::Markdown,
                    messages_before: first_kept.map(|s| s as u64),
                })
                .map(|a| a.text)
                .unwrap_or_default();
            if !text.trim().is_empty() {
                tokens += cost(m, "", &[], &[&text])?.saturating_sub(cost_of_nothing(m));
                recall = Some((at, text));
            }
        }
        let body = build(
            req,
            standing,
            extra,
            kept,
            Some(block),
            recall.as_ref().map(|(i, t)| (*i, t.as_str())),
        );
        Ok(done(body, tokens, true))
    }
}

/// The most of the window a request's own retrieval may take (percent).
const RECALL_SHARE: u64 = 15;

/// Tokens kept clear of the compaction threshold when retrieval is added.
const RECALL_MARGIN: u64 = 16;

/// The least retrieval an in-force compaction must leave room for. The
/// prefix it keeps is sent again while the conversation grows into the
/// room above it; without a floor, the last requests before the next
/// compaction would go without the older turns their question asks for
/// (a fact of turn 2, asked at turn 150), so a new compaction makes room.
const RECALL_FLOOR: u64 = 2 * MIN_BLOCK;

/// What a request must leave free, besides its answer, to reuse the
/// compaction in force: room for its question's retrieval, if it asks one.
fn recall_room(question: &str) -> u64 {
    if question.trim().is_empty() {
        0
    } else {
        RECALL_MARGIN + RECALL_FLOOR
    }
}

/// The framing a request costs with no messages (the reply priming).
fn cost_of_nothing(m: &Mnemon) -> u64 {
    m.count_chat(&[]).unwrap_or(0)
}

/// The block that stands for the older turns: the conversation's summary
/// brought up to date (by the LLM summarizer where `[llm]` is set, which
/// works in stages that fit its window, else extractively), the standing
/// facts, and the older turns retrieval finds for the last user turn.
fn compaction_block(
    m: &Mnemon,
    proxy: &ProxySection,
    question: &str,
    budget: u64,
    first_kept: Option<i64>,
) -> Result<String, ProxyError> {
    let llm = proxy.summary == mnemon::mnemon_core::config::CompactionSummary::Llm;
    if let Err(e) = m.refresh_with(llm) {
        tracing::warn!(error = %e, "the summary was not brought up to date before a compaction");
    }
    let out = m.context(&ContextQuery {
        budget: Some(budget),
        preset: "compaction".into(),
        query: Some(question.to_string()).filter(|q| !q.trim().is_empty()),
        format: Format::Markdown,
        messages_before: first_kept.map(|s| s as u64),
    });
    match out {
        Ok(a) => Ok(a.text),
        Err(e) if e.class() == mnemon::ErrorClass::Storage => Err(store_error(e)),
        Err(e) => {
            tracing::warn!(error = %e, "no memory block for this compaction");
            Ok(String::new())
        }
    }
}

/// What `[proxy] inject` adds after the system prompt, if anything.
fn inject(m: &Mnemon, proxy: &ProxySection, question: &str) -> Result<Vec<String>, ProxyError> {
    let (preset, query) = match proxy.inject {
        Inject::None => return Ok(Vec::new()),
        Inject::Hot => ("hot", None),
        Inject::Context => ("conversation", Some(question.to_string())),
    };
    let out = m
        .context(&ContextQuery {
            budget: Some(proxy.inject_budget),
            preset: preset.into(),
            query: query.filter(|q| !q.trim().is_empty()),
            format: Format::Markdown,
            messages_before: None,
        })
        .map_err(store_error)?;
    Ok(Some(out.text)
        .filter(|t| !t.trim().is_empty())
        .into_iter()
        .collect())
}

/// The body sent upstream: the request as the client wrote it when
/// nothing changes; else its messages rebuilt from the raw ones kept,
/// with the memory blocks after the standing instructions.
fn build(
    req: &Request,
    standing: &[&Turn],
    injected: &[&str],
    kept: &[&Turn],
    block: Option<&str>,
    recall: Option<(usize, &str)>,
) -> Vec<u8> {
    let untouched = injected.is_empty() && block.is_none() && kept.len() == req.turns.len();
    if untouched {
        return req.body.clone();
    }
    let mut blocks: Vec<Box<RawValue>> = injected
        .iter()
        .map(|b| req.wire.memory_message(b))
        .collect();
    if let Some(b) = block.filter(|b| !b.trim().is_empty()) {
        blocks.push(req.wire.memory_message(b));
    }
    let mut items: Vec<&RawValue> = Vec::new();
    // OpenAI's standing messages lead; Anthropic's system is its own field.
    let kept_is_all = kept.len() == req.turns.len();
    if req.wire == Wire::OpenAi && !kept_is_all {
        items.extend(standing.iter().map(|t| &*t.raw));
    }
    let lead = if kept_is_all {
        // Nothing cut: the blocks go after the leading standing messages.
        kept.iter().take_while(|t| t.standing).count()
    } else {
        0
    };
    items.extend(kept[..lead].iter().map(|t| &*t.raw));
    items.extend(blocks.iter().map(|b| &**b));
    let recall_message = recall.map(|(at, text)| (at, req.wire.memory_message(text)));
    for (i, t) in kept.iter().enumerate().skip(lead) {
        if let Some((at, m)) = &recall_message
            && *at == i
        {
            items.push(m);
        }
        items.push(&t.raw);
    }
    let mut fields = super::wire::Fields(
        req.fields
            .0
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    );
    fields.set("messages", raw_array(&items));
    fields.to_bytes()
}

#[cfg(test)]
mod tests;

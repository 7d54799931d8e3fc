//! Retrieval across every tier: BM25 (SQLite's for the small indexes,
//! mnemon's own from postings for the large ones, see [`super::postings`]),
//! combined with recency and importance, plus one round of query expansion
//! for questions whose answer spans two records.

use std::collections::HashMap;

use super::postings::{Word, last_rows, read_word, read_words, score_log};

use crate::compress::sentences::terms;
use crate::memory::StoreResult;

pub use super::seam::{
    ALL_SOURCES, Budget, Hit, HitSource, LOG_SOURCES, Ranked, SMALL_SOURCES, SearchStore,
};

/// Words in more than this share of records say little about relevance and
/// make the index score nearly every row; retrieval leaves them out…
const COMMON: f64 = 0.15;
/// …once there are enough records for a share to mean something.
const COMMON_FROM: u64 = 1_000;

/// The words worth searching for.
pub fn query_terms(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in terms(query) {
        let t = t.trim_start_matches('#').to_string();
        if t.len() > 1 && !out.contains(&t) && !QUESTION_WORDS.contains(&t.as_str()) {
            out.push(t);
        }
    }
    out
}

/// Whether `query` asks about time: when something happened, how many
/// days or weeks between two things, what came before or after a date.
pub fn asks_about_time(query: &str) -> bool {
    const CUES: &[&str] = &[
        "when",
        "date",
        "dates",
        "day",
        "days",
        "week",
        "weeks",
        "month",
        "months",
        "year",
        "years",
        "ago",
        "before",
        "after",
        "since",
        "until",
        "yesterday",
        "today",
        "deadline",
        "timeline",
        "tonight",
        "weekend",
    ];
    let lower = query.to_lowercase();
    lower.contains("how long")
        || lower
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| CUES.contains(&w) || super::when::WEEKDAYS.contains(&w))
}

/// How query words are looked up: by their English stem as a prefix
/// ("organized" finds "organize", "organizing" and "organization";
/// "tasks" finds "task"), when the stem is long enough to say something;
/// short words and numbers as they are ("api", "ui", "4242", which must
/// not find "42420"), and names with digits as prefixes ("argon2" finds
/// "argon2id"). The index stays a plain word
/// index, so no record is re-indexed, and BM25 counts a word's forms as
/// one term.
pub fn search_words(terms: &[String]) -> Vec<String> {
    let stemmer = rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English);
    let mut out: Vec<String> = Vec::new();
    for t in terms {
        let numeric = t.chars().all(|c| c.is_ascii_digit());
        let alphanumeric = !numeric && t.chars().any(|c| c.is_ascii_digit());
        let stem = stemmer.stem(t);
        let w = if numeric || t.chars().count() < 4 {
            t.clone()
        } else if alphanumeric {
            // A name with a version in it: "argon2" finds "argon2id",
            // "utf8" finds "utf8mb4". Stemming it would be meaningless.
            format!("{t}*")
        } else if stem.chars().count() >= 4 && t.starts_with(stem.as_ref()) {
            format!("{stem}*")
        } else {
            format!("{t}*")
        };
        if !out.contains(&w) {
            out.push(w);
        }
    }
    out
}

/// Recency's share of a record's score for a question put by no one in
/// particular: the later of two similar matches wins, which a knowledge
/// update needs.
const RECENCY: f64 = 0.2;

/// Words by which a question is put by someone in the conversation, to
/// another in it: "how long did I say…", "what did you recommend…", "what
/// did we decide…". "us" is left out: it is as often the country.
const PERSONS: &[&str] = &["i", "my", "me", "you", "your", "we", "our"];

/// Recency's share of the score for `query`. A question asked from inside
/// the conversation is about something said in it, early as often as late:
/// ranked with recency, an early turn that matches best loses to a later,
/// weaker match (BEAM's "how long did I say the entire project is
/// expected to take?", answered near the start of a 194-turn chat). Such a
/// question is ranked by relevance and importance alone; later records
/// still win exact ties. Of recency's shares 0, 0.05, 0.1 and 0.2 for it, 0
/// measured best on the development parts (BENCHMARKS.md, 2026-12-03).
pub(crate) fn recency_weight(query: &str) -> f64 {
    let lower = query.to_lowercase();
    let inside = lower
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| PERSONS.contains(&w));
    if inside { 0.0 } else { RECENCY }
}

const QUESTION_WORDS: &[&str] = &[
    "what", "when", "where", "who", "whom", "which", "why", "how", "does", "did", "do", "is",
    "are", "was", "were", "can", "could", "would", "should", "now", "about", "there", "their",
    "they", "them", "he", "she", "his", "her", "my", "me", "your",
];

/// BM25 relevance × (0.7 + `recency` × lateness + 0.1 importance), where
/// `recency` is [`recency_weight`]'s and lateness runs from 0 (the oldest
/// hit) to 1 (the newest): relevance decides, and among similar
/// matches the later (when recency counts) and more important record wins.
///
/// Relevance is BM25 over the best hit. The two logs are scored by one
/// formula (see [`super::postings`]) and share one scale. A small index's
/// BM25 is not comparable to theirs (its one hot item scores near zero), so
/// its hits are normalized to its own best, times the share of `words` they
/// contain: the best of three documents is not a good match only for being
/// the best of three.
pub fn rank(hits: Vec<Hit>, words: &[Word], recency: f64) -> Vec<Ranked> {
    if hits.is_empty() {
        return Vec::new();
    }
    let is_log = |s: HitSource| LOG_SOURCES.contains(&s);
    let best = |src: HitSource| {
        hits.iter()
            .filter(|h| {
                if is_log(src) {
                    is_log(h.source)
                } else {
                    h.source == src
                }
            })
            .map(|h| -h.bm25)
            .fold(f64::MIN_POSITIVE, f64::max)
    };
    let bests: Vec<(HitSource, f64)> = ALL_SOURCES.into_iter().map(|s| (s, best(s))).collect();
    let (oldest, newest) = hits.iter().fold((i64::MAX, i64::MIN), |(a, b), h| {
        (a.min(h.at.0), b.max(h.at.0))
    });
    let span = (newest - oldest).max(1) as f64;
    let mut out: Vec<Ranked> = hits
        .into_iter()
        .map(|h| {
            let best = bests
                .iter()
                .find(|(s, _)| *s == h.source)
                .map_or(1.0, |(_, b)| *b);
            let mut rel = ((-h.bm25).max(0.0) / best).min(1.0);
            if !is_log(h.source) && !words.is_empty() {
                rel *= coverage(&h.text, words);
            }
            let late = (h.at.0 - oldest) as f64 / span;
            let score = rel * (0.7 + recency * late + 0.1 * h.importance.clamp(0.0, 1.0));
            Ranked { hit: h, score }
        })
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.hit.at.cmp(&a.hit.at)));
    out
}

/// The share of `words` (a trailing `*` makes one a prefix) found in `text`.
fn coverage(text: &str, words: &[Word]) -> f64 {
    let lower = text.to_lowercase();
    let toks: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let found = words
        .iter()
        .filter(|w| match w.word.strip_suffix('*') {
            Some(p) => toks.iter().any(|t| t.starts_with(p)),
            None => toks.iter().any(|t| *t == w.word),
        })
        .count();
    found as f64 / words.len() as f64
}

/// The record counts of words retrieval found common, remembered while the
/// logs grow by less than a tenth. A common word is left out of the search,
/// so its postings need not be read again only to learn that, and reading
/// a prefix's postings merges every posting under it (every record, for
/// "fail*" in a log of failures). Rare words are not kept: their postings
/// are read for the search anyway.
#[derive(Debug)]
pub struct CommonWords(crate::cache::Bounded<(u64, u64)>);

/// The cache starts over past this many words.
const COMMON_WORDS_MAX: usize = 4_096;

impl Default for CommonWords {
    fn default() -> Self {
        CommonWords(crate::cache::Bounded::new(COMMON_WORDS_MAX))
    }
}

impl CommonWords {
    fn get(&self, word: &str, rows: u64) -> Option<u64> {
        self.0
            .get(word)
            .filter(|(_, at)| rows <= at + at / 10)
            .map(|(docs, _)| docs)
    }

    fn put(&self, word: &str, docs: u64, rows: u64) {
        self.0.insert(word, (docs, rows));
    }
}

/// How many of the best hits the expansion round takes names from.
const EXPANSION_HITS: usize = 5;

/// How many names from the best hits the expansion round searches for.
const EXPANSION_NAMES: usize = 6;

/// Capitalized words of three letters or more that do not open a sentence
/// (or a `speaker:` line), lower-cased: "Fun fact, Foxglove Media has…"
/// gives `foxglove`, `media`.
fn names_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut opens = true;
    for token in text.split_inclusive(|c: char| !c.is_alphanumeric()) {
        let word: &str = token.trim_end_matches(|c: char| !c.is_alphanumeric());
        let end = &token[word.len()..];
        let capital = word.chars().next().is_some_and(char::is_uppercase);
        if capital && !opens && word.chars().count() > 2 {
            let lower = word.to_lowercase();
            if !QUESTION_WORDS.contains(&lower.as_str()) && !out.contains(&lower) {
                out.push(lower);
            }
        }
        if !word.is_empty() || !end.trim().is_empty() {
            opens = end.contains(['.', '!', '?', ':', '\n']);
        }
    }
    out
}

/// The speakers of a text's `name:` lines, lower-cased, as chat logs and
/// transcripts label their turns: one word before the colon, or a full
/// name of two or three capitalized words ("Fahim Khan: …", as exports
/// from chat apps write it). Lower-case words before a colon ("To do: …")
/// are a heading, not a person.
pub(crate) fn speakers_in(text: &str) -> Vec<String> {
    text.lines().filter_map(label_of).collect()
}

/// The speaker label of one line, lower-cased (see [`speakers_in`]).
pub(crate) fn label_of(line: &str) -> Option<String> {
    let (name, _) = line.split_once(':')?;
    let words: Vec<&str> = name.split_whitespace().collect();
    let alphanumeric = |w: &&str| w.chars().all(char::is_alphanumeric);
    let capital = |w: &&str| w.chars().next().is_some_and(char::is_uppercase);
    let label = match words.len() {
        1 => words.iter().all(alphanumeric),
        2 | 3 => words.iter().all(|w| alphanumeric(w) && capital(w)),
        _ => false,
    };
    label.then(|| words.join(" ").to_lowercase())
}

/// Ranked hits for `query`. Names in the best hits that the query did not
/// mention are searched again (at half weight), so "what breed is Alice's
/// dog?" also finds "Rex is a beagle" once "Alice's dog is called Rex" ranks.
///
/// `budget` is what the hits compete for, if the caller has one: a large
/// log's matches stop being read once they hold more text than it could
/// show.
pub fn retrieve<S: SearchStore + ?Sized>(
    store: &S,
    common: &CommonWords,
    query: &str,
    limit: usize,
    budget: Option<Budget<'_>>,
) -> StoreResult<Vec<Ranked>> {
    let q = query_terms(query);
    if q.is_empty() {
        return Ok(Vec::new());
    }
    // Ties in BM25 are common (repeated phrasing); fetch deeper than the
    // limit so recency and importance can decide among them. Each record
    // read is a random page of a large log, the main cost of retrieval, so
    // not much deeper.
    let depth = (limit + limit / 4).max(50);
    let last = last_rows(store)?;
    let rows: u64 = last.iter().sum();
    // Small stores are cheap to search whole, and a share of a few records
    // means little.
    let is_common = |docs: u64| rows >= COMMON_FROM && docs as f64 / rows as f64 > COMMON;
    // Words already known to be common are not read again, unless every
    // word is.
    let mut words: Vec<Word> = Vec::new();
    let mut known_common: Vec<(String, u64)> = Vec::new();
    let mut unknown: Vec<String> = Vec::new();
    for w in search_words(&q) {
        match common.get(&w, rows) {
            Some(docs) => known_common.push((w, docs)),
            None => unknown.push(w),
        }
    }
    for word in read_words(store, &unknown, last)? {
        if is_common(word.docs()) {
            common.put(&word.word, word.docs(), rows);
        }
        if !words.iter().any(|x| x.word == word.word) {
            words.push(word);
        }
    }
    // Keep the selective words; if none is, the rarest one.
    let mut keep: Vec<Word> = words
        .iter()
        .filter(|w| !is_common(w.docs()))
        .cloned()
        .collect();
    if keep.is_empty() {
        let read = words.iter().min_by_key(|w| w.docs());
        let known = known_common.iter().min_by_key(|(_, d)| *d);
        match (read, known) {
            (Some(r), Some((w, d))) if *d < r.docs() => keep.push(read_word(store, w, last)?),
            (Some(r), _) => keep.push(r.clone()),
            (None, Some((w, _))) => keep.push(read_word(store, w, last)?),
            (None, None) => {}
        }
    }
    let recency = recency_weight(query);
    let mut ranked = rank(gather(store, &keep, last, depth, budget)?, &keep, recency);
    let mut extra: Vec<String> = Vec::new();
    // A speaker's name is in every line they say: searched again, it
    // would raise each of their short turns ("Thanks, Maria!") over the
    // records that match the question.
    let speakers: Vec<String> = ranked
        .iter()
        .take(EXPANSION_HITS)
        .flat_map(|r| speakers_in(&r.hit.text))
        .flat_map(|label| {
            label
                .split(' ')
                .map(str::to_string)
                .collect::<Vec<String>>()
        })
        .collect();
    for r in ranked.iter().take(EXPANSION_HITS) {
        for lower in names_in(&r.hit.text) {
            if !q.contains(&lower) && !extra.contains(&lower) && !speakers.contains(&lower) {
                extra.push(lower);
            }
        }
    }
    // A capitalized word found everywhere ("Step 12: …") is no name. Names
    // are read in order, as many at a time as are still wanted, so no more
    // are read than one at a time would.
    let mut names: Vec<Word> = Vec::new();
    let mut pending = extra
        .into_iter()
        .filter(|w| common.get(w, rows).is_none())
        .peekable();
    while names.len() < EXPANSION_NAMES && pending.peek().is_some() {
        let next: Vec<String> = pending
            .by_ref()
            .take(EXPANSION_NAMES - names.len())
            .collect();
        for word in read_words(store, &next, last)? {
            if is_common(word.docs()) {
                common.put(&word.word, word.docs(), rows);
            } else {
                names.push(word);
            }
        }
    }
    if !names.is_empty() {
        merge(
            &mut ranked,
            // Only a bridge record, found by both rounds, gains from the
            // second; the best few of its matches are enough.
            rank(gather(store, &names, last, depth, budget)?, &names, recency),
            0.5,
            true,
        );
    }
    if let Some(b) = budget.filter(|b| b.fill.is_some_and(|room| offered_tokens(&ranked) < room)) {
        // The selective words' matches leave part of the budget empty:
        // the records that share only the common words come next, as BM25
        // would rank them, below every match of the selective ones.
        let mut common_words: Vec<Word> = words
            .iter()
            .filter(|w| !keep.iter().any(|k| k.word == w.word))
            .cloned()
            .collect();
        let unread: Vec<String> = known_common
            .iter()
            .map(|(w, _)| w.clone())
            .filter(|w| !keep.iter().any(|k| &k.word == w))
            .collect();
        common_words.extend(read_words(store, &unread, last)?);
        if !common_words.is_empty() {
            let tail = rank(
                gather(store, &common_words, last, depth, Some(b))?,
                &common_words,
                recency,
            );
            below(&mut ranked, tail);
        }
    }
    ranked.truncate(limit);
    Ok(ranked)
}

/// The tokens `ranked` would take as fragments, estimated (with a
/// label): enough to tell whether they could fill a budget.
pub(crate) fn offered_tokens(ranked: &[Ranked]) -> u64 {
    ranked
        .iter()
        .map(|r| super::rough_tokens(&r.hit.text, 3))
        .sum()
}

/// Appends the records of `tail` that `ranked` does not hold, in their
/// order and scored below its last: they fill what is left, never lead.
fn below(ranked: &mut Vec<Ranked>, tail: Vec<Ranked>) {
    let floor = ranked.last().map_or(1.0, |r| r.score);
    let top = tail.first().map_or(1.0, |r| r.score).max(f64::MIN_POSITIVE);
    let held: std::collections::HashSet<String> = ranked.iter().map(|r| r.hit.id.clone()).collect();
    for mut r in tail.into_iter().filter(|r| !held.contains(&r.hit.id)) {
        r.score = floor * 0.5 * (r.score / top).clamp(0.0, 1.0);
        ranked.push(r);
    }
}

/// Matches for `words` in every index: the small ones scored by SQLite,
/// the large ones from postings.
fn gather<S: SearchStore + ?Sized>(
    store: &S,
    words: &[Word],
    last: [u64; 2],
    depth: usize,
    budget: Option<Budget<'_>>,
) -> StoreResult<Vec<Hit>> {
    let all: Vec<&str> = words.iter().map(|w| w.word.as_str()).collect();
    let mut hits = store.search(&all.join(" "), depth, &SMALL_SOURCES)?;
    for source in LOG_SOURCES {
        hits.extend(score_log(store, source, words, last, depth, budget)?);
    }
    Ok(hits)
}

/// `ranked` with the records `picked` (by their place and record) scored
/// `factor` times higher, sorted again: the form of every cue that raises
/// records a question points at without naming their words (a date span,
/// a speaker).
pub(crate) fn raise(
    mut ranked: Vec<Ranked>,
    factor: f64,
    picked: impl Fn(usize, &Ranked) -> bool,
) -> Vec<Ranked> {
    for (i, r) in ranked.iter_mut().enumerate() {
        if picked(i, r) {
            r.score *= factor;
        }
    }
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score));
    ranked
}

/// Adds `more` at `weight` to `ranked`. An id already there keeps the better
/// of its two scores, or with `add` their sum: a record that matches both
/// the question and the names its best answers mention is the bridge a
/// two-step question needs. Re-sorts.
pub(super) fn merge(ranked: &mut Vec<Ranked>, more: Vec<Ranked>, weight: f64, add: bool) {
    let mut at: HashMap<String, usize> = ranked
        .iter()
        .enumerate()
        .map(|(i, r)| (r.hit.id.clone(), i))
        .collect();
    for mut r in more {
        r.score *= weight;
        match at.get(&r.hit.id) {
            Some(&i) if add => ranked[i].score += r.score,
            Some(&i) => ranked[i].score = ranked[i].score.max(r.score),
            None => {
                at.insert(r.hit.id.clone(), ranked.len());
                ranked.push(r);
            }
        }
    }
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.hit.at.cmp(&a.hit.at)));
}

#[cfg(test)]
mod tests;

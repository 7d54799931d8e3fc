//! Text the database sees: the words of a record as its full-text index
//! holds them, search expressions, and connection details as messages show
//! them.

use tokio_postgres::config::Host;

/// The longest text indexed per record. A `tsvector` holds at most 1 MiB;
/// past this much text a record is still stored whole, and its first
/// words are what search finds.
const MAX_INDEXED: usize = 256 * 1024;

/// `text` as the index holds it: every run of letters and digits, lower
/// case, one space between. Splitting here (not in PostgreSQL's parser)
/// makes the index's words the words retrieval asks for, whatever the
/// database's locale: the parser would keep `a@b.com` or `v1.2` whole.
pub(crate) fn words(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_INDEXED));
    for w in text.split(|c: char| !c.is_alphanumeric()) {
        if w.is_empty() {
            continue;
        }
        if out.len() + w.len() + 1 > MAX_INDEXED {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(w.chars().flat_map(char::to_lowercase));
    }
    out
}

/// One term of a search as a `tsquery` over [`words`]: its parts must all
/// be there (`foo_bar` is `foo` and `bar`); a trailing `*` makes the last
/// part a prefix. `None` when it holds no word.
fn term(t: &str) -> Option<String> {
    let prefix = t.ends_with('*');
    let parts: Vec<String> = words(t)
        .split(' ')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    if parts.is_empty() {
        return None;
    }
    let n = parts.len();
    let quoted: Vec<String> = parts
        .into_iter()
        .enumerate()
        .map(|(i, p)| format!("'{p}'{}", if prefix && i + 1 == n { ":*" } else { "" }))
        .collect();
    Some(format!("({})", quoted.join(" & ")))
}

fn terms(query: &str) -> impl Iterator<Item = &str> {
    query
        .split(|c: char| !c.is_alphanumeric() && c != '_' && c != '*')
        .filter(|w| !w.trim_matches('*').is_empty())
}

/// Any word may match (retrieval, `mnemon search`).
pub(crate) fn any_word(query: &str) -> Option<String> {
    let t: Vec<String> = terms(query).filter_map(term).collect();
    (!t.is_empty()).then(|| t.join(" | "))
}

/// Every word must match (the logs' keyword filters).
pub(crate) fn every_word(query: &str) -> Option<String> {
    let t: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .filter_map(term)
        .collect();
    (!t.is_empty()).then(|| t.join(" & "))
}

/// `s` as an SQL string literal, for a statement sent with its values in
/// it. The `E''` form escapes the same whatever the server's
/// `standard_conforming_strings`.
pub(crate) fn literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 3);
    out.push_str("E'");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("''"),
            // PostgreSQL text cannot hold NUL.
            '\0' => {}
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// A URL for a message: the password, if any, replaced.
pub(crate) fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url
            .split_whitespace()
            .map(|kv| {
                if kv.starts_with("password=") {
                    "password=…"
                } else {
                    kv
                }
            })
            .collect::<Vec<_>>()
            .join(" ");
    };
    match rest.split_once('@') {
        Some((user, host)) => match user.split_once(':') {
            Some((name, _)) => format!("{scheme}://{name}:…@{host}"),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

fn host_name(h: &Host) -> String {
    match h {
        Host::Tcp(name) => name.clone(),
        #[cfg(unix)]
        Host::Unix(path) => path.display().to_string(),
    }
}

/// `postgres://user@host:port/db` (and the schema), never the password.
pub(crate) fn shown(config: &tokio_postgres::Config, schema: Option<&str>) -> String {
    let host = config
        .get_hosts()
        .first()
        .map_or_else(|| "localhost".to_string(), host_name);
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config.get_user().unwrap_or("");
    let db = config.get_dbname().unwrap_or(user);
    let at = if user.is_empty() {
        String::new()
    } else {
        format!("{user}@")
    };
    let schema = schema.map(|s| format!(" (schema {s})")).unwrap_or_default();
    format!("postgres://{at}{host}:{port}/{db}{schema}")
}

/// The password `.pgpass` gives for `config`: the first line whose host,
/// port, database and user match (`*` matches anything; `\:` and `\\` are
/// a literal colon and backslash).
pub(crate) fn pgpass_lookup(text: &str, config: &tokio_postgres::Config) -> Option<String> {
    let host = config
        .get_hosts()
        .first()
        .map_or_else(|| "localhost".to_string(), host_name);
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let user = config.get_user().unwrap_or("").to_string();
    let db = config.get_dbname().unwrap_or(&user).to_string();
    for line in text.lines() {
        if line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = split_pgpass(line);
        let [h, p, d, u, pw] = fields.as_slice() else {
            continue;
        };
        let fits = |field: &str, value: &str| field == "*" || field == value;
        let host_fits = fits(h, &host) || (h == "localhost" && host.starts_with('/'));
        if host_fits && fits(p, &port) && fits(d, &db) && fits(u, &user) {
            return Some(pw.clone());
        }
    }
    None
}

fn split_pgpass(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let (Some(n), Some(s)) = (chars.next(), out.last_mut()) {
                    s.push(n);
                }
            }
            ':' if out.len() < 5 => out.push(String::new()),
            c => {
                if let Some(s) = out.last_mut() {
                    s.push(c);
                }
            }
        }
    }
    out
}

/// The advisory lock of a project's writers: a stable 64-bit hash of its id.
pub(crate) fn lock_key(project_id: &str) -> i64 {
    // FNV-1a: stable across builds and machines, unlike std's hasher.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in project_id.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h as i64
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests: a panic is the failure report")]
    use super::*;

    #[test]
    fn literals_escape_quotes_and_backslashes() {
        assert_eq!(literal("('parser':*)"), "E'(''parser'':*)'");
        assert_eq!(literal(r"a\'b"), r"E'a\\''b'");
        assert_eq!(literal("x\0y"), "E'xy'");
    }

    #[test]
    fn words_split_like_retrieval_and_fold_case() {
        assert_eq!(
            words("Mail a@B.com, v1.2 — Größe!"),
            "mail a b com v1 2 größe"
        );
        assert_eq!(words("..."), "");
    }

    #[test]
    fn queries_quote_every_part() {
        assert_eq!(any_word("argon2 live*").unwrap(), "('argon2') | ('live':*)");
        assert_eq!(
            every_word("foo_bar baz").unwrap(),
            "('foo' & 'bar') & ('baz')"
        );
        assert_eq!(any_word("' & !"), None);
    }

    #[test]
    fn passwords_never_show() {
        assert_eq!(
            without_password("postgres://me:secret@db:5432/x"),
            "postgres://me:…@db:5432/x"
        );
        assert_eq!(
            without_password("host=db password=secret"),
            "host=db password=…"
        );
        let c: tokio_postgres::Config = "postgres://me:secret@db:6000/mem".parse().unwrap();
        assert_eq!(shown(&c, Some("s")), "postgres://me@db:6000/mem (schema s)");
    }

    #[test]
    fn pgpass_matches_like_libpq() {
        let c: tokio_postgres::Config = "postgres://me@db:6000/mem".parse().unwrap();
        let text = "# comment\nother:*:*:*:no\ndb:6000:mem:me:p\\:w\n*:*:*:*:fallback\n";
        assert_eq!(pgpass_lookup(text, &c).unwrap(), "p:w");
        let c2: tokio_postgres::Config = "postgres://you@elsewhere/x".parse().unwrap();
        assert_eq!(pgpass_lookup(text, &c2).unwrap(), "fallback");
    }
}

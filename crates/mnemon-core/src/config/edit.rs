//! `mnemon config set KEY VALUE`: one setting changed in the file's own
//! text, its comments and layout kept. Text in, text out; the caller loads
//! the result before writing it, so a setting that would not load is
//! refused and the file is left as it was.

use toml_edit::{DocumentMut, Item, Table, Value};

/// `text` with the dotted `key` (`llm.base_url`) set to `value`. The value
/// is read as TOML when it is one (`8080`, `true`, `0.7`, `["a", "b"]`,
/// `"quoted"`), else taken as a string (`openai`, `http://localhost:8080/v1`).
/// Tables on the way are created; a key set already keeps its comment.
pub fn set(text: &str, key: &str, value: &str) -> Result<String, String> {
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e| format!("the config file does not parse as TOML: {e}"))?;
    let parts: Vec<&str> = key.split('.').map(str::trim).collect();
    if key.trim().is_empty() || parts.iter().any(|p| p.is_empty()) {
        return Err(format!(
            "`{key}` is not a setting's name: give it dotted, such as llm.base_url or context_window.max_tokens"
        ));
    }
    let (last, tables) = parts.split_last().ok_or("no key given")?;
    let mut table: &mut Table = doc.as_table_mut();
    let mut path = Vec::new();
    for part in tables {
        path.push(*part);
        let item = table
            .entry(part)
            .or_insert_with(|| Item::Table(Table::new()));
        table = item.as_table_mut().ok_or_else(|| {
            format!(
                "`{}` is a value in the config file, not a table, so `{key}` cannot be set under it",
                path.join(".")
            )
        })?;
    }
    let mut new: Value = value
        .trim()
        .parse::<Value>()
        .unwrap_or_else(|_| Value::from(value));
    match table.get_mut(last) {
        Some(Item::Value(old)) => {
            *new.decor_mut() = old.decor().clone();
            *old = new;
        }
        Some(Item::Table(_) | Item::ArrayOfTables(_)) => {
            return Err(format!(
                "`{key}` is a table of settings; set one of its keys, such as {key}.<name>"
            ));
        }
        _ => {
            table.insert(last, Item::Value(new));
        }
    }
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "# mnemon\n[llm]\n# provider = \"openai\"\n\n[context_window]\nmax_tokens = 8192  # the window\n";

    #[test]
    fn a_key_is_added_to_its_table_and_comments_stay() {
        let out = set(FILE, "llm.provider", "openai").unwrap();
        assert!(out.contains("# provider = \"openai\""), "{out}");
        assert!(out.contains("provider = \"openai\"\n"), "{out}");
        let parsed: toml::Table = toml::from_str(&out).unwrap();
        assert_eq!(parsed["llm"]["provider"].as_str(), Some("openai"));
        assert_eq!(out.matches("[llm]").count(), 1, "no second table");
    }

    #[test]
    fn values_are_typed_and_a_set_key_keeps_its_comment() {
        let out = set(FILE, "context_window.max_tokens", "32768").unwrap();
        assert!(out.contains("max_tokens = 32768  # the window"), "{out}");
        let out = set(&out, "session.compression_target_ratio", "0.5").unwrap();
        let parsed: toml::Table = toml::from_str(&out).unwrap();
        assert_eq!(
            parsed["session"]["compression_target_ratio"].as_float(),
            Some(0.5)
        );
        let out = set(&out, "llm.base_url", "http://localhost:8080/v1").unwrap();
        let parsed: toml::Table = toml::from_str(&out).unwrap();
        assert_eq!(
            parsed["llm"]["base_url"].as_str(),
            Some("http://localhost:8080/v1")
        );
    }

    #[test]
    fn a_bad_key_is_refused_with_what_to_give() {
        assert!(set(FILE, "llm..x", "1").unwrap_err().contains("dotted"));
        assert!(
            set(FILE, "llm", "1")
                .unwrap_err()
                .contains("table of settings")
        );
        let err = set(FILE, "context_window.max_tokens.x", "1").unwrap_err();
        assert!(err.contains("not a table"), "{err}");
        assert!(
            set("[x", "a.b", "1")
                .unwrap_err()
                .contains("does not parse")
        );
    }
}

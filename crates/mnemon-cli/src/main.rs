//! The `mnemon` binary: parses the command line, calls the `mnemon`
//! library, and prints. Exit codes: 0 success, 1 an error in input,
//! configuration or the environment, 2 a usage error (from clap), 3 a
//! storage or filesystem failure (nothing was written), 4 a conflict with
//! another writer (nothing was written; read again and retry).

mod cli;
mod commands;
mod examples;
mod numbers;
mod output;
mod project;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use cli::{Cli, ColorWhen, Command, ConfigCommand, ModelsCommand, TokensCommand};

fn main() -> ExitCode {
    install_panic_hook();
    let matches = examples::attach(Cli::command()).get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    match cli.global.color {
        ColorWhen::Auto => {}
        ColorWhen::Always => anstream::ColorChoice::Always.write_global(),
        ColorWhen::Never => anstream::ColorChoice::Never.write_global(),
    }
    let g = &cli.global;
    let result = match &cli.command {
        Command::Init(args) => commands::init::run(g, args),
        Command::Status(args) => commands::status::run(g, args),
        Command::Tokens(TokensCommand::Count(args)) => commands::tokens::count(g, args),
        Command::Models(ModelsCommand::List) => commands::models::list(g),
        Command::Models(ModelsCommand::FetchTokenizer(a)) => {
            commands::models::fetch_tokenizer(g, a)
        }
        Command::Config(ConfigCommand::Default) => commands::config::default(g),
        Command::Config(ConfigCommand::Show) => commands::config::show(g),
        Command::Config(ConfigCommand::Validate) => commands::config::validate(g),
        Command::Config(ConfigCommand::Set { key, value }) => commands::config::set(g, key, value),
        Command::Record(a) => commands::log::record(g, a),
        Command::Message(a) => commands::log::message(g, a),
        Command::Import(a) => commands::import::run(g, a),
        Command::Reindex => commands::reindex::run(g),
        Command::Embeddings(cli::EmbeddingsCommand::Fetch(a)) => commands::reindex::fetch(g, a),
        Command::Recent(a) => commands::log::recent(g, a),
        Command::Session(c) => commands::session::run(g, c),
        Command::Goal(c) => commands::hot::goal(g, c),
        Command::Constraint(c) => commands::hot::constraint(g, c),
        Command::Remember(a) => commands::hot::remember(g, a),
        Command::Hot(a) => commands::hot::hot(g, a),
        Command::Decision(c) => commands::decision::run(g, c),
        Command::Doc(cli::DocCommand::Show { kind, version }) => {
            commands::doc::show(g, kind, *version)
        }
        Command::Export => commands::doc::export(g),
        Command::Checkpoint(c) => commands::checkpoint::run(g, c),
        Command::Compact(a) => commands::checkpoint::compact(g, a),
        Command::Optimize(a) => commands::optimize::run(g, a),
        Command::Refresh(a) => commands::checkpoint::refresh(g, a),
        Command::ReportUsage(a) => commands::checkpoint::report_usage(g, a),
        Command::Context(a) => commands::context::context(g, a),
        Command::Search(a) => commands::context::search(g, a),
        Command::Chat(a) => commands::chat::run(g, a),
        Command::Eval(c) => commands::eval::run(g, c),
        Command::Serve(a) => commands::serve::serve(g, a),
        Command::Mcp(a) => commands::serve::mcp(g, a.agent.as_deref()),
        Command::Ask(a) => commands::llm::ask(g, a),
        Command::Llm(cli::LlmCommand::Probe) => commands::llm::probe(g),
        Command::Forget(a) => commands::forget::run(g, a),
        Command::Backup(a) => commands::maintenance::backup(g, a),
        Command::Migrate(a) => commands::maintenance::migrate(g, a),
        Command::Restore(a) => commands::maintenance::restore(g, a),
        Command::Doctor => commands::maintenance::doctor(g),
        Command::Token(cli::TokenCommand::Create { project }) => {
            commands::serve::token_create(g, project)
        }
        Command::Completions { shell } => commands::shell::completions(*shell),
        Command::Man { out } => commands::shell::man(out.as_deref()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if g.json => {
            // A script that asked for JSON gets its error as JSON too, in
            // the API's shape, with the class its exit code stands for.
            let body = serde_json::json!({"error": {
                "class": class(&e).name(),
                "message": format!("{e:#}"),
            }});
            eprintln!("{body}");
            ExitCode::from(exit_code(&e))
        }
        Err(e) => {
            let style = anstyle::AnsiColor::Red.on_default().bold();
            anstream::eprintln!("{style}error:{style:#} {e:#}");
            ExitCode::from(exit_code(&e))
        }
    }
}

/// The exit code for an error: the library's class when it is one of its
/// errors, else 1 (input, configuration or environment).
fn exit_code(e: &anyhow::Error) -> u8 {
    class(e).exit_code()
}

/// The library's class of an error; anything else is the caller's input,
/// configuration or environment.
fn class(e: &anyhow::Error) -> mnemon::ErrorClass {
    e.chain()
        .find_map(|c| c.downcast_ref::<mnemon::Error>())
        .map_or(mnemon::ErrorClass::Input, mnemon::Error::class)
}

/// The last line of defence: a bug prints one line saying what and where,
/// not a Rust backtrace (set `RUST_BACKTRACE=1` for that). Writes are
/// transactions, so a panic loses nothing that was acknowledged.
fn install_panic_hook() {
    let backtrace = std::env::var_os("RUST_BACKTRACE").is_some_and(|v| v != "0");
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "an unexpected state".to_string());
        // `mnemon context | head`: the reader went away. Output comes after
        // every write committed, so there is nothing to report; exit as a
        // process killed by SIGPIPE does (128 + 13), as shells expect.
        if what.starts_with("failed printing to std") && what.contains("Broken pipe") {
            std::process::exit(141);
        }
        if backtrace {
            return default(info);
        }
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!(
            "error: mnemon {} stopped on a bug{place}: {what}. Nothing acknowledged was lost; please report the command you ran (RUST_BACKTRACE=1 shows more).",
            env!("CARGO_PKG_VERSION")
        );
    }));
}

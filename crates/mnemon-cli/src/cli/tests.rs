use clap::CommandFactory;

/// Clap's own consistency checks (duplicate flags, bad defaults) for
/// every subcommand, so a clash fails here and not in a user's hands.
#[test]
fn the_command_line_is_consistent() {
    super::Cli::command().debug_assert();
}

/// Every flag and argument of every command says what it is in
/// `--help` (and so in the manual pages).
#[test]
fn every_argument_is_described() {
    fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
        for a in cmd.get_arguments() {
            let builtin = matches!(a.get_id().as_str(), "help" | "version");
            if !builtin && a.get_help().is_none() && a.get_long_help().is_none() {
                missing.push(format!("{path} {}", a.get_id()));
            }
        }
        for sub in cmd.get_subcommands() {
            walk(sub, &format!("{path} {}", sub.get_name()), missing);
        }
    }
    let mut missing = Vec::new();
    walk(&super::Cli::command(), "mnemon", &mut missing);
    assert!(missing.is_empty(), "without help: {missing:#?}");
}

#[test]
fn a_server_listens_on_a_host_name_or_an_address() {
    let a = super::serving::listen_addr("localhost:7880").unwrap();
    assert!(a.ip().is_loopback() && a.port() == 7880, "{a}");
    assert_eq!(
        super::serving::listen_addr("0.0.0.0:9")
            .unwrap()
            .to_string(),
        "0.0.0.0:9"
    );
    let err = super::serving::listen_addr("localhost").unwrap_err();
    assert!(err.contains("HOST:PORT"), "{err}");
}

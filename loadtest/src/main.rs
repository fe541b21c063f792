//! `grand-melee-loadtest`: parses the command line, sets up logging and the open-file limit,
//! runs the command from the library and prints its report.

use std::process::ExitCode;

use clap::Parser;
use grand_melee_loadtest::cli::{self, Cli};
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let filter = EnvFilter::try_new(&cli.log).unwrap_or_else(|_| EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    if let Err(error) = grand_melee_loadtest::raise_open_file_limit() {
        tracing::warn!(%error, "cannot raise the open-file limit");
    }
    // The report is this binary's output: printing it is its job.
    #[allow(clippy::print_stdout)]
    let mut print = |text: &str| println!("{text}");
    match cli::run(cli, &mut print) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "grand-melee-loadtest failed");
            ExitCode::FAILURE
        }
    }
}

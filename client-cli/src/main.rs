//! `grand-melee`: the terminal client. Everything lives in the library; this only parses the
//! command line and reports a fatal error.

use std::process::ExitCode;

use clap::Parser;
use grand_melee_cli::cli::Cli;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return fail(&error.to_string()),
    };
    match runtime.block_on(grand_melee_cli::run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => fail(&error.to_string()),
    }
}

/// Reports a fatal error on standard error. It may quote text from elsewhere (a table name
/// typed on the command line, a reason from the network), so it is guarded like every line.
#[allow(clippy::print_stderr)]
fn fail(message: &str) -> ExitCode {
    eprintln!("grand-melee: {}", grand_melee_cli::safe::guard(message));
    ExitCode::FAILURE
}

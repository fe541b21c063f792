//! `grand-melee-server`: parses flags, sets up logging, binds and serves until SIGINT/SIGTERM.

use std::io::IsTerminal;

use clap::Parser;
use grand_melee_server::{Server, ServerConfig};
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let config = ServerConfig::parse();
    let filter = EnvFilter::try_new(&config.log).unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stdout().is_terminal())
        .init();
    let server = match Server::bind(config.clone()).await {
        Ok(server) => server,
        Err(error) => {
            tracing::error!(listen = %config.listen, data_dir = %config.data_dir.display(), %error, "cannot start");
            tell_why_not(&error);
            return std::process::ExitCode::FAILURE;
        }
    };
    server.run(shutdown_signal()).await;
    std::process::ExitCode::SUCCESS
}

/// The log goes to standard output; why the server cannot start (and what to do about it) also
/// goes to standard error, whole and readable, for whoever started it.
#[allow(clippy::print_stderr)]
fn tell_why_not(error: &std::io::Error) {
    eprintln!("grand-melee-server: cannot start: {error}");
}

/// Completes on SIGINT (Ctrl-C) or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutdown signal received");
}

//! `grand-melee-server`: parses flags, sets up logging, binds and serves until SIGINT/SIGTERM.

use std::io::IsTerminal;

use grand_melee_server::config::Command;
use grand_melee_server::{Server, ServerConfig};
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let config = ServerConfig::from_command_line();
    if let Some(Command::Backup { dest }) = &config.command {
        return backup(&config, dest);
    }
    let filter = EnvFilter::try_new(&config.log).unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stdout().is_terminal())
        .init();
    let shutdown = shutdown_signal();
    let server = match Server::bind(config.clone()).await {
        Ok(server) => server,
        Err(error) => {
            tracing::error!(listen = %config.listen, data_dir = %config.data_dir.display(), %error, "cannot start");
            tell_why_not(&error);
            return std::process::ExitCode::FAILURE;
        }
    };
    server.run(shutdown).await;
    std::process::ExitCode::SUCCESS
}

/// `grand-melee-server backup DEST`: one copy of the journal, said on standard output (or why
/// not, on standard error).
#[allow(clippy::print_stdout, clippy::print_stderr)]
fn backup(config: &ServerConfig, dest: &std::path::Path) -> std::process::ExitCode {
    // A directory: a new file in it, named by the time as scheduled backups are.
    let dest = if dest.is_dir() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |now| now.as_secs());
        dest.join(grand_melee_server::backup::scheduled_name(now))
    } else {
        dest.to_owned()
    };
    match grand_melee_server::backup::backup(&config.data_dir, &dest) {
        Ok(made) => {
            println!(
                "backed up {} to {} ({} bytes)",
                config
                    .data_dir
                    .join(grand_melee_server::journal::DB_FILE)
                    .display(),
                made.path.display(),
                made.bytes
            );
            std::process::ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("grand-melee-server: backup: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The log goes to standard output; why the server cannot start (and what to do about it) also
/// goes to standard error, whole and readable, for whoever started it.
#[allow(clippy::print_stderr)]
fn tell_why_not(error: &std::io::Error) {
    eprintln!("grand-melee-server: cannot start: {error}");
}

/// Completes on SIGINT (Ctrl-C) or SIGTERM. The handlers are installed here, at once — not when
/// the future is first polled — so that a signal sent as soon as the server answers (it logs
/// `listening` first) stops it cleanly rather than killing it.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    let (mut interrupt, mut terminate) = {
        use tokio::signal::unix::{SignalKind, signal};
        (
            signal(SignalKind::interrupt()).ok(),
            signal(SignalKind::terminate()).ok(),
        )
    };
    async move {
        #[cfg(unix)]
        {
            let wait = |signal: Option<tokio::signal::unix::Signal>| async move {
                match signal {
                    Some(mut signal) => {
                        signal.recv().await;
                    }
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = wait(interrupt.take()) => {},
                () = wait(terminate.take()) => {},
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
        tracing::info!("shutdown signal received");
    }
}

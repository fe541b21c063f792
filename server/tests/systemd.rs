//! `deploy/grand-melee.service`, the server as a systemd service: `systemd-analyze verify`
//! takes it without a warning (an unknown key or a bad value is only a warning to systemd, so
//! the test fails on any line it prints), it keeps the sandboxing it promises, and the server
//! starts with its `ExecStart` arguments and stops cleanly on its `KillSignal`.
//!
//! `systemd-analyze` comes with Debian's `systemd` package: the test installs it when it is
//! missing (as root or with password-less sudo), or fails with the command to run.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use grand_melee_e2e::ServerProcess;

const BINARY: &str = env!("CARGO_BIN_EXE_grand-melee-server");
/// Where the unit expects the binary (docs/src/data.md's install step puts it there).
const INSTALLED: &str = "/usr/local/bin/grand-melee-server";

fn unit() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../deploy/grand-melee.service"
    ))
    .unwrap()
}

/// The values of `key` in the unit, in order (a key may be given more than once).
fn values<'a>(unit: &'a str, key: &str) -> Vec<&'a str> {
    unit.lines()
        .filter_map(|line| line.strip_prefix(key)?.strip_prefix('='))
        .collect()
}

/// `systemd-analyze`, installed if it is missing.
fn systemd_analyze() -> PathBuf {
    let found = |path: &Path| {
        Command::new(path)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let path = PathBuf::from("systemd-analyze");
    if found(&path) {
        return path;
    }
    let lock = std::fs::File::create(std::env::temp_dir().join("grand-melee-apt.lock")).unwrap();
    lock.lock().unwrap();
    if !found(&path)
        && let Err(why) = grand_melee_e2e::apt_install(&["systemd"])
    {
        panic!("this test needs systemd-analyze ({why}): run `sudo apt-get install -y systemd`");
    }
    assert!(
        found(&path),
        "systemd-analyze is still missing: run `sudo apt-get install -y systemd`"
    );
    path
}

#[test]
fn systemd_analyze_verifies_the_unit_without_a_warning() {
    let unit = unit();
    assert!(
        unit.contains(&format!("ExecStart={INSTALLED} ")),
        "the unit starts {INSTALLED}"
    );
    // verify checks that ExecStart's program exists: point it at the binary just built.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("grand-melee.service");
    std::fs::write(&path, unit.replace(INSTALLED, BINARY)).unwrap();
    let output = Command::new(systemd_analyze())
        .args(["verify", "--man=no"])
        .arg(&path)
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "systemd-analyze verify: {said}");
    // Lines about the machine's own units are not the unit's (e.g. a container's).
    let ours: Vec<&str> = said
        .lines()
        .filter(|line| line.contains("grand-melee.service"))
        .collect();
    assert!(ours.is_empty(), "systemd-analyze verify warns: {ours:?}");

    // And it does fail on a broken unit: the check is not blind.
    std::fs::write(
        &path,
        unit.replace(INSTALLED, BINARY)
            .replace("Restart=on-failure", "Restart=sometimes"),
    )
    .unwrap();
    let output = Command::new(systemd_analyze())
        .args(["verify", "--man=no"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("grand-melee.service"),
        "a bad Restart= went unnoticed"
    );
}

/// What docs/src/data.md promises of the unit: its own user and one writable directory, restarted on
/// failure, the ports under 1024 without root, enough open files, and the usual sandboxing.
#[test]
fn the_unit_runs_sandboxed_as_its_own_user_and_restarts_on_failure() {
    let unit = unit();
    for (key, value) in [
        ("DynamicUser", "yes"),
        ("StateDirectory", "grand-melee"),
        ("Restart", "on-failure"),
        ("KillSignal", "SIGTERM"),
        ("AmbientCapabilities", "CAP_NET_BIND_SERVICE"),
        ("NoNewPrivileges", "yes"),
        ("ProtectSystem", "strict"),
        ("ProtectHome", "yes"),
        ("PrivateTmp", "yes"),
        ("PrivateDevices", "yes"),
        ("RestrictSUIDSGID", "yes"),
        ("SystemCallFilter", "@system-service"),
        ("WantedBy", "multi-user.target"),
    ] {
        assert!(
            values(&unit, key).contains(&value),
            "the unit has {key}={value}"
        );
    }
    // One connection is one open file: the limit is far above systemd's default of 1024.
    let files: u64 = values(&unit, "LimitNOFILE")[0].parse().unwrap();
    assert!(files >= 20_000, "LimitNOFILE={files}");
    // Its journal is in the state directory systemd makes for it.
    let exec = values(&unit, "ExecStart")[0];
    assert!(
        exec.contains("--data-dir /var/lib/grand-melee"),
        "ExecStart={exec}"
    );
}

/// The server takes the unit's `ExecStart` arguments (its data directory moved to a temporary
/// one) and stops with status 0 on the unit's `KillSignal`, so systemd sees a clean stop, not a
/// failure to restart from.
#[tokio::test]
async fn the_server_starts_with_the_units_arguments_and_stops_cleanly_on_its_signal() {
    let unit = unit();
    let exec = values(&unit, "ExecStart")[0];
    let data = tempfile::tempdir().unwrap();
    let args: Vec<std::ffi::OsString> = exec
        .split_whitespace()
        .skip(1)
        .map(|arg| {
            if arg == "/var/lib/grand-melee" {
                data.path().as_os_str().to_owned()
            } else {
                arg.into()
            }
        })
        .collect();
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let server = ServerProcess::spawn(BINARY, &args).await;
    let signal = values(&unit, "KillSignal")[0];
    server.signal(signal.trim_start_matches("SIG"));
    let status = server.wait().await;
    assert!(status.success(), "stopped by {signal}: {status}");
    assert!(
        data.path().join("grand-melee.sqlite3").exists(),
        "the journal is in the unit's data directory"
    );
}

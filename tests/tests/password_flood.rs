//! A flood of password checks from one address must not exhaust the server's memory: every
//! Argon2id hash takes 19 MiB. (Alone in its test binary: it reads the process's resident
//! memory, which other tests running beside it would disturb.)
#![allow(clippy::unwrap_used, clippy::print_stderr)] // the measurements are printed

use grand_melee_e2e::{Client, CreateTable, TestServer, http_get};
use grand_melee_protocol::{ClientMessage, ErrorCode, ServerMessage, TableId};
use grand_melee_server::ServerConfig;

/// Connections the attacker opens, all from one address.
const ATTACKERS: usize = 128;

/// What the resident memory may grow by under the flood (the hashing pool's buffers are
/// 19 MiB a thread).
const BOUND_KIB: u64 = 100 * 1024;

/// `VmRSS` and `VmHWM` (the peak) of this process, in KiB.
fn memory_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn create(id: u32, name: &str, seats: u8, password: &str) -> ClientMessage {
    CreateTable::new(name, seats)
        .password(password)
        .seed(1)
        .request(id)
}

fn join(table: TableId, name: &str, password: &str) -> impl FnOnce(u32) -> ClientMessage {
    let (name, password) = (name.to_owned(), password.to_owned());
    move |id| ClientMessage::Join {
        id,
        table,
        name,
        password: Some(password),
        entropy: None,
        member_token: None,
    }
}

/// `rounds` joins from each of `ATTACKERS` connections, each sent as soon as the last was
/// answered; every answer's code.
async fn flood(server: &TestServer, table: TableId, name: &str, rounds: usize) -> Vec<ErrorCode> {
    let mut attackers = Vec::new();
    for _ in 0..ATTACKERS {
        attackers.push(server.client().await);
    }
    let tasks: Vec<_> = attackers
        .into_iter()
        .map(|mut client| {
            let name = name.to_owned();
            tokio::spawn(async move {
                let mut codes = Vec::new();
                for _ in 0..rounds {
                    match client.call(join(table, &name, "pw")).await {
                        Err(code) => codes.push(code),
                        Ok(answer) => panic!("an attacker was answered {answer:?}"),
                    }
                }
                codes
            })
        })
        .collect();
    let mut codes = Vec::new();
    for task in tasks {
        codes.extend(task.await.unwrap());
    }
    codes
}

/// The value of a counter in `/metrics`.
async fn metric(server: &TestServer, name: &str) -> u64 {
    let page = http_get(server.addr, "/metrics").await;
    page.lines()
        .find_map(|line| line.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in /metrics"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_password_checks_keeps_memory_bounded_and_is_answered_server_busy() {
    // No per-address budget: the hashing pool alone must bound the memory.
    let server = TestServer::start_with(ServerConfig {
        password_checks_per_minute: 0.0,
        ..ServerConfig::default()
    })
    .await;
    let mut host = server.client().await;
    let created = host.call(|id| create(id, "mine", 40, "pw")).await.unwrap();
    let ServerMessage::TableCreated { table, .. } = created else {
        panic!("{created:?}");
    };
    host.call(join(table, "Ann", "pw")).await.unwrap();
    let (baseline, _) = memory_kib();

    // The reproduction: a name nobody may have, with the right password. The name is checked
    // before the hash, so none is computed.
    let codes = flood(&server, table, "", 10).await;
    assert!(codes.iter().all(|&c| c == ErrorCode::BadName), "{codes:?}");
    assert_eq!(metric(&server, "gm_password_checks_total").await, 1);

    // A name taken at the table passes every cheap check, so each costs a hash: at most a few
    // run at once, the rest wait in a bounded queue, and past it the answer is `server_busy`.
    let codes = flood(&server, table, "Ann", 4).await;
    let taken = codes.iter().filter(|&&c| c == ErrorCode::NameTaken).count();
    let busy = codes
        .iter()
        .filter(|&&c| c == ErrorCode::ServerBusy)
        .count();
    assert_eq!(taken + busy, codes.len(), "{codes:?}");
    assert!(taken > 0 && busy > 0, "taken {taken}, busy {busy}");
    assert_eq!(
        metric(&server, "gm_password_checks_refused_total").await,
        busy as u64
    );
    let (now, peak) = memory_kib();
    eprintln!(
        "resident memory: {baseline} KiB before, {now} KiB after, peak {peak} KiB; \
         {taken} hashed, {busy} server_busy"
    );
    assert!(
        peak.saturating_sub(baseline) < BOUND_KIB,
        "peak resident memory grew by {} KiB (bound {BOUND_KIB})",
        peak - baseline
    );

    // The server still seats someone with the right password.
    let mut friend = Client::connected_from(server.addr, [127, 0, 0, 2].into()).await;
    let seated = friend.call(join(table, "Bea", "pw")).await;
    assert!(
        matches!(seated, Ok(ServerMessage::Seated { .. })),
        "{seated:?}"
    );
}

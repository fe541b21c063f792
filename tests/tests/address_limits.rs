//! Per-address limits: every password check costs the address one of its checks (a hash each),
//! a flood of them leaves other tables their latency, league joins are limited like table
//! creations, and addresses count by prefix (an IPv6 /64 is one client).
#![allow(clippy::unwrap_used, clippy::print_stderr)] // the measurements are printed

use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::time::{Duration, Instant};

use grand_melee_e2e::{Client, CreateTable, TestServer, http_get};
use grand_melee_protocol::league::LeagueId;
use grand_melee_protocol::{ClientMessage, ErrorCode, ServerMessage, TableId};
use grand_melee_server::ServerConfig;

fn v4(last: u8) -> IpAddr {
    [127, 0, 0, last].into()
}

async fn table(client: &mut Client, name: &str, password: Option<&str>) -> TableId {
    let settings = CreateTable::new(name, 40).seed(1).password(password);
    client.create(settings).await.unwrap()
}

fn join(table: TableId, name: &str, password: Option<&str>) -> impl FnOnce(u32) -> ClientMessage {
    let (name, password) = (name.to_owned(), password.map(str::to_owned));
    move |id| ClientMessage::Join {
        id,
        table,
        name,
        password,
        entropy: None,
        member_token: None,
    }
}

fn watch(table: TableId, password: Option<&str>) -> impl FnOnce(u32) -> ClientMessage {
    let password = password.map(str::to_owned);
    move |id| ClientMessage::Watch {
        id,
        table,
        password,
    }
}

async fn league(client: &mut Client, name: &str, password: Option<&str>) -> LeagueId {
    let password = password.map(str::to_owned);
    let created = client
        .call(|id| ClientMessage::CreateLeague {
            id,
            name: name.into(),
            password,
        })
        .await
        .unwrap();
    match created {
        ServerMessage::LeagueCreated { league, .. } => league,
        other => panic!("{other:?}"),
    }
}

fn join_league(
    league: LeagueId,
    name: &str,
    password: Option<&str>,
) -> impl FnOnce(u32) -> ClientMessage {
    let (name, password) = (name.to_owned(), password.map(str::to_owned));
    move |id| ClientMessage::JoinLeague {
        id,
        league,
        name,
        password,
    }
}

/// The value of a counter in `/metrics`.
async fn metric(server: &TestServer, name: &str) -> u64 {
    let page = http_get(server.addr, "/metrics").await;
    page.lines()
        .find_map(|line| line.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in /metrics"))
}

#[tokio::test]
async fn every_password_check_counts_against_the_address_at_tables_and_leagues() {
    let server = TestServer::start_with(ServerConfig {
        password_checks_per_minute: 4.0,
        ..ServerConfig::default()
    })
    .await;
    let mut host = Client::connected_from(server.addr, v4(3)).await;
    let mine = table(&mut host, "mine", Some("pw")).await;
    host.call(join(mine, "Ann", Some("pw"))).await.unwrap();
    let mut organiser = Client::connected_from(server.addr, v4(3)).await;
    let club = league(&mut organiser, "Club", Some("lpw")).await;
    let before = metric(&server, "gm_password_checks_total").await;

    // Right passwords count too: each is a hash.
    let mut attacker = Client::connected_from(server.addr, v4(4)).await;
    for _ in 0..4 {
        let answer = attacker.call(join(mine, "Ann", Some("pw"))).await;
        assert_eq!(answer, Err(ErrorCode::NameTaken));
    }
    let answer = attacker.call(join(mine, "Ann", Some("pw"))).await;
    assert_eq!(answer, Err(ErrorCode::RateLimited));
    // The same budget covers leagues, even with the right password.
    let answer = attacker
        .call(join_league(club, "Mallory", Some("lpw")))
        .await;
    assert_eq!(answer.map(|_| ()), Err(ErrorCode::RateLimited));
    assert_eq!(
        metric(&server, "gm_password_checks_total").await,
        before + 4
    );

    // Another address has its own budget.
    let mut friend = Client::connected_from(server.addr, v4(5)).await;
    let joined = friend.call(join_league(club, "Bea", Some("lpw"))).await;
    assert!(
        matches!(joined, Ok(ServerMessage::LeagueJoined { .. })),
        "{joined:?}"
    );
}

#[tokio::test]
async fn a_watch_past_the_watch_limit_is_refused_before_the_password_is_hashed() {
    // The budget refills slowly enough that none comes back while the test runs, however slow
    // the machine (at the default 30 a minute one more watch fits every two seconds).
    let server = TestServer::start_with(ServerConfig {
        watches_per_minute: 0.01,
        ..ServerConfig::default()
    })
    .await;
    let mut host = server.client().await;
    let mine = table(&mut host, "mine", Some("pw")).await;
    let before = metric(&server, "gm_password_checks_total").await;
    let mut admitted = Vec::new();
    let mut refused = 0;
    // The watch budget is 10 at once from one address.
    for _ in 0..14 {
        let mut spectator = Client::connected_from(server.addr, v4(6)).await;
        match spectator.call(watch(mine, Some("pw"))).await {
            Ok(ServerMessage::Watching { .. }) => admitted.push(spectator),
            Err(ErrorCode::RateLimited) => refused += 1,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!((admitted.len(), refused), (10, 4));
    assert_eq!(
        metric(&server, "gm_password_checks_total").await,
        before + 10,
        "a refused watch costs no hash"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_password_checks_leaves_other_tables_their_latency() {
    let server = TestServer::start().await;
    let mut host = server.client().await;
    let mine = table(&mut host, "mine", Some("pw")).await;
    host.call(join(mine, "Ann", Some("pw"))).await.unwrap();
    let mut victim = Client::connected_from(server.addr, v4(2)).await;
    let theirs = table(&mut victim, "theirs", None).await;
    victim.join(theirs, "Vic").await.unwrap();

    // 128 connections from one address, each asking for a hash as fast as it is answered.
    let mut attackers = Vec::new();
    for _ in 0..128 {
        attackers.push(server.client().await);
    }
    let flood: Vec<_> = attackers
        .into_iter()
        .map(|mut client| {
            tokio::spawn(async move {
                let mut codes = Vec::new();
                for _ in 0..4 {
                    codes.push(client.call(join(mine, "Ann", Some("pw"))).await.err());
                }
                codes
            })
        })
        .collect();
    // Meanwhile the victim chats at his own table, lists the tables, and a friend sits down
    // at the password table.
    let mut slowest = Duration::ZERO;
    for n in 0..20 {
        let sent = Instant::now();
        let answer = if n % 4 == 0 {
            victim
                .call(|id| ClientMessage::Chat {
                    id,
                    text: format!("still here {n}"),
                })
                .await
        } else {
            victim
                .call(|id| ClientMessage::ListTables {
                    id,
                    from: 0,
                    limit: 10,
                })
                .await
        };
        slowest = slowest.max(sent.elapsed());
        assert!(answer.is_ok(), "{answer:?}");
    }
    let mut friend = Client::connected_from(server.addr, v4(7)).await;
    let seated = friend.call(join(mine, "Bea", Some("pw"))).await;
    assert!(
        matches!(seated, Ok(ServerMessage::Seated { .. })),
        "{seated:?}"
    );
    let mut codes = Vec::new();
    for task in flood {
        codes.extend(task.await.unwrap());
    }
    let hashed = codes
        .iter()
        .filter(|&&c| c == Some(ErrorCode::NameTaken))
        .count();
    let limited = codes
        .iter()
        .filter(|&&c| c == Some(ErrorCode::RateLimited))
        .count();
    assert_eq!(hashed + limited, codes.len(), "{codes:?}");
    assert!(
        hashed <= 30,
        "the address's budget is 30 checks, {hashed} hashed"
    );
    eprintln!("victim's slowest chat round trip under the flood: {slowest:?}");
    assert!(slowest < Duration::from_secs(1), "{slowest:?}");
}

#[tokio::test]
async fn one_address_cannot_fill_a_league() {
    let server = TestServer::start().await;
    let mut organiser = Client::connected_from(server.addr, v4(8)).await;
    let club = league(&mut organiser, "Club", None).await;
    // The reproduction: many connections from one address, each joining again and again.
    let mut joined = 0;
    let mut refused = 0;
    for c in 0..10 {
        let mut client = Client::connected_from(server.addr, v4(9)).await;
        for n in 0..3 {
            match client
                .call(join_league(club, &format!("Sock {c} {n}"), None))
                .await
            {
                Ok(ServerMessage::LeagueJoined { .. }) => joined += 1,
                Err(ErrorCode::RateLimited) => refused += 1,
                other => panic!("{other:?}"),
            }
        }
    }
    assert_eq!(
        (joined, refused),
        (20, 10),
        "twenty joins at once from one address"
    );
    let mut player = Client::connected_from(server.addr, v4(10)).await;
    let answer = player.call(join_league(club, "Real Player", None)).await;
    assert!(
        matches!(answer, Ok(ServerMessage::LeagueJoined { .. })),
        "{answer:?}"
    );
}

#[tokio::test]
async fn one_address_adds_at_most_its_share_of_a_league_s_members() {
    let server = TestServer::start_with(ServerConfig {
        league_joins_per_minute: 0.0,
        max_league_members_per_ip: 3,
        ..ServerConfig::default()
    })
    .await;
    let mut organiser = Client::connected_from(server.addr, v4(11)).await;
    let club = league(&mut organiser, "Club", None).await;
    let other = league(&mut organiser, "Other club", None).await;
    let mut client = Client::connected_from(server.addr, v4(12)).await;
    for n in 0..3 {
        let answer = client
            .call(join_league(club, &format!("Member {n}"), None))
            .await;
        assert!(
            matches!(answer, Ok(ServerMessage::LeagueJoined { .. })),
            "{answer:?}"
        );
    }
    let id = client.send(join_league(club, "Member 3", None));
    let refusal = client
        .until(|r| match r {
            grand_melee_e2e::Received::Message(m, _) => match &**m {
                ServerMessage::Error {
                    reply_to: Some(to),
                    code,
                    message,
                    ..
                } if *to == id => Some((*code, message.clone())),
                _ => None,
            },
            _ => None,
        })
        .await;
    assert_eq!(refusal.0, ErrorCode::RateLimited);
    assert!(refusal.1.contains("members"), "{}", refusal.1);
    // Another league, and another address, are not affected.
    let answer = client.call(join_league(other, "Member 3", None)).await;
    assert!(matches!(answer, Ok(ServerMessage::LeagueJoined { .. })));
    let mut neighbour = Client::connected_from(server.addr, v4(13)).await;
    let answer = neighbour.call(join_league(club, "Neighbour", None)).await;
    assert!(matches!(answer, Ok(ServerMessage::LeagueJoined { .. })));
}

/// Whether a WebSocket handshake from `local` to the server is accepted.
async fn handshake_from(server: SocketAddr, local: IpAddr) -> bool {
    let socket = if local.is_ipv6() {
        tokio::net::TcpSocket::new_v6().unwrap()
    } else {
        tokio::net::TcpSocket::new_v4().unwrap()
    };
    socket.bind(SocketAddr::new(local, 0)).unwrap();
    let stream = socket.connect(server).await.unwrap();
    let url = format!("ws://{server}/ws");
    match tokio_tungstenite::client_async(url, stream).await {
        Ok((ws, _)) => {
            // Kept open until the end of the test: it holds its place under the cap.
            std::mem::forget(ws);
            true
        }
        Err(_) => false,
    }
}

#[tokio::test]
async fn ipv4_addresses_can_be_grouped_by_prefix() {
    let server = TestServer::start_with(ServerConfig {
        ipv4_prefix: 24,
        max_connections_per_ip: 2,
        ..ServerConfig::default()
    })
    .await;
    assert!(handshake_from(server.addr, [127, 0, 5, 1].into()).await);
    assert!(handshake_from(server.addr, [127, 0, 5, 2].into()).await);
    assert!(
        !handshake_from(server.addr, [127, 0, 5, 3].into()).await,
        "a third connection from the same /24"
    );
    assert!(handshake_from(server.addr, [127, 0, 6, 1].into()).await);
}

/// IPv6 addresses on the loopback interface for the test (`ip addr add … nodad`, as root or
/// through password-less sudo), removed when dropped.
struct LoopbackV6 {
    addresses: Vec<Ipv6Addr>,
    sudo: bool,
}

/// Runs `ip` with `args`, through `sudo -n` if `sudo`.
fn ip(sudo: bool, args: &[&str]) -> std::io::Result<std::process::Output> {
    let mut command = if sudo {
        let mut command = std::process::Command::new("sudo");
        command.args(["-n", "ip"]);
        command
    } else {
        std::process::Command::new("ip")
    };
    command.args(args).output()
}

impl LoopbackV6 {
    fn add(addresses: &[Ipv6Addr]) -> Self {
        let root = std::process::Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
        let sudo = !root
            && std::process::Command::new("sudo")
                .args(["-n", "true"])
                .status()
                .is_ok_and(|s| s.success());
        assert!(
            root || sudo,
            "this test adds IPv6 addresses to the loopback interface: run it as root or with \
             password-less sudo, or first run `sudo ip -6 addr add ADDRESS/128 dev lo nodad` \
             for each address of fd00:4742:P:a:N::1 (N = 1..14) and fd00:4742:P:b::1, P the low 16 bits \
             of the test process's id"
        );
        if ip(sudo, &["-V"]).is_err() {
            let mut install = vec!["apt-get", "install", "-y", "-qq", "iproute2"];
            if sudo {
                install.splice(0..0, ["sudo", "-n"]);
            }
            let status = std::process::Command::new(install[0])
                .args(&install[1..])
                .env("DEBIAN_FRONTEND", "noninteractive")
                .status();
            assert!(
                status.is_ok_and(|s| s.success()),
                "this test needs the `ip` command: run `sudo apt-get install -y iproute2`"
            );
        }
        for address in addresses {
            let cidr = format!("{address}/128");
            let output = ip(sudo, &["-6", "addr", "add", &cidr, "dev", "lo", "nodad"]).unwrap();
            let error = String::from_utf8_lossy(&output.stderr);
            assert!(
                output.status.success()
                    || error.contains("exists")
                    || error.contains("already assigned"),
                "adding {address} to the loopback interface failed ({error}): this test needs \
                 IPv6 on lo; run `sudo ip -6 addr add {cidr} dev lo nodad` to see why"
            );
        }
        Self {
            addresses: addresses.to_vec(),
            sudo,
        }
    }
}

impl Drop for LoopbackV6 {
    fn drop(&mut self) {
        for address in &self.addresses {
            let cidr = format!("{address}/128");
            let _ = ip(self.sudo, &["-6", "addr", "del", &cidr, "dev", "lo"]);
        }
    }
}

#[tokio::test]
async fn an_ipv6_slash_64_is_one_client_for_caps_throttles_and_bans() {
    // Home A's /64 (many addresses, as every device picks its own) and home B's, in a range of
    // this process's own: a second test suite beside this one adds (and removes) its own.
    let own = (std::process::id() & 0xffff) as u16;
    let home_a: Vec<Ipv6Addr> = (1..=14)
        .map(|n| Ipv6Addr::new(0xfd00, 0x4742, own, 0xa, n, 0, 0, 1))
        .collect();
    let home_b = Ipv6Addr::new(0xfd00, 0x4742, own, 0xb, 0, 0, 0, 1);
    let mut all = home_a.clone();
    all.push(home_b);
    let _addresses = LoopbackV6::add(&all);
    let listen: SocketAddr = "[::1]:0".parse().unwrap();

    // Throttles: the watch budget (10 at once) is the /64's, not each address's.
    let server = TestServer::start_on(ServerConfig::default(), listen).await;
    let mut host = Client::connected_from(server.addr, home_b.into()).await;
    let mine = table(&mut host, "mine", None).await;
    host.join(mine, "Ann").await.unwrap();
    let mut watching = Vec::new();
    let mut refused = 0;
    for address in &home_a[..12] {
        let mut spectator = Client::connected_from(server.addr, (*address).into()).await;
        match spectator.call(watch(mine, None)).await {
            Ok(ServerMessage::Watching { .. }) => watching.push(spectator),
            Err(ErrorCode::RateLimited) => refused += 1,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!((watching.len(), refused), (10, 2));
    drop(watching);

    // Bans: a player banned from one address of the /64 cannot come back from another.
    let mut pest = Client::connected_from(server.addr, home_a[12].into()).await;
    let pest_id = pest.join(mine, "Pest").await.unwrap();
    let kicked = host
        .call(|id| ClientMessage::Kick {
            id,
            player: pest_id,
            ban: true,
        })
        .await;
    assert!(
        matches!(kicked, Ok(ServerMessage::Ack { .. })),
        "{kicked:?}"
    );
    let mut again = Client::connected_from(server.addr, home_a[13].into()).await;
    assert_eq!(again.join(mine, "Nice Guy").await, Err(ErrorCode::Banned));
    server.shutdown().await;

    // Caps: connections per address count the /64.
    let server = TestServer::start_on(
        ServerConfig {
            max_connections_per_ip: 2,
            ..ServerConfig::default()
        },
        listen,
    )
    .await;
    assert!(handshake_from(server.addr, home_a[0].into()).await);
    assert!(handshake_from(server.addr, home_a[1].into()).await);
    assert!(
        !handshake_from(server.addr, home_a[2].into()).await,
        "a third connection from the same /64"
    );
    assert!(handshake_from(server.addr, home_b.into()).await);
}

/// Issue 43: adjourned games held their tables' places forever, as many as anyone liked. Now
/// one address holds at most `--max-adjourned-per-ip` adjourned games (counted for the host who
/// adjourned them): past it `adjourn` answers `too_many_tables` and changes nothing, and a
/// place comes back when its game is resumed.
#[tokio::test]
async fn one_address_holds_at_most_its_adjourned_games() {
    let server = TestServer::start_with(ServerConfig {
        max_adjourned_per_ip: 1,
        ..ServerConfig::default()
    })
    .await;
    let (_, mut first) = grand_melee_e2e::started_game(&server, 2, 7).await;
    let (_, mut second) = grand_melee_e2e::started_game(&server, 2, 8).await;
    let adjourn = |id| ClientMessage::Adjourn { id };
    assert!(matches!(
        first[0].call(adjourn).await,
        Ok(ServerMessage::Ack { .. })
    ));
    let seq = second[0].view.as_ref().unwrap().seq;
    assert_eq!(
        second[0].call(adjourn).await.unwrap_err(),
        ErrorCode::TooManyTables
    );
    let after = second[0].fresh_snapshot().await;
    assert_eq!(after.seq, seq, "the refusal changed nothing");
    assert!(!after.adjourned);
    // Another player of the same table (same address) is not the host: the usual answer.
    assert_eq!(
        second[1].call(adjourn).await.unwrap_err(),
        ErrorCode::NotHost
    );
    // The first game resumed gives its place back.
    assert!(matches!(
        first[0].call(|id| ClientMessage::ResumeGame { id }).await,
        Ok(ServerMessage::Ack { .. })
    ));
    assert!(matches!(
        second[0].call(adjourn).await,
        Ok(ServerMessage::Ack { .. })
    ));
    assert!(second[0].fresh_snapshot().await.adjourned);
}

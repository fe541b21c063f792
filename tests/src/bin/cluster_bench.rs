//! `grand-melee-cluster-bench`: the figures of cluster mode, against real `nats-server`
//! processes on loopback (installed by the harness when missing, like the cluster tests).
//!
//! - **takeover**: 3 server nodes on a fresh 3-node NATS cluster (R3 stream), tables of bots
//!   spread over the nodes, a spectator of every table on a surviving node; the node that owns a
//!   third of the tables is SIGKILLed and the bench times, for each of its tables, the spectator's
//!   first unasked snapshot (the new owner entering it again) and its first event from the new
//!   owner. Repeated `--runs` times per lease, each on fresh processes.
//! - **load**: the same bots (same seed, shape and think time) against one single-node server
//!   (SQLite journal) and then against a 3-node cluster (R3), `--rounds` times interleaved, in
//!   one run: action → acknowledgement and action → last delivery latency, and the CPU per
//!   delivery of every server process (and of the nats-servers) read from `/proc`.
//!
//! The bots run in this process; its CPU is reported beside the servers'.
#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::print_stderr)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Parser;
use grand_melee_e2e::nats::{NatsCluster, NatsCounters, ServerNode};
use grand_melee_e2e::{Client, Received};
use grand_melee_loadtest::fleet::{Fleet, FleetConfig, Target};
use grand_melee_loadtest::procfs::{self, ProcSample};
use grand_melee_loadtest::report::StepResult;
use grand_melee_protocol::{ClientMessage, ServerMessage, TableId};

/// Takeover time and cluster-against-single-node load figures, on real nats-server processes.
#[derive(Debug, Parser)]
#[command(name = "grand-melee-cluster-bench", version, about, long_about = None)]
struct Args {
    /// What to measure, in order: `takeover`, `load`, `idle` (the cluster's cost with its tables
    /// seated and no actions).
    #[arg(long, value_delimiter = ',', default_value = "takeover,load")]
    parts: Vec<Part>,

    /// Takeover runs per lease.
    #[arg(long, default_value_t = 10)]
    runs: usize,

    /// The nodes' leases for the takeover runs, ms (the server's default is 10000).
    #[arg(long, value_delimiter = ',', default_value = "10000,2000")]
    lease_ms: Vec<u64>,

    /// Tables in a takeover run (table t is created on node t mod 3, which owns it).
    #[arg(long, default_value_t = 6)]
    takeover_tables: usize,

    /// Seats per table in a takeover run.
    #[arg(long, default_value_t = 15)]
    takeover_seats: u8,

    /// Tables of the load comparison.
    #[arg(long, default_value_t = 20)]
    tables: usize,

    /// Seats per table of the load comparison.
    #[arg(long, default_value_t = 28)]
    seats: u8,

    /// Mean think time of the load comparison's bots, ms.
    #[arg(long, default_value_t = 1000.0)]
    think_ms: f64,

    /// Measured seconds per target and round.
    #[arg(long, default_value_t = 20)]
    step_secs: u64,

    /// Warm-up seconds before each measurement.
    #[arg(long, default_value_t = 5)]
    warmup_secs: u64,

    /// Rounds of the load comparison (single-node then cluster, each round).
    #[arg(long, default_value_t = 2)]
    rounds: usize,

    /// `GOMAXPROCS` of every nats-server (0: Go's default, one per CPU). 1 by default: the
    /// three servers share the machine's cores with the nodes and the bots, as a nats-server
    /// sharing a machine with a node would be set (docs/src/cluster.md).
    #[arg(long, default_value_t = 1)]
    nats_gomaxprocs: u16,

    /// Load: every bot of a table starts at the node that owns it, instead of spread over the
    /// three nodes (and then told by `served_at` where the owner is, and moving there).
    #[arg(long)]
    bots_at_owner: bool,

    /// Load: the bots spread over the nodes stay where they started, ignoring `served_at`
    /// (every request of two thirds of them carried by a node that does not own the table).
    #[arg(long, conflicts_with = "bots_at_owner")]
    bots_stay: bool,

    /// The `grand-melee-server` binary (default: next to this one).
    #[arg(long, env = "GM_SERVER_BIN")]
    server_bin: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Part {
    Takeover,
    Load,
    Idle,
}

/// A fresh 3-server NATS cluster with the bench's `GOMAXPROCS`.
async fn nats_cluster(args: &Args) -> NatsCluster {
    let gomaxprocs = (args.nats_gomaxprocs > 0).then_some(args.nats_gomaxprocs);
    NatsCluster::start_with_gomaxprocs(3, gomaxprocs).await
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

fn max(values: &[f64]) -> f64 {
    values.iter().copied().fold(f64::NAN, f64::max)
}

fn fleet_config(
    urls: &[SocketAddr],
    tables: usize,
    seats: u8,
    think_ms: f64,
    seed: u64,
) -> FleetConfig {
    FleetConfig {
        base_url: urls
            .iter()
            .map(|a| format!("ws://{a}"))
            .collect::<Vec<_>>()
            .join(","),
        target: Target::Server,
        tables,
        seats,
        think: Duration::from_secs_f64(think_ms / 1000.0),
        seed,
        // Games long enough not to end inside a measurement.
        starting_life: 1000,
        ..FleetConfig::default()
    }
}

// ----- Takeover ------------------------------------------------------------------------------

/// What one moved table's spectator saw after the kill, seconds after it.
struct Moved {
    snapshot: f64,
    event: f64,
}

/// Watches `table` from `addr` until the first event from a new owner: the first `Events`
/// after an unasked snapshot received after `killed`. `None` when nothing came within
/// `patience`.
async fn until_new_owner(
    client: &mut Client,
    killed: Instant,
    patience: Duration,
) -> Option<Moved> {
    let deadline = killed + patience;
    let mut snapshot = None;
    loop {
        let left = deadline.checked_duration_since(Instant::now())?;
        match client.recv_within(left).await? {
            Received::Message(message, _) => match *message {
                ServerMessage::Snapshot { reply_to: None, .. } => {
                    snapshot.get_or_insert(killed.elapsed().as_secs_f64());
                }
                ServerMessage::Events { .. } => {
                    if let Some(snapshot) = snapshot {
                        return Some(Moved {
                            snapshot,
                            event: killed.elapsed().as_secs_f64(),
                        });
                    }
                }
                _ => {}
            },
            Received::Closed(_) => return None,
        }
    }
}

async fn list_tables(addr: SocketAddr) -> Vec<(TableId, String)> {
    let mut client = Client::connected(addr).await;
    let answer = client
        .call(|id| ClientMessage::ListTables {
            id,
            from: 0,
            limit: 100,
        })
        .await
        .unwrap();
    let ServerMessage::Tables { tables, .. } = answer else {
        panic!("expected tables: {answer:?}");
    };
    tables.into_iter().map(|t| (t.table, t.name)).collect()
}

/// One takeover run: per moved table, the times after the kill.
async fn takeover_run(args: &Args, binary: &str, lease_ms: u64, run: usize) -> Vec<Moved> {
    let nats = nats_cluster(args).await;
    let mut nodes = Vec::new();
    for i in 0..3 {
        nodes.push(ServerNode::cluster(binary, &nats, &format!("r{run}n{i}"), 3, lease_ms).await);
    }
    let addrs: Vec<SocketAddr> = nodes.iter().map(|n| n.addr).collect();
    let fleet = Fleet::launch(FleetConfig {
        follow_served_at: !args.bots_stay,
        ..fleet_config(
            &addrs,
            args.takeover_tables,
            args.takeover_seats,
            100.0,
            run as u64 + 1,
        )
    });
    assert!(
        fleet.seated(Duration::from_secs(120)).await,
        "every bot seated in 2 minutes"
    );
    // Table t is created by its first bot, on node t mod 3: node 0 owns tables 0, 3, ...
    let victim = 0;
    let survivor = addrs[1];
    let owned = nodes[victim].metric("gm_tables").await;
    let mut moving = Vec::new();
    for (id, name) in list_tables(survivor).await {
        let index: usize = name
            .strip_prefix("bots ")
            .and_then(|rest| rest.split('.').next())
            .and_then(|i| i.parse().ok())
            .unwrap_or_else(|| panic!("a bots' table name: {name}"));
        if index % 3 == victim {
            moving.push(id);
        }
    }
    assert_eq!(
        moving.len() as f64,
        owned,
        "node 0 owns the tables created on it"
    );
    let mut spectators = Vec::new();
    for &table in &moving {
        let mut client = Client::connected(survivor).await;
        client.watch(table).await;
        // The table is under way: an event arrives.
        loop {
            if let Received::Message(message, _) = client.recv().await
                && matches!(*message, ServerMessage::Events { .. })
            {
                break;
            }
        }
        spectators.push(client);
    }
    let killed = Instant::now();
    nodes[victim].kill().await;
    let patience = Duration::from_millis(lease_ms * 3) + Duration::from_secs(20);
    let watches: Vec<_> = spectators
        .into_iter()
        .map(|mut client| {
            tokio::spawn(async move { until_new_owner(&mut client, killed, patience).await })
        })
        .collect();
    let mut moved = Vec::new();
    for watch in watches {
        match watch.await.unwrap() {
            Some(m) => moved.push(m),
            None => panic!("a table of the killed node did not resume within {patience:?}"),
        }
    }
    let mut takeovers = 0.0;
    for node in &nodes[1..] {
        takeovers += node.metric("gm_cluster_takeovers_total").await;
    }
    assert_eq!(takeovers, moving.len() as f64, "each table taken over once");
    fleet.stop();
    let _ = fleet.join_within(Duration::from_secs(30)).await;
    for node in &mut nodes {
        node.kill().await;
    }
    moved
}

async fn takeover(args: &Args, binary: &str) {
    println!("## takeover");
    println!(
        "3 nodes, 3 nats-servers (R3), {} tables x {} bots (think 100 ms) spread over the nodes; \
         node 0 (owner of every third table) SIGKILLed; a spectator of each of its tables on node 1",
        args.takeover_tables, args.takeover_seats
    );
    for &lease in &args.lease_ms {
        let mut last_event = Vec::new();
        let mut all_events = Vec::new();
        let mut snapshots = Vec::new();
        for run in 0..args.runs {
            let moved = takeover_run(args, binary, lease, run).await;
            let events: Vec<f64> = moved.iter().map(|m| m.event).collect();
            let snaps: Vec<f64> = moved.iter().map(|m| m.snapshot).collect();
            eprintln!(
                "lease {lease} ms, run {}/{}: {} tables moved, first event from the new owner after {} s",
                run + 1,
                args.runs,
                moved.len(),
                events
                    .iter()
                    .map(|e| format!("{e:.2}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            last_event.push(max(&events));
            all_events.extend(events);
            snapshots.extend(snaps);
        }
        let tables = all_events.len();
        println!(
            "lease {lease} ms, {} runs, {tables} tables moved: kill -> first event from the new owner: \
             median {:.2} s, max {:.2} s (per table); kill -> every moved table's first event: median {:.2} s, \
             max {:.2} s (per run); kill -> re-entry snapshot: median {:.2} s",
            args.runs,
            median(&mut all_events.clone()),
            max(&all_events),
            median(&mut last_event.clone()),
            max(&last_event),
            median(&mut snapshots),
        );
    }
}

// ----- Load ----------------------------------------------------------------------------------

/// The processes whose CPU a measurement reads.
fn sample_all(pids: &[u32]) -> Option<ProcSample> {
    let mut total: Option<ProcSample> = None;
    for &pid in pids {
        let s = procfs::sample(pid).ok()?;
        total = Some(match total {
            None => s,
            Some(t) => ProcSample {
                cpu_seconds: t.cpu_seconds + s.cpu_seconds,
                rss_kib: t.rss_kib + s.rss_kib,
                peak_rss_kib: t.peak_rss_kib + s.peak_rss_kib,
                at: s.at,
            },
        });
    }
    total
}

/// The message counters of every server of `nats`, summed (`None` if one does not answer).
async fn nats_counters(nats: &NatsCluster) -> Option<NatsCounters> {
    let mut total = NatsCounters::default();
    for i in 0..nats.len() {
        total = total.plus(nats.counters(i).await?);
    }
    Some(total)
}

/// One measured step against servers at `addrs`; the CPU of `servers` (and of `engine`, the
/// nats-servers) per delivery, and what the nats-servers carried.
struct Measured {
    step: StepResult,
    servers_us: f64,
    engine_us: f64,
    /// The servers' and the nats-servers' CPU, in ms per second of the window.
    servers_ms_per_s: f64,
    engine_ms_per_s: f64,
    /// The nats-servers' message counters over the window (summed over the servers).
    carried: Option<NatsCounters>,
}

async fn measure(
    args: &Args,
    think_ms: f64,
    addrs: &[SocketAddr],
    servers: &[u32],
    nats: Option<&NatsCluster>,
) -> Measured {
    let engine: Vec<u32> = nats.map_or_else(Vec::new, |nats| {
        (0..nats.len()).filter_map(|i| nats.pid(i)).collect()
    });
    let engine = engine.as_slice();
    let fleet = Fleet::launch(FleetConfig {
        at_owner: args.bots_at_owner,
        follow_served_at: !args.bots_stay,
        ..fleet_config(addrs, args.tables, args.seats, think_ms, 7)
    });
    assert!(
        fleet.seated(Duration::from_secs(300)).await,
        "every bot seated in 5 minutes"
    );
    tokio::time::sleep(Duration::from_secs(args.warmup_secs)).await;
    let seating = fleet.take_window();
    if addrs.len() > 1 {
        println!(
            "  seating: {} of {} bots moved to their table's owner when told (served_at)",
            seating.counts.moved_to_owner,
            fleet.bots()
        );
    }
    let own_before = procfs::sample(std::process::id()).ok();
    let counted_before = match nats {
        Some(nats) => nats_counters(nats).await,
        None => None,
    };
    let servers_before = sample_all(servers);
    let engine_before = sample_all(engine);
    tokio::time::sleep(Duration::from_secs(args.step_secs)).await;
    let window = fleet.take_window();
    let servers_after = sample_all(servers);
    let engine_after = sample_all(engine);
    let counted_after = match nats {
        Some(nats) => nats_counters(nats).await,
        None => None,
    };
    let carried = counted_before
        .zip(counted_after)
        .map(|(before, after)| after.since(before));
    let own_after = procfs::sample(std::process::id()).ok();
    fleet.stop();
    let _ = fleet.join_within(Duration::from_secs(60)).await;
    let deliveries = window.counts.deliveries.max(1) as f64;
    let per_delivery = |b: Option<ProcSample>, a: Option<ProcSample>| {
        b.zip(a).map_or(0.0, |(b, a)| {
            procfs::cpu_between(&b, &a).1 * 1e6 / deliveries
        })
    };
    let servers_us = per_delivery(servers_before, servers_after);
    let engine_us = per_delivery(engine_before, engine_after);
    let per_second = |b: Option<ProcSample>, a: Option<ProcSample>| {
        b.zip(a)
            .map_or(0.0, |(b, a)| procfs::cpu_between(&b, &a).0 * 1e3)
    };
    let servers_ms_per_s = per_second(servers_before, servers_after);
    let engine_ms_per_s = per_second(engine_before, engine_after);
    let both = |b: Option<ProcSample>, e: Option<ProcSample>| match (b, e) {
        (Some(b), Some(e)) => Some(ProcSample {
            cpu_seconds: b.cpu_seconds + e.cpu_seconds,
            rss_kib: b.rss_kib + e.rss_kib,
            peak_rss_kib: b.peak_rss_kib + e.peak_rss_kib,
            at: b.at,
        }),
        (b, None) => b,
        (None, e) => e,
    };
    let target = both(servers_before, engine_before).zip(both(servers_after, engine_after));
    let bots_cpu = own_before
        .zip(own_after)
        .map(|(b, a)| procfs::cpu_between(&b, &a).1);
    Measured {
        step: StepResult::new(think_ms, &window, target, bots_cpu),
        servers_us,
        engine_us,
        servers_ms_per_s,
        engine_ms_per_s,
        carried,
    }
}

fn describe(name: &str, m: &Measured) {
    let s = &m.step;
    println!(
        "{name:<12} {:>8.0} {:>10.0} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>9.2} {:>9.2} {:>7.2} {:>6} {:>6}",
        s.actions_per_s,
        s.deliveries_per_s,
        s.ack.p50_ms,
        s.ack.p99_ms,
        s.last_delivery.p50_ms,
        s.last_delivery.p99_ms,
        m.servers_us,
        m.servers_us + m.engine_us,
        s.bots_cpu_cores.unwrap_or(0.0),
        s.counts.errors,
        s.counts.disconnects,
    );
}

/// What the nats-servers did per action: CPU and messages.
fn describe_engine(m: &Measured) {
    let actions = m.step.counts.actions.max(1) as f64;
    let window = m.step.seconds.max(1e-9);
    let engine_ms_per_action = m.engine_ms_per_s * window / actions;
    match m.carried {
        Some(c) => println!(
            "  nats-servers: {:.1} ms CPU/s, {:.2} ms CPU per action; per action {:.1} messages in, \
             {:.1} out, {:.0} bytes in, {:.0} out (summed over the servers, routes and \
             replication included)",
            m.engine_ms_per_s,
            engine_ms_per_action,
            c.in_msgs as f64 / actions,
            c.out_msgs as f64 / actions,
            c.in_bytes as f64 / actions,
            c.out_bytes as f64 / actions,
        ),
        None => println!(
            "  nats-servers: {:.1} ms CPU/s, {:.2} ms CPU per action (no /varz counters)",
            m.engine_ms_per_s, engine_ms_per_action
        ),
    }
}

/// The cluster with its tables seated and nobody acting: what it costs to keep it up.
async fn idle(args: &Args, binary: &str) {
    println!("## idle");
    let nats = nats_cluster(args).await;
    let mut nodes = Vec::new();
    for i in 0..3 {
        nodes.push(ServerNode::cluster(binary, &nats, &format!("idle{i}"), 3, 10_000).await);
    }
    let addrs: Vec<SocketAddr> = nodes.iter().map(|n| n.addr).collect();
    let pids: Vec<u32> = nodes.iter().filter_map(ServerNode::pid).collect();
    // Bots that never act (a think time of days): seated, connected, silent.
    let m = measure(args, 1e10, &addrs, &pids, Some(&nats)).await;
    let seconds = m.step.seconds.max(1e-9);
    let carried = m.carried.unwrap_or_default();
    println!(
        "3 nodes + 3 nats-servers (R3), {} tables x {} bots seated, no actions, {:.0} s: nodes \
         {:.1} ms CPU/s, nats-servers {:.1} ms CPU/s, {:.1} messages/s in, {:.1} out",
        args.tables,
        args.seats,
        seconds,
        m.servers_ms_per_s,
        m.engine_ms_per_s,
        carried.in_msgs as f64 / seconds,
        carried.out_msgs as f64 / seconds,
    );
}

async fn load(args: &Args, binary: &str) {
    println!("## load");
    println!(
        "{} tables x {} bots, think {} ms, starting life 1000, warm-up {} s, measured {} s; \
         single node (SQLite journal, durability full) then 3 nodes + 3 nats-servers (R3), \
         the bots of each table {}; {} rounds",
        args.tables,
        args.seats,
        args.think_ms,
        args.warmup_secs,
        args.step_secs,
        if args.bots_at_owner {
            "at the node that owns it"
        } else if args.bots_stay {
            "spread over the nodes, staying there"
        } else {
            "spread over the nodes, then moving to the owner when told (served_at)"
        },
        args.rounds
    );
    println!(
        "{:<12} {:>8} {:>10} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>7} {:>6} {:>6}",
        "target",
        "acts/s",
        "deliv/s",
        "ack p50",
        "ack p99",
        "last p50",
        "last p99",
        "us/deliv",
        "+nats us",
        "bots",
        "errs",
        "discon"
    );
    let mut ratios_cpu = Vec::new();
    let mut ratios_p50 = Vec::new();
    let mut ratios_p99 = Vec::new();
    for round in 0..args.rounds {
        let single = {
            let node = ServerNode::start(binary, "single", &[]).await;
            let pids: Vec<u32> = node.pid().into_iter().collect();
            measure(args, args.think_ms, &[node.addr], &pids, None).await
        };
        describe(&format!("single r{}", round + 1), &single);
        let cluster = {
            let nats = nats_cluster(args).await;
            let mut nodes = Vec::new();
            for i in 0..3 {
                nodes.push(
                    ServerNode::cluster(binary, &nats, &format!("l{round}n{i}"), 3, 10_000).await,
                );
            }
            let addrs: Vec<SocketAddr> = nodes.iter().map(|n| n.addr).collect();
            let pids: Vec<u32> = nodes.iter().filter_map(ServerNode::pid).collect();
            measure(args, args.think_ms, &addrs, &pids, Some(&nats)).await
        };
        describe(&format!("cluster r{}", round + 1), &cluster);
        describe_engine(&cluster);
        ratios_cpu.push((cluster.servers_us + cluster.engine_us) / single.servers_us);
        ratios_p50.push(cluster.step.last_delivery.p50_ms / single.step.last_delivery.p50_ms);
        ratios_p99.push(cluster.step.last_delivery.p99_ms / single.step.last_delivery.p99_ms);
    }
    let spread = |v: &[f64]| {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        format!("{lo:.2}-{hi:.2}")
    };
    println!(
        "cluster/single: CPU per delivery (nodes + nats) median {:.2}x ({}), last-delivery p50 \
         {:.2}x ({}), p99 {:.2}x ({})",
        median(&mut ratios_cpu.clone()),
        spread(&ratios_cpu),
        median(&mut ratios_p50.clone()),
        spread(&ratios_p50),
        median(&mut ratios_p99.clone()),
        spread(&ratios_p99),
    );
}

fn main() {
    let args = Args::parse();
    if let Err(error) = grand_melee_loadtest::raise_open_file_limit() {
        eprintln!("cannot raise the open-file limit: {error}");
    }
    let binary = match &args.server_bin {
        Some(path) => path.clone(),
        None => std::env::current_exe()
            .unwrap()
            .with_file_name("grand-melee-server"),
    };
    if !binary.is_file() {
        eprintln!(
            "no server binary at {} (build it: cargo build --release -p grand-melee-server, or pass --server-bin)",
            binary.display()
        );
        std::process::exit(2);
    }
    let binary = binary.to_string_lossy().into_owned();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let machine = grand_melee_loadtest::bench::Machine::describe();
        println!(
            "machine: {} CPUs ({}), {} MiB, Linux {}; nats-server {} (GOMAXPROCS {}); bots in \
             this process",
            machine.cpus,
            machine.cpu_model,
            machine.memory_kib / 1024,
            machine.kernel,
            grand_melee_e2e::nats::NATS_SERVER_VERSION,
            match args.nats_gomaxprocs {
                0 => "Go's default".to_owned(),
                n => n.to_string(),
            }
        );
        for part in &args.parts {
            match part {
                Part::Takeover => takeover(&args, &binary).await,
                Part::Load => load(&args, &binary).await,
                Part::Idle => idle(&args, &binary).await,
            }
        }
    });
}

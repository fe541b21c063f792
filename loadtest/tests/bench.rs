//! A very short `bench` run of the real binary against the relay and the floor (the server's
//! binary is not built by `cargo test`): both start as subprocesses, the bots in a worker
//! process take their seats, and every round has the reference step, the probes of the capacity
//! search, the fsync figures and the relay / floor ratios; and its progress, written to a pipe,
//! comes as plain lines. And `bench --tls`: the server, the relay and the floor all seat every
//! bot over wss.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use serde_json::Value;

/// A bound on a failure, not a pace: the run takes a few seconds.
const PATIENCE: Duration = Duration::from_secs(120);

/// What every short run here shares: one worker process, one round, one-second steps without
/// warm-up, a capacity search down to 100 ms at most, the result as JSON.
const SHORT: &[&str] = &[
    "--processes",
    "1",
    "--rounds",
    "1",
    "--think-min-ms",
    "100",
    "--step-secs",
    "1",
    "--warmup-secs",
    "0",
    "--json",
];

/// One probe at think 300 ms, no fsync samples: the runs that only need the bench to go through.
const ONE_PROBE: &[&str] = &[
    "--probes",
    "1",
    "--cpu-think-ms",
    "300",
    "--think-max-ms",
    "300",
    "--fsync-samples",
    "0",
];

/// `grand-melee-loadtest` with `args`, run to its end within [`PATIENCE`].
async fn loadtest(args: &[&str]) -> std::process::Output {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_grand-melee-loadtest"))
        .args(args)
        .kill_on_drop(true)
        .output();
    tokio::time::timeout(PATIENCE, output)
        .await
        .unwrap()
        .unwrap()
}

/// A short `bench` with `args` (and [`SHORT`]) that must succeed: its JSON result, and its
/// standard error (the progress lines).
async fn short_bench(args: &[&str]) -> (Value, String) {
    let args: Vec<&str> = ["bench"].iter().chain(args).chain(SHORT).copied().collect();
    let output = loadtest(&args).await;
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    (serde_json::from_slice(&output.stdout).unwrap(), stderr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_bench_of_the_relay_and_the_floor() {
    let (result, stderr) = short_bench(&[
        "--targets",
        "relay,floor",
        "--tables",
        "2",
        "--seats",
        "15",
        "--probes",
        "2",
        "--cpu-think-ms",
        "200",
        "--think-max-ms",
        "300",
        "--fsync-samples",
        "5",
        "--relay-frame-bytes",
        "120",
    ])
    .await;
    // Standard error is a pipe here, not a terminal: the progress comes as plain lines.
    for expected in [
        "] round 1/1 · relay · starting",
        "] round 1/1 · relay · reference · think 200 ms · measuring",
        "] round 1/1 · relay: reference, think 200 ms: ",
        "] round 1/1 · floor: capacity ",
        "] round 1: 5 appends of 4096 bytes + fdatasync in ",
    ] {
        assert!(
            stderr
                .lines()
                .any(|line| line.starts_with("[0:0") && line.contains(expected)),
            "no progress line with {expected:?} in:\n{stderr}"
        );
    }
    let rounds = result["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 1);
    let round = &rounds[0];
    assert_eq!(round["fsync"]["samples"], 5);
    assert_eq!(round["frame_bytes"], 120);
    let targets = round["targets"].as_array().unwrap();
    let names: Vec<&str> = targets
        .iter()
        .map(|t| t["target"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["relay", "floor"]);
    for target in targets {
        assert_eq!(target["seats"], 30);
        assert_eq!(target["frame_bytes"], 120);
        let steps = target["steps"].as_array().unwrap();
        assert_eq!(steps[0]["kind"], "reference");
        assert_eq!(steps[0]["think_ms"], 200.0);
        let probes: Vec<f64> = steps[1..]
            .iter()
            .map(|s| {
                assert_eq!(s["kind"], "probe");
                s["think_ms"].as_f64().unwrap()
            })
            .collect();
        assert!(
            probes == [300.0] || probes == [300.0, 100.0],
            "the light end first, then the heavy end: {probes:?}"
        );
        assert!(
            steps
                .iter()
                .all(|s| s["deliveries_per_s"].as_f64().unwrap() > 0.0)
        );
        assert!(target["capacity"]["kind"].is_string());
        let totals = &target["totals"];
        for counter in ["errors", "disconnects", "gaps", "connect_failures"] {
            assert_eq!(totals[counter], 0, "{counter} at {}", target["target"]);
        }
        assert!(target["loaded_rss_kib"].as_u64().unwrap() > 0);
    }
    let pairs = result["summary"]["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 1);
    assert_eq!(
        (pairs[0]["a"].as_str(), pairs[0]["b"].as_str()),
        (Some("relay"), Some("floor"))
    );
    assert_eq!(
        pairs[0]["cpu_per_delivery"]["per_round"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(result["summary"]["capacity_server_relay"], "not_measured");
}

/// `bench --growth`: each size in each round, one summary row per size, and the machine's own
/// accounting beside every step.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn growth_runs_every_size_and_compares_them() {
    let (result, _) = short_bench(
        &[
            ONE_PROBE,
            &[
                "--growth",
                "2,3",
                "--targets",
                "relay",
                "--seats",
                "15",
                "--relay-frame-bytes",
                "120",
            ],
        ]
        .concat(),
    )
    .await;
    let runs = result["runs"].as_array().unwrap();
    let seats: Vec<u64> = runs.iter().map(|r| r["seats"].as_u64().unwrap()).collect();
    assert_eq!(seats, [30, 45]);
    for run in runs {
        let target = &run["result"]["rounds"][0]["targets"][0];
        assert_eq!(target["target"], "relay");
        let step = &target["steps"][0];
        assert!(step["deliveries_per_s"].as_f64().unwrap() > 0.0, "{step}");
        assert!(
            step["machine"]["busy_cores"].as_f64().unwrap() > 0.0,
            "{step}"
        );
        assert!(step["server"].is_null(), "no server counters for the relay");
    }
    let summary = &result["summary"];
    let rows = summary["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1]["tables"], 3);
    let trend = &summary["trends"][0];
    assert_eq!(trend["target"], "relay");
    assert!(
        trend["rss_max_over_min"].as_f64().unwrap() >= 1.0,
        "{trend}"
    );
    // CPU time is read in 10 ms ticks: a step this light may read none for a size, and then
    // there is no CPU ratio and no verdict, rather than a wrong one.
    match trend["cpu_max_over_min"].as_f64() {
        Some(ratio) => {
            assert!(ratio >= 1.0, "{trend}");
            assert!(trend["flat"].is_boolean(), "{trend}");
        }
        None => assert!(trend["flat"].is_null(), "{trend}"),
    }
}

/// `bench --tls` against the server (the binary next to this one: `cargo test --workspace`
/// builds it for the server's own tests; alone, `cargo build -p grand-melee-server` first), the
/// relay and the floor: every target seats every bot over wss, and none counts an error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_bench_over_wss_of_the_server_the_relay_and_the_floor() {
    let server = std::path::Path::new(env!("CARGO_BIN_EXE_grand-melee-loadtest"))
        .with_file_name("grand-melee-server");
    assert!(
        server.exists(),
        "no server binary at {} (build it: cargo build -p grand-melee-server)",
        server.display()
    );
    let (result, stderr) = short_bench(
        &[
            ONE_PROBE,
            &[
                "--tls",
                "--targets",
                "server,relay,floor",
                "--tables",
                "2",
                "--seats",
                "15",
                "--starting-life",
                "1000",
                "--server-bin",
                server.to_str().unwrap(),
            ],
        ]
        .concat(),
    )
    .await;
    for expected in [
        "] round 1/1 · server (wss) · starting",
        "] round 1/1 · relay (wss) · starting",
        "] round 1/1 · floor (wss) · starting",
    ] {
        assert!(
            stderr.lines().any(|line| line.contains(expected)),
            "no progress line with {expected:?} in:\n{stderr}"
        );
    }
    assert_eq!(result["tls"], true);
    let targets = result["rounds"][0]["targets"].as_array().unwrap();
    let names: Vec<&str> = targets
        .iter()
        .map(|t| t["target"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["server", "relay", "floor"]);
    for target in targets {
        let name = &target["target"];
        assert_eq!(target["seats"], 30, "every bot seated at {name}");
        let totals = &target["totals"];
        for counter in [
            "errors",
            "disconnects",
            "gaps",
            "connect_failures",
            "undelivered_actions",
        ] {
            assert_eq!(totals[counter], 0, "{counter} at {name}");
        }
        assert!(
            totals["deliveries"].as_u64().unwrap() > 0,
            "deliveries at {name}"
        );
        let step = &target["steps"][0];
        assert!(step["deliveries_per_s"].as_f64().unwrap() > 0.0, "{name}");
    }
    // The server's own counters were read over https.
    assert!(
        targets[0]["steps"][0]["server"].is_object(),
        "{}",
        targets[0]["steps"][0]
    );
}

/// `--tls` with Colyseus is refused before anything starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_with_colyseus_is_refused_up_front() {
    let output = loadtest(&["bench", "--tls", "--targets", "relay,colyseus"]).await;
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("Colyseus is measured on ws only"),
        "{stderr}"
    );
    assert!(!stderr.contains("starting"), "nothing started: {stderr}");
}

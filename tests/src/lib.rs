//! Helpers for the end-to-end tests in `tests/tests/`: a real server on a loopback port and
//! WebSocket clients that speak the real protocol and mirror their table's state.
#![allow(clippy::unwrap_used)]

pub mod error_codes;
pub mod magic_tech;
pub mod nats;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use grand_melee_protocol::game::Game;
use grand_melee_protocol::games::GameVisitor;
use grand_melee_protocol::league::{LeagueId, MemberToken};
use grand_melee_protocol::{
    self as wire, ApplyError, ClientMessage, ErrorCode, GameKind, Mirror, MulliganMode,
    OrganiserSecret, PROTOCOL_VERSION, Reduction, RuleSet, SeatToken, ServerMessage, TableId,
    TableView,
};
use grand_melee_server::{Server, ServerConfig};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;

/// How long a test waits for something the server must send before failing. A bound on a
/// failure, not a synchronisation: every wait ends as soon as the message arrives.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// A `create_table` request as a test writes it: the server's defaults (what it takes for an
/// absent field) but for what the test sets, e.g. `CreateTable::new("Friday", 4).seed(7)`.
/// The one place the tests spell out the request's fields.
#[derive(Clone, Debug, PartialEq)]
pub struct CreateTable {
    name: String,
    seats: u8,
    spell_range: u8,
    reduction: Reduction,
    starting_life: i32,
    password: Option<String>,
    seed: Option<u64>,
    turn_clock_secs: u32,
    absence_limit_secs: u32,
    mulligan_clock_secs: u32,
    max_spectators: u32,
    rules: RuleSet,
    combat_dice: bool,
    mulligan: MulliganMode,
    game: GameKind,
    league: Option<LeagueId>,
    organiser: Option<OrganiserSecret>,
    mountain_magic: Option<wire::mountain_magic_types::MountainMagicSettings>,
}

impl CreateTable {
    /// A table named `name` with `seats` seats and every other setting the server's default.
    pub fn new(name: impl Into<String>, seats: u8) -> Self {
        Self {
            name: name.into(),
            seats,
            spell_range: 0,
            reduction: Reduction::default(),
            starting_life: wire::DEFAULT_STARTING_LIFE,
            password: None,
            seed: None,
            turn_clock_secs: 0,
            absence_limit_secs: wire::DEFAULT_ABSENCE_LIMIT_SECS,
            mulligan_clock_secs: wire::DEFAULT_MULLIGAN_CLOCK_SECS,
            max_spectators: wire::DEFAULT_MAX_SPECTATORS,
            rules: RuleSet::default(),
            combat_dice: false,
            mulligan: MulliganMode::default(),
            game: GameKind::default(),
            league: None,
            organiser: None,
            mountain_magic: None,
        }
    }

    /// Spell range R (0: the rules' own).
    pub fn spell_range(mut self, range: u8) -> Self {
        self.spell_range = range;
        self
    }

    /// Starting life.
    pub fn starting_life(mut self, life: i32) -> Self {
        self.starting_life = life;
        self
    }

    /// A password to join or watch (`"secret"`, or an `Option` of one).
    pub fn password<'a>(mut self, password: impl Into<Option<&'a str>>) -> Self {
        self.password = password.into().map(str::to_owned);
        self
    }

    /// The seed kept for the record.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// The turn clock in seconds (0: none).
    pub fn turn_clock_secs(mut self, secs: u32) -> Self {
        self.turn_clock_secs = secs;
        self
    }

    /// Seconds a disconnected player has before he is absent.
    pub fn absence_limit_secs(mut self, secs: u32) -> Self {
        self.absence_limit_secs = secs;
        self
    }

    /// Seconds for a mulligan decision (0: no clock).
    pub fn mulligan_clock_secs(mut self, secs: u32) -> Self {
        self.mulligan_clock_secs = secs;
        self
    }

    /// Most spectators at once.
    pub fn max_spectators(mut self, most: u32) -> Self {
        self.max_spectators = most;
        self
    }

    /// Which rules.
    pub fn rules(mut self, rules: RuleSet) -> Self {
        self.rules = rules;
        self
    }

    /// Combat with Dice on.
    pub fn combat_dice(mut self) -> Self {
        self.combat_dice = true;
        self
    }

    /// The mulligan mode.
    pub fn mulligan(mut self, mode: MulliganMode) -> Self {
        self.mulligan = mode;
        self
    }

    /// Which game the table plays.
    pub fn game(mut self, game: GameKind) -> Self {
        self.game = game;
        self
    }

    /// A Mountain Magic table's own settings.
    pub fn mountain_magic(
        mut self,
        settings: wire::mountain_magic_types::MountainMagicSettings,
    ) -> Self {
        self.mountain_magic = Some(settings);
        self
    }

    /// A league game, with the league's organiser secret.
    pub fn league(mut self, league: LeagueId, organiser: OrganiserSecret) -> Self {
        self.league = Some(league);
        self.organiser = Some(organiser);
        self
    }

    /// The request, numbered `id`.
    pub fn request(&self, id: u32) -> ClientMessage {
        let settings = self.clone();
        ClientMessage::CreateTable {
            mountain_magic: settings.mountain_magic,
            id,
            name: settings.name,
            seats: settings.seats,
            spell_range: settings.spell_range,
            reduction: settings.reduction,
            starting_life: settings.starting_life,
            password: settings.password,
            seed: settings.seed,
            turn_clock_secs: settings.turn_clock_secs,
            absence_limit_secs: settings.absence_limit_secs,
            mulligan_clock_secs: settings.mulligan_clock_secs,
            max_spectators: settings.max_spectators,
            rules: settings.rules,
            combat_dice: settings.combat_dice,
            mulligan: settings.mulligan,
            game: settings.game,
            league: settings.league,
            organiser: settings.organiser,
        }
    }

    /// The new table's id from the answer to this request (which must be `table_created`).
    pub fn created(&self, answer: ServerMessage) -> TableId {
        let ServerMessage::TableCreated { table, .. } = answer else {
            panic!("{:?}: expected table_created, got {answer:?}", self.name);
        };
        table
    }
}

/// A server running in this test's runtime on a free loopback port.
#[derive(Debug)]
pub struct TestServer {
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
    /// The journal's directory, removed when the server is dropped.
    _data: tempfile::TempDir,
    /// The server's counters: on shutdown (or drop) the test fails if the server answered an
    /// error `protocol/src/errors_of.rs` does not declare, so every socket test checks the
    /// table of errors PROTOCOL.md prints.
    metrics: std::sync::Arc<grand_melee_server::metrics::Metrics>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        // A test already failing says why itself; a second panic would abort.
        if !std::thread::panicking() {
            self.check_errors_declared();
        }
    }
}

impl TestServer {
    /// Starts a server with default settings.
    pub async fn start() -> Self {
        Self::start_with(ServerConfig::default()).await
    }

    /// Starts a server with the given settings. The listen address is replaced by port 0 and
    /// the journal goes to a fresh temporary directory, with `normal` durability (these tests
    /// are not about power cuts, and fsyncs would only slow them down).
    pub async fn start_with(config: ServerConfig) -> Self {
        Self::start_in(config, tempfile::tempdir().unwrap()).await
    }

    /// [`start_with`](Self::start_with), listening on `listen` (`[::1]:0` for IPv6 clients)
    /// instead of `127.0.0.1:0`.
    pub async fn start_on(mut config: ServerConfig, listen: SocketAddr) -> Self {
        config.listen = listen;
        Self::start_at(config, tempfile::tempdir().unwrap()).await
    }

    /// [`start_with`](Self::start_with) on the journal in `data`.
    async fn start_in(mut config: ServerConfig, data: tempfile::TempDir) -> Self {
        config.listen = "127.0.0.1:0".parse().unwrap();
        Self::start_at(config, data).await
    }

    /// A server with `config` (and its listen address) on the journal in `data`.
    async fn start_at(mut config: ServerConfig, data: tempfile::TempDir) -> Self {
        config.data_dir = data.path().to_owned();
        config.durability = grand_melee_server::journal::Durability::Normal;
        let server = Server::bind(config).await.unwrap();
        let addr = server.local_addr().unwrap();
        let metrics = server.metrics();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(server.run(async {
            let _ = stopped.await;
        }));
        Self {
            addr,
            stop: Some(stop),
            task: Some(task),
            _data: data,
            metrics,
        }
    }

    /// Shuts the server down gracefully and waits until it has finished.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            tokio::time::timeout(PATIENCE, task).await.unwrap().unwrap();
        }
        self.check_errors_declared();
    }

    /// The (request, code) pairs the server answered that `protocol/src/errors_of.rs` does not
    /// declare (`gm_undeclared_error_codes_total`), as `request code`.
    pub fn undeclared_error_codes(&self) -> Vec<String> {
        self.metrics.undeclared_replies()
    }

    /// Fails the test if the server answered an undeclared (request, code) pair.
    fn check_errors_declared(&self) {
        let undeclared = self.undeclared_error_codes();
        assert!(
            undeclared.is_empty(),
            "the server answered errors protocol/src/errors_of.rs does not declare (add them \
             there, with the test that drives them, and regenerate PROTOCOL.md: GM_BLESS=1 \
             cargo test -p grand-melee-protocol --test doc): {undeclared:?}"
        );
    }

    /// Shuts the server down gracefully and starts a new one with `config` on the same
    /// journal.
    pub async fn restart(self, config: ServerConfig) -> Self {
        let data = self.stop().await;
        Self::start_in(config, data).await
    }

    /// Shuts the server down gracefully and hands over its journal's directory, for a test to
    /// read or write the journal (`grand_melee_server::journal::Journal`) before
    /// [`start_on_journal`](Self::start_on_journal) starts a server on it again.
    pub async fn stop(mut self) -> tempfile::TempDir {
        let data = std::mem::replace(&mut self._data, tempfile::tempdir().unwrap());
        self.shutdown().await;
        data
    }

    /// [`start_with`](Self::start_with), on the journal in `data` (from [`stop`](Self::stop)).
    pub async fn start_on_journal(config: ServerConfig, data: tempfile::TempDir) -> Self {
        Self::start_in(config, data).await
    }

    /// The journal's directory.
    pub fn data_dir(&self) -> &std::path::Path {
        self._data.path()
    }

    /// The server's WebSocket URL.
    pub fn url(&self) -> String {
        format!("ws://{}/ws", self.addr)
    }

    /// A client that has completed `hello`.
    pub async fn client(&self) -> Client {
        Client::connected(self.addr).await
    }
}

/// A [`Mirror`] of some game's table, whichever game it is: what a test client keeps.
pub trait Follow: std::fmt::Debug + Send {
    /// [`Mirror::apply_batch`].
    fn apply_batch(&mut self, first_seq: u64, events: &[wire::Event]) -> Result<(), ApplyError>;
    /// [`Mirror::view`].
    fn view(&self) -> TableView;
}

impl<G: Game> Follow for Mirror<G> {
    fn apply_batch(&mut self, first_seq: u64, events: &[wire::Event]) -> Result<(), ApplyError> {
        Mirror::apply_batch(self, first_seq, events)
    }

    fn view(&self) -> TableView {
        Mirror::view(self)
    }
}

/// Makes the mirror of the game a snapshot's settings name ([`GameKind::visit`]).
struct MirrorOf<'a>(&'a TableView);

impl GameVisitor for MirrorOf<'_> {
    type Output = Result<Box<dyn Follow>, ApplyError>;

    fn visit<G: Game>(self) -> Self::Output {
        Ok(Box::new(Mirror::<G>::of(self.0)?))
    }
}

/// A mirror of the table `snapshot` shows, of the game it plays.
pub fn follow(snapshot: &TableView) -> Result<Box<dyn Follow>, ApplyError> {
    snapshot.settings.game.visit(MirrorOf(snapshot))
}

/// What a client received: a decoded message with its exact bytes, or the close.
#[derive(Debug, Clone)]
pub enum Received {
    Message(Box<ServerMessage>, Bytes),
    Closed(Option<u16>),
}

/// A protocol client over a real WebSocket. A background task reads every frame as it arrives
/// (so the client never counts as a slow reader) and hands it over in order.
#[derive(Debug)]
pub struct Client {
    out: mpsc::UnboundedSender<Message>,
    inbox: mpsc::UnboundedReceiver<Received>,
    next_id: u32,
    /// The table this client mirrors, kept up to date from snapshots and event batches by the
    /// protocol's one fold ([`Mirror`] of the snapshot's game).
    pub mirror: Option<Box<dyn Follow>>,
    /// The mirror's current snapshot (its projection after every message).
    pub view: Option<TableView>,
    /// Every events frame received, with its exact bytes.
    pub event_frames: Vec<(u64, Bytes)>,
    /// This client's player and seat token once seated.
    pub seat: Option<(u16, SeatToken)>,
    /// The last `served_at` received (cluster mode: the table's owner is elsewhere).
    pub served_at: Option<(TableId, String)>,
    pub closed: Option<Option<u16>>,
    /// The reason the server gave in its close frame, once closed.
    pub close_reason: std::sync::Arc<std::sync::Mutex<Option<String>>>,
    /// While set, a requested snapshot does not replace the mirrored view.
    keep_mirror: bool,
}

impl Client {
    /// Opens a WebSocket to `/ws`.
    pub async fn connect(addr: SocketAddr) -> Self {
        Self::connect_from(addr, std::net::Ipv4Addr::LOCALHOST.into()).await
    }

    /// Opens a WebSocket to `/ws` from another loopback address (`127.0.0.2`, …), so that a
    /// test can be several clients' addresses at once.
    pub async fn connect_from(addr: SocketAddr, local: std::net::IpAddr) -> Self {
        Self::connect_with(addr, local, &[]).await
    }

    /// Opens a WebSocket to `/ws` from `local` with extra handshake headers (`X-Forwarded-For`
    /// and the like, as a reverse proxy would add).
    pub async fn connect_with(
        addr: SocketAddr,
        local: std::net::IpAddr,
        headers: &[(&str, &str)],
    ) -> Self {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        let socket = if local.is_ipv6() {
            tokio::net::TcpSocket::new_v6().unwrap()
        } else {
            tokio::net::TcpSocket::new_v4().unwrap()
        };
        socket.bind(SocketAddr::new(local, 0)).unwrap();
        let stream = socket.connect(addr).await.unwrap();
        let mut request = format!("ws://{addr}/ws").into_client_request().unwrap();
        for (name, value) in headers {
            request.headers_mut().append(
                tokio_tungstenite::tungstenite::http::HeaderName::from_bytes(name.as_bytes())
                    .unwrap(),
                value.parse().unwrap(),
            );
        }
        let (ws, _) = tokio_tungstenite::client_async(request, stream)
            .await
            .unwrap();
        let close_reason = std::sync::Arc::new(std::sync::Mutex::new(None));
        let reason_slot = std::sync::Arc::clone(&close_reason);
        let (mut sink, mut stream) = ws.split();
        let (out, mut outgoing) = mpsc::unbounded_channel::<Message>();
        let (deliver, inbox) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Some(message) = outgoing.recv().await {
                if sink.send(message).await.is_err() {
                    break;
                }
            }
            let _ = sink.close().await;
        });
        tokio::spawn(async move {
            while let Some(frame) = stream.next().await {
                match frame {
                    Ok(Message::Binary(bytes)) => {
                        let message = wire::decode_server(&bytes).unwrap();
                        let _ = deliver.send(Received::Message(Box::new(message), bytes));
                    }
                    Ok(Message::Close(frame)) => {
                        *reason_slot.lock().unwrap() =
                            frame.as_ref().map(|f| f.reason.as_str().to_owned());
                        let code = frame.map(|f: CloseFrame| u16::from(f.code));
                        let _ = deliver.send(Received::Closed(code));
                        return;
                    }
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
            let _ = deliver.send(Received::Closed(None));
        });
        Self {
            out,
            inbox,
            next_id: 1,
            mirror: None,
            view: None,
            event_frames: Vec::new(),
            seat: None,
            served_at: None,
            closed: None,
            close_reason,
            keep_mirror: false,
        }
    }

    /// Opens a WebSocket from another loopback address and completes `hello`.
    pub async fn connected_from(addr: SocketAddr, local: std::net::IpAddr) -> Self {
        let mut client = Self::connect_from(addr, local).await;
        client.hello().await;
        client
    }

    /// The reason in the server's close frame, if it has closed with one.
    pub fn close_reason(&self) -> Option<String> {
        self.close_reason.lock().unwrap().clone()
    }

    /// Sends one raw WebSocket frame (any opcode, any payload).
    pub fn send_frame(&self, frame: tokio_tungstenite::tungstenite::protocol::frame::Frame) {
        let _ = self.out.send(Message::Frame(frame));
    }

    /// Opens a WebSocket and completes `hello`.
    pub async fn connected(addr: SocketAddr) -> Self {
        let mut client = Self::connect(addr).await;
        client.hello().await;
        client
    }

    /// The next request id.
    pub fn id(&mut self) -> u32 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Makes request ids continue from `next` (to keep them apart from ids in raw frames).
    pub fn set_next_id(&mut self, next: u32) {
        self.next_id = next;
    }

    /// Sends raw bytes as one binary frame.
    pub fn send_raw(&self, bytes: Vec<u8>) {
        let _ = self.out.send(Message::Binary(bytes.into()));
    }

    /// Sends a text frame.
    pub fn send_text(&self, text: &str) {
        let _ = self.out.send(Message::text(text));
    }

    /// Closes the socket from the client side (a dropped connection).
    pub fn drop_connection(&self) {
        let _ = self.out.send(Message::Close(None));
    }

    /// Sends a request built from a fresh id and returns the id.
    pub fn send(&mut self, build: impl FnOnce(u32) -> ClientMessage) -> u32 {
        let id = self.id();
        self.send_raw(wire::encode_client(&build(id)));
        id
    }

    /// The next message (mirroring it), or the close. Fails the test after [`PATIENCE`].
    pub async fn recv(&mut self) -> Received {
        self.recv_within(PATIENCE)
            .await
            .expect("the server answered in time")
    }

    /// The next message (mirroring it) or the close, if one comes within `patience`.
    pub async fn recv_within(&mut self, patience: Duration) -> Option<Received> {
        let received = tokio::time::timeout(patience, self.inbox.recv())
            .await
            .ok()?
            .unwrap_or(Received::Closed(None));
        match &received {
            Received::Message(message, bytes) => self.mirror(message, bytes),
            Received::Closed(code) => self.closed = Some(*code),
        }
        Some(received)
    }

    fn mirror(&mut self, message: &ServerMessage, bytes: &Bytes) {
        match message {
            ServerMessage::Snapshot { view, reply_to }
                if !(self.keep_mirror && reply_to.is_some()) =>
            {
                self.mirror = Some(follow(view).expect("a snapshot the fold accepts"));
                self.view = Some(view.clone());
            }
            ServerMessage::Events { seq, events, .. } => {
                self.event_frames.push((*seq, bytes.clone()));
                let mirror = self.mirror.as_mut().expect("a snapshot before events");
                mirror.apply_batch(*seq, events).unwrap();
                self.view = Some(mirror.view());
            }
            ServerMessage::Seated { player, token, .. } => self.seat = Some((*player, *token)),
            ServerMessage::ServedAt { table, url } => self.served_at = Some((*table, url.clone())),
            _ => {}
        }
    }

    /// Receives until `pick` returns something; everything before it is mirrored.
    pub async fn until<T>(&mut self, mut pick: impl FnMut(&Received) -> Option<T>) -> T {
        loop {
            let received = self.recv().await;
            if let Some(found) = pick(&received) {
                return found;
            }
            if let Received::Closed(code) = received {
                let reason = self.close_reason();
                panic!("connection closed ({code:?}, reason {reason:?}) while waiting");
            }
        }
    }

    /// Receives until the answer to request `id`: `Ok(message)` or `Err(error code)`.
    pub async fn reply(&mut self, id: u32) -> Result<ServerMessage, ErrorCode> {
        self.until(|r| match r {
            Received::Message(message, _) => match &**message {
                ServerMessage::Error { reply_to, code, .. } if *reply_to == Some(id) => {
                    Some(Err(*code))
                }
                message if message.reply_to() == Some(id) => Some(Ok(message.clone())),
                _ => None,
            },
            _ => None,
        })
        .await
    }

    /// Sends a request and waits for its answer.
    pub async fn call(
        &mut self,
        build: impl FnOnce(u32) -> ClientMessage,
    ) -> Result<ServerMessage, ErrorCode> {
        let id = self.send(build);
        self.reply(id).await
    }

    /// Completes `hello`.
    pub async fn hello(&mut self) {
        let welcome = self
            .call(|id| ClientMessage::Hello {
                id,
                protocol: PROTOCOL_VERSION,
                client: "e2e".into(),
            })
            .await
            .unwrap();
        assert!(matches!(welcome, ServerMessage::Welcome { .. }));
    }

    /// Creates a table with the server's defaults but for `name`, `seats` and `seed`, and
    /// returns its id.
    pub async fn create_table(&mut self, name: &str, seats: u8, seed: u64) -> TableId {
        self.create(CreateTable::new(name, seats).seed(seed))
            .await
            .unwrap()
    }

    /// Asks for a table with these settings: its id, or the refusal's code.
    pub async fn create(&mut self, settings: CreateTable) -> Result<TableId, ErrorCode> {
        let created = self.call(|id| settings.request(id)).await?;
        Ok(settings.created(created))
    }

    /// Joins a table and waits for the snapshot.
    pub async fn join(&mut self, table: TableId, name: &str) -> Result<u16, ErrorCode> {
        let answer = self
            .call(|id| ClientMessage::Join {
                id,
                table,
                name: name.into(),
                password: None,
                entropy: None,
                member_token: None,
            })
            .await?;
        let ServerMessage::Seated { player, .. } = answer else {
            panic!("expected seated, got {answer:?}");
        };
        self.until_snapshot().await;
        Ok(player)
    }

    /// Takes back a seat with its token and waits for the snapshot.
    pub async fn resume(&mut self, table: TableId, token: SeatToken) -> Result<u16, ErrorCode> {
        let answer = self
            .call(|id| ClientMessage::Resume { id, table, token })
            .await?;
        let ServerMessage::Seated { player, .. } = answer else {
            panic!("expected seated, got {answer:?}");
        };
        self.until_snapshot().await;
        Ok(player)
    }

    /// Receives until a snapshot arrives (mirroring it).
    pub async fn until_snapshot(&mut self) {
        self.until(|r| {
            matches!(r, Received::Message(m, _) if matches!(**m, ServerMessage::Snapshot { .. }))
                .then_some(())
        })
        .await;
    }

    /// Receives until an events batch holds an event matching `pick`; returns the whole batch.
    pub async fn until_batch(&mut self, pick: impl Fn(&wire::Event) -> bool) -> Vec<wire::Event> {
        self.until(|r| match r {
            Received::Message(m, _) => match &**m {
                ServerMessage::Events { events, .. } if events.iter().any(&pick) => {
                    Some(events.clone())
                }
                _ => None,
            },
            Received::Closed(_) => None,
        })
        .await
    }

    /// Receives until an event matching `pick` arrives, and returns what `pick` made of it.
    pub async fn until_event<T>(&mut self, mut pick: impl FnMut(&wire::Event) -> Option<T>) -> T {
        self.until(|r| match r {
            Received::Message(m, _) => match &**m {
                ServerMessage::Events { events, .. } => events.iter().find_map(&mut pick),
                _ => None,
            },
            Received::Closed(_) => None,
        })
        .await
    }

    /// The players whose turns are running, in the mirrored view.
    pub fn running_players(&self) -> Vec<u16> {
        self.view.as_ref().map_or_else(Vec::new, |view| {
            view.turns
                .iter()
                .filter(|t| t.state == wire::TurnStateName::Running)
                .map(|t| t.player)
                .collect()
        })
    }

    /// Watches a table and waits for the snapshot.
    pub async fn watch(&mut self, table: TableId) {
        let answer = self
            .call(|id| ClientMessage::Watch {
                id,
                table,
                password: None,
            })
            .await
            .unwrap();
        assert!(matches!(answer, ServerMessage::Watching { .. }));
        self.until_snapshot().await;
    }

    /// Receives until the mirrored view has reached event `seq`.
    pub async fn catch_up(&mut self, seq: u64) {
        while self.view.as_ref().map_or(0, |v| v.seq) < seq {
            if let Received::Closed(code) = self.recv().await {
                panic!("closed ({code:?}) before reaching event {seq}");
            }
        }
    }

    /// Every event of a finished game, read with `get_replay` page after page (no password,
    /// no token).
    pub async fn replay_events(&mut self, table: TableId) -> Vec<wire::Event> {
        let mut events = Vec::new();
        let mut from_seq = 1;
        loop {
            let page = self
                .call(|id| ClientMessage::GetReplay {
                    id,
                    table,
                    from_seq,
                    password: None,
                    token: None,
                })
                .await
                .unwrap_or_else(|code| panic!("replay of {table}: {code:?}"));
            let ServerMessage::Replay {
                events: page,
                next_seq,
                ..
            } = page
            else {
                panic!("expected a replay: {page:?}");
            };
            events.extend(page);
            match next_seq {
                Some(next) => from_seq = next,
                None => return events,
            }
        }
    }

    /// The first page of `list_tables` (up to 500 tables).
    pub async fn list_tables(&mut self) -> Vec<wire::TableSummary> {
        let listed = self
            .call(|id| ClientMessage::ListTables {
                id,
                from: 0,
                limit: wire::MAX_PAGE_ITEMS,
            })
            .await
            .unwrap();
        let ServerMessage::Tables { tables, .. } = listed else {
            panic!("expected tables: {listed:?}");
        };
        tables
    }

    /// Asks for a fresh snapshot and returns it (without replacing the mirrored view).
    pub async fn fresh_snapshot(&mut self) -> TableView {
        let id = self.send(|id| ClientMessage::Snapshot { id });
        self.keep_mirror = true;
        let answer = self.reply(id).await;
        self.keep_mirror = false;
        let ServerMessage::Snapshot { view, .. } = answer.unwrap() else {
            panic!("expected a snapshot");
        };
        view
    }

    /// Every event of this client's table so far, from the journal (`get_events`, page by page).
    pub async fn past_events(&mut self, table: TableId) -> Vec<wire::Event> {
        let mut events = Vec::new();
        let mut from_seq = 1;
        loop {
            let page = self
                .call(|id| ClientMessage::GetEvents {
                    id,
                    table,
                    from_seq,
                    limit: 500,
                })
                .await
                .unwrap();
            let ServerMessage::PastEvents {
                events: page,
                next_seq,
                ..
            } = page
            else {
                panic!("expected past events: {page:?}");
            };
            events.extend(page);
            match next_seq {
                Some(next) => from_seq = next,
                None => return events,
            }
        }
    }

    /// Receives until the connection closes and returns its close code.
    pub async fn closed_with(&mut self) -> Option<u16> {
        if let Some(code) = self.closed {
            return code;
        }
        loop {
            if let Received::Closed(code) = self.recv().await {
                return code;
            }
        }
    }
}

/// A table of `seats` players, started and with every hand kept: the clients in join order
/// (client `i` is player `i`; client 0 is the host).
pub async fn started_game(server: &TestServer, seats: u8, seed: u64) -> (TableId, Vec<Client>) {
    started_game_at(server.addr, seats, seed).await
}

/// [`started_game`] against any server address (e.g. a server process).
pub async fn started_game_at(addr: SocketAddr, seats: u8, seed: u64) -> (TableId, Vec<Client>) {
    let mut clients = Vec::new();
    let mut host = Client::connected(addr).await;
    let table = host.create_table("test table", seats, seed).await;
    clients.push(host);
    for _ in 1..seats {
        clients.push(Client::connected(addr).await);
    }
    for (i, client) in clients.iter_mut().enumerate() {
        client.join(table, &format!("player {i}")).await.unwrap();
    }
    let start = clients[0]
        .call(|id| ClientMessage::Start {
            id,
            first_player: None,
            seating: grand_melee_protocol::SeatingMode::Random,
            order: Vec::new(),
        })
        .await;
    assert!(matches!(start, Ok(ServerMessage::Ack { .. })), "{start:?}");
    let mut decider = clients[0].view.as_ref().and_then(|v| v.mulligan_decider);
    while let Some(player) = decider {
        let client = &mut clients[usize::from(player)];
        let kept = client.call(|id| ClientMessage::Keep { id }).await;
        assert!(matches!(kept, Ok(ServerMessage::Ack { .. })), "{kept:?}");
        decider = client.view.as_ref().and_then(|v| v.mulligan_decider);
    }
    let last = clients
        .iter()
        .filter_map(|c| c.view.as_ref().map(|v| v.seq))
        .max()
        .unwrap_or(0);
    for client in &mut clients {
        client.catch_up(last).await;
    }
    (table, clients)
}

/// A raw WebSocket that says `hello` and then sends what the test tells it to, and never reads:
/// it answers no ping and lets its receive buffer fill. `recv_buffer` shrinks its socket's
/// receive buffer. Keep it alive for as long as it should stay connected.
#[derive(Debug)]
pub struct SilentClient {
    ws: tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>,
}

impl SilentClient {
    pub async fn connect(addr: SocketAddr, recv_buffer: Option<u32>) -> Self {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        if let Some(size) = recv_buffer {
            socket.set_recv_buffer_size(size).unwrap();
        }
        let stream = socket.connect(addr).await.unwrap();
        let (ws, _) = tokio_tungstenite::client_async(format!("ws://{addr}/ws"), stream)
            .await
            .unwrap();
        let mut client = Self { ws };
        client
            .send(&ClientMessage::Hello {
                id: 1,
                protocol: PROTOCOL_VERSION,
                client: "silent".into(),
            })
            .await;
        client
    }

    /// Sends one request without reading anything.
    pub async fn send(&mut self, message: &ClientMessage) {
        self.ws
            .send(Message::Binary(wire::encode_client(message).into()))
            .await
            .unwrap();
    }
}

/// A [`SilentClient`] watching `table`.
pub async fn silent_spectator(
    addr: SocketAddr,
    table: TableId,
    recv_buffer: Option<u32>,
) -> SilentClient {
    let mut client = SilentClient::connect(addr, recv_buffer).await;
    client
        .send(&ClientMessage::Watch {
            id: 2,
            table,
            password: None,
        })
        .await;
    client
}

/// The `grand-melee-server` binary running as a child process on a loopback port.
#[derive(Debug)]
pub struct ServerProcess {
    child: std::process::Child,
    pub addr: SocketAddr,
}

impl ServerProcess {
    /// Starts `binary` with `args` plus `--listen 127.0.0.1:0`, and waits for the log line that
    /// names the address it listens on.
    pub async fn spawn(binary: &str, args: &[&std::ffi::OsStr]) -> Self {
        use std::io::{BufRead, BufReader};
        let mut child = std::process::Command::new(binary)
            .args(["--listen", "127.0.0.1:0", "--log", "info"])
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let pid = child.id();
        let addr = tokio::task::spawn_blocking(move || {
            let mut lines = BufReader::new(stdout).lines();
            let addr = lines
                .by_ref()
                .map_while(Result::ok)
                .find_map(|line| {
                    let (_, rest) = line.split_once("addr=")?;
                    line.contains("listening")
                        .then(|| rest.split_whitespace().next().unwrap_or("").to_owned())
                })
                .expect("the server logs its address");
            // Keep draining the log so the server never blocks on a full pipe (into
            // `$GM_TEST_SERVER_LOGS/<pid>.log` when that is set, for looking into a failure).
            let keep = std::env::var_os("GM_TEST_SERVER_LOGS")
                .map(|dir| std::path::PathBuf::from(dir).join(format!("{pid}.log")));
            std::thread::spawn(move || {
                use std::io::Write as _;
                let mut file = keep.and_then(|path| std::fs::File::create(path).ok());
                for line in lines.map_while(Result::ok) {
                    if let Some(file) = &mut file {
                        let _ = writeln!(file, "{line}");
                    }
                }
            });
            addr
        });
        let addr = tokio::time::timeout(PATIENCE, addr).await.unwrap().unwrap();
        Self {
            child,
            addr: addr.parse().unwrap(),
        }
    }

    /// The process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Sends a signal (`KILL`, `TERM`, …) with the system's `kill`.
    pub fn signal(&self, signal: &str) {
        let status = std::process::Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.id().to_string())
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits for the process to exit and returns its status.
    pub async fn wait(mut self) -> std::process::ExitStatus {
        let status = tokio::task::spawn_blocking(move || self.child.wait());
        tokio::time::timeout(PATIENCE, status)
            .await
            .unwrap()
            .unwrap()
            .unwrap()
    }
}

/// The value of the metric `name` on the `/metrics` page of the server at `addr`.
pub async fn metric(addr: SocketAddr, name: &str) -> f64 {
    let page = http_get(addr, "/metrics").await;
    page.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("metric {name} on the server at {addr}"))
}

/// Sends a plain HTTP GET and returns the whole response.
pub async fn http_get(addr: SocketAddr, path: &str) -> String {
    http_request(
        addr,
        &format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"),
    )
    .await
}

/// Sends one raw HTTP request (which should ask for `Connection: close`) and returns the whole
/// answer, read until the server closes the connection.
pub async fn http_request(addr: SocketAddr, request: &str) -> String {
    String::from_utf8_lossy(&http_request_bytes(addr, request).await).into_owned()
}

/// [`http_request`], the answer as the bytes that came on the wire (head and body).
pub async fn http_request_bytes(addr: SocketAddr, request: &str) -> Vec<u8> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    tokio::time::timeout(PATIENCE, stream.read_to_end(&mut response))
        .await
        .unwrap()
        .unwrap();
    response
}

/// Whether `haystack` holds `needle` anywhere.
pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

/// Damages a SQLite journal on purpose: flips one bit of the page-type byte of a b-tree leaf
/// page of the database file at `path` that holds `wanted` and not `unwanted` (the middle one of
/// those pages). Returns the page's byte range in the file.
pub fn flip_a_leaf_page_holding(
    path: &std::path::Path,
    wanted: &[u8],
    unwanted: &[u8],
) -> std::ops::Range<usize> {
    let mut bytes = std::fs::read(path).unwrap();
    let size = match u16::from_be_bytes([bytes[16], bytes[17]]) {
        1 => 65_536,
        size => usize::from(size),
    };
    let pages: Vec<usize> = (1..bytes.len() / size)
        .filter(|&index| {
            let page = &bytes[index * size..(index + 1) * size];
            // 0x0a: a leaf page of an index b-tree (every table here is WITHOUT ROWID).
            page[0] == 0x0a && contains(page, wanted) && !contains(page, unwanted)
        })
        .collect();
    assert!(
        pages.len() >= 2,
        "the test needs leaf pages with only {wanted:?}: {pages:?}"
    );
    let index = pages[pages.len() / 2];
    bytes[index * size] ^= 0x01;
    std::fs::write(path, &bytes).unwrap();
    index * size..(index + 1) * size
}

/// A self-signed certificate for `localhost` and `127.0.0.1`, as an organiser would make one,
/// written as PEM files into a temporary directory.
#[derive(Debug)]
pub struct SelfSigned {
    /// The certificate (also the CA certificate a client trusts).
    pub cert: std::path::PathBuf,
    /// Its private key.
    pub key: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl SelfSigned {
    /// Makes a fresh key and certificate.
    pub fn new() -> Self {
        Self::for_names(&["localhost", "127.0.0.1"])
    }

    /// Makes a fresh key and a certificate for `names` (DNS names, or IP addresses).
    pub fn for_names(names: &[&str]) -> Self {
        let names: Vec<String> = names.iter().map(|&name| name.to_owned()).collect();
        let rcgen::CertifiedKey { cert, signing_key } =
            rcgen::generate_simple_self_signed(names).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (cert_path, key_path) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
        std::fs::write(&cert_path, cert.pem()).unwrap();
        std::fs::write(&key_path, signing_key.serialize_pem()).unwrap();
        Self {
            cert: cert_path,
            key: key_path,
            _dir: dir,
        }
    }

    /// A TLS client that trusts this certificate alone.
    pub fn connector(&self) -> tokio_rustls::TlsConnector {
        use tokio_rustls::rustls::{self, pki_types};
        let mut roots = rustls::RootCertStore::empty();
        let pem = std::fs::read(&self.cert).unwrap();
        for der in <pki_types::CertificateDer as pki_types::pem::PemObject>::pem_slice_iter(&pem) {
            roots.add(der.unwrap()).unwrap();
        }
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let client = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        tokio_rustls::TlsConnector::from(std::sync::Arc::new(client))
    }

    /// A server configuration that serves TLS with this certificate.
    pub fn config(&self) -> ServerConfig {
        ServerConfig {
            tls_cert: Some(self.cert.clone()),
            tls_key: Some(self.key.clone()),
            ..ServerConfig::default()
        }
    }
}

impl Default for SelfSigned {
    fn default() -> Self {
        Self::new()
    }
}

/// An Ascension league made through the protocol, with its members' tokens.
#[derive(Debug, Clone)]
pub struct TestLeague {
    pub id: grand_melee_protocol::league::LeagueId,
    pub organiser: OrganiserSecret,
    /// Each member's number, name and token, in join order.
    pub members: Vec<(u32, String, MemberToken)>,
}

impl TestLeague {
    /// Creates a league named `name` and has `names` join it and register a deck each.
    pub async fn create(client: &mut Client, name: &str, names: &[&str]) -> Self {
        use grand_melee_protocol::league::{Alliance, DeckSpec};
        let created = client
            .call(|id| ClientMessage::CreateLeague {
                id,
                name: name.into(),
                password: None,
            })
            .await
            .unwrap();
        let ServerMessage::LeagueCreated {
            league, organiser, ..
        } = created
        else {
            panic!("expected league_created, got {created:?}");
        };
        let mut members = Vec::new();
        for (i, member_name) in names.iter().enumerate() {
            let (member, token) = Self::join_league(client, league, member_name).await;
            let registered = client
                .call(|id| ClientMessage::RegisterDeck {
                    id,
                    league,
                    token,
                    deck: DeckSpec {
                        name: format!("{member_name}'s deck"),
                        alliance: Alliance::ALL[i % Alliance::ALL.len()],
                        basic_set: "Mirage".into(),
                        expansion_set: "Visions".into(),
                    },
                })
                .await;
            assert!(
                matches!(registered, Ok(ServerMessage::Deck { .. })),
                "{registered:?}"
            );
            members.push((member, (*member_name).to_owned(), token));
        }
        Self {
            id: league,
            organiser,
            members,
        }
    }

    /// Joins `league` as `name` (no password, no deck yet): the member's number and token.
    pub async fn join_league(
        client: &mut Client,
        league: grand_melee_protocol::league::LeagueId,
        name: &str,
    ) -> (u32, MemberToken) {
        let joined = client
            .call(|id| ClientMessage::JoinLeague {
                id,
                league,
                name: name.into(),
                password: None,
            })
            .await
            .unwrap();
        let ServerMessage::LeagueJoined { member, token, .. } = joined else {
            panic!("expected league_joined, got {joined:?}");
        };
        (member, token)
    }

    /// Joins this league as `name` (no deck yet): the member's number and token.
    pub async fn join(&self, client: &mut Client, name: &str) -> (u32, MemberToken) {
        Self::join_league(client, self.id, name).await
    }

    /// Creates a table of this league with `seats` seats.
    pub async fn table(&self, client: &mut Client, name: &str, seats: u8) -> TableId {
        self.create_table(client, name, seats).await.unwrap()
    }

    /// Asks for a table of this league with `seats` seats (with this league's organiser secret).
    pub async fn create_table(
        &self,
        client: &mut Client,
        name: &str,
        seats: u8,
    ) -> Result<TableId, ErrorCode> {
        client
            .create(
                CreateTable::new(name, seats)
                    .mulligan_clock_secs(0)
                    .league(self.id, self.organiser),
            )
            .await
    }

    /// A table of this league at `addr` with members `members` (indices in join order) seated,
    /// each on his own client, and started by its host. The clients are in the order given.
    pub async fn started(
        &self,
        addr: SocketAddr,
        name: &str,
        members: &[usize],
    ) -> (TableId, Vec<Client>) {
        let mut organiser = Client::connected(addr).await;
        let seats = u8::try_from(members.len()).unwrap();
        let table = self.table(&mut organiser, name, seats).await;
        let mut clients = Vec::new();
        for &index in members {
            let mut client = Client::connected(addr).await;
            self.sit(&mut client, table, index).await.unwrap();
            clients.push(client);
        }
        let seq = clients.last().unwrap().view.as_ref().unwrap().seq;
        for c in &mut clients {
            c.catch_up(seq).await;
        }
        let host = clients[0].view.as_ref().unwrap().host.unwrap();
        let starter = clients
            .iter_mut()
            .find(|c| c.seat.map(|s| s.0) == Some(host))
            .unwrap();
        let started = starter
            .call(|id| ClientMessage::Start {
                id,
                first_player: None,
                seating: grand_melee_protocol::SeatingMode::Random,
                order: Vec::new(),
            })
            .await;
        assert!(
            matches!(started, Ok(ServerMessage::Ack { .. })),
            "{started:?}"
        );
        (table, clients)
    }

    /// Seats member `index` (in join order) on `client`, with his member token.
    pub async fn sit(
        &self,
        client: &mut Client,
        table: TableId,
        index: usize,
    ) -> Result<u16, ErrorCode> {
        let token = self.members[index].2;
        let answer = client
            .call(|id| ClientMessage::Join {
                id,
                table,
                name: "ignored at league tables".into(),
                password: None,
                entropy: None,
                member_token: Some(token),
            })
            .await?;
        let ServerMessage::Seated { player, token, .. } = answer else {
            panic!("expected seated, got {answer:?}");
        };
        client.seat = Some((player, token));
        client.until_snapshot().await;
        Ok(player)
    }

    /// Has `count` more members join (`Member 000`, `Member 001`, …; no deck), each from his own
    /// loopback address (127.0.1.1, 127.0.1.2, …), as strangers would.
    pub async fn join_many(&self, addr: SocketAddr, count: u8) {
        for i in 0..count {
            let address = std::net::Ipv4Addr::new(127, 0, 1, i.saturating_add(1));
            let mut member = Client::connected_from(addr, address.into()).await;
            let joined = member
                .call(|id| ClientMessage::JoinLeague {
                    id,
                    league: self.id,
                    name: format!("Member {i:03}"),
                    password: None,
                })
                .await;
            assert!(
                matches!(joined, Ok(ServerMessage::LeagueJoined { .. })),
                "{joined:?}"
            );
        }
    }

    /// The league's standings and games: every page of `get_league`, `limit` members a page.
    pub async fn view_in_pages(
        &self,
        client: &mut Client,
        limit: u32,
    ) -> (grand_melee_protocol::league::LeagueView, usize) {
        let mut whole: Option<grand_melee_protocol::league::LeagueView> = None;
        let mut from = 0;
        let mut pages = 0;
        loop {
            pages += 1;
            let answer = client
                .call(|id| ClientMessage::GetLeague {
                    id,
                    league: self.id,
                    from,
                    limit,
                })
                .await
                .unwrap();
            let ServerMessage::League {
                league,
                total_members,
                total_games,
                next,
                ..
            } = answer
            else {
                panic!("expected league, got {answer:?}");
            };
            let whole = whole.get_or_insert_with(|| grand_melee_protocol::league::LeagueView {
                standings: Vec::new(),
                games: Vec::new(),
                ..league.clone()
            });
            let got = league.standings.len().max(league.games.len());
            whole.standings.extend(league.standings);
            whole.games.extend(league.games);
            match next {
                Some(next) => {
                    assert_eq!(
                        next,
                        from + u32::try_from(got).unwrap(),
                        "the page moves on"
                    );
                    assert!(got > 0, "a page that says more follow holds something");
                    from = next;
                }
                None => {
                    assert_eq!(whole.standings.len(), total_members as usize);
                    assert_eq!(whole.games.len(), total_games as usize);
                    return (whole.clone(), pages);
                }
            }
        }
    }

    /// The league's standings and games (every page).
    pub async fn view(&self, client: &mut Client) -> grand_melee_protocol::league::LeagueView {
        self.view_in_pages(client, grand_melee_protocol::MAX_PAGE_ITEMS)
            .await
            .0
    }

    /// Member `member`'s deck and ledger.
    pub async fn deck(
        &self,
        client: &mut Client,
        member: u32,
    ) -> (
        grand_melee_protocol::league::Deck,
        Vec<grand_melee_protocol::league::LedgerLine>,
    ) {
        let answer = client
            .call(|id| ClientMessage::GetDeck {
                id,
                league: self.id,
                member,
            })
            .await
            .unwrap();
        let ServerMessage::Deck { deck, ledger, .. } = answer else {
            panic!("expected deck, got {answer:?}");
        };
        (deck, ledger)
    }
}

/// Keeps every hand at a started table: each due mulligan decision is `keep`, until play
/// begins. Every client catches up with each decision.
pub async fn keep_all_hands(clients: &mut [Client]) {
    let player_of = |c: &Client| c.seat.map(|(p, _)| p);
    loop {
        let deciders = clients
            .iter()
            .filter_map(|c| c.view.as_ref())
            .max_by_key(|v| v.seq)
            .map(|v| v.mulligan_deciders.clone())
            .unwrap_or_default();
        let Some(&decider) = deciders.first() else {
            return;
        };
        let client = clients
            .iter_mut()
            .find(|c| player_of(c) == Some(decider))
            .expect("the decider's client");
        let kept = client.call(|id| ClientMessage::Keep { id }).await;
        assert!(matches!(kept, Ok(ServerMessage::Ack { .. })), "{kept:?}");
        let seq = client.view.as_ref().map_or(0, |v| v.seq);
        for c in clients.iter_mut() {
            c.catch_up(seq).await;
        }
    }
}

/// `player` concedes; every client catches up with it.
pub async fn concede(clients: &mut [Client], player: u16) {
    let client = clients
        .iter_mut()
        .find(|c| c.seat.map(|(p, _)| p) == Some(player))
        .expect("the conceding player's client");
    let conceded = client.call(|id| ClientMessage::Concede { id }).await;
    assert!(
        matches!(conceded, Ok(ServerMessage::Ack { .. })),
        "{conceded:?}"
    );
    let seq = client.view.as_ref().map_or(0, |v| v.seq);
    for c in clients.iter_mut() {
        c.catch_up(seq).await;
    }
}

/// Plays a started table (every client seated, in the mulligan stage or later) to its end: every
/// due mulligan decision is `keep`, then the players concede in `order` (player ids) until one
/// is left. Returns the final standings, as every client saw them.
pub async fn concede_in_order(clients: &mut [Client], order: &[u16]) -> Vec<wire::Standing> {
    keep_all_hands(clients).await;
    for &player in order {
        concede(clients, player).await;
    }
    let view = clients[0].view.clone().expect("a view");
    assert_eq!(view.stage, wire::StageName::Finished, "the game is over");
    view.standings
}

/// The server's defaults without its per-connection pacing: requests and chat as fast as a test
/// sends them (a test about one limit lifts the others with this, then sets its own).
pub fn unthrottled() -> ServerConfig {
    ServerConfig {
        rate_limit: 1e6,
        rate_burst: 1e6,
        chat_per_minute: 1e8,
        table_chat_per_minute: 0.0,
        ..ServerConfig::default()
    }
}

/// `apt-get update` and `apt-get install` of `packages`, as root or through password-less sudo.
/// The caller holds a lock file.
pub fn apt_install(packages: &[&str]) -> Result<(), String> {
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let prefix: &[&str] = if root {
        &[]
    } else if std::process::Command::new("sudo")
        .args(["-n", "true"])
        .status()
        .is_ok_and(|s| s.success())
    {
        &["sudo", "-n"]
    } else {
        return Err("not root and no password-less sudo".into());
    };
    let install: Vec<&str> = ["apt-get", "install", "-y", "-qq", "--no-install-recommends"]
        .into_iter()
        .chain(packages.iter().copied())
        .collect();
    for args in [&["apt-get", "update", "-qq"][..], &install[..]] {
        let all: Vec<&str> = prefix.iter().chain(args).copied().collect();
        let status = std::process::Command::new(all[0])
            .args(&all[1..])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .map_err(|e| format!("{}: {e}", all.join(" ")))?;
        if !status.success() {
            return Err(format!("{} failed ({status})", all.join(" ")));
        }
    }
    Ok(())
}

//! One seat (or one spectator) at one table: connects, sits down or resumes, mirrors the table
//! from snapshots and event batches, sends the player's commands, and reconnects by itself with
//! backoff when the connection drops. What to show is left to a [`Frontend`] (script lines or
//! the full-screen UI).

use std::collections::HashMap;
use std::io;
use std::time::Duration;

use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use grand_melee_protocol::{
    self as wire, ApplyError, ClientMessage, ErrorCode, Event, PlayerId, SeatToken, ServerMessage,
    TableId, TableView,
};
use ratatui::crossterm::event::KeyEvent;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::{self, Message};

use crate::ClientError;
use crate::command::{self, Command, with_id};
use crate::describe;
use crate::games::{self, GameMirror};
use crate::net::{self, Conn, Ws};
use crate::store::{SavedSeat, TokenStore};

/// With no frame at all for this long (the server pings every 15 s), the connection is taken
/// for dead and the client reconnects.
pub const SILENCE_TIMEOUT: Duration = Duration::from_secs(60);

/// How the client takes its place at the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// Sit down under `name`, or take back the seat saved for this table.
    Join {
        /// The table.
        table: TableId,
        /// The display name.
        name: String,
        /// The table's password, if any.
        password: Option<String>,
        /// At a league table: the member token kept by `league join`.
        member_token: Option<grand_melee_protocol::league::MemberToken>,
    },
    /// Take back the seat saved for this table (fails if none is saved).
    Resume {
        /// The table.
        table: TableId,
    },
    /// Watch as a spectator.
    Watch {
        /// The table.
        table: TableId,
        /// The table's password, if any.
        password: Option<String>,
    },
}

impl Mode {
    /// The table.
    pub fn table(&self) -> TableId {
        match self {
            Mode::Join { table, .. } | Mode::Resume { table } | Mode::Watch { table, .. } => *table,
        }
    }
}

/// What a front end may look at.
#[derive(Debug, Clone)]
pub struct State {
    /// The server's WebSocket URL.
    pub server: String,
    /// The table.
    pub table: TableId,
    /// The player's id, once seated (`None` for a spectator).
    pub me: Option<PlayerId>,
    /// Whether the client watches rather than plays.
    pub spectator: bool,
    /// The mirrored table, once a snapshot has arrived: the protocol's one fold, for the
    /// snapshot's game.
    pub mirror: Option<GameMirror>,
    /// The mirror's snapshot, projected after every event (what the screens show).
    pub view: Option<TableView>,
    /// Whether a connection is up.
    pub connected: bool,
}

impl State {
    /// A state for `table` on `server`, before anything is known.
    pub fn new(server: impl Into<String>, table: TableId) -> Self {
        Self {
            server: server.into(),
            table,
            me: None,
            spectator: false,
            mirror: None,
            view: None,
            connected: false,
        }
    }

    /// The player's situation.
    pub fn situation(&self) -> Option<games::Situation> {
        let view = self.view.as_ref()?;
        games::Situation::of(view, self.me)
    }
}

/// Something a front end should show.
#[derive(Debug, Clone)]
pub enum Note {
    /// A connection is up and `hello` is done.
    Connected,
    /// Seated (`resumed`: an earlier seat was taken back).
    Seated {
        /// Whether a saved seat was taken back.
        resumed: bool,
    },
    /// Watching as a spectator.
    Watching,
    /// The mirrored view was replaced by a snapshot.
    Snapshot,
    /// An event was applied to the view.
    Event {
        /// Its number.
        seq: u64,
        /// The event.
        event: Event,
        /// Its script-mode line.
        line: String,
        /// Its sentence for the UI's log ([`describe::log_sentence`]; `None`: the log leaves
        /// it out).
        sentence: Option<String>,
    },
    /// A batch of events has been applied (the situation may have changed).
    Applied,
    /// A request was accepted.
    Ack {
        /// The request's type.
        request: &'static str,
        /// The line the player typed.
        command: String,
        /// The last event it caused.
        seq: u64,
    },
    /// The server refused a request (or reported a problem with the connection).
    Rejected {
        /// Why.
        code: ErrorCode,
        /// The line the player typed (empty for a connection-level error).
        command: String,
        /// The server's explanation (the code's standard description, or more: a
        /// `bad_settings` names the setting).
        message: String,
    },
    /// An event from before this client's first snapshot (or from a gap while it was away),
    /// fetched with `get_events` for front ends that rebuild their log
    /// ([`Frontend::wants_history`]). Notes of past events come in order, but possibly after
    /// notes of later, live events.
    Past {
        /// Its number.
        seq: u64,
        /// The event.
        event: Event,
        /// Its sentence for the UI's log, worded with the table as it was before it (`None`:
        /// the log leaves it out).
        sentence: Option<String>,
    },
    /// A problem found by the client itself (a typo, no connection).
    Problem {
        /// A short code: `usage` or `offline`.
        kind: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The connection dropped.
    Disconnected {
        /// Why.
        reason: String,
    },
    /// The client will reconnect after this delay.
    Reconnecting {
        /// How long until the next attempt.
        delay: Duration,
    },
    /// The player asked for `help`.
    Help,
    /// The player asked for `status`.
    Status,
    /// The player left the table for good.
    Left,
}

/// Raw input from the keyboard or standard input.
#[derive(Debug, Clone)]
pub enum Input {
    /// A whole line (script mode).
    Line(String),
    /// A key press (interactive mode).
    Key(KeyEvent),
    /// The terminal was resized.
    Resize,
    /// Standard input is finished.
    Eof,
}

/// What the input means for the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// A command line to carry out.
    Line(String),
    /// Stop now.
    Quit,
    /// No more commands will come: stop once every request is answered.
    EndOfInput,
}

/// What shows the session to the player and turns his input into actions.
pub trait Frontend: Send {
    /// Shows something.
    fn note(&mut self, state: &State, note: Note) -> io::Result<()>;
    /// Interprets input; `None` if it only changed the front end (a key in the line editor).
    fn input(&mut self, state: &State, input: Input) -> io::Result<Option<Action>>;
    /// Whether it wants the table's past events ([`Note::Past`]) after a snapshot: the
    /// events before it joined, or missed while the connection was down.
    fn wants_history(&self) -> bool {
        false
    }
}

/// Reconnection delays and what to do at the end of input.
#[derive(Debug, Clone)]
pub struct Options {
    /// The first reconnection delay; it doubles after each failure.
    pub backoff_min: Duration,
    /// The longest reconnection delay.
    pub backoff_max: Duration,
    /// Keep running after the end of input (script mode).
    pub stay: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            backoff_min: Duration::from_millis(250),
            backoff_max: Duration::from_secs(10),
            stay: false,
        }
    }
}

/// Plays (or watches) until the player quits, the input ends, or the seat is lost for good.
pub async fn play(
    server: String,
    mode: Mode,
    store: &TokenStore,
    inputs: &mut mpsc::Receiver<Input>,
    frontend: &mut dyn Frontend,
    options: &Options,
) -> Result<(), ClientError> {
    let mut session = Session {
        state: State::new(server, mode.table()),
        mode,
        store,
        token: None,
        saved_name: None,
        pending: HashMap::new(),
        next_id: 1,
        awaiting_snapshot: true,
        closing: false,
        options,
        logged: 0,
        history: None,
    };
    let mut ever_connected = false;
    let mut delay = options.backoff_min;
    loop {
        match session.enter(frontend).await {
            Ok(ws) => {
                ever_connected = true;
                delay = options.backoff_min;
                session.state.connected = true;
                let outcome = session.serve(ws, inputs, frontend).await;
                session.state.connected = false;
                match outcome? {
                    Outcome::Done => return Ok(()),
                    Outcome::Dropped(reason) => {
                        session.pending.clear();
                        session.history = None;
                        frontend.note(&session.state, Note::Disconnected { reason })?;
                        if session.closing {
                            return Ok(());
                        }
                    }
                }
            }
            Err(Entry::Fatal(error)) => return Err(error),
            Err(Entry::Transient(error)) => {
                if !ever_connected {
                    return Err(error);
                }
                frontend.note(
                    &session.state,
                    Note::Disconnected {
                        reason: error.to_string(),
                    },
                )?;
            }
        }
        frontend.note(&session.state, Note::Reconnecting { delay })?;
        if session.wait_offline(delay, inputs, frontend).await? {
            return Ok(());
        }
        delay = (delay * 2).min(options.backoff_max);
    }
}

enum Entry {
    Fatal(ClientError),
    Transient(ClientError),
}

enum Outcome {
    Done,
    Dropped(String),
}

struct Pending {
    request: &'static str,
    command: String,
    /// Sent by the client itself (a resync, or past events for the log), not typed.
    internal: bool,
}

/// Past events being fetched for the front end's log: the table folded up to the last one
/// fetched, so each is worded as it was when it happened.
struct History {
    mirror: GameMirror,
    view: TableView,
    /// The last event to fetch (the snapshot's).
    upto: u64,
}

/// Events asked for in each `get_events` page.
const HISTORY_PAGE: u32 = 500;

struct Session<'a> {
    state: State,
    mode: Mode,
    store: &'a TokenStore,
    /// The seat token once seated (kept for reconnections).
    token: Option<SeatToken>,
    saved_name: Option<String>,
    pending: HashMap<u32, Pending>,
    next_id: u32,
    awaiting_snapshot: bool,
    closing: bool,
    options: &'a Options,
    /// The last event the front end has been told of (live or past).
    logged: u64,
    history: Option<History>,
}

type Sink = SplitSink<Ws, Message>;
type Stream = SplitStream<Ws>;

fn transient_or_fatal(error: ClientError) -> Entry {
    match error {
        ClientError::Rejected { code, .. } if net::is_final(code) => Entry::Fatal(error),
        other => Entry::Transient(other),
    }
}

impl Session<'_> {
    /// Connects, says hello, and sits down, resumes or starts watching.
    async fn enter(&mut self, frontend: &mut dyn Frontend) -> Result<Ws, Entry> {
        let mut conn = Conn::open(&self.state.server)
            .await
            .map_err(Entry::Transient)?;
        frontend
            .note(&self.state, Note::Connected)
            .map_err(|e| Entry::Fatal(e.into()))?;
        let table = self.mode.table();
        let server = self.state.server.clone();
        match self.mode.clone() {
            Mode::Watch { password, .. } => {
                conn.call(ClientMessage::Watch {
                    id: 0,
                    table,
                    password,
                })
                .await
                .map_err(transient_or_fatal)?;
                self.state.spectator = true;
                self.state.me = None;
                frontend
                    .note(&self.state, Note::Watching)
                    .map_err(|e| Entry::Fatal(e.into()))?;
            }
            Mode::Join {
                name,
                password,
                member_token,
                ..
            } => {
                let saved = self.token.or_else(|| {
                    let seat = self.store.load(&server, table)?;
                    self.saved_name = Some(seat.name);
                    Some(seat.token)
                });
                let resumed = match saved {
                    Some(token) => match self.resume(&mut conn, token).await {
                        Ok(()) => true,
                        // The saved token is stale (an earlier game at a reused id, or the
                        // seat was given up): forget it and sit down afresh.
                        Err(Entry::Fatal(ClientError::Rejected {
                            code: ErrorCode::BadToken,
                            ..
                        })) if self.token.is_none() => {
                            let _ = self.store.remove(&server, table);
                            false
                        }
                        Err(other) => return Err(other),
                    },
                    None => false,
                };
                if !resumed {
                    let answer = conn
                        .call(ClientMessage::Join {
                            id: 0,
                            table,
                            name: name.clone(),
                            password,
                            // Our share of the table's dice: random text nobody else chose
                            // (PROTOCOL.md, "Verifiable dice").
                            entropy: Some(uuid::Uuid::new_v4().simple().to_string()),
                            member_token,
                        })
                        .await
                        .map_err(transient_or_fatal)?;
                    let ServerMessage::Seated { player, token, .. } = answer else {
                        return Err(Entry::Transient(ClientError::Protocol(format!(
                            "expected seated, got {}",
                            answer.name()
                        ))));
                    };
                    self.seated(player, token, name);
                }
                frontend
                    .note(&self.state, Note::Seated { resumed })
                    .map_err(|e| Entry::Fatal(e.into()))?;
            }
            Mode::Resume { .. } => {
                let token = match self.token {
                    Some(token) => token,
                    None => {
                        let seat = self.store.load(&server, table).ok_or_else(|| {
                            Entry::Fatal(ClientError::NoSavedSeat {
                                server: server.clone(),
                                table,
                                dir: self.store.dir().display().to_string(),
                            })
                        })?;
                        self.saved_name = Some(seat.name);
                        seat.token
                    }
                };
                self.resume(&mut conn, token).await?;
                frontend
                    .note(&self.state, Note::Seated { resumed: true })
                    .map_err(|e| Entry::Fatal(e.into()))?;
            }
        }
        self.awaiting_snapshot = true;
        let (ws, next_id) = conn.into_parts();
        self.next_id = next_id;
        Ok(ws)
    }

    async fn resume(&mut self, conn: &mut Conn, token: SeatToken) -> Result<(), Entry> {
        let table = self.mode.table();
        let answer = conn
            .call(ClientMessage::Resume {
                id: 0,
                table,
                token,
            })
            .await
            .map_err(|error| match error {
                ClientError::Rejected {
                    code: ErrorCode::BadToken | ErrorCode::UnknownTable,
                    ..
                } if self.token.is_some() => {
                    // The seat is gone for good (the player was removed, or the server
                    // restarted): reconnecting again will not help.
                    let _ = self.store.remove(&self.state.server, table);
                    Entry::Fatal(ClientError::SeatLost(error.to_string()))
                }
                other => transient_or_fatal(other),
            })?;
        let ServerMessage::Seated { player, token, .. } = answer else {
            return Err(Entry::Transient(ClientError::Protocol(format!(
                "expected seated, got {}",
                answer.name()
            ))));
        };
        let name = self.saved_name.clone().unwrap_or_default();
        self.seated(player, token, name);
        Ok(())
    }

    fn seated(&mut self, player: PlayerId, token: SeatToken, name: String) {
        self.state.me = Some(player);
        self.state.spectator = false;
        self.token = Some(token);
        self.saved_name = Some(name.clone());
        // A seat that cannot be saved still works for this run; the next `resume` will say so.
        let _ = self.store.save(
            &self.state.server,
            self.mode.table(),
            &SavedSeat {
                player,
                name,
                token,
            },
        );
    }

    /// Runs one connection until it drops or the session ends.
    async fn serve(
        &mut self,
        ws: Ws,
        inputs: &mut mpsc::Receiver<Input>,
        frontend: &mut dyn Frontend,
    ) -> Result<Outcome, ClientError> {
        let (mut sink, mut stream): (Sink, Stream) = ws.split();
        let mut input_open = true;
        loop {
            if self.closing && self.pending.is_empty() {
                let _ = sink.close().await;
                return Ok(Outcome::Done);
            }
            tokio::select! {
                frame = tokio::time::timeout(SILENCE_TIMEOUT, stream.next()) => {
                    let frame = match frame {
                        Err(_) => return Ok(Outcome::Dropped("the server went silent".into())),
                        Ok(None) => return Ok(Outcome::Dropped("connection closed".into())),
                        Ok(Some(Err(e))) => return Ok(Outcome::Dropped(e.to_string())),
                        Ok(Some(Ok(frame))) => frame,
                    };
                    match frame {
                        Message::Binary(bytes) => match wire::decode_server(&bytes) {
                            Ok(message) => {
                                if self.handle(message, &mut sink, frontend).await? {
                                    let _ = sink.close().await;
                                    return Ok(Outcome::Done);
                                }
                            }
                            Err(e) => frontend.note(&self.state, Note::Problem {
                                kind: "protocol",
                                message: format!("ignored a message from the server: {e}"),
                            })?,
                        },
                        Message::Close(frame) => {
                            if frame.as_ref().is_some_and(|f| f.reason == wire::close::TAKEN_OVER) {
                                // Another client resumed this seat: it is theirs now, and
                                // taking it back would only start a tug of war.
                                return Err(ClientError::TakenOver {
                                    table: self.state.table,
                                });
                            }
                            return Ok(Outcome::Dropped(net::close_reason(frame.as_ref())));
                        }
                        _ => {}
                    }
                }
                input = inputs.recv(), if input_open => {
                    let action = match input {
                        Some(input) => frontend.input(&self.state, input)?,
                        None => {
                            input_open = false;
                            Some(Action::EndOfInput)
                        }
                    };
                    match action {
                        None => {}
                        Some(Action::Quit) => {
                            let _ = sink.close().await;
                            return Ok(Outcome::Done);
                        }
                        Some(Action::EndOfInput) => {
                            input_open = false;
                            if !self.options.stay {
                                self.closing = true;
                            }
                        }
                        Some(Action::Line(line)) => {
                            match self.command(&line, &mut sink, frontend).await? {
                                Flow::Go => {}
                                Flow::Quit => {
                                    let _ = sink.close().await;
                                    return Ok(Outcome::Done);
                                }
                                Flow::Dropped(reason) => return Ok(Outcome::Dropped(reason)),
                            }
                        }
                    }
                }
            }
        }
    }

    /// Carries out a typed line.
    async fn command(
        &mut self,
        line: &str,
        sink: &mut Sink,
        frontend: &mut dyn Frontend,
    ) -> Result<Flow, ClientError> {
        let parsed = command::parse(line, self.state.view.as_ref(), self.state.me);
        match parsed {
            Ok(None) => {}
            Ok(Some(Command::Help)) => frontend.note(&self.state, Note::Help)?,
            Ok(Some(Command::Status)) => frontend.note(&self.state, Note::Status)?,
            Ok(Some(Command::Quit)) => return Ok(Flow::Quit),
            Ok(Some(Command::Request(message))) => {
                if let Err(error) = self.send(message, line.trim(), false, sink).await {
                    return Ok(Flow::Dropped(error.to_string()));
                }
            }
            Err(error) => frontend.note(
                &self.state,
                Note::Problem {
                    kind: "usage",
                    message: error.to_string(),
                },
            )?,
        }
        Ok(Flow::Go)
    }

    async fn send(
        &mut self,
        message: ClientMessage,
        command: &str,
        internal: bool,
        sink: &mut Sink,
    ) -> Result<(), tungstenite::Error> {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        let message = with_id(message, id);
        self.pending.insert(
            id,
            Pending {
                request: message.name(),
                command: command.to_owned(),
                internal,
            },
        );
        let bytes = wire::encode_client(&message);
        sink.send(Message::Binary(bytes.into())).await
    }

    /// Handles one message from the server; `true` when the session is over (the player left).
    async fn handle(
        &mut self,
        message: ServerMessage,
        sink: &mut Sink,
        frontend: &mut dyn Frontend,
    ) -> Result<bool, ClientError> {
        match message {
            ServerMessage::Snapshot { view, reply_to } => {
                if let Some(id) = reply_to {
                    self.pending.remove(&id);
                }
                let before = self.state.view.take();
                self.start_history(&view, before, sink, frontend).await;
                match GameMirror::of(&view) {
                    Ok(mirror) => {
                        self.state.mirror = Some(mirror);
                        self.state.view = Some(view);
                        self.awaiting_snapshot = false;
                    }
                    Err(e) => {
                        let message = games::unsupported(games::kind(Some(&view)))
                            .unwrap_or_else(|| format!("the server's snapshot does not fit: {e}"));
                        self.state.mirror = None;
                        self.state.view = Some(view);
                        frontend.note(
                            &self.state,
                            Note::Problem {
                                kind: "snapshot",
                                message,
                            },
                        )?;
                    }
                }
                frontend.note(&self.state, Note::Snapshot)?;
            }
            ServerMessage::Events { seq, events, .. } => {
                self.apply(seq, events, sink, frontend).await?;
            }
            ServerMessage::Ack { reply_to, seq } => {
                if let Some(pending) = self.pending.remove(&reply_to)
                    && !pending.internal
                {
                    frontend.note(
                        &self.state,
                        Note::Ack {
                            request: pending.request,
                            command: pending.command,
                            seq,
                        },
                    )?;
                }
            }
            ServerMessage::Error {
                reply_to,
                code,
                message,
                ..
            } => {
                let pending = reply_to.and_then(|id| self.pending.remove(&id));
                if let Some(p) = pending.as_ref().filter(|p| p.internal) {
                    if p.request == "get_events" {
                        // The log stays as it is; the table itself is up to date.
                        self.history = None;
                        return Ok(false);
                    }
                    // A resync that failed: try again on the next event.
                    self.awaiting_snapshot = false;
                }
                frontend.note(
                    &self.state,
                    Note::Rejected {
                        code,
                        command: pending.map(|p| p.command).unwrap_or_default(),
                        message,
                    },
                )?;
            }
            ServerMessage::PastEvents {
                reply_to,
                first_seq,
                events,
                next_seq,
                ..
            } => {
                self.pending.remove(&reply_to);
                self.past(first_seq, events, next_seq, sink, frontend)
                    .await?;
            }
            ServerMessage::Left { reply_to } => {
                self.pending.remove(&reply_to);
                let _ = self.store.remove(&self.state.server, self.mode.table());
                frontend.note(&self.state, Note::Left)?;
                return Ok(true);
            }
            // Answers to requests made before the session (hello, join…) or that this client
            // does not make.
            #[allow(unreachable_patterns)]
            _ => {}
        }
        Ok(false)
    }

    /// Applies a batch to the mirror, event by event; on a gap (or an event that does not fit)
    /// asks for a snapshot and skips events until it arrives.
    async fn apply(
        &mut self,
        seq: u64,
        events: Vec<Event>,
        sink: &mut Sink,
        frontend: &mut dyn Frontend,
    ) -> Result<(), ClientError> {
        if self.awaiting_snapshot {
            return Ok(());
        }
        let (Some(mirror), Some(view)) = (self.state.mirror.as_mut(), self.state.view.as_mut())
        else {
            return Ok(());
        };
        let mut notes = Vec::new();
        let mut resync = false;
        for (offset, event) in events.into_iter().enumerate() {
            let number = seq.saturating_add(offset as u64);
            if number <= mirror.seq() {
                continue;
            }
            let line = describe::script_line(number, &event, view);
            let sentence = describe::log_sentence(&event, view);
            match mirror.apply(number, &event) {
                Ok(()) => {
                    *view = mirror.view();
                    notes.push((number, event, line, sentence));
                }
                Err(ApplyError::Gap { .. } | ApplyError::UnknownPlayer(_))
                | Err(ApplyError::UnknownTurn(_) | ApplyError::Invalid(_)) => {
                    resync = true;
                    break;
                }
            }
        }
        if resync {
            // A stream that does not fit is not folded further: the next snapshot replaces it.
            self.state.mirror = None;
        }
        // The notes are shown with the view after the whole batch, as the server's state moves
        // a batch at a time.
        let any = !notes.is_empty();
        for (seq, event, line, sentence) in notes {
            self.logged = self.logged.max(seq);
            frontend.note(
                &self.state,
                Note::Event {
                    seq,
                    event,
                    line,
                    sentence,
                },
            )?;
        }
        if any {
            frontend.note(&self.state, Note::Applied)?;
        }
        if resync {
            self.awaiting_snapshot = true;
            frontend.note(
                &self.state,
                Note::Problem {
                    kind: "resync",
                    message: "missed events; asking for a fresh snapshot".into(),
                },
            )?;
            // If this fails the connection is gone; the reader notices on its next read.
            let _ = self
                .send(ClientMessage::Snapshot { id: 0 }, "snapshot", true, sink)
                .await;
        }
        Ok(())
    }

    /// After a snapshot, asks for the events the front end has not been told of yet (all of
    /// them after joining; those missed while away after a reconnection), if it wants them.
    /// `before` is the view the snapshot replaces.
    async fn start_history(
        &mut self,
        view: &TableView,
        before: Option<TableView>,
        sink: &mut Sink,
        frontend: &mut dyn Frontend,
    ) {
        if !frontend.wants_history() || view.seq <= self.logged || self.history.is_some() {
            return;
        }
        // Fold from the view the front end last saw when it is exactly that far; else from
        // the start (past notes the front end already has are skipped by it).
        let base = match before {
            Some(before) if before.seq == self.logged && before.table == view.table => before,
            _ => {
                self.logged = 0;
                TableView::new(view.table, view.name.clone(), view.settings.clone())
            }
        };
        let Ok(mirror) = GameMirror::of(&base) else {
            return;
        };
        let from_seq = base.seq + 1;
        self.history = Some(History {
            mirror,
            view: base,
            upto: view.seq,
        });
        let request = ClientMessage::GetEvents {
            id: 0,
            table: view.table,
            from_seq,
            limit: HISTORY_PAGE,
        };
        if self.send(request, "get_events", true, sink).await.is_err() {
            self.history = None;
        }
    }

    /// A page of past events: folds them, tells the front end, and asks for the next page.
    async fn past(
        &mut self,
        first_seq: u64,
        events: Vec<Event>,
        next_seq: Option<u64>,
        sink: &mut Sink,
        frontend: &mut dyn Frontend,
    ) -> Result<(), ClientError> {
        let Some(mut history) = self.history.take() else {
            return Ok(());
        };
        for (offset, event) in events.into_iter().enumerate() {
            let seq = first_seq.saturating_add(offset as u64);
            if seq > history.upto {
                break;
            }
            if seq <= history.mirror.seq() {
                continue;
            }
            let sentence = describe::log_sentence(&event, &history.view);
            if history.mirror.apply(seq, &event).is_err() {
                // A history that does not fold is left out; the live table is unaffected.
                return Ok(());
            }
            history.view = history.mirror.view();
            frontend.note(
                &self.state,
                Note::Past {
                    seq,
                    event,
                    sentence,
                },
            )?;
        }
        self.logged = self.logged.max(history.mirror.seq());
        match next_seq {
            Some(next) if next <= history.upto && next > history.mirror.seq() => {
                let request = ClientMessage::GetEvents {
                    id: 0,
                    table: self.state.table,
                    from_seq: next,
                    limit: HISTORY_PAGE,
                };
                self.history = Some(history);
                if self.send(request, "get_events", true, sink).await.is_err() {
                    self.history = None;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Waits `delay` before reconnecting, still answering the player. `true` if he quit.
    async fn wait_offline(
        &mut self,
        delay: Duration,
        inputs: &mut mpsc::Receiver<Input>,
        frontend: &mut dyn Frontend,
    ) -> Result<bool, ClientError> {
        let sleep = tokio::time::sleep(delay);
        tokio::pin!(sleep);
        loop {
            tokio::select! {
                () = &mut sleep => return Ok(false),
                input = inputs.recv() => {
                    let action = match input {
                        Some(input) => frontend.input(&self.state, input)?,
                        None => Some(Action::EndOfInput),
                    };
                    match action {
                        None => {}
                        Some(Action::Quit) => return Ok(true),
                        Some(Action::EndOfInput) => {
                            if !self.options.stay {
                                return Ok(true);
                            }
                            // Nothing more will come; just wait.
                            sleep.as_mut().await;
                            return Ok(false);
                        }
                        Some(Action::Line(line)) => {
                            match command::parse(&line, self.state.view.as_ref(), self.state.me) {
                                Ok(Some(Command::Help)) => frontend.note(&self.state, Note::Help)?,
                                Ok(Some(Command::Status)) => {
                                    frontend.note(&self.state, Note::Status)?;
                                }
                                Ok(Some(Command::Quit)) => return Ok(true),
                                Ok(None) => {}
                                Ok(Some(Command::Request(_))) | Err(_) => frontend.note(
                                    &self.state,
                                    Note::Problem {
                                        kind: "offline",
                                        message: "not connected; reconnecting".into(),
                                    },
                                )?,
                            }
                        }
                    }
                }
            }
        }
    }
}

enum Flow {
    Go,
    Quit,
    Dropped(String),
}

//! Bots that play random legal Magic Tech games through the real server: two bots a table, each
//! on its own WebSocket with its own copy of the table (the protocol's [`Mirror`] of
//! [`MagicTech`], folded from the events it is sent), choosing each move at random among the
//! rules core's own [`MagicTech::legal_moves`] (deploy, pay, reveal with made-up declarations,
//! relocate, missions, blocks, damage, corrections). Nothing here decides a rule.
//!
//! A table: one bot creates it (`game: magic_tech`, two seats), both join and declare their
//! decks, the first to sit (the host) starts; then each bot, whenever its mirror has caught up
//! with its last answer and offers it a move, sends one and waits for the answer. A refusal is
//! a race with the other bot's move (its events were on the wire), counted, never fatal. A bot
//! that has made `max_moves` moves concedes, so every game ends.

use futures_util::SinkExt;
use grand_melee_protocol::game::Game;
use grand_melee_protocol::magic_tech::MagicTech;
use grand_melee_protocol::magic_tech_types::MagicTechCommand as C;
use grand_melee_protocol::rules::Command;
use grand_melee_protocol::{
    self as wire, ClientMessage, Event, GameKind, Mirror, PROTOCOL_VERSION, PlayerId, SeatingMode,
    ServerMessage, StageName, Standing, TableId, stage_name,
};
use tokio_tungstenite::tungstenite::Message;

use crate::link::{BotError, Socket, connect, next_server_message};
use crate::rng::Rng;

/// How a run of Magic Tech tables is played.
#[derive(Debug, Clone)]
pub struct MtConfig {
    /// The server's base address (`ws://host:port`; the bots add `/ws`).
    pub url: String,
    /// Tables, each with two bots, played at the same time.
    pub tables: usize,
    /// Every bot's random choices come from it (with the table and seat as the stream).
    pub seed: u64,
    /// The deck size both bots declare (5–60): smaller decks make shorter games.
    pub deck: u8,
    /// Moves a bot makes before it concedes.
    pub max_moves: u32,
}

impl Default for MtConfig {
    fn default() -> Self {
        Self {
            url: "ws://127.0.0.1:7878".into(),
            tables: 1,
            seed: 1,
            deck: 12,
            max_moves: 2_000,
        }
    }
}

/// How one table's game went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MtTable {
    /// The table.
    pub table: TableId,
    /// The final standings (the winner first).
    pub standings: Vec<Standing>,
    /// Whether the game ended with a player running out of cards (otherwise by a concession).
    pub ran_out: bool,
    /// Moves both bots sent.
    pub moves: u64,
    /// Moves refused because the other bot's move crossed them on the wire.
    pub races: u64,
    /// Events the table's first bot folded.
    pub events: u64,
}

/// Why a Magic Tech run failed.
#[derive(Debug, thiserror::Error)]
pub enum MtError {
    /// A bot's connection failed, or an answer did not come.
    #[error(transparent)]
    Bot(#[from] BotError),
    /// A request the bots' setup depends on was refused.
    #[error("{request} refused: {code:?} ({message})")]
    Refused {
        /// The request.
        request: &'static str,
        /// Its code.
        code: wire::ErrorCode,
        /// The server's words.
        message: String,
    },
    /// The server sent what the bot cannot fold (a snapshot of another game, an event that
    /// does not fit).
    #[error("the table could not be mirrored: {0}")]
    Mirror(String),
    /// A bot's task failed.
    #[error("a bot's task failed: {0}")]
    Task(String),
}

/// The request a legal move is sent as (`None`: a command that is not a player's request).
pub fn request(command: Command, id: u32) -> Option<ClientMessage> {
    Some(match command {
        Command::Keep => ClientMessage::Keep { id },
        Command::Mulligan => ClientMessage::Mulligan { id },
        Command::Concede => ClientMessage::Concede { id },
        Command::MagicTech(command) => match command {
            C::DeclareDeck { size } => ClientMessage::MagicTechDeclareDeck { id, size },
            C::NextPhase => ClientMessage::MagicTechNextPhase { id },
            C::Deploy { land } => ClientMessage::MagicTechDeploy { id, land },
            C::Tap { card, mana } => ClientMessage::MagicTechTap { id, card, mana },
            C::Pay { card, amount } => ClientMessage::MagicTechPay { id, card, amount },
            C::Reveal { card, face } => ClientMessage::MagicTechReveal { id, card, face },
            C::Relocate { card, area } => ClientMessage::MagicTechRelocate { id, card, area },
            C::Mission { attackers, target } => ClientMessage::MagicTechMission {
                id,
                attackers,
                target,
            },
            C::Block { blocks } => ClientMessage::MagicTechBlock { id, blocks },
            C::Damage { target, amount } => ClientMessage::MagicTechDamage { id, target, amount },
            C::Heal { card, amount } => ClientMessage::MagicTechHeal { id, card, amount },
            C::Regenerate { card } => ClientMessage::MagicTechRegenerate { id, card },
            C::Draw { count } => ClientMessage::MagicTechDraw { id, count },
            C::Life { delta } => ClientMessage::MagicTechLife { id, delta },
            C::LeavePlay { card, to } => ClientMessage::MagicTechLeavePlay { id, card, to },
            C::Propose { correction } => ClientMessage::MagicTechPropose { id, correction },
            C::Answer { accept } => ClientMessage::MagicTechAnswer { id, accept },
            C::Rule { correction } => ClientMessage::MagicTechRule { id, correction },
        },
        _ => return None,
    })
}

/// One bot at a Magic Tech table.
struct MtBot {
    ws: Socket,
    next_id: u32,
    me: PlayerId,
    mirror: Option<Mirror<MagicTech>>,
    rng: Rng,
    /// The move sent and not yet answered.
    in_flight: Option<u32>,
    /// The events the last answer said the move caused: the mirror must include them before
    /// the next move is chosen.
    wait_seq: u64,
    moves: u64,
    races: u64,
    events: u64,
    ran_out: bool,
    conceded: bool,
}

impl MtBot {
    async fn open(url: &str, rng: Rng) -> Result<Self, MtError> {
        let ws = connect(&format!("{}/ws", url.trim_end_matches('/'))).await?;
        let mut bot = Self {
            ws,
            next_id: 1,
            me: 0,
            mirror: None,
            rng,
            in_flight: None,
            wait_seq: 0,
            moves: 0,
            races: 0,
            events: 0,
            ran_out: false,
            conceded: false,
        };
        bot.call("hello", |id| ClientMessage::Hello {
            id,
            protocol: PROTOCOL_VERSION,
            client: "grand-melee-loadtest magic_tech".into(),
        })
        .await?;
        Ok(bot)
    }

    async fn send(&mut self, message: ClientMessage) -> Result<(), MtError> {
        let bytes = wire::encode_client(&message);
        self.ws
            .send(Message::Binary(bytes.into()))
            .await
            .map_err(BotError::from)?;
        Ok(())
    }

    /// The next server message, folded into the mirror.
    async fn recv(&mut self) -> Result<ServerMessage, MtError> {
        let message = next_server_message(&mut self.ws, "a magic_tech move").await?;
        match &message {
            ServerMessage::Snapshot { view, .. } => {
                self.mirror = Some(
                    Mirror::<MagicTech>::of(view).map_err(|e| MtError::Mirror(e.to_string()))?,
                );
            }
            ServerMessage::Events { seq, events, .. } => {
                self.events += events.len() as u64;
                self.ran_out |= events
                    .iter()
                    .any(|e| matches!(e, Event::MagicTechRanOut { .. }));
                if let Some(mirror) = &mut self.mirror
                    && let Err(error) = mirror.apply_batch(*seq, events)
                {
                    // A gap or an event that does not fit: start again from a snapshot.
                    tracing::warn!(%error, "magic_tech bot: mirror rebuilt");
                    self.mirror = None;
                    let id = self.id();
                    self.send(ClientMessage::Snapshot { id }).await?;
                }
            }
            _ => {}
        }
        Ok(message)
    }

    fn id(&mut self) -> u32 {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        id
    }

    /// Sends a request and waits for its answer (folding whatever comes before it); a refusal
    /// is an error.
    async fn call(
        &mut self,
        request: &'static str,
        build: impl FnOnce(u32) -> ClientMessage,
    ) -> Result<ServerMessage, MtError> {
        let id = self.id();
        self.send(build(id)).await?;
        loop {
            let message = self.recv().await?;
            match &message {
                ServerMessage::Error {
                    reply_to: Some(to),
                    code,
                    message,
                    ..
                } if *to == id => {
                    return Err(MtError::Refused {
                        request,
                        code: *code,
                        message: message.clone(),
                    });
                }
                ServerMessage::Error { reply_to: None, .. } => {
                    return Err(BotError::Closed(None).into());
                }
                other if other.reply_to() == Some(id) => return Ok(message),
                _ => {}
            }
        }
    }

    async fn join(&mut self, table: TableId, name: String) -> Result<(), MtError> {
        let seated = self
            .call("join", |id| ClientMessage::Join {
                id,
                table,
                name,
                password: None,
                entropy: None,
                member_token: None,
            })
            .await?;
        if let ServerMessage::Seated { player, .. } = seated {
            self.me = player;
        }
        // The server sends the table's snapshot after `seated`.
        while self.mirror.is_none() {
            self.recv().await?;
        }
        Ok(())
    }

    fn stage(&self) -> Option<StageName> {
        self.mirror.as_ref().map(|m| stage_name(m.table().stage()))
    }

    /// Plays until the game is over; returns the standings.
    async fn play(mut self, max_moves: u32) -> Result<(Self, Vec<Standing>), MtError> {
        loop {
            if self.stage() == Some(StageName::Finished) {
                let standings = self
                    .mirror
                    .as_ref()
                    .map(|m| m.view().standings)
                    .unwrap_or_default();
                return Ok((self, standings));
            }
            if self.in_flight.is_none()
                && let Some(mirror) = &self.mirror
                && mirror.seq() >= self.wait_seq
            {
                let moves = mirror.table().legal_moves(self.me);
                let chosen = if self.moves >= u64::from(max_moves) && !self.conceded {
                    self.conceded = true;
                    Some(Command::Concede)
                } else if moves.is_empty() {
                    None
                } else {
                    let at = self.rng.below(moves.len() as u64) as usize;
                    moves.into_iter().nth(at)
                };
                if let Some(command) = chosen {
                    let id = self.id();
                    if let Some(message) = request(command, id) {
                        self.send(message).await?;
                        self.in_flight = Some(id);
                        self.moves += 1;
                    }
                }
            }
            match self.recv().await? {
                ServerMessage::Ack { reply_to, seq } if Some(reply_to) == self.in_flight => {
                    self.in_flight = None;
                    self.wait_seq = seq;
                }
                ServerMessage::Error {
                    reply_to: Some(to),
                    code,
                    ..
                } if Some(to) == self.in_flight => {
                    tracing::debug!(?code, "magic_tech bot: a move crossed the other's");
                    self.in_flight = None;
                    self.races += 1;
                }
                ServerMessage::Error { reply_to: None, .. } => {
                    return Err(BotError::Closed(None).into());
                }
                _ => {}
            }
        }
    }
}

/// Plays table `index` of a run: creates it, seats two bots and plays its game to the end.
pub async fn play_table(config: &MtConfig, index: usize) -> Result<MtTable, MtError> {
    let stream = |seat: u64| (index as u64) * 2 + seat;
    let mut a = MtBot::open(&config.url, Rng::new(config.seed, stream(0))).await?;
    let mut b = MtBot::open(&config.url, Rng::new(config.seed, stream(1))).await?;
    let created = a
        .call("create_table", |id| ClientMessage::CreateTable {
            mountain_magic: None,
            id,
            name: format!("mt-{index}"),
            seats: 2,
            spell_range: 0,
            reduction: wire::Reduction::default(),
            starting_life: wire::DEFAULT_STARTING_LIFE,
            password: None,
            seed: None,
            turn_clock_secs: 0,
            absence_limit_secs: wire::DEFAULT_ABSENCE_LIMIT_SECS,
            mulligan_clock_secs: 0,
            max_spectators: wire::DEFAULT_MAX_SPECTATORS,
            rules: wire::RuleSet::default(),
            combat_dice: false,
            mulligan: wire::MulliganMode::Paris,
            game: GameKind::MagicTech,
            league: None,
            organiser: None,
        })
        .await?;
    let ServerMessage::TableCreated { table, .. } = created else {
        return Err(MtError::Mirror(format!(
            "not table_created: {}",
            created.name()
        )));
    };
    a.join(table, format!("mt-{index}-a")).await?;
    b.join(table, format!("mt-{index}-b")).await?;
    let deck = config.deck;
    for bot in [&mut a, &mut b] {
        bot.call("magic_tech.declare_deck", |id| {
            ClientMessage::MagicTechDeclareDeck { id, size: deck }
        })
        .await?;
    }
    a.call("start", |id| ClientMessage::Start {
        id,
        first_player: None,
        seating: SeatingMode::Random,
        order: Vec::new(),
    })
    .await?;
    let max = config.max_moves;
    let (a, b) = tokio::join!(tokio::spawn(a.play(max)), tokio::spawn(b.play(max)));
    let (a, standings) = a.map_err(|e| MtError::Task(e.to_string()))??;
    let (b, _) = b.map_err(|e| MtError::Task(e.to_string()))??;
    Ok(MtTable {
        table,
        standings,
        ran_out: a.ran_out,
        moves: a.moves + b.moves,
        races: a.races + b.races,
        events: a.events,
    })
}

/// Plays `config.tables` tables at once, each to the end of its game.
pub async fn play(config: &MtConfig) -> Result<Vec<MtTable>, MtError> {
    let tasks: Vec<_> = (0..config.tables)
        .map(|index| {
            let config = config.clone();
            tokio::spawn(async move { play_table(&config, index).await })
        })
        .collect();
    let mut tables = Vec::new();
    for task in tasks {
        tables.push(task.await.map_err(|e| MtError::Task(e.to_string()))??);
    }
    Ok(tables)
}

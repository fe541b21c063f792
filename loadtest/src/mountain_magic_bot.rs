//! Bots that climb Mountain Magic mountains through the real server: one bot a table (a climb
//! is a solitaire), on its own WebSocket with its own copy of the table (the protocol's
//! [`Mirror`] of [`MountainMagic`], folded from the events it is sent), playing a simple policy
//! over what the rules core's public checks on that copy allow ([`moves`]). Nothing here
//! decides a rule: the server checks every request, and a refusal fails the run.
//!
//! The policy: place the card to place where the first allowed place is, else discard it, else
//! flip; a random path; in the battle, put each land where it first powers something, cast and
//! activate what is powered at the first target the rules allow, attack with each ready
//! creature alone, then end the turn. A bot that has made `max_moves` moves concedes, so every
//! climb ends.
//!
//! With `day`, every bot climbs today's mountain (`mountain_magic.day: "today"`): the same
//! deal at every table, and the day's standings ([`day_standings`]) list the climbers.

use futures_util::SinkExt;
use grand_melee_protocol::game::Game;
use grand_melee_protocol::mountain_magic::climb::all_paths;
use grand_melee_protocol::mountain_magic::{Climb, MountainMagic};
use grand_melee_protocol::mountain_magic_types::{
    CardNo, DayClimb, Ending, ForceRef, MmPhase, MountainCommand, MountainMagicSettings, Outcome,
    Side,
};
use grand_melee_protocol::{
    self as wire, ClientMessage, GameKind, Mirror, PROTOCOL_VERSION, SeatingMode, ServerMessage,
    StageName, Standing, TableId, stage_name,
};
use tokio_tungstenite::tungstenite::Message;

use crate::link::{BotError, Socket, connect, next_server_message};
use crate::rng::Rng;

/// How a run of Mountain Magic climbs is played.
#[derive(Debug, Clone)]
pub struct MmConfig {
    /// The server's base address (`ws://host:port`; the bots add `/ws`).
    pub url: String,
    /// Climbs, each by one bot at its own table, played at the same time.
    pub tables: usize,
    /// Every bot's random choices come from it (with the table as the stream).
    pub seed: u64,
    /// Moves a bot makes before it concedes.
    pub max_moves: u32,
    /// Climb today's mountain (every table the same deal, with standings) rather than a
    /// mountain of each table's own dice.
    pub day: bool,
}

impl Default for MmConfig {
    fn default() -> Self {
        Self {
            url: "ws://127.0.0.1:7878".into(),
            tables: 1,
            seed: 1,
            max_moves: 2_000,
            day: false,
        }
    }
}

/// How one climb went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MmClimb {
    /// The table.
    pub table: TableId,
    /// The final standing (one).
    pub standings: Vec<Standing>,
    /// How the climb ended (`None`: the bot conceded).
    pub outcome: Option<Outcome>,
    /// Moves the bot sent.
    pub moves: u64,
    /// Events the bot folded.
    pub events: u64,
    /// The climber's name at the table.
    pub climber: String,
    /// The table's dice commitment (a day climb's is the day's).
    pub commitment: String,
    /// The bottom row dealt (seven cards, left first).
    pub bottom_row: Vec<CardNo>,
}

impl MmClimb {
    /// The battle's ending, if the climb reached one.
    pub fn ending(&self) -> Option<Ending> {
        match self.outcome {
            Some(Outcome::Battle { ending, .. }) => Some(ending),
            _ => None,
        }
    }
}

/// Why a Mountain Magic run failed.
#[derive(Debug, thiserror::Error)]
pub enum MmError {
    /// A bot's connection failed, or an answer did not come.
    #[error(transparent)]
    Bot(#[from] BotError),
    /// A request was refused: the bot only sends what the rules allow, so this is a fault.
    #[error("{request} refused: {code:?} ({message})")]
    Refused {
        /// The request.
        request: String,
        /// Its code.
        code: wire::ErrorCode,
        /// The server's words.
        message: String,
    },
    /// The server sent what the bot cannot fold.
    #[error("the table could not be mirrored: {0}")]
    Mirror(String),
    /// A bot's task failed.
    #[error("a bot's task failed: {0}")]
    Task(String),
}

/// Battle actions a bot takes in one turn before it ends it (a guard against an ability
/// that could be used again and again).
const ACTIONS_PER_TURN: u32 = 24;

/// The policy's next move on `climb` (`None`: nothing to do now: not the climber's turn, or
/// the climb is over). `acted`: battle actions already taken this turn.
pub fn choose(climb: &Climb, rng: &mut Rng, acted: u32) -> Option<MountainCommand> {
    let view = climb.view();
    match view.phase {
        MmPhase::Climbing => {
            if climb.card_to_place().is_some()
                && let Some(&(row, pos)) = climb.placements().first()
            {
                return Some(MountainCommand::Place { row, pos });
            }
            if view.flipped.is_some() {
                Some(MountainCommand::Discard)
            } else if view.spells_left > 0 {
                Some(MountainCommand::Flip)
            } else {
                None
            }
        }
        MmPhase::Path => {
            let paths = all_paths();
            let at = rng.below(paths.len() as u64) as usize;
            paths
                .into_iter()
                .nth(at)
                .map(|path| MountainCommand::Path { path })
        }
        MmPhase::Battle => battle_move(climb, acted),
        MmPhase::Undealt | MmPhase::Over => None,
    }
}

fn battle_move(climb: &Climb, acted: u32) -> Option<MountainCommand> {
    let battle = climb.view().battle.as_ref()?;
    if battle.turn != Some(Side::Player) {
        return None;
    }
    if battle.pending_land.is_some() {
        let place = climb.mana_places(Side::Player).first().copied();
        return Some(MountainCommand::Mana { place });
    }
    if acted >= ACTIONS_PER_TURN {
        return Some(MountainCommand::EndTurn);
    }
    let side = |side, k: usize| ForceRef {
        side,
        force: u8::try_from(k).unwrap_or(u8::MAX),
    };
    let targets: Vec<ForceRef> = (0..battle.opponent.len())
        .map(|k| side(Side::Opponent, k))
        .chain((0..battle.player.len()).map(|k| side(Side::Player, k)))
        .collect();
    for k in 0..battle.player.len() {
        let card = side(Side::Player, k);
        for (effect, activate) in [
            (climb.castable(card), false),
            (climb.activatable(card), true),
        ] {
            let Some(effect) = effect else { continue };
            let target = targets
                .iter()
                .map(|&t| Some(t))
                .chain(std::iter::once(None))
                .find(|&t| climb.may_target(card, effect, t));
            if let Some(target) = target {
                return Some(if activate {
                    MountainCommand::Activate {
                        force: card.force,
                        target,
                    }
                } else {
                    MountainCommand::Cast {
                        force: card.force,
                        target,
                    }
                });
            }
        }
    }
    for k in 0..battle.player.len() {
        let attacker = side(Side::Player, k);
        for t in 0..battle.opponent.len() {
            if climb.may_attack(&[attacker], side(Side::Opponent, t)) {
                return Some(MountainCommand::Attack {
                    attackers: vec![attacker.force],
                    target: u8::try_from(t).unwrap_or(u8::MAX),
                });
            }
        }
    }
    Some(MountainCommand::EndTurn)
}

/// One bot climbing at its own table.
struct MmBot {
    ws: Socket,
    next_id: u32,
    mirror: Option<Mirror<MountainMagic>>,
    rng: Rng,
    moves: u64,
    events: u64,
}

impl MmBot {
    async fn open(url: &str, rng: Rng) -> Result<Self, MmError> {
        let ws = connect(&format!("{}/ws", url.trim_end_matches('/'))).await?;
        let mut bot = Self {
            ws,
            next_id: 1,
            mirror: None,
            rng,
            moves: 0,
            events: 0,
        };
        bot.call("hello".into(), |id| ClientMessage::Hello {
            id,
            protocol: PROTOCOL_VERSION,
            client: "grand-melee-loadtest mountain_magic".into(),
        })
        .await?;
        Ok(bot)
    }

    /// The next server message, folded into the mirror.
    async fn recv(&mut self) -> Result<ServerMessage, MmError> {
        let message = next_server_message(&mut self.ws, "a mountain_magic move").await?;
        match &message {
            ServerMessage::Snapshot { view, .. } => {
                self.mirror = Some(
                    Mirror::<MountainMagic>::of(view)
                        .map_err(|e| MmError::Mirror(e.to_string()))?,
                );
            }
            ServerMessage::Events { seq, events, .. } => {
                self.events += events.len() as u64;
                if let Some(mirror) = &mut self.mirror {
                    mirror
                        .apply_batch(*seq, events)
                        .map_err(|e| MmError::Mirror(e.to_string()))?;
                }
            }
            _ => {}
        }
        Ok(message)
    }

    /// Sends a request and waits for its answer (folding whatever comes before it); a refusal
    /// is an error.
    async fn call(
        &mut self,
        request: String,
        build: impl FnOnce(u32) -> ClientMessage,
    ) -> Result<ServerMessage, MmError> {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        let bytes = wire::encode_client(&build(id));
        self.ws
            .send(Message::Binary(bytes.into()))
            .await
            .map_err(BotError::from)?;
        loop {
            let message = self.recv().await?;
            match &message {
                ServerMessage::Error {
                    reply_to: Some(to),
                    code,
                    message,
                    ..
                } if *to == id => {
                    return Err(MmError::Refused {
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

    /// Waits until the mirror includes event `seq`.
    async fn catch_up(&mut self, seq: u64) -> Result<(), MmError> {
        while self.mirror.as_ref().is_none_or(|m| m.seq() < seq) {
            self.recv().await?;
        }
        Ok(())
    }

    /// Climbs until the table is finished; returns the standings and the outcome.
    async fn climb(&mut self, max_moves: u32) -> Result<(Vec<Standing>, Option<Outcome>), MmError> {
        let mut acted = 0;
        let mut turns = None;
        loop {
            let Some(mirror) = &self.mirror else {
                self.recv().await?;
                continue;
            };
            if stage_name(mirror.table().stage()) == StageName::Finished {
                let outcome = mirror.table().climb().view().outcome;
                return Ok((mirror.view().standings, outcome));
            }
            let climb = mirror.table().climb();
            let now = climb.view().battle.as_ref().map(|b| b.turns);
            if now != turns {
                turns = now;
                acted = 0;
            }
            let command = if self.moves >= u64::from(max_moves) {
                None
            } else {
                choose(climb, &mut self.rng, acted)
            };
            let concede = self.moves >= u64::from(max_moves);
            if command.is_none() && !concede {
                self.recv().await?;
                continue;
            }
            if matches!(
                command,
                Some(
                    MountainCommand::Cast { .. }
                        | MountainCommand::Activate { .. }
                        | MountainCommand::Attack { .. }
                )
            ) {
                acted += 1;
            }
            let name = command
                .as_ref()
                .map_or_else(|| "concede".to_owned(), |c| format!("{c:?}"));
            let message = move |id| match command {
                Some(command) => ClientMessage::mountain_magic(id, command),
                None => ClientMessage::Concede { id },
            };
            self.moves += 1;
            if let ServerMessage::Ack { seq, .. } = self.call(name, message).await? {
                self.catch_up(seq).await?;
            }
        }
    }
}

/// Climbs at table `index` of a run: creates it, seats one bot, starts and climbs to the end.
pub async fn play_table(config: &MmConfig, index: usize) -> Result<MmClimb, MmError> {
    let mut bot = MmBot::open(&config.url, Rng::new(config.seed, index as u64)).await?;
    // Distinct names: a day's standings count each climber (by name) once.
    let climber = format!("mm-{index}-{}", config.seed);
    let mountain_magic = config.day.then(|| MountainMagicSettings {
        day: Some("today".into()),
        ..MountainMagicSettings::default()
    });
    let created = bot
        .call("create_table".into(), |id| ClientMessage::CreateTable {
            mountain_magic,
            id,
            name: format!("mm-{index}"),
            seats: 1,
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
            game: GameKind::MountainMagic,
            league: None,
            organiser: None,
        })
        .await?;
    let ServerMessage::TableCreated { table, .. } = created else {
        return Err(MmError::Mirror(format!(
            "not table_created: {}",
            created.name()
        )));
    };
    bot.call("join".into(), |id| ClientMessage::Join {
        id,
        table,
        name: climber.clone(),
        password: None,
        entropy: None,
        member_token: None,
    })
    .await?;
    let started = bot
        .call("start".into(), |id| ClientMessage::Start {
            id,
            first_player: None,
            seating: SeatingMode::Random,
            order: Vec::new(),
        })
        .await?;
    if let ServerMessage::Ack { seq, .. } = started {
        bot.catch_up(seq).await?;
    }
    let (commitment, bottom_row) = match &bot.mirror {
        Some(mirror) => (
            mirror.view().dice_commitment.clone(),
            mirror.table().climb().view().mountain[0]
                .iter()
                .flatten()
                .copied()
                .collect(),
        ),
        None => (String::new(), Vec::new()),
    };
    let (standings, outcome) = bot.climb(config.max_moves).await?;
    Ok(MmClimb {
        table,
        standings,
        outcome,
        moves: bot.moves,
        events: bot.events,
        climber,
        commitment,
        bottom_row,
    })
}

/// The standings of today's mountain, as the server gives them: the day, each climber's
/// first finished climb (best first, every page) and the finished climbs in all.
pub async fn day_standings(url: &str) -> Result<(String, Vec<DayClimb>, u32), MmError> {
    let mut bot = MmBot::open(url, Rng::new(0, 0)).await?;
    let mut all = Vec::new();
    let mut from = 0;
    let answer = loop {
        let answer = bot
            .call("mountain_magic.standings".into(), |id| {
                ClientMessage::MountainMagicStandings {
                    id,
                    day: "today".into(),
                    league: None,
                    from,
                    limit: grand_melee_protocol::MAX_PAGE_ITEMS,
                }
            })
            .await?;
        match answer {
            ServerMessage::MountainMagicStandings {
                day,
                standings,
                climbs,
                next,
                ..
            } => {
                all.extend(standings);
                match next {
                    Some(next) => from = next,
                    None => break Ok((day, all, climbs)),
                }
            }
            other => {
                break Err(MmError::Mirror(format!(
                    "not mountain_magic.standings: {}",
                    other.name()
                )));
            }
        }
    };
    let _ = bot.ws.close(None).await;
    answer
}

/// Plays `config.tables` climbs at once, each to its end.
pub async fn play(config: &MmConfig) -> Result<Vec<MmClimb>, MmError> {
    let tasks: Vec<_> = (0..config.tables)
        .map(|index| {
            let config = config.clone();
            tokio::spawn(async move { play_table(&config, index).await })
        })
        .collect();
    let mut climbs = Vec::new();
    for task in tasks {
        climbs.push(task.await.map_err(|e| MmError::Task(e.to_string()))??);
    }
    Ok(climbs)
}

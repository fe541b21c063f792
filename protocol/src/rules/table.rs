//! The table: its state, how commands are decided, and how events are applied.
//!
//! Every change of state goes through [`Table::apply`]. Deciding a command first checks
//! everything that could reject it without touching the state, then emits events one at a time;
//! each emitted event is applied at once, so later decisions in the same command see it. Because
//! the live state is built only by applying the events it returns, replaying those events on a
//! new table gives the identical state.

use crate::text;
use std::collections::BTreeMap;

use super::config::{ConfigError, RuleSet, TableConfig};
use crate::command::{Actor, Command};
use crate::dice::{Dice, entropy_digest};
use crate::error::ErrorCode;
use crate::event::Event;
use crate::league::{self, Bonus, SeatDeck};
use crate::limits::{LETHAL_POISON, MAX_AMOUNT};
use crate::shell::{SessionFacts, Stage, check_seat_text, check_seating_order};
use crate::types::{
    EliminationCause, KeepReason, MulliganMode, Phase, PlayerId, PlayerStatus, RollResult, Ruling,
    SeatingMode, Standing, TurnEndReason, TurnId, TurnRemovalReason,
};

/// What a turn is doing, with the phase of a running one (the table's state; a snapshot shows
/// it as [`TurnStateName`](crate::TurnStateName) and a phase).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TurnState {
    /// Held by a player who may not begin it yet (or before the game has begun).
    Waiting,
    /// Being taken, in the given phase.
    Running(Phase),
    /// Just finished; the next event passes it on or removes it.
    Ended,
}

/// Index of a player in seating order (`Table::players()[seat]`).
pub type Seat = usize;

/// One seated player.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Player {
    /// His id.
    pub id: PlayerId,
    /// His display name.
    pub name: String,
    /// Life total.
    pub life: i32,
    /// Poison counters.
    pub poison: u32,
    /// In the game, eliminated, or eliminated with his position removed.
    pub status: PlayerStatus,
    /// Cards in hand after mulligans.
    pub hand_size: u8,
    /// Whether he has kept his hand.
    pub kept: bool,
    /// Index of his position in the ring (meaningless once his position is removed).
    pub position: usize,
    /// Extra turns he takes right after the turn he is taking.
    pub extra_turns: u8,
    /// Extra turns he takes just before his next turn.
    pub extra_next: u8,
}

/// One of the simultaneous turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Turn {
    /// Its id.
    pub id: TurnId,
    /// The seat of the player holding it.
    pub seat: Seat,
    /// Waiting, running (with its phase) or just ended.
    pub state: TurnState,
    /// Set when a reduction has chosen this turn: it is removed when it ends. The number orders
    /// marks so that the newest can be cancelled first.
    pub removal_mark: Option<u32>,
    /// How many times it has been designated for removal (the seed's rules: 0 or 1; CR 807.4f:
    /// any number).
    pub designations: u32,
}

/// An event that does not fit the state it is applied to (a corrupt or foreign journal).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("event {index} does not apply: {reason}")]
pub struct ReplayError {
    /// Position of the event in the replayed sequence.
    pub index: usize,
    /// What did not fit.
    pub reason: &'static str,
}

/// Why [`Table::quick_start`] failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuickStartError {
    /// The settings were invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A join or the start was refused.
    #[error(transparent)]
    Rejected(#[from] ErrorCode),
}

/// A Grand Melee table: lobby, mulligans, simultaneous turns, eliminations, the result, and the
/// public session facts (host, presence, pause, spectators). This is the one fold of a table's
/// events: the server decides with it, and every client mirrors it ([`crate::Mirror`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    config: TableConfig,
    facts: SessionFacts,
    stage: Stage,
    lobby: Vec<(PlayerId, String)>,
    next_player: u16,
    players: Vec<Player>,
    ring: Vec<Seat>,
    turns: Vec<Turn>,
    first: Seat,
    living: usize,
    eliminations: Vec<Vec<Seat>>,
    next_mark: u32,
    standings: Vec<Standing>,
    dice: DiceState,
    league: LeagueSeats,
    /// How the players were seated (after the start).
    seating_mode: Option<SeatingMode>,
}

/// A league table's seats: each player's deck, the choice of the first player, the bonuses.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct LeagueSeats {
    /// Each seated member's deck, as it was when he sat down.
    pub decks: BTreeMap<PlayerId, SeatDeck>,
    /// In the lobby: (who chose, whom) the decider chose to play first.
    pub first_choice: Option<(PlayerId, PlayerId)>,
    /// After the start: who decided who plays first.
    pub first_decided_by: Option<PlayerId>,
    /// After the start: the deck power bonuses.
    pub bonuses: BTreeMap<PlayerId, Bonus>,
}

/// The dice of a table: what the players contributed, the commitment, the rolls so far, the
/// revealed secret, and which blocking players may strike back now.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct DiceState {
    /// Each lobby player's contribution (join order is the lobby's).
    entropy: BTreeMap<PlayerId, String>,
    /// Digest of the contributions of the players seated at the start.
    digest: [u8; 32],
    /// SHA-256 of the secret, published at the start.
    commitment: String,
    /// The secret, once revealed at the end.
    revealed: Option<String>,
    /// d20s rolled so far.
    rolls: u32,
    /// (attacker, defender) of resisted attacks in the attacker's current combat: the defender
    /// may make a defensive counter strike.
    counters: Vec<(PlayerId, PlayerId)>,
}

/// Every field of a [`Table`], for [`Table::from_view`](crate::rules::Table::from_view).
#[derive(Debug)]
pub(crate) struct TableParts {
    pub config: TableConfig,
    pub facts: SessionFacts,
    pub stage: Stage,
    pub lobby: Vec<(PlayerId, String)>,
    pub players: Vec<Player>,
    pub ring: Vec<Seat>,
    pub turns: Vec<Turn>,
    pub first: Seat,
    pub standings: Vec<Standing>,
    pub commitment: String,
    pub revealed: Option<String>,
    pub league: LeagueSeats,
    pub seating_mode: Option<SeatingMode>,
}

impl Table {
    /// A table put together from a snapshot's parts. What a snapshot does not carry is derived
    /// (living players, the next player id) or left empty (past eliminations).
    pub(crate) fn from_parts(parts: TableParts) -> Self {
        let living = parts.players.iter().filter(|p| p.status.is_alive()).count();
        let next_player = parts
            .lobby
            .iter()
            .map(|(id, _)| id.saturating_add(1))
            .max()
            .unwrap_or(0);
        let next_mark = parts
            .turns
            .iter()
            .filter_map(|t| t.removal_mark)
            .max()
            .map_or(0, |m| m.saturating_add(1));
        Self {
            config: parts.config,
            facts: parts.facts,
            stage: parts.stage,
            lobby: parts.lobby,
            next_player,
            players: parts.players,
            ring: parts.ring,
            turns: parts.turns,
            first: parts.first,
            living,
            eliminations: Vec::new(),
            next_mark,
            standings: parts.standings,
            dice: DiceState {
                commitment: parts.commitment,
                revealed: parts.revealed,
                ..DiceState::default()
            },
            league: parts.league,
            seating_mode: parts.seating_mode,
        }
    }

    /// A new, empty table.
    pub fn new(config: TableConfig) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(Self {
            facts: SessionFacts::default(),
            stage: Stage::Lobby,
            lobby: Vec::new(),
            next_player: 0,
            players: Vec::new(),
            ring: Vec::new(),
            turns: Vec::new(),
            first: 0,
            living: 0,
            eliminations: Vec::new(),
            next_mark: 0,
            standings: Vec::new(),
            dice: DiceState {
                // Published from the lobby on, before anyone contributes entropy.
                commitment: config.secret.commitment(),
                ..DiceState::default()
            },
            league: LeagueSeats::default(),
            seating_mode: None,
            config,
        })
    }

    /// Rebuilds a table from its events.
    pub fn replay<'a>(
        config: TableConfig,
        events: impl IntoIterator<Item = &'a Event>,
    ) -> Result<Self, ReplayError> {
        let mut table = Self::new(config).map_err(|_| ReplayError {
            index: 0,
            reason: "invalid table settings",
        })?;
        for (index, event) in events.into_iter().enumerate() {
            table
                .apply(event)
                .map_err(|reason| ReplayError { index, reason })?;
        }
        Ok(table)
    }

    /// A table with `names` seated, started (first player as given or drawn) and every hand
    /// kept: the state right after the starting turns have begun. Returns every event so far.
    /// Handy for tests, benchmarks and bots.
    pub fn quick_start(
        config: TableConfig,
        names: impl IntoIterator<Item = String>,
        first_player: Option<PlayerId>,
    ) -> Result<(Self, Vec<Event>), QuickStartError> {
        let mut table = Self::new(config)?;
        let mut events = Vec::new();
        for name in names {
            let entropy = String::new();
            events.extend(table.handle(
                Actor::Host,
                Command::Join {
                    name,
                    entropy,
                    deck: None,
                },
            )?);
        }
        events.extend(table.handle(Actor::Host, Command::start(first_player))?);
        while let Some(&player) = table.mulligan_deciders().first() {
            events.extend(table.handle(Actor::Player(player), Command::Keep)?);
        }
        Ok((table, events))
    }

    // ----- Queries ---------------------------------------------------------------------------

    /// The table's settings.
    pub fn config(&self) -> &TableConfig {
        &self.config
    }

    /// The public session facts: host, presence, pause, spectators.
    pub fn facts(&self) -> &SessionFacts {
        &self.facts
    }

    /// Lobby, mulligans, play or finished.
    pub fn stage(&self) -> Stage {
        self.stage
    }

    /// Players who have joined, in join order (the lobby; kept after the start for reference).
    pub fn lobby(&self) -> &[(PlayerId, String)] {
        &self.lobby
    }

    /// Seated players in seating order (empty before the start).
    pub fn players(&self) -> &[Player] {
        &self.players
    }

    /// The positions of the ring, in seating order: living players and eliminated players whose
    /// positions have not been removed yet.
    pub fn ring(&self) -> impl ExactSizeIterator<Item = &Player> + '_ {
        self.ring.iter().map(|&seat| &self.players[seat])
    }

    /// The simultaneous turns, by id.
    pub fn turns(&self) -> &[Turn] {
        &self.turns
    }

    /// Players still in the game.
    pub fn living(&self) -> usize {
        self.living
    }

    /// The first player (after the start).
    pub fn first_player(&self) -> Option<PlayerId> {
        self.players.get(self.first).map(|p| p.id)
    }

    /// The player who decides on a mulligan now (Paris mulligans; `None` when everyone
    /// decides at once: see [`mulligan_deciders`](Self::mulligan_deciders)).
    pub fn mulligan_decider(&self) -> Option<PlayerId> {
        match (self.stage, self.config.mulligan) {
            (Stage::Mulligan { kept }, MulliganMode::Paris) => {
                Some(self.players[self.decider_seat(kept)].id)
            }
            _ => None,
        }
    }

    /// Everyone whose mulligan decision is due now: the one decider of Paris mulligans, or
    /// every player who has not kept yet when everyone decides at once (in seating order).
    pub fn mulligan_deciders(&self) -> Vec<PlayerId> {
        match (self.stage, self.config.mulligan) {
            (Stage::Mulligan { .. }, MulliganMode::Simultaneous) => self
                .players
                .iter()
                .filter(|p| !p.kept)
                .map(|p| p.id)
                .collect(),
            _ => self.mulligan_decider().into_iter().collect(),
        }
    }

    /// How the players were seated (`None` before the start).
    pub fn seating_mode(&self) -> Option<SeatingMode> {
        self.seating_mode
    }

    /// SHA-256 of the dice secret, in hex (empty before the start).
    pub fn dice_commitment(&self) -> &str {
        &self.dice.commitment
    }

    /// The dice secret, in hex, once the game is over.
    pub fn dice_secret(&self) -> Option<&str> {
        self.dice.revealed.as_deref()
    }

    /// The d20s rolled so far.
    pub fn rolls(&self) -> u32 {
        self.dice.rolls
    }

    /// The dice of this game (after the start): the table's secret and the seated players'
    /// entropy. Only the server knows the secret before the end; a verifier builds its own
    /// [`Dice`] from the revealed one.
    pub fn game_dice(&self) -> Dice {
        Dice::new(self.config.secret, self.dice.digest)
    }

    /// The digest of the contributions of the players in the lobby, in join order.
    pub fn lobby_entropy(&self) -> [u8; 32] {
        entropy_digest(
            self.lobby
                .iter()
                .map(|(id, _)| self.dice.entropy.get(id).map_or("", String::as_str)),
        )
    }

    /// The running turns whose holders are within a player's range (their stacks are the ones
    /// he may act on: CR 807.5a; under the seed's rules, the turns whose spheres hold him).
    pub fn stacks_in_range(&self, player: PlayerId) -> Vec<TurnId> {
        let Some(seat) = self.seat_of(player) else {
            return Vec::new();
        };
        if !self.players[seat].status.is_alive() {
            return Vec::new();
        }
        self.turns
            .iter()
            .filter(|t| matches!(t.state, TurnState::Running(_)))
            .filter(|t| self.seat_distance(seat, t.seat) <= self.range())
            .map(|t| t.id)
            .collect()
    }

    /// Groups of players in the order they were eliminated.
    pub fn eliminations(&self) -> impl Iterator<Item = Vec<PlayerId>> + '_ {
        self.eliminations
            .iter()
            .map(|group| group.iter().map(|&s| self.players[s].id).collect())
    }

    /// The final result, best place first (empty until the game is over).
    pub fn standings(&self) -> &[Standing] {
        &self.standings
    }

    /// The seat of a seated player.
    pub fn seat_of(&self, player: PlayerId) -> Option<Seat> {
        self.players.iter().position(|p| p.id == player)
    }

    /// A seated player.
    pub fn player(&self, player: PlayerId) -> Option<&Player> {
        self.seat_of(player).map(|seat| &self.players[seat])
    }

    /// The turn a player holds, if any.
    pub fn turn_of(&self, player: PlayerId) -> Option<&Turn> {
        let seat = self.seat_of(player)?;
        self.turns.iter().find(|t| t.seat == seat)
    }

    /// Positions between two players the shorter way round the ring, if both still have one.
    pub fn distance(&self, a: PlayerId, b: PlayerId) -> Option<usize> {
        let (a, b) = (self.seat_of(a)?, self.seat_of(b)?);
        let removed = |s: Seat| self.players[s].status == PlayerStatus::Removed;
        (!removed(a) && !removed(b)).then(|| self.seat_distance(a, b))
    }

    /// Everyone in a player's sphere of influence: every position within spell range on either
    /// side, himself included, in ring order starting R positions to his right.
    pub fn sphere(&self, player: PlayerId) -> Vec<PlayerId> {
        let Some(seat) = self.seat_of(player) else {
            return Vec::new();
        };
        if self.players[seat].status == PlayerStatus::Removed {
            return Vec::new();
        }
        let m = self.ring.len();
        let r = self.range().min(m / 2);
        let center = self.players[seat].position;
        let mut out: Vec<PlayerId> = (0..=2 * r)
            .map(|k| self.players[self.ring[(center + m - r + k) % m]].id)
            .collect();
        out.dedup();
        if out.len() > 1 && out.first() == out.last() {
            out.pop();
        }
        out
    }

    /// Whom a player may attack right now (taking his turn, in combat).
    pub fn attack_targets(&self, player: PlayerId) -> Vec<PlayerId> {
        self.players
            .iter()
            .filter(|t| self.check_attack(player, t.id).is_ok())
            .map(|t| t.id)
            .collect()
    }

    /// Whom a player may target with damage and other effects right now.
    pub fn damage_targets(&self, player: PlayerId) -> Vec<PlayerId> {
        self.players
            .iter()
            .filter(|t| self.check_target(player, t.id).is_ok())
            .map(|t| t.id)
            .collect()
    }

    // ----- Commands --------------------------------------------------------------------------

    /// Decides a command. Either it is accepted and the returned events (already applied) say
    /// what changed, or it is rejected and nothing changed.
    pub fn handle(&mut self, actor: Actor, command: Command) -> Result<Vec<Event>, ErrorCode> {
        let mut out = Vec::new();
        match command {
            Command::Join {
                name,
                entropy,
                deck,
            } => self.join(actor, name, entropy, deck, &mut out)?,
            Command::ChooseFirst { player } => self.choose_first(actor, player, &mut out)?,
            Command::Leave => self.leave(actor, &mut out)?,
            Command::Start {
                first_player,
                seating,
                order,
            } => self.start(actor, first_player, seating, order, &mut out)?,
            Command::Mulligan => self.mulligan(actor, &mut out)?,
            // Another game's command.
            Command::MagicTech(_) | Command::MountainMagic(_) => return Err(ErrorCode::BadMessage),
            Command::Keep => self.keep(actor, &mut out)?,
            Command::SetPhase { phase } => {
                let turn = self.own_running_turn(actor)?;
                if self.turns[turn].state == TurnState::Running(phase) {
                    return Err(ErrorCode::SamePhase);
                }
                let turn = self.turns[turn].id;
                self.emit(&mut out, Event::PhaseChanged { turn, phase });
            }
            Command::EndTurn => {
                let turn = self.own_running_turn(actor)?;
                self.end_turn(turn, TurnEndReason::Finished, &mut out);
            }
            Command::Attack {
                target,
                damage,
                poison,
            } => {
                let attacker = self.acting_player(actor)?;
                self.check_attack(attacker, target)?;
                if damage > MAX_AMOUNT || poison > MAX_AMOUNT {
                    return Err(ErrorCode::BadAmount);
                }
                self.emit(
                    &mut out,
                    Event::Attacked {
                        attacker,
                        defender: target,
                        damage,
                        poison,
                    },
                );
                self.eliminate_if_lethal(target, &mut out);
            }
            Command::DealDamage { target, amount } => {
                let source = self.acting_player(actor)?;
                self.check_target(source, target)?;
                if amount == 0 || amount > MAX_AMOUNT {
                    return Err(ErrorCode::BadAmount);
                }
                self.emit(
                    &mut out,
                    Event::DamageDealt {
                        source,
                        target,
                        amount,
                    },
                );
                self.eliminate_if_lethal(target, &mut out);
            }
            Command::ChangeLife { delta } => {
                let player = self.acting_player(actor)?;
                let life = self.changed_life(player, delta)?;
                self.emit(&mut out, Event::LifeChanged { player, life });
                self.eliminate_if_lethal(player, &mut out);
            }
            Command::ChangePoison { delta } => {
                let player = self.acting_player(actor)?;
                let poison = self.changed_poison(player, delta)?;
                self.emit(&mut out, Event::PoisonChanged { player, poison });
                self.eliminate_if_lethal(player, &mut out);
            }
            Command::Concede => {
                let player = self.acting_player(actor)?;
                let seat = self.seat(player)?;
                self.eliminate(vec![seat], EliminationCause::Conceded, &mut out);
            }
            Command::ExtraTurn => {
                let turn = self.own_running_turn(actor)?;
                let seat = self.turns[turn].seat;
                if self.players[seat].extra_turns == u8::MAX {
                    return Err(ErrorCode::BadAmount);
                }
                let player = self.players[seat].id;
                self.emit(
                    &mut out,
                    Event::ExtraTurnGranted {
                        player,
                        before_next: false,
                    },
                );
            }
            Command::AttackRoll {
                defender,
                attacker_power,
                blocker_powers,
            } => {
                let attacker = self.acting_player(actor)?;
                if !self.config.combat_dice {
                    return Err(ErrorCode::DiceOff);
                }
                self.check_attack(attacker, defender)?;
                check_powers(attacker_power, &blocker_powers)?;
                let undefended = blocker_powers.is_empty();
                let (rolled, damage) =
                    self.roll(attacker, defender, false, attacker_power, blocker_powers);
                self.emit(&mut out, rolled);
                if undefended && damage > 0 {
                    self.emit(
                        &mut out,
                        Event::Attacked {
                            attacker,
                            defender,
                            damage,
                            poison: 0,
                        },
                    );
                    self.eliminate_if_lethal(defender, &mut out);
                }
            }
            Command::CounterRoll {
                attacker,
                blocker_power,
                attacker_power,
            } => {
                let blocker = self.acting_player(actor)?;
                if !self.config.combat_dice {
                    return Err(ErrorCode::DiceOff);
                }
                let in_combat = self.seat_of(attacker).and_then(|s| self.running_turn_at(s));
                let in_combat = in_combat
                    .is_some_and(|t| self.turns[t].state == TurnState::Running(Phase::Combat));
                if !in_combat || !self.dice.counters.contains(&(attacker, blocker)) {
                    return Err(ErrorCode::NoCounterStrike);
                }
                check_powers(blocker_power, &[attacker_power])?;
                let (rolled, _) =
                    self.roll(blocker, attacker, true, blocker_power, vec![attacker_power]);
                self.emit(&mut out, rolled);
            }
            Command::Ruling(ruling) => self.rule(actor, ruling, &mut out)?,
            Command::ExpireMulligan { player, reason } => {
                self.keep_for(actor, player, reason.into(), &mut out)?;
            }
            Command::ExpireTurn { player, reason } => {
                self.require_host(actor)?;
                if self.stage != Stage::Playing {
                    return Err(ErrorCode::NotPlaying);
                }
                let seat = self.living_target(player)?;
                let turn = self.running_turn_at(seat).ok_or(ErrorCode::NoRunningTurn)?;
                self.end_turn(turn, reason.into(), &mut out);
            }
            Command::Abandon => {
                self.require_host(actor)?;
                if !matches!(self.stage, Stage::Mulligan { .. } | Stage::Playing) {
                    return Err(ErrorCode::NotPlaying);
                }
                self.emit(&mut out, Event::GameAbandoned);
                let standings = self.final_standings();
                self.emit(&mut out, Event::GameOver { standings });
                let secret = self.config.secret.to_hex();
                self.emit(&mut out, Event::DiceRevealed { secret });
            }
        }
        if self.stage == Stage::Playing {
            self.begin_turns(&mut out);
        }
        Ok(out)
    }

    fn join(
        &mut self,
        actor: Actor,
        name: String,
        entropy: String,
        deck: Option<SeatDeck>,
        out: &mut Vec<Event>,
    ) -> Result<(), ErrorCode> {
        self.require_host(actor)?;
        if self.stage != Stage::Lobby {
            return Err(ErrorCode::GameStarted);
        }
        match &deck {
            None if self.config.league => return Err(ErrorCode::LeagueSeat),
            Some(_) if !self.config.league => return Err(ErrorCode::BadMessage),
            Some(deck) if self.league.decks.values().any(|d| d.member == deck.member) => {
                return Err(ErrorCode::AlreadySeated);
            }
            _ => {}
        }
        let name = check_seat_text(&name, &entropy)?;
        if self.lobby.len() >= usize::from(self.config.seats) {
            return Err(ErrorCode::TableFull);
        }
        if self
            .lobby
            .iter()
            .any(|(_, taken)| taken.to_lowercase() == name.to_lowercase())
        {
            return Err(ErrorCode::NameTaken);
        }
        if self
            .lobby
            .iter()
            .any(|(_, taken)| text::names_confusable(taken, &name))
        {
            return Err(ErrorCode::ConfusableName);
        }
        if self.next_player == u16::MAX {
            return Err(ErrorCode::TableFull);
        }
        let player: PlayerId = self.next_player;
        self.emit(
            out,
            Event::PlayerJoined {
                player,
                name,
                entropy,
                deck,
            },
        );
        Ok(())
    }

    /// The league decks seated in the lobby, with their powers, in join order.
    fn lobby_powers(&self) -> Vec<(PlayerId, u32)> {
        self.lobby
            .iter()
            .filter_map(|(id, _)| self.league.decks.get(id).map(|d| (*id, d.power)))
            .collect()
    }

    /// A league table's seats: decks, the first player's choice, bonuses.
    pub(crate) fn league_seats(&self) -> &LeagueSeats {
        &self.league
    }

    /// The league members seated at this table (in the lobby, those still there; after the
    /// start, every player's), by player id.
    pub fn league_members(&self) -> impl Iterator<Item = league::MemberId> + '_ {
        self.league.decks.values().map(|deck| deck.member)
    }

    /// Who decides who plays first at a league table (in the lobby, derived from the seated
    /// decks; after the start, who did).
    pub fn first_decider(&self) -> Option<PlayerId> {
        match self.stage {
            Stage::Lobby => league::first_decider(&self.lobby_powers()),
            _ => self.league.first_decided_by,
        }
    }

    /// A choice of the first player lasts only while its maker is the decider: once a join or
    /// a departure makes someone else the decider, it is dropped for good (it does not come back
    /// if he becomes the decider again), so a snapshot, which shows the choice, says everything
    /// a fold needs.
    fn drop_stale_choice(&mut self) {
        if self
            .league
            .first_choice
            .is_some_and(|(by, _)| self.first_decider() != Some(by))
        {
            self.league.first_choice = None;
        }
    }

    fn choose_first(
        &mut self,
        actor: Actor,
        player: PlayerId,
        out: &mut Vec<Event>,
    ) -> Result<(), ErrorCode> {
        let Actor::Player(by) = actor else {
            return Err(ErrorCode::NotAPlayer);
        };
        if self.stage != Stage::Lobby {
            return Err(ErrorCode::GameStarted);
        }
        if self.first_decider() != Some(by) {
            return Err(ErrorCode::NotDecider);
        }
        if !self.lobby.iter().any(|(id, _)| *id == player) {
            return Err(ErrorCode::UnknownPlayer);
        }
        self.emit(out, Event::FirstPlayerChosen { by, player });
        Ok(())
    }

    fn leave(&mut self, actor: Actor, out: &mut Vec<Event>) -> Result<(), ErrorCode> {
        let Actor::Player(player) = actor else {
            return Err(ErrorCode::NotAPlayer);
        };
        if self.stage != Stage::Lobby {
            return Err(ErrorCode::GameStarted);
        }
        if !self.lobby.iter().any(|(id, _)| *id == player) {
            return Err(ErrorCode::UnknownPlayer);
        }
        self.emit(out, Event::PlayerLeft { player });
        Ok(())
    }

    fn start(
        &mut self,
        actor: Actor,
        first_player: Option<PlayerId>,
        seating_mode: SeatingMode,
        order: Vec<PlayerId>,
        out: &mut Vec<Event>,
    ) -> Result<(), ErrorCode> {
        self.require_host(actor)?;
        if self.stage != Stage::Lobby {
            return Err(ErrorCode::GameStarted);
        }
        let n = self.lobby.len();
        if n < 2 {
            return Err(ErrorCode::NotEnoughPlayers);
        }
        let joined: Vec<PlayerId> = self.lobby.iter().map(|(id, _)| *id).collect();
        check_seating_order(seating_mode, &order, &joined)?;
        if let Some(first) = first_player
            && !self.lobby.iter().any(|(id, _)| *id == first)
        {
            return Err(ErrorCode::UnknownPlayer);
        }
        // At a league table the deck furthest behind decides who plays first: the decider's
        // choice, or else the decider himself.
        let decider = self.first_decider();
        if decider.is_some() && first_player.is_some() {
            return Err(ErrorCode::NotDecider);
        }
        let first_player = match (decider, self.league.first_choice) {
            (Some(decider), Some((by, chosen))) if by == decider => Some(chosen),
            (Some(decider), _) => Some(decider),
            (None, _) => first_player,
        };
        let bonuses = league::bonuses(&self.lobby_powers());
        // Every random outcome comes from the dice (see `crate::dice` and PROTOCOL.md).
        let dice = Dice::new(self.config.secret, self.lobby_entropy());
        let mut seating: Vec<PlayerId> = self.lobby.iter().map(|(id, _)| *id).collect();
        match seating_mode {
            SeatingMode::Random => dice.shuffle(&mut seating),
            SeatingMode::Joined => {}
            SeatingMode::Arranged => seating = order,
        }
        let first_player_chosen = first_player.is_some();
        let first = match first_player {
            Some(id) => seating.iter().position(|&p| p == id).unwrap_or(0),
            None => dice.first_seat(n),
        };
        let turns = self
            .config
            .rule_set
            .starting_turns(n, self.config.spell_range);
        let turn_holders = (0..turns)
            .map(|k| match self.config.rule_set {
                // 807.4b: the player four seats to the left of the previous marker's.
                RuleSet::Cr807 => seating[(first + 4 * k) % n],
                RuleSet::Seed => seating[(first + k * n / turns) % n],
            })
            .collect();
        let first_player = seating[first];
        self.emit(
            out,
            Event::GameStarted {
                seating,
                first_player,
                turn_holders,
                commitment: self.config.secret.commitment(),
                first_player_chosen,
                first_decided_by: decider,
                bonuses,
                seating_mode,
            },
        );
        Ok(())
    }

    /// A start's seating: an `order` goes with `arranged` only, and lists every lobby player
    /// exactly once.
    fn mulligan(&mut self, actor: Actor, out: &mut Vec<Event>) -> Result<(), ErrorCode> {
        let seat = self.deciding_player(actor)?;
        let player = &self.players[seat];
        if player.hand_size == 0 {
            return Err(ErrorCode::NoCardsLeft);
        }
        let (player, hand_size) = (player.id, player.hand_size - 1);
        self.emit(out, Event::Mulliganed { player, hand_size });
        Ok(())
    }

    fn keep(&mut self, actor: Actor, out: &mut Vec<Event>) -> Result<(), ErrorCode> {
        let seat = self.deciding_player(actor)?;
        self.keep_at(seat, KeepReason::Decided, out);
        Ok(())
    }

    /// Keeps on behalf of `player` (host ruling, clock, absence): he must be the decider.
    fn keep_for(
        &mut self,
        actor: Actor,
        player: PlayerId,
        reason: KeepReason,
        out: &mut Vec<Event>,
    ) -> Result<(), ErrorCode> {
        self.require_host(actor)?;
        if !matches!(self.stage, Stage::Mulligan { .. }) {
            return Err(ErrorCode::NotMulliganing);
        }
        let seat = self.seat(player)?;
        if !self.mulligan_deciders().contains(&player) {
            return Err(ErrorCode::NotYourDecision);
        }
        self.keep_at(seat, reason, out);
        Ok(())
    }

    fn keep_at(&mut self, seat: Seat, reason: KeepReason, out: &mut Vec<Event>) {
        let (player, hand_size) = (self.players[seat].id, self.players[seat].hand_size);
        self.emit(
            out,
            Event::Kept {
                player,
                hand_size,
                reason,
            },
        );
    }

    fn rule(
        &mut self,
        actor: Actor,
        ruling: Ruling,
        out: &mut Vec<Event>,
    ) -> Result<(), ErrorCode> {
        self.require_host(actor)?;
        let ruling = match ruling {
            Ruling::Keep { player } => {
                return self.keep_for(actor, player, KeepReason::Ruling, out);
            }
            _ if self.stage != Stage::Playing => return Err(ErrorCode::NotPlaying),
            ruling => ruling,
        };
        match ruling {
            // Handled above: the only ruling of the mulligan stage.
            Ruling::Keep { .. } => {}
            Ruling::Eliminate { players } => {
                if players.is_empty() {
                    return Err(ErrorCode::NoPlayers);
                }
                let mut seats = Vec::with_capacity(players.len());
                for &player in &players {
                    let seat = self.living_target(player)?;
                    if seats.contains(&seat) {
                        return Err(ErrorCode::DuplicatePlayer);
                    }
                    seats.push(seat);
                }
                self.eliminate(seats, EliminationCause::Ruling, out);
            }
            Ruling::SetLife { player, life } => {
                self.living_target(player)?;
                if life.unsigned_abs() > MAX_AMOUNT {
                    return Err(ErrorCode::BadAmount);
                }
                self.emit(out, Event::LifeChanged { player, life });
                self.eliminate_if_lethal(player, out);
            }
            Ruling::SetPoison { player, poison } => {
                self.living_target(player)?;
                if poison > MAX_AMOUNT {
                    return Err(ErrorCode::BadAmount);
                }
                self.emit(out, Event::PoisonChanged { player, poison });
                self.eliminate_if_lethal(player, out);
            }
            Ruling::EndTurn { player } => {
                let seat = self.living_target(player)?;
                let turn = self.running_turn_at(seat).ok_or(ErrorCode::NoRunningTurn)?;
                self.end_turn(turn, TurnEndReason::Ruling, out);
            }
            Ruling::ExtraTurn { player } => {
                let seat = self.living_target(player)?;
                let before_next = self.running_turn_at(seat).is_none();
                if self.players[seat]
                    .extra_turns
                    .max(self.players[seat].extra_next)
                    == u8::MAX
                {
                    return Err(ErrorCode::BadAmount);
                }
                self.emit(
                    out,
                    Event::ExtraTurnGranted {
                        player,
                        before_next,
                    },
                );
            }
        }
        Ok(())
    }

    // ----- Checks (never change anything) ----------------------------------------------------

    fn require_host(&self, actor: Actor) -> Result<(), ErrorCode> {
        match actor {
            Actor::Host => Ok(()),
            Actor::Player(_) => Err(ErrorCode::NotHost),
        }
    }

    fn seat(&self, player: PlayerId) -> Result<Seat, ErrorCode> {
        self.seat_of(player).ok_or(ErrorCode::UnknownPlayer)
    }

    /// The seat of a living player who acts during play.
    fn acting_player(&self, actor: Actor) -> Result<PlayerId, ErrorCode> {
        let Actor::Player(player) = actor else {
            return Err(ErrorCode::NotAPlayer);
        };
        if self.stage != Stage::Playing {
            return Err(ErrorCode::NotPlaying);
        }
        let seat = self.seat(player)?;
        if !self.players[seat].status.is_alive() {
            return Err(ErrorCode::Eliminated);
        }
        Ok(player)
    }

    fn living_target(&self, player: PlayerId) -> Result<Seat, ErrorCode> {
        let seat = self.seat(player)?;
        if !self.players[seat].status.is_alive() {
            return Err(ErrorCode::TargetEliminated);
        }
        Ok(seat)
    }

    fn own_running_turn(&self, actor: Actor) -> Result<usize, ErrorCode> {
        let seat = self.seat(self.acting_player(actor)?)?;
        self.running_turn_at(seat).ok_or(ErrorCode::NotYourTurn)
    }

    fn deciding_player(&self, actor: Actor) -> Result<Seat, ErrorCode> {
        let Actor::Player(player) = actor else {
            return Err(ErrorCode::NotAPlayer);
        };
        if !matches!(self.stage, Stage::Mulligan { .. }) {
            return Err(ErrorCode::NotMulliganing);
        }
        let seat = self.seat(player)?;
        if !self.mulligan_deciders().contains(&player) {
            return Err(ErrorCode::NotYourDecision);
        }
        Ok(seat)
    }

    fn decider_seat(&self, kept: usize) -> Seat {
        (self.first + kept) % self.players.len()
    }

    /// Whether `attacker` may attack `defender` now: taking his turn, in combat, a living
    /// opponent within spell range.
    fn check_attack(&self, attacker: PlayerId, defender: PlayerId) -> Result<(), ErrorCode> {
        let seat = self.seat(self.acting_player(Actor::Player(attacker))?)?;
        let turn = self.running_turn_at(seat).ok_or(ErrorCode::NotYourTurn)?;
        if self.turns[turn].state != TurnState::Running(Phase::Combat) {
            return Err(ErrorCode::NotCombatPhase);
        }
        if attacker == defender {
            return Err(ErrorCode::SelfAttack);
        }
        self.check_in_range(seat, defender)?;
        if self.config.rule_set == RuleSet::Cr807 {
            // 807.2b / 803.1a: only the opponent nearest to his left, and only if he is one
            // position away (a departed neighbour's seat still counts: 807.4h).
            let m = self.ring.len();
            let left = self.ring[(self.players[seat].position + 1) % m];
            if self.players[left].id != defender {
                return Err(ErrorCode::NotAttackLeft);
            }
        }
        Ok(())
    }

    /// Whether `source` may target `target` now: a living player within spell range.
    fn check_target(&self, source: PlayerId, target: PlayerId) -> Result<(), ErrorCode> {
        let seat = self.seat(self.acting_player(Actor::Player(source))?)?;
        self.check_in_range(seat, target)
    }

    fn check_in_range(&self, seat: Seat, target: PlayerId) -> Result<(), ErrorCode> {
        let target = self.living_target(target)?;
        if self.seat_distance(seat, target) > self.range() {
            return Err(ErrorCode::OutOfRange);
        }
        Ok(())
    }

    fn changed_life(&self, player: PlayerId, delta: i32) -> Result<i32, ErrorCode> {
        if delta == 0 || delta.unsigned_abs() > MAX_AMOUNT {
            return Err(ErrorCode::BadAmount);
        }
        let seat = self.seat(player)?;
        Ok(self.players[seat].life.saturating_add(delta))
    }

    fn changed_poison(&self, player: PlayerId, delta: i32) -> Result<u32, ErrorCode> {
        if delta == 0 || delta.unsigned_abs() > MAX_AMOUNT {
            return Err(ErrorCode::BadAmount);
        }
        let seat = self.seat(player)?;
        self.players[seat]
            .poison
            .checked_add_signed(delta)
            .ok_or(ErrorCode::BadAmount)
    }

    // ----- Turn scheduling (emits events) ----------------------------------------------------

    fn range(&self) -> usize {
        self.config.spell_range.get()
    }

    /// Positions between two seats the shorter way round the current ring.
    fn seat_distance(&self, a: Seat, b: Seat) -> usize {
        let m = self.ring.len();
        let left = (self.players[b].position + m - self.players[a].position) % m;
        left.min(m - left)
    }

    fn turn_index(&self, turn: TurnId) -> Option<usize> {
        self.turns.iter().position(|t| t.id == turn)
    }

    fn turn_at(&self, seat: Seat) -> Option<usize> {
        self.turns.iter().position(|t| t.seat == seat)
    }

    fn running_turn_at(&self, seat: Seat) -> Option<usize> {
        self.turns
            .iter()
            .position(|t| t.seat == seat && matches!(t.state, TurnState::Running(_)))
    }

    /// The next living player to the left of a seat (which may itself be eliminated).
    fn next_living_left(&self, seat: Seat) -> Seat {
        let m = self.ring.len();
        let start = self.players[seat].position;
        (1..m)
            .map(|k| self.ring[(start + k) % m])
            .find(|&s| self.players[s].status.is_alive())
            .unwrap_or(seat)
    }

    /// Whether the holder of a waiting turn may begin it now. The one place the rule set decides
    /// how turns block each other.
    fn may_begin(&self, seat: Seat) -> bool {
        match self.config.rule_set {
            RuleSet::Seed => self.may_begin_grand_melee(seat),
            RuleSet::Cr807 => self.may_begin_cr807(seat),
        }
    }

    /// CR 807.4d: a player who holds a turn marker cannot begin while any player in the three
    /// seats to his left (players still in the game) holds one.
    fn may_begin_cr807(&self, seat: Seat) -> bool {
        !self
            .living_left(seat, 3)
            .iter()
            .any(|&other| other != seat && self.turn_at(other).is_some())
    }

    /// Up to `count` living players to the left of a seat, nearest first (fewer if the ring
    /// has fewer other living players).
    fn living_left(&self, seat: Seat, count: usize) -> Vec<Seat> {
        let m = self.ring.len();
        let start = self.players[seat].position;
        (1..m)
            .map(|k| self.ring[(start + k) % m])
            .filter(|&s| self.players[s].status.is_alive())
            .take(count)
            .collect()
    }

    /// Up to `count` living players to the right of a seat, nearest first.
    fn living_right(&self, seat: Seat, count: usize) -> Vec<Seat> {
        let m = self.ring.len();
        let start = self.players[seat].position;
        (1..m)
            .map(|k| self.ring[(start + m - k) % m])
            .filter(|&s| self.players[s].status.is_alive())
            .take(count)
            .collect()
    }

    /// Whether a player whose turn just ended keeps it for the extra turn he takes next.
    /// CR 807.4i: he keeps the marker unless another marker is within three seats of him; one
    /// on his left only makes him wait (807.4d) until it moves on, one on his right (whose
    /// holder his marker would hold up) makes him pass it and take the extra turn just before
    /// his next turn. The seed's rules: he keeps the turn only if he could begin again at once
    /// (rule 4) and no waiting turn is within 2R positions (he would hold it up).
    fn may_keep_for_extra(&self, seat: Seat) -> bool {
        match self.config.rule_set {
            RuleSet::Cr807 => !self
                .living_right(seat, 3)
                .iter()
                .any(|&other| other != seat && self.turn_at(other).is_some()),
            RuleSet::Seed => {
                let reach = 2 * self.range();
                self.may_begin(seat)
                    && !self.turns.iter().any(|t| {
                        t.seat != seat
                            && t.state == TurnState::Waiting
                            && self.seat_distance(seat, t.seat) <= reach
                    })
            }
        }
    }

    /// Rule 4: (a) no running sphere overlaps his, (b) no waiting turn among the next 2R living
    /// players to his left.
    fn may_begin_grand_melee(&self, seat: Seat) -> bool {
        let reach = 2 * self.range();
        let overlaps_running = self.turns.iter().any(|t| {
            t.seat != seat
                && matches!(t.state, TurnState::Running(_))
                && self.seat_distance(seat, t.seat) <= reach
        });
        if overlaps_running {
            return false;
        }
        let m = self.ring.len();
        let start = self.players[seat].position;
        let mut seen = 0;
        for k in 1..m {
            let other = self.ring[(start + k) % m];
            if !self.players[other].status.is_alive() {
                continue;
            }
            if self
                .turns
                .iter()
                .any(|t| t.seat == other && t.state == TurnState::Waiting)
            {
                return false;
            }
            seen += 1;
            if seen == reach {
                break;
            }
        }
        true
    }

    /// Begins every waiting turn that may begin, until none may.
    fn begin_turns(&mut self, out: &mut Vec<Event>) {
        loop {
            let mut began = false;
            for index in 0..self.turns.len() {
                let turn = self.turns[index];
                if turn.state == TurnState::Waiting && self.may_begin(turn.seat) {
                    self.remove_departed_positions(out);
                    let player = self.players[turn.seat].id;
                    self.emit(
                        out,
                        Event::TurnBegan {
                            turn: turn.id,
                            player,
                        },
                    );
                    began = true;
                }
            }
            if !began {
                break;
            }
        }
    }

    /// CR 807.4h: players on either side of departed seats do not enter each other's range
    /// until the next turn begins; then every departed position (whose player holds no turn)
    /// goes. The seed's rules remove positions as turns pass instead (rule 6).
    fn remove_departed_positions(&mut self, out: &mut Vec<Event>) {
        if self.config.rule_set != RuleSet::Cr807 || self.living == self.ring.len() {
            return;
        }
        let players: Vec<PlayerId> = self
            .ring
            .iter()
            .filter(|&&s| self.players[s].status == PlayerStatus::Eliminated)
            .filter(|&&s| self.turn_at(s).is_none())
            .map(|&s| self.players[s].id)
            .collect();
        if !players.is_empty() {
            self.emit(out, Event::PositionsRemoved { players });
        }
    }

    fn end_turn(&mut self, turn: usize, reason: TurnEndReason, out: &mut Vec<Event>) {
        let Turn {
            id,
            seat,
            designations,
            ..
        } = self.turns[turn];
        let player = self.players[seat].id;
        self.emit(
            out,
            Event::TurnEnded {
                turn: id,
                player,
                reason,
            },
        );
        // Extra turns (Time Walk): a living player keeps his turn for one, unless the turn is
        // to be removed or another turn is too close; then it comes before his next turn.
        let p = &self.players[seat];
        if p.status.is_alive() && (p.extra_next > 0 || p.extra_turns > 0) {
            let keep = designations == 0 && (p.extra_next > 0 || self.may_keep_for_extra(seat));
            if keep {
                self.emit(out, Event::TurnKept { turn: id, player });
                return;
            }
            if p.extra_turns > 0 {
                self.emit(out, Event::ExtraTurnDeferred { player });
            }
        }
        self.pass_on(id, seat, out);
    }

    /// Rule 5 and the position-removal half of rule 6: the turn leaves `from` for the next
    /// living player to the left, or is removed; then eliminated positions around the pass go.
    fn pass_on(&mut self, turn: TurnId, from: Seat, out: &mut Vec<Event>) {
        let to = self.next_living_left(from);
        let Some(index) = self.turn_index(turn) else {
            return;
        };
        let player = self.players[from].id;
        let designations = self.turns[index].designations;
        let removal = if self.turns[index].removal_mark.is_some() {
            Some(TurnRemovalReason::Reduced)
        } else if to == from || self.turn_at(to).is_some() {
            Some(TurnRemovalReason::Merged)
        } else {
            None
        };
        match removal {
            Some(reason) => {
                self.emit(
                    out,
                    Event::TurnRemoved {
                        turn,
                        player,
                        reason,
                    },
                );
                if reason == TurnRemovalReason::Merged {
                    self.cancel_unneeded_reductions(out);
                } else {
                    self.pass_designations_right(from, designations.saturating_sub(1), out);
                }
            }
            None => {
                let to = self.players[to].id;
                self.emit(
                    out,
                    Event::TurnPassed {
                        turn,
                        from: player,
                        to,
                    },
                );
            }
        }
        let removable = self.removable_positions(from, to);
        if !removable.is_empty() {
            let players = removable.iter().map(|&s| self.players[s].id).collect();
            self.emit(out, Event::PositionsRemoved { players });
        }
    }

    /// Eliminated positions a pass from `from` to `to` removes: those it skips over and those
    /// within R of either end, in ring order from R positions right of `from`, leaving out any
    /// whose removal would bring two running spheres into overlap. A position whose player still
    /// holds a turn (another member of a group eliminated together) stays until that turn has
    /// passed on.
    fn removable_positions(&self, from: Seat, to: Seat) -> Vec<Seat> {
        if self.living == self.ring.len() || self.config.rule_set == RuleSet::Cr807 {
            // CR 807.4h: departed positions go when the next turn begins.
            return Vec::new();
        }
        let m = self.ring.len();
        let r = self.range();
        let (pf, pt) = (self.players[from].position, self.players[to].position);
        let span = (pt + m - pf) % m;
        let start = (pf + m - r.min(m)) % m;
        let mut candidates: Vec<Seat> = (0..m)
            .map(|k| self.ring[(start + k) % m])
            .filter(|&s| {
                let p = self.players[s].position;
                if self.players[s].status != PlayerStatus::Eliminated || self.turn_at(s).is_some() {
                    return false;
                }
                let after_from = (p + m - pf) % m;
                let skipped = after_from > 0 && after_from < span;
                let near = |q: usize| {
                    let d = (p + m - q) % m;
                    d.min(m - d) <= r
                };
                skipped || near(pf) || near(pt)
            })
            .collect();
        if candidates.is_empty() {
            return candidates;
        }
        let running: Vec<Seat> = self
            .turns
            .iter()
            .filter(|t| matches!(t.state, TurnState::Running(_)))
            .map(|t| t.seat)
            .collect();
        let mut ring = self.ring.clone();
        candidates.retain(|&candidate| {
            if self.removal_brings_overlap(&ring, candidate, &running) {
                return false;
            }
            ring.retain(|&s| s != candidate);
            true
        });
        candidates
    }

    fn removal_brings_overlap(&self, ring: &[Seat], removed: Seat, running: &[Seat]) -> bool {
        let reach = 2 * self.range();
        let m = ring.len();
        let pos = |seat: Seat| ring.iter().position(|&s| s == seat).unwrap_or(0);
        let pr = pos(removed);
        running.iter().enumerate().any(|(i, &a)| {
            running[i + 1..].iter().any(|&b| {
                let (pa, pb) = (pos(a), pos(b));
                let left = (pb + m - pa) % m;
                let before = left.min(m - left);
                let x = (pr + m - pa) % m;
                let left_after = if x > 0 && x < left { left - 1 } else { left };
                let after = left_after.min(m - 1 - left_after);
                before > reach && after <= reach
            })
        })
    }

    /// Rule 7 (seed) / CR 807.4e–g: for every turn over the limit, choose one near the player
    /// just eliminated (the seed) or designate the marker to a departed player's right
    /// (CR 807); a chosen running turn is marked, a chosen waiting one removed at once.
    fn reduce_turns(&mut self, group: &[Seat], out: &mut Vec<Event>) {
        let limit = self.config.rule_set.turn_limit(
            self.config.reduction,
            self.living,
            self.config.spell_range,
        );
        let mut chosen_now: Vec<TurnId> = Vec::new();
        loop {
            // 807.4f: designations are disregarded when counting (the seed: marked turns).
            let designated: usize = self.turns.iter().map(|t| t.designations as usize).sum();
            if self.turns.len().saturating_sub(designated) <= limit {
                break;
            }
            let index = match self.config.rule_set {
                RuleSet::Seed => group.last().and_then(|&r| self.choose_reduction(r)),
                RuleSet::Cr807 => self.choose_designation(group, &chosen_now),
            };
            let Some(index) = index else {
                break;
            };
            let Turn {
                id, seat, state, ..
            } = self.turns[index];
            chosen_now.push(id);
            if state == TurnState::Waiting {
                // A waiting turn holds no designation yet: it goes at once.
                let player = self.players[seat].id;
                self.emit(
                    out,
                    Event::TurnRemoved {
                        turn: id,
                        player,
                        reason: TurnRemovalReason::Reduced,
                    },
                );
            } else {
                self.emit(out, Event::TurnMarkedForRemoval { turn: id });
            }
        }
    }

    /// Removes a designated turn that is not being taken (807.4g "removed immediately"; the
    /// seed's rule 7 "a chosen waiting turn is removed at once"); CR 807.4g passes its further
    /// designations to the marker on its right.
    fn remove_designated(&mut self, index: usize, out: &mut Vec<Event>) {
        let Turn {
            id,
            seat,
            designations,
            ..
        } = self.turns[index];
        let player = self.players[seat].id;
        self.emit(
            out,
            Event::TurnRemoved {
                turn: id,
                player,
                reason: TurnRemovalReason::Reduced,
            },
        );
        self.pass_designations_right(seat, designations.saturating_sub(1), out);
    }

    /// CR 807.4g: a marker removed with more than one designation passes the rest to the marker
    /// immediately to its right (which, if it is not being taken, is removed at once in turn).
    fn pass_designations_right(&mut self, from: Seat, count: u32, out: &mut Vec<Event>) {
        if count == 0 || self.turns.is_empty() {
            return;
        }
        let Some(index) = self.first_turn_right_of(from) else {
            return;
        };
        let id = self.turns[index].id;
        for _ in 0..count {
            self.emit(out, Event::TurnMarkedForRemoval { turn: id });
        }
        if let Some(index) = self.turn_index(id)
            && self.turns[index].state == TurnState::Waiting
        {
            self.remove_designated(index, out);
        }
    }

    /// The first turn found going right from a seat (the seat itself last).
    fn first_turn_right_of(&self, seat: Seat) -> Option<usize> {
        let m = self.ring.len();
        let pr = self.players[seat].position;
        (1..=m).find_map(|k| {
            let s = self.ring[(pr + m - k % m) % m];
            self.turn_at(s)
        })
    }

    /// CR 807.4e: the marker immediately to the departed player's right; when several left at
    /// once, the lowest-numbered of their markers not yet designated in this step (807.4f lets
    /// a marker be designated again once every candidate has been).
    fn choose_designation(&self, group: &[Seat], chosen_now: &[TurnId]) -> Option<usize> {
        let mut candidates: Vec<usize> = group
            .iter()
            .filter_map(|&s| self.first_turn_right_of(s))
            .collect();
        candidates.sort_by_key(|&i| self.turns[i].id);
        candidates.dedup();
        candidates
            .iter()
            .copied()
            .find(|&i| !chosen_now.contains(&self.turns[i].id))
            .or_else(|| candidates.first().copied())
    }

    /// The seed's rule 7 step 1: the turn (running or waiting) nearest the reference within R,
    /// his own at distance 0, to the right first on a tie; failing that, the first turn going
    /// right from the reference (his own position last). Turns already chosen are skipped.
    fn choose_reduction(&self, reference: Seat) -> Option<usize> {
        let m = self.ring.len();
        let pr = self.players[reference].position;
        let nearby = self
            .turns
            .iter()
            .enumerate()
            .filter(|(_, t)| t.removal_mark.is_none() && t.state != TurnState::Ended)
            .filter_map(|(index, t)| {
                let right = (pr + m - self.players[t.seat].position) % m;
                let distance = right.min(m - right);
                let on_left = right != distance;
                (distance <= self.range()).then_some(((distance, on_left), index))
            })
            .min()
            .map(|(_, index)| index);
        nearby.or_else(|| {
            (1..=m).find_map(|k| {
                let seat = self.ring[(pr + m - k % m) % m];
                self.turns
                    .iter()
                    .position(|t| t.seat == seat && t.removal_mark.is_none())
            })
        })
    }

    /// After a merge, withdraw the newest designations that are no longer needed to reach the
    /// limit.
    fn cancel_unneeded_reductions(&mut self, out: &mut Vec<Event>) {
        let limit = self.config.rule_set.turn_limit(
            self.config.reduction,
            self.living,
            self.config.spell_range,
        );
        loop {
            let needed = self.turns.len().saturating_sub(limit);
            let newest = self
                .turns
                .iter()
                .filter_map(|t| t.removal_mark.map(|mark| (mark, t.id)))
                .max();
            let designated: usize = self.turns.iter().map(|t| t.designations as usize).sum();
            match newest {
                Some((_, turn)) if designated > needed => {
                    self.emit(out, Event::TurnRemovalCancelled { turn });
                }
                _ => break,
            }
        }
    }

    /// A d20 for an attack roll or a counter strike, and what it does: the
    /// [`Event::AttackRolled`] to emit and the damage the rolling creature deals.
    fn roll(
        &self,
        roller: PlayerId,
        opponent: PlayerId,
        counter: bool,
        power: u32,
        opposing: Vec<u32>,
    ) -> (Event, u32) {
        let roll = self.dice.rolls;
        let natural = self.game_dice().d20(roll);
        let modifier = RollResult::modifier(power, &opposing);
        let total = i64::from(natural) + modifier;
        let (result, damage, self_damage) = RollResult::of(natural, total, power);
        let event = Event::AttackRolled {
            roll,
            roller,
            opponent,
            counter,
            power,
            opposing,
            natural,
            modifier,
            total,
            result,
            damage,
            self_damage,
        };
        (event, damage)
    }

    fn eliminate_if_lethal(&mut self, player: PlayerId, out: &mut Vec<Event>) {
        let Some(seat) = self.seat_of(player) else {
            return;
        };
        let p = &self.players[seat];
        let cause = if p.life <= 0 {
            EliminationCause::Life
        } else if p.poison >= LETHAL_POISON {
            EliminationCause::Poison
        } else {
            return;
        };
        self.eliminate(vec![seat], cause, out);
    }

    /// Rule 6: the players leave the game; the game may end; turns are reduced; turns they held
    /// end or pass on.
    fn eliminate(&mut self, seats: Vec<Seat>, cause: EliminationCause, out: &mut Vec<Event>) {
        let players = seats.iter().map(|&s| self.players[s].id).collect();
        self.emit(out, Event::Eliminated { players, cause });
        if self.living <= 1 {
            let standings = self.final_standings();
            self.emit(out, Event::GameOver { standings });
            let secret = self.config.secret.to_hex();
            self.emit(out, Event::DiceRevealed { secret });
            return;
        }
        self.reduce_turns(&seats, out);
        for seat in seats {
            let Some(index) = self.turn_at(seat) else {
                continue;
            };
            let turn = self.turns[index];
            match turn.state {
                TurnState::Running(_) => self.end_turn(index, TurnEndReason::Eliminated, out),
                TurnState::Waiting | TurnState::Ended => self.pass_on(turn.id, seat, out),
            }
        }
    }

    /// Places and mana points: survivors first, then groups in reverse elimination order.
    fn final_standings(&self) -> Vec<Standing> {
        let n = self.players.len();
        let mut standings = Vec::with_capacity(n);
        let eliminated: usize = self.eliminations.iter().map(Vec::len).sum();
        let place = |p: usize| u8::try_from(p).unwrap_or(u8::MAX);
        for p in self.players.iter().filter(|p| p.status.is_alive()) {
            standings.push(Standing {
                player: p.id,
                place: 1,
                mana_points: place(eliminated),
            });
        }
        // Several survivors (an abandoned game) share the first place, like a group.
        standings.sort_by_key(|s| s.player);
        let mut before = 0;
        let mut groups = Vec::with_capacity(self.eliminations.len());
        for group in &self.eliminations {
            let mut rows: Vec<Standing> = group
                .iter()
                .map(|&s| Standing {
                    player: self.players[s].id,
                    place: place(n - before - group.len() + 1),
                    mana_points: place(before),
                })
                .collect();
            rows.sort_by_key(|s| s.player);
            groups.push(rows);
            before += group.len();
        }
        standings.extend(groups.into_iter().rev().flatten());
        standings
    }

    // ----- Applying events -------------------------------------------------------------------

    fn emit(&mut self, out: &mut Vec<Event>, event: Event) {
        if let Err(reason) = self.apply(&event) {
            // The core only emits events that fit its own state; this is a bug, not bad input.
            unreachable!(
                "the rules core emitted an event that does not apply: {reason}: {event:?}"
            );
        }
        out.push(event);
    }

    /// Applies one event. This is the only place the state changes.
    pub fn apply(&mut self, event: &Event) -> Result<(), &'static str> {
        match event {
            Event::PlayerJoined {
                player,
                name,
                entropy,
                deck,
            } => {
                if self.stage != Stage::Lobby {
                    return Err("join after the start");
                }
                if self.lobby.iter().any(|(id, _)| id == player) {
                    return Err("a player joined twice");
                }
                self.lobby.push((*player, name.clone()));
                if let Some(deck) = deck {
                    self.league.decks.insert(*player, deck.clone());
                    self.drop_stale_choice();
                }
                if !entropy.is_empty() {
                    self.dice.entropy.insert(*player, entropy.clone());
                }
                self.next_player = player.saturating_add(1).max(self.next_player);
                self.facts.seat(*player);
            }
            Event::PlayerLeft { player } => {
                self.facts.known(*player)?;
                self.lobby.retain(|(id, _)| id != player);
                // After the start the seating is fixed: the player keeps his place.
                if self.stage == Stage::Lobby {
                    self.facts.unseat(*player)?;
                    self.league.decks.remove(player);
                    if self
                        .league
                        .first_choice
                        .is_some_and(|(by, chosen)| by == *player || chosen == *player)
                    {
                        self.league.first_choice = None;
                    }
                    self.drop_stale_choice();
                }
            }
            Event::FirstPlayerChosen { by, player } => {
                if self.stage != Stage::Lobby {
                    return Err("a first player chosen after the start");
                }
                self.facts.known(*by)?;
                self.facts.known(*player)?;
                self.league.first_choice = Some((*by, *player));
            }
            Event::GameStarted {
                seating,
                first_player,
                turn_holders,
                commitment,
                first_decided_by,
                bonuses,
                seating_mode,
                ..
            } => {
                if self.stage != Stage::Lobby || seating.len() != self.lobby.len() {
                    return Err("start does not match the lobby");
                }
                self.dice.digest = self.lobby_entropy();
                self.dice.commitment = commitment.clone();
                let mut players = Vec::with_capacity(seating.len());
                for (position, id) in seating.iter().enumerate() {
                    if seating[..position].contains(id) {
                        return Err("a player seated twice");
                    }
                    let (_, name) = self
                        .lobby
                        .iter()
                        .find(|(p, _)| p == id)
                        .ok_or("seated player not in the lobby")?;
                    let bonus = bonuses.iter().find(|b| b.player == *id);
                    players.push(Player {
                        id: *id,
                        name: name.clone(),
                        life: self
                            .config
                            .starting_life
                            .saturating_add(bonus.map_or(0, |b| b.life)),
                        poison: 0,
                        status: PlayerStatus::Alive,
                        hand_size: self
                            .config
                            .hand_size
                            .saturating_add(bonus.map_or(0, |b| b.cards)),
                        kept: false,
                        position,
                        extra_turns: 0,
                        extra_next: 0,
                    });
                }
                self.players = players;
                self.league.first_choice = None;
                self.league.first_decided_by = *first_decided_by;
                self.league.bonuses = bonuses.iter().map(|b| (b.player, b.clone())).collect();
                self.ring = (0..seating.len()).collect();
                self.living = seating.len();
                self.first = self
                    .seat(*first_player)
                    .map_err(|_| "unknown first player")?;
                let mut turns = Vec::with_capacity(turn_holders.len());
                for (k, holder) in turn_holders.iter().enumerate() {
                    turns.push(Turn {
                        id: u8::try_from(k).map_err(|_| "too many turns")?,
                        seat: self.seat(*holder).map_err(|_| "unknown turn holder")?,
                        state: TurnState::Waiting,
                        removal_mark: None,
                        designations: 0,
                    });
                }
                self.turns = turns;
                self.seating_mode = Some(*seating_mode);
                self.stage = Stage::Mulligan { kept: 0 };
            }
            Event::Mulliganed { player, hand_size } => {
                let seat = self.event_seat(*player)?;
                self.players[seat].hand_size = *hand_size;
            }
            Event::Kept {
                player, hand_size, ..
            } => {
                let seat = self.event_seat(*player)?;
                let Stage::Mulligan { kept } = self.stage else {
                    return Err("keep outside the mulligan stage");
                };
                self.players[seat].hand_size = *hand_size;
                self.players[seat].kept = true;
                self.stage = if kept + 1 >= self.players.len() {
                    Stage::Playing
                } else {
                    Stage::Mulligan { kept: kept + 1 }
                };
            }
            Event::TurnBegan { turn, .. } => {
                let index = self.event_turn(*turn)?;
                self.turns[index].state = TurnState::Running(Phase::Beginning);
            }
            Event::PhaseChanged { turn, phase } => {
                let index = self.event_turn(*turn)?;
                self.turns[index].state = TurnState::Running(*phase);
                let holder = self.players[self.turns[index].seat].id;
                self.dice
                    .counters
                    .retain(|&(attacker, _)| attacker != holder);
            }
            Event::Attacked {
                defender,
                damage,
                poison,
                ..
            } => {
                let seat = self.event_seat(*defender)?;
                let p = &mut self.players[seat];
                p.life = p.life.saturating_sub_unsigned(*damage);
                p.poison = p.poison.saturating_add(*poison);
            }
            Event::DamageDealt { target, amount, .. } => {
                let seat = self.event_seat(*target)?;
                let p = &mut self.players[seat];
                p.life = p.life.saturating_sub_unsigned(*amount);
            }
            Event::LifeChanged { player, life } => {
                let seat = self.event_seat(*player)?;
                self.players[seat].life = *life;
            }
            Event::PoisonChanged { player, poison } => {
                let seat = self.event_seat(*player)?;
                self.players[seat].poison = *poison;
            }
            Event::Eliminated { players, .. } => {
                let mut group = Vec::with_capacity(players.len());
                for &player in players {
                    let seat = self.event_seat(player)?;
                    if !self.players[seat].status.is_alive() {
                        return Err("eliminated twice");
                    }
                    self.players[seat].status = PlayerStatus::Eliminated;
                    group.push(seat);
                }
                self.living -= group.len();
                self.eliminations.push(group);
            }
            Event::TurnMarkedForRemoval { turn } => {
                let index = self.event_turn(*turn)?;
                self.turns[index].removal_mark = Some(self.next_mark);
                self.turns[index].designations = self.turns[index].designations.saturating_add(1);
                self.next_mark += 1;
            }
            Event::TurnRemovalCancelled { turn } => {
                let index = self.event_turn(*turn)?;
                let t = &mut self.turns[index];
                t.designations = t.designations.saturating_sub(1);
                if t.designations == 0 {
                    t.removal_mark = None;
                }
            }
            Event::TurnEnded { turn, player, .. } => {
                let index = self.event_turn(*turn)?;
                self.turns[index].state = TurnState::Ended;
                self.dice
                    .counters
                    .retain(|&(attacker, _)| attacker != *player);
            }
            Event::TurnKept { turn, player } => {
                let index = self.event_turn(*turn)?;
                let seat = self.event_seat(*player)?;
                if self.turns[index].seat != seat || self.turns[index].state != TurnState::Ended {
                    return Err("a turn kept by someone else, or not just ended");
                }
                self.turns[index].state = TurnState::Waiting;
                let p = &mut self.players[seat];
                if p.extra_next > 0 {
                    p.extra_next -= 1;
                } else if p.extra_turns > 0 {
                    p.extra_turns -= 1;
                } else {
                    return Err("a turn kept without an extra turn");
                }
            }
            Event::ExtraTurnGranted {
                player,
                before_next,
            } => {
                let seat = self.event_seat(*player)?;
                let p = &mut self.players[seat];
                if *before_next {
                    p.extra_next = p.extra_next.saturating_add(1);
                } else {
                    p.extra_turns = p.extra_turns.saturating_add(1);
                }
            }
            Event::ExtraTurnDeferred { player } => {
                let seat = self.event_seat(*player)?;
                let p = &mut self.players[seat];
                if p.extra_turns == 0 {
                    return Err("no extra turn to defer");
                }
                p.extra_turns -= 1;
                p.extra_next = p.extra_next.saturating_add(1);
            }
            Event::AttackRolled {
                roll,
                roller,
                opponent,
                counter,
                opposing,
                ..
            } => {
                self.event_seat(*roller)?;
                self.event_seat(*opponent)?;
                // A mirror made from a snapshot does not know how many rolls came before: the
                // event numbers them (`dice::verify` checks that they follow each other).
                self.dice.rolls = roll.saturating_add(1);
                if !*counter && !opposing.is_empty() {
                    let pair = (*roller, *opponent);
                    if !self.dice.counters.contains(&pair) {
                        self.dice.counters.push(pair);
                    }
                }
            }
            Event::DiceRevealed { secret } => self.dice.revealed = Some(secret.clone()),
            Event::TurnPassed { turn, to, .. } => {
                let index = self.event_turn(*turn)?;
                let seat = self.event_seat(*to)?;
                self.turns[index].seat = seat;
                self.turns[index].state = TurnState::Waiting;
            }
            Event::TurnRemoved { turn, .. } => {
                let index = self.event_turn(*turn)?;
                self.turns.remove(index);
            }
            Event::PositionsRemoved { players } => {
                for &player in players {
                    let seat = self.event_seat(player)?;
                    if self.players[seat].status != PlayerStatus::Eliminated {
                        return Err("removed position of a player not eliminated");
                    }
                    self.players[seat].status = PlayerStatus::Removed;
                }
                let players = &self.players;
                self.ring
                    .retain(|&s| players[s].status != PlayerStatus::Removed);
                for (position, &seat) in self.ring.iter().enumerate() {
                    self.players[seat].position = position;
                }
            }
            Event::GameAbandoned => {
                // What ends the game is the `game_over` that follows.
                if !matches!(self.stage, Stage::Mulligan { .. } | Stage::Playing) {
                    return Err("game abandoned outside a game");
                }
            }
            Event::GameOver { standings } => {
                self.stage = Stage::Finished;
                self.standings = standings.clone();
                self.turns.clear();
            }
            shell => return self.facts.apply(shell, self.stage),
        }
        Ok(())
    }

    fn event_seat(&self, player: PlayerId) -> Result<Seat, &'static str> {
        self.seat_of(player).ok_or("unknown player")
    }

    fn event_turn(&self, turn: TurnId) -> Result<usize, &'static str> {
        self.turn_index(turn).ok_or("unknown turn")
    }
}

/// Creature powers of an attack roll: each at most [`MAX_AMOUNT`], at most
/// [`MAX_BLOCKERS`](crate::limits::MAX_BLOCKERS) opposing creatures.
fn check_powers(power: u32, opposing: &[u32]) -> Result<(), ErrorCode> {
    if power > MAX_AMOUNT
        || opposing.len() > crate::limits::MAX_BLOCKERS
        || opposing.iter().any(|&p| p > MAX_AMOUNT)
    {
        return Err(ErrorCode::BadAmount);
    }
    Ok(())
}

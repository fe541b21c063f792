//! The state of a table as a client sees it: the `snapshot` message's [`TableView`], and
//! [`TableView::apply`], which keeps a copy up to date from `events` batches exactly as the
//! server's own state moves.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::error::ApplyError;
use crate::event::Event;
use crate::limits::{
    DEFAULT_ABSENCE_LIMIT_SECS, DEFAULT_HAND_SIZE, DEFAULT_MAX_SPECTATORS,
    DEFAULT_MULLIGAN_CLOCK_SECS, DEFAULT_SPELL_RANGE, DEFAULT_STARTING_LIFE, MAX_SEATS,
};
use crate::types::{
    Phase, PlayerId, PlayerStatus, Reduction, StageName, Standing, TableId, TurnId, TurnStateName,
    uuid_string,
};

/// A table's settings, fixed when it is created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// Most players who may sit (2–40).
    pub seats: u8,
    /// Spell range R (1–4).
    pub spell_range: u8,
    /// Turn reduction policy.
    pub reduction: Reduction,
    /// Life each player starts with.
    pub starting_life: i32,
    /// Cards in each starting hand before mulligans.
    pub hand_size: u8,
    /// Whether joining or watching needs a password.
    pub password: bool,
    /// Turn clock in seconds (0: none).
    pub turn_clock_secs: u32,
    /// Seconds of disconnection before a player is announced absent.
    pub absence_limit_secs: u32,
    /// Seconds each mulligan decision may take before it is taken as `keep` (0: no clock).
    #[serde(default = "default_mulligan_clock")]
    pub mulligan_clock_secs: u32,
    /// Most spectators at once.
    #[serde(default = "default_max_spectators")]
    pub max_spectators: u32,
}

fn default_mulligan_clock() -> u32 {
    DEFAULT_MULLIGAN_CLOCK_SECS
}

fn default_max_spectators() -> u32 {
    DEFAULT_MAX_SPECTATORS
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            seats: MAX_SEATS,
            spell_range: DEFAULT_SPELL_RANGE,
            reduction: Reduction::Eager,
            starting_life: DEFAULT_STARTING_LIFE,
            hand_size: DEFAULT_HAND_SIZE,
            password: false,
            turn_clock_secs: 0,
            absence_limit_secs: DEFAULT_ABSENCE_LIMIT_SECS,
            mulligan_clock_secs: DEFAULT_MULLIGAN_CLOCK_SECS,
            max_spectators: DEFAULT_MAX_SPECTATORS,
        }
    }
}

/// One player at the table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerView {
    /// His id.
    pub player: PlayerId,
    /// His display name.
    pub name: String,
    /// His index in seating order once the game has started (`None` in the lobby).
    pub seat: Option<u8>,
    /// Life total.
    pub life: i32,
    /// Poison counters.
    pub poison: u32,
    /// Alive, eliminated, or eliminated with his position removed.
    pub status: PlayerStatus,
    /// Cards in hand after mulligans.
    pub hand_size: u8,
    /// Whether he has kept his hand.
    pub kept: bool,
    /// Whether a connection holds his seat.
    pub connected: bool,
    /// Whether he has been away longer than the table's absence limit (see `player_absent`).
    pub absent: bool,
    /// Whether the host has muted his chat.
    #[serde(default)]
    pub muted: bool,
    /// Whom he may attack right now (derived).
    pub may_attack: Vec<PlayerId>,
    /// Whom he may target with damage and other effects right now (derived).
    pub may_target: Vec<PlayerId>,
}

/// One of the simultaneous turns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnView {
    /// Its id.
    pub turn: TurnId,
    /// The player holding it.
    pub player: PlayerId,
    /// Waiting, running or just ended.
    pub state: TurnStateName,
    /// The phase while running; `None` otherwise.
    pub phase: Option<Phase>,
    /// Whether a reduction will remove the turn when it ends.
    pub marked_for_removal: bool,
    /// The holder's sphere of influence, in ring order starting R positions to his right
    /// (derived; empty for an ended turn).
    pub sphere: Vec<PlayerId>,
}

/// The whole state of a table, as sent in `snapshot` and kept up to date by
/// [`apply`](TableView::apply).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableView {
    /// The table's id.
    #[serde(with = "uuid_string")]
    pub table: TableId,
    /// Its display name.
    pub name: String,
    /// Number of the last event included (0: none yet).
    pub seq: u64,
    /// Its settings.
    pub settings: Settings,
    /// Lobby, mulligan, playing or finished.
    pub stage: StageName,
    /// The player with host rights, if a seated player holds them.
    pub host: Option<PlayerId>,
    /// The first player, once the game has started.
    pub first_player: Option<PlayerId>,
    /// The player who decides on a mulligan now (derived; only in the mulligan stage).
    pub mulligan_decider: Option<PlayerId>,
    /// Players: in join order in the lobby, in seating order after the start.
    pub players: Vec<PlayerView>,
    /// The positions of the ring in seating order: living players and eliminated players whose
    /// positions have not been removed (empty in the lobby).
    pub ring: Vec<PlayerId>,
    /// The simultaneous turns, by id.
    pub turns: Vec<TurnView>,
    /// The final result, best place first (empty until the game is over).
    pub standings: Vec<Standing>,
    /// Connections watching.
    pub spectators: u32,
    /// Whether the host has paused the table.
    pub paused: bool,
    /// Whether the host has muted the spectators' chat.
    #[serde(default)]
    pub spectators_muted: bool,
}

impl TableView {
    /// An empty table in its lobby, before any event.
    pub fn new(table: TableId, name: impl Into<String>, settings: Settings) -> Self {
        Self {
            table,
            name: name.into(),
            seq: 0,
            settings,
            stage: StageName::Lobby,
            host: None,
            first_player: None,
            mulligan_decider: None,
            players: Vec::new(),
            ring: Vec::new(),
            turns: Vec::new(),
            standings: Vec::new(),
            spectators: 0,
            paused: false,
            spectators_muted: false,
        }
    }

    // ----- Queries ---------------------------------------------------------------------------

    /// A player by id.
    pub fn player(&self, player: PlayerId) -> Option<&PlayerView> {
        self.players.iter().find(|p| p.player == player)
    }

    /// A turn by id.
    pub fn turn(&self, turn: TurnId) -> Option<&TurnView> {
        self.turns.iter().find(|t| t.turn == turn)
    }

    /// The turn a player holds, if any.
    pub fn turn_of(&self, player: PlayerId) -> Option<&TurnView> {
        self.turns.iter().find(|t| t.player == player)
    }

    /// Players still in the game.
    pub fn living(&self) -> usize {
        self.players
            .iter()
            .filter(|p| p.status == PlayerStatus::Alive)
            .count()
    }

    /// Positions between two players the shorter way round the ring, if both have a position.
    pub fn distance(&self, a: PlayerId, b: PlayerId) -> Option<usize> {
        let pa = self.ring.iter().position(|&p| p == a)?;
        let pb = self.ring.iter().position(|&p| p == b)?;
        Some(ring_distance(self.ring.len(), pa, pb))
    }

    /// Everyone in a player's sphere of influence: every position within spell range on either
    /// side, himself included, in ring order starting R positions to his right; no position
    /// twice. Empty if the player has no position.
    pub fn sphere(&self, player: PlayerId) -> Vec<PlayerId> {
        let Some(center) = self.ring.iter().position(|&p| p == player) else {
            return Vec::new();
        };
        let m = self.ring.len();
        let r = usize::from(self.settings.spell_range).min(m / 2);
        let mut out: Vec<PlayerId> = (0..=2 * r)
            .filter_map(|k| self.ring.get((center + m - r + k) % m).copied())
            .collect();
        out.dedup();
        if out.len() > 1 && out.first() == out.last() {
            out.pop();
        }
        out
    }

    // ----- Applying events -------------------------------------------------------------------

    /// Applies event number `seq`. It must be the next one (`self.seq + 1`), or
    /// [`ApplyError::Gap`] is returned: events were missed, ask for a `snapshot`. An event that
    /// does not fit the view (unknown player or turn, wrong stage) is an error too. On error the
    /// view is unchanged.
    pub fn apply(&mut self, seq: u64, event: &Event) -> Result<(), ApplyError> {
        let expected = self.seq.saturating_add(1);
        if seq != expected {
            return Err(ApplyError::Gap { expected, got: seq });
        }
        self.apply_event(event)?;
        self.seq = seq;
        self.refresh_derived();
        Ok(())
    }

    /// Applies a batch of events numbered from `first_seq`, as carried by an `events` message.
    /// Events the view already includes (`seq <= self.seq`, e.g. a batch that overlaps a
    /// snapshot just received) are skipped; a batch that starts after `self.seq + 1` is a
    /// [`ApplyError::Gap`]. Stops at the first error, leaving the events before it applied.
    pub fn apply_batch(&mut self, first_seq: u64, events: &[Event]) -> Result<(), ApplyError> {
        for (offset, event) in events.iter().enumerate() {
            let seq = u64::try_from(offset)
                .ok()
                .and_then(|offset| first_seq.checked_add(offset))
                .ok_or(ApplyError::Invalid("sequence number overflow"))?;
            if seq <= self.seq {
                continue;
            }
            self.apply(seq, event)?;
        }
        Ok(())
    }

    /// Recomputes the derived fields (`mulligan_decider`, every turn's `sphere`, every player's
    /// `may_attack` and `may_target`) from the others. [`apply`](Self::apply) calls it after
    /// every event; a server building a snapshot calls it once its other fields are set.
    pub fn refresh_derived(&mut self) {
        self.mulligan_decider = self.compute_decider();
        let spheres: Vec<Vec<PlayerId>> = self
            .turns
            .iter()
            .map(|t| match t.state {
                TurnStateName::Waiting | TurnStateName::Running => self.sphere(t.player),
                TurnStateName::Ended => Vec::new(),
            })
            .collect();
        for (turn, sphere) in self.turns.iter_mut().zip(spheres) {
            turn.sphere = sphere;
        }
        let positions: HashMap<PlayerId, usize> = self
            .ring
            .iter()
            .enumerate()
            .map(|(position, &p)| (p, position))
            .collect();
        let m = self.ring.len();
        let range = usize::from(self.settings.spell_range);
        let playing = self.stage == StageName::Playing;
        let targets: Vec<(Vec<PlayerId>, Vec<PlayerId>)> = self
            .players
            .iter()
            .map(|p| {
                let Some(&from) = positions.get(&p.player) else {
                    return (Vec::new(), Vec::new());
                };
                if !playing || p.status != PlayerStatus::Alive {
                    return (Vec::new(), Vec::new());
                }
                let may_target: Vec<PlayerId> = self
                    .players
                    .iter()
                    .filter(|q| q.status == PlayerStatus::Alive)
                    .filter(|q| {
                        positions
                            .get(&q.player)
                            .is_some_and(|&to| ring_distance(m, from, to) <= range)
                    })
                    .map(|q| q.player)
                    .collect();
                let in_combat = self.turns.iter().any(|t| {
                    t.player == p.player
                        && t.state == TurnStateName::Running
                        && t.phase == Some(Phase::Combat)
                });
                let may_attack = if in_combat {
                    may_target
                        .iter()
                        .copied()
                        .filter(|&q| q != p.player)
                        .collect()
                } else {
                    Vec::new()
                };
                (may_attack, may_target)
            })
            .collect();
        for (player, (may_attack, may_target)) in self.players.iter_mut().zip(targets) {
            player.may_attack = may_attack;
            player.may_target = may_target;
        }
    }

    fn compute_decider(&self) -> Option<PlayerId> {
        if self.stage != StageName::Mulligan || self.players.is_empty() {
            return None;
        }
        let first = self.first_player?;
        let first = self.players.iter().position(|p| p.player == first)?;
        let kept = self.players.iter().filter(|p| p.kept).count();
        self.players
            .get((first + kept) % self.players.len())
            .map(|p| p.player)
    }

    fn index_of(&self, player: PlayerId) -> Result<usize, ApplyError> {
        self.players
            .iter()
            .position(|p| p.player == player)
            .ok_or(ApplyError::UnknownPlayer(player))
    }

    fn turn_index(&self, turn: TurnId) -> Result<usize, ApplyError> {
        self.turns
            .iter()
            .position(|t| t.turn == turn)
            .ok_or(ApplyError::UnknownTurn(turn))
    }

    /// Checks the event against the view, then changes it; never changes anything on error.
    fn apply_event(&mut self, event: &Event) -> Result<(), ApplyError> {
        match event {
            Event::PlayerJoined { player, name } => {
                if self.stage != StageName::Lobby {
                    return Err(ApplyError::Invalid("a player joined after the start"));
                }
                if self.index_of(*player).is_ok() {
                    return Err(ApplyError::Invalid("a player joined twice"));
                }
                self.players.push(PlayerView {
                    player: *player,
                    name: name.clone(),
                    seat: None,
                    life: self.settings.starting_life,
                    poison: 0,
                    status: PlayerStatus::Alive,
                    hand_size: self.settings.hand_size,
                    kept: false,
                    connected: true,
                    absent: false,
                    muted: false,
                    may_attack: Vec::new(),
                    may_target: Vec::new(),
                });
            }
            Event::PlayerLeft { player } => {
                let index = self.index_of(*player)?;
                // After the start the seating is fixed; the core only forgets the lobby entry.
                if self.stage == StageName::Lobby {
                    self.players.remove(index);
                }
            }
            Event::GameStarted {
                seating,
                first_player,
                turn_holders,
            } => self.start(seating, *first_player, turn_holders)?,
            Event::Mulliganed { player, hand_size } => {
                let index = self.index_of(*player)?;
                self.players[index].hand_size = *hand_size;
            }
            Event::Kept {
                player, hand_size, ..
            } => {
                let index = self.index_of(*player)?;
                if self.stage != StageName::Mulligan {
                    return Err(ApplyError::Invalid("a keep outside the mulligan stage"));
                }
                let p = &mut self.players[index];
                p.hand_size = *hand_size;
                p.kept = true;
                if self.players.iter().all(|p| p.kept) {
                    self.stage = StageName::Playing;
                }
            }
            Event::TurnBegan { turn, player } => {
                self.index_of(*player)?;
                let index = self.turn_index(*turn)?;
                let t = &mut self.turns[index];
                t.state = TurnStateName::Running;
                t.phase = Some(Phase::Beginning);
            }
            Event::PhaseChanged { turn, phase } => {
                let index = self.turn_index(*turn)?;
                let t = &mut self.turns[index];
                t.state = TurnStateName::Running;
                t.phase = Some(*phase);
            }
            Event::Attacked {
                attacker,
                defender,
                damage,
                poison,
            } => {
                self.index_of(*attacker)?;
                let index = self.index_of(*defender)?;
                let p = &mut self.players[index];
                p.life = p.life.saturating_sub_unsigned(*damage);
                p.poison = p.poison.saturating_add(*poison);
            }
            Event::DamageDealt {
                source,
                target,
                amount,
            } => {
                self.index_of(*source)?;
                let index = self.index_of(*target)?;
                let p = &mut self.players[index];
                p.life = p.life.saturating_sub_unsigned(*amount);
            }
            Event::LifeChanged { player, life } => {
                let index = self.index_of(*player)?;
                self.players[index].life = *life;
            }
            Event::PoisonChanged { player, poison } => {
                let index = self.index_of(*player)?;
                self.players[index].poison = *poison;
            }
            Event::Eliminated { players, .. } => {
                let indices = self.indices_with_status(players, PlayerStatus::Alive)?;
                for index in indices {
                    self.players[index].status = PlayerStatus::Eliminated;
                }
            }
            Event::TurnMarkedForRemoval { turn } => {
                let index = self.turn_index(*turn)?;
                self.turns[index].marked_for_removal = true;
            }
            Event::TurnRemovalCancelled { turn } => {
                let index = self.turn_index(*turn)?;
                self.turns[index].marked_for_removal = false;
            }
            Event::TurnEnded { turn, player, .. } => {
                self.index_of(*player)?;
                let index = self.turn_index(*turn)?;
                let t = &mut self.turns[index];
                t.state = TurnStateName::Ended;
                t.phase = None;
            }
            Event::TurnPassed { turn, from, to } => {
                self.index_of(*from)?;
                self.index_of(*to)?;
                let index = self.turn_index(*turn)?;
                let t = &mut self.turns[index];
                t.player = *to;
                t.state = TurnStateName::Waiting;
                t.phase = None;
            }
            Event::TurnRemoved { turn, player, .. } => {
                self.index_of(*player)?;
                let index = self.turn_index(*turn)?;
                self.turns.remove(index);
            }
            Event::PositionsRemoved { players } => {
                let indices = self.indices_with_status(players, PlayerStatus::Eliminated)?;
                for index in indices {
                    self.players[index].status = PlayerStatus::Removed;
                }
                self.ring.retain(|p| !players.contains(p));
            }
            Event::GameOver { standings } => {
                for s in standings {
                    self.index_of(s.player)?;
                }
                self.stage = StageName::Finished;
                self.standings = standings.clone();
                self.turns.clear();
            }
            Event::ConnectionChanged { player, connected } => {
                let index = self.index_of(*player)?;
                self.players[index].connected = *connected;
                if *connected {
                    self.players[index].absent = false;
                }
            }
            Event::TablePaused { paused } => self.paused = *paused,
            Event::PlayerAbsent { player } => {
                let index = self.index_of(*player)?;
                self.players[index].absent = true;
            }
            Event::PlayerKicked { player, .. } => {
                self.index_of(*player)?;
            }
            Event::PlayerMuted { player, muted } => match player {
                Some(player) => {
                    let index = self.index_of(*player)?;
                    self.players[index].muted = *muted;
                }
                None => self.spectators_muted = *muted,
            },
            Event::HostChanged { player } => {
                if let Some(player) = player {
                    self.index_of(*player)?;
                }
                self.host = *player;
            }
            Event::SpectatorsChanged { spectators } => self.spectators = *spectators,
            Event::Chat { from, .. } => {
                if let Some(from) = from {
                    self.index_of(*from)?;
                }
            }
        }
        Ok(())
    }

    /// The indices of distinct known players who all have `status`.
    fn indices_with_status(
        &self,
        players: &[PlayerId],
        status: PlayerStatus,
    ) -> Result<Vec<usize>, ApplyError> {
        let mut indices = Vec::with_capacity(players.len());
        for &player in players {
            let index = self.index_of(player)?;
            if self.players[index].status != status || indices.contains(&index) {
                return Err(ApplyError::Invalid(match status {
                    PlayerStatus::Alive => "a player eliminated twice",
                    _ => "a position removed that is not an eliminated player's",
                }));
            }
            indices.push(index);
        }
        Ok(indices)
    }

    fn start(
        &mut self,
        seating: &[PlayerId],
        first_player: PlayerId,
        turn_holders: &[PlayerId],
    ) -> Result<(), ApplyError> {
        if self.stage != StageName::Lobby {
            return Err(ApplyError::Invalid("the game started twice"));
        }
        if seating.len() != self.players.len() {
            return Err(ApplyError::Invalid("the seating does not match the lobby"));
        }
        let mut players = Vec::with_capacity(seating.len());
        for (seat, &id) in seating.iter().enumerate() {
            let index = self.index_of(id)?;
            if seating[..seat].contains(&id) {
                return Err(ApplyError::Invalid("a player seated twice"));
            }
            let seat = u8::try_from(seat).map_err(|_| ApplyError::Invalid("too many seats"))?;
            let lobby = &self.players[index];
            players.push(PlayerView {
                player: id,
                name: lobby.name.clone(),
                seat: Some(seat),
                life: self.settings.starting_life,
                poison: 0,
                status: PlayerStatus::Alive,
                hand_size: self.settings.hand_size,
                kept: false,
                connected: lobby.connected,
                absent: lobby.absent,
                muted: lobby.muted,
                may_attack: Vec::new(),
                may_target: Vec::new(),
            });
        }
        if !seating.contains(&first_player) {
            return Err(ApplyError::UnknownPlayer(first_player));
        }
        let mut turns = Vec::with_capacity(turn_holders.len());
        for (k, &holder) in turn_holders.iter().enumerate() {
            if !seating.contains(&holder) {
                return Err(ApplyError::UnknownPlayer(holder));
            }
            turns.push(TurnView {
                turn: u8::try_from(k).map_err(|_| ApplyError::Invalid("too many turns"))?,
                player: holder,
                state: TurnStateName::Waiting,
                phase: None,
                marked_for_removal: false,
                sphere: Vec::new(),
            });
        }
        self.players = players;
        self.ring = seating.to_vec();
        self.turns = turns;
        self.first_player = Some(first_player);
        self.standings.clear();
        self.stage = StageName::Mulligan;
        Ok(())
    }
}

/// Positions between ring indices `a` and `b` the shorter way round a ring of `m` positions.
fn ring_distance(m: usize, a: usize, b: usize) -> usize {
    if m == 0 {
        return 0;
    }
    let left = (b % m + m - a % m) % m;
    left.min(m - left)
}

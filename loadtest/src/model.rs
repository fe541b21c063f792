//! A bot's own light mirror of its table: only what a bot needs to choose a legal move (stage,
//! host, mulligan order, the ring, who is alive, the turns and their phases).
//!
//! The protocol crate's [`TableView`] recomputes every derived field of every player after each
//! event (quadratic in the seats), which is right for a display but would make 16,000 bots in
//! one process cost more CPU than the server they measure. This model folds an event in
//! constant or linear time and derives only the acting player's targets, when he acts. The
//! tests (and `--mirror-check`) hold it against [`TableView`] event by event.

use grand_melee_protocol::{
    Event, Phase, PlayerId, PlayerStatus, StageName, Standing, TableView, TurnId, TurnStateName,
};

/// Why an event could not be folded in: the bot must ask for a fresh snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// An event numbered above `seq + 1` arrived: events were lost.
    #[error("sequence gap: expected event {expected}, got {got}")]
    Gap {
        /// The number the model expected.
        expected: u64,
        /// The number it got.
        got: u64,
    },
    /// An event named a player or turn the model does not know.
    #[error("event does not fit the mirrored table: {0}")]
    Invalid(&'static str),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TurnLite {
    turn: TurnId,
    player: PlayerId,
    state: TurnStateName,
    phase: Option<Phase>,
}

/// The light mirror of one table, seen by player `me`.
#[derive(Debug, Clone)]
pub struct BotModel {
    me: PlayerId,
    seq: u64,
    stage: StageName,
    spell_range: usize,
    host: Option<PlayerId>,
    first_player: Option<PlayerId>,
    /// Join order in the lobby, seating order once the game has started.
    players: Vec<PlayerId>,
    /// Status by player id.
    status: Vec<PlayerStatus>,
    /// Whether each player (by id) has kept.
    kept: Vec<bool>,
    kept_count: usize,
    my_hand: u8,
    ring: Vec<PlayerId>,
    turns: Vec<TurnLite>,
    standings: Vec<Standing>,
}

fn slot<T: Clone>(v: &mut Vec<T>, player: PlayerId, fill: T) -> &mut T {
    let i = usize::from(player);
    if v.len() <= i {
        v.resize(i + 1, fill);
    }
    &mut v[i]
}

impl BotModel {
    /// The model of a snapshot's view, for player `me`.
    pub fn from_view(view: &TableView, me: PlayerId) -> Self {
        let mut model = Self {
            me,
            seq: view.seq,
            stage: view.stage,
            spell_range: usize::from(view.settings.spell_range),
            host: view.host,
            first_player: view.first_player,
            players: view.players.iter().map(|p| p.player).collect(),
            status: Vec::new(),
            kept: Vec::new(),
            kept_count: view.players.iter().filter(|p| p.kept).count(),
            my_hand: view.player(me).map_or(0, |p| p.hand_size),
            ring: view.ring.clone(),
            turns: view
                .turns
                .iter()
                .map(|t| TurnLite {
                    turn: t.turn,
                    player: t.player,
                    state: t.state,
                    phase: t.phase,
                })
                .collect(),
            standings: view.standings.clone(),
        };
        for p in &view.players {
            *slot(&mut model.status, p.player, PlayerStatus::Alive) = p.status;
            *slot(&mut model.kept, p.player, false) = p.kept;
        }
        model
    }

    /// The number of the last event folded in.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The player this model belongs to.
    pub fn me(&self) -> PlayerId {
        self.me
    }

    /// Lobby, mulligan, playing or finished.
    pub fn stage(&self) -> StageName {
        self.stage
    }

    /// The host, if any.
    pub fn host(&self) -> Option<PlayerId> {
        self.host
    }

    /// Players seated (lobby) or in the game.
    pub fn player_count(&self) -> usize {
        self.players.len()
    }

    /// My hand size after mulligans.
    pub fn my_hand(&self) -> u8 {
        self.my_hand
    }

    /// The final standings (empty until the game is over).
    pub fn standings(&self) -> &[Standing] {
        &self.standings
    }

    fn status(&self, player: PlayerId) -> PlayerStatus {
        self.status
            .get(usize::from(player))
            .copied()
            .unwrap_or(PlayerStatus::Removed)
    }

    /// Whether I am still in the game.
    pub fn alive(&self) -> bool {
        self.status(self.me) == PlayerStatus::Alive
    }

    /// Who decides on a mulligan now (only in the mulligan stage).
    pub fn mulligan_decider(&self) -> Option<PlayerId> {
        if self.stage != StageName::Mulligan || self.players.is_empty() {
            return None;
        }
        let first = self.first_player?;
        let first = self.players.iter().position(|&p| p == first)?;
        self.players
            .get((first + self.kept_count) % self.players.len())
            .copied()
    }

    /// The phase of my running turn, if I am taking one.
    pub fn my_running_phase(&self) -> Option<Phase> {
        self.turns
            .iter()
            .find(|t| t.player == self.me && t.state == TurnStateName::Running)
            .and_then(|t| t.phase)
    }

    /// Every living player within spell range of me (me included), in seating order; empty
    /// unless the game is being played and I am alive.
    pub fn may_target(&self) -> Vec<PlayerId> {
        if self.stage != StageName::Playing || !self.alive() {
            return Vec::new();
        }
        let Some(mine) = self.ring.iter().position(|&p| p == self.me) else {
            return Vec::new();
        };
        let m = self.ring.len();
        self.ring
            .iter()
            .enumerate()
            .filter(|&(i, &q)| {
                let d = (i + m - mine) % m;
                d.min(m - d) <= self.spell_range && self.status(q) == PlayerStatus::Alive
            })
            .map(|(_, &q)| q)
            .collect()
    }

    /// Whom I may attack now: [`may_target`](Self::may_target) without me, only while my turn
    /// is running in its combat phase.
    pub fn may_attack(&self) -> Vec<PlayerId> {
        if self.my_running_phase() != Some(Phase::Combat) {
            return Vec::new();
        }
        let mut targets = self.may_target();
        targets.retain(|&q| q != self.me);
        targets
    }

    /// Folds in an `events` batch whose first event is number `first_seq`. Events already
    /// included are skipped; a gap or an event that does not fit is an error (ask for a
    /// snapshot). Returns how many events were new.
    pub fn apply_batch(&mut self, first_seq: u64, events: &[Event]) -> Result<u64, ModelError> {
        let mut applied = 0;
        for (offset, event) in (0u64..).zip(events) {
            let seq = first_seq
                .checked_add(offset)
                .ok_or(ModelError::Invalid("sequence number overflow"))?;
            if seq <= self.seq {
                continue;
            }
            if seq != self.seq + 1 {
                return Err(ModelError::Gap {
                    expected: self.seq + 1,
                    got: seq,
                });
            }
            self.apply(event)?;
            self.seq = seq;
            applied += 1;
        }
        Ok(applied)
    }

    fn turn_mut(&mut self, turn: TurnId) -> Result<&mut TurnLite, ModelError> {
        self.turns
            .iter_mut()
            .find(|t| t.turn == turn)
            .ok_or(ModelError::Invalid("unknown turn"))
    }

    fn apply(&mut self, event: &Event) -> Result<(), ModelError> {
        match event {
            Event::PlayerJoined { player, .. } => {
                self.players.push(*player);
                *slot(&mut self.status, *player, PlayerStatus::Alive) = PlayerStatus::Alive;
                *slot(&mut self.kept, *player, false) = false;
            }
            Event::PlayerLeft { player } => {
                if self.stage == StageName::Lobby {
                    self.players.retain(|p| p != player);
                }
            }
            Event::GameStarted {
                seating,
                first_player,
                turn_holders,
            } => {
                self.players.clone_from(seating);
                self.ring.clone_from(seating);
                for &p in seating {
                    *slot(&mut self.status, p, PlayerStatus::Alive) = PlayerStatus::Alive;
                    *slot(&mut self.kept, p, false) = false;
                }
                self.kept_count = 0;
                self.turns = (0u8..)
                    .zip(turn_holders)
                    .map(|(turn, &player)| TurnLite {
                        turn,
                        player,
                        state: TurnStateName::Waiting,
                        phase: None,
                    })
                    .collect();
                self.first_player = Some(*first_player);
                self.stage = StageName::Mulligan;
            }
            Event::Mulliganed { player, hand_size } => {
                if *player == self.me {
                    self.my_hand = *hand_size;
                }
            }
            Event::Kept {
                player, hand_size, ..
            } => {
                if *player == self.me {
                    self.my_hand = *hand_size;
                }
                let kept = slot(&mut self.kept, *player, false);
                if !*kept {
                    *kept = true;
                    self.kept_count += 1;
                }
                if self.kept_count >= self.players.len() {
                    self.stage = StageName::Playing;
                }
            }
            Event::TurnBegan { turn, .. } => {
                let t = self.turn_mut(*turn)?;
                t.state = TurnStateName::Running;
                t.phase = Some(Phase::Beginning);
            }
            Event::PhaseChanged { turn, phase } => {
                let t = self.turn_mut(*turn)?;
                t.state = TurnStateName::Running;
                t.phase = Some(*phase);
            }
            Event::Eliminated { players, .. } => {
                for &p in players {
                    *slot(&mut self.status, p, PlayerStatus::Alive) = PlayerStatus::Eliminated;
                }
            }
            Event::TurnEnded { turn, .. } => {
                let t = self.turn_mut(*turn)?;
                t.state = TurnStateName::Ended;
                t.phase = None;
            }
            Event::TurnPassed { turn, to, .. } => {
                let t = self.turn_mut(*turn)?;
                t.player = *to;
                t.state = TurnStateName::Waiting;
                t.phase = None;
            }
            Event::TurnRemoved { turn, .. } => {
                self.turns.retain(|t| t.turn != *turn);
            }
            Event::PositionsRemoved { players } => {
                for &p in players {
                    *slot(&mut self.status, p, PlayerStatus::Alive) = PlayerStatus::Removed;
                }
                self.ring.retain(|p| !players.contains(p));
            }
            Event::GameOver { standings } => {
                self.stage = StageName::Finished;
                self.standings.clone_from(standings);
                self.turns.clear();
            }
            Event::HostChanged { player } => self.host = *player,
            Event::Attacked { .. }
            | Event::DamageDealt { .. }
            | Event::LifeChanged { .. }
            | Event::PoisonChanged { .. }
            | Event::TurnMarkedForRemoval { .. }
            | Event::TurnRemovalCancelled { .. }
            | Event::ConnectionChanged { .. }
            | Event::SpectatorsChanged { .. }
            | Event::Chat { .. }
            | Event::TablePaused { .. }
            | Event::PlayerAbsent { .. }
            | Event::PlayerKicked { .. }
            | Event::PlayerMuted { .. } => {}
        }
        Ok(())
    }

    /// Where this model disagrees with a full [`TableView`] of the same table on anything a
    /// bot decides with, if anywhere.
    pub fn disagreement(&self, view: &TableView) -> Option<String> {
        let mine = view.player(self.me);
        let checks: [(&str, bool); 7] = [
            ("seq", self.seq == view.seq),
            ("stage", self.stage == view.stage),
            ("host", self.host == view.host),
            (
                "mulligan_decider",
                self.mulligan_decider() == view.mulligan_decider,
            ),
            (
                "my_running_phase",
                self.my_running_phase()
                    == view
                        .turns
                        .iter()
                        .find(|t| t.player == self.me && t.state == TurnStateName::Running)
                        .and_then(|t| t.phase),
            ),
            (
                "may_attack",
                mine.map_or(Vec::new(), |p| p.may_attack.clone()) == self.may_attack(),
            ),
            (
                "may_target",
                mine.map_or(Vec::new(), |p| p.may_target.clone()) == self.may_target(),
            ),
        ];
        checks
            .iter()
            .find(|(_, ok)| !ok)
            .map(|(what, _)| format!("{what} differs at event {}", view.seq))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use grand_melee_protocol::{Settings, Uuid};

    fn lobby(players: u16) -> (TableView, Vec<Event>) {
        let view = TableView::new(Uuid::nil(), "t", Settings::default());
        let mut events: Vec<Event> = (0..players)
            .map(|player| Event::PlayerJoined {
                player,
                name: format!("p{player}"),
            })
            .collect();
        events.insert(1, Event::HostChanged { player: Some(0) });
        (view, events)
    }

    /// Folds `events` one by one into both mirrors and checks them against each other after
    /// every event, from the point of view of every player.
    fn check(players: u16, events: &[Event]) {
        let (mut view, lobby_events) = lobby(players);
        let all: Vec<Event> = lobby_events.iter().chain(events).cloned().collect();
        let mut models: Vec<BotModel> = (0..players)
            .map(|me| BotModel::from_view(&view, me))
            .collect();
        for (seq, event) in (1u64..).zip(&all) {
            view.apply(seq, event).expect("the full view applies it");
            for model in &mut models {
                model
                    .apply_batch(seq, std::slice::from_ref(event))
                    .expect("the model applies it");
                assert_eq!(model.disagreement(&view), None, "after {event:?}");
            }
        }
    }

    #[test]
    fn follows_a_short_game_like_the_full_view() {
        let seating = vec![2, 0, 3, 1, 4, 5];
        let mut events = vec![Event::GameStarted {
            seating: seating.clone(),
            first_player: 3,
            turn_holders: vec![3],
        }];
        for &p in [3, 1, 4, 5, 2, 0].iter() {
            events.push(Event::Kept {
                player: p,
                hand_size: 7,
                reason: grand_melee_protocol::KeepReason::Decided,
            });
        }
        events.extend([
            Event::TurnBegan { turn: 0, player: 3 },
            Event::PhaseChanged {
                turn: 0,
                phase: Phase::Combat,
            },
            Event::Attacked {
                attacker: 3,
                defender: 1,
                damage: 25,
                poison: 0,
            },
            Event::Eliminated {
                players: vec![1],
                cause: grand_melee_protocol::EliminationCause::Life,
            },
            Event::PositionsRemoved { players: vec![1] },
            Event::TurnEnded {
                turn: 0,
                player: 3,
                reason: grand_melee_protocol::TurnEndReason::Finished,
            },
            Event::TurnPassed {
                turn: 0,
                from: 3,
                to: 4,
            },
            Event::TurnBegan { turn: 0, player: 4 },
            Event::PhaseChanged {
                turn: 0,
                phase: Phase::Combat,
            },
        ]);
        check(6, &events);
    }

    #[test]
    fn a_gap_is_reported_and_old_events_are_skipped() {
        let (view, events) = lobby(3);
        let mut model = BotModel::from_view(&view, 0);
        assert_eq!(model.apply_batch(1, &events), Ok(4));
        assert_eq!(model.apply_batch(2, &events[1..]), Ok(0), "already seen");
        assert_eq!(
            model.apply_batch(7, &events[..1]),
            Err(ModelError::Gap {
                expected: 5,
                got: 7
            })
        );
        assert_eq!(
            model.apply_batch(5, &[Event::TurnBegan { turn: 9, player: 0 }]),
            Err(ModelError::Invalid("unknown turn"))
        );
        assert_eq!(model.player_count(), 3);
        assert_eq!(model.host(), Some(0));
    }
}

//! A bot's view of its table: the protocol's one fold ([`Mirror`], the server's own
//! `Table::apply`), seen by player `me`, with the few questions a bot asks to choose a legal
//! move answered by the rules core itself.
//!
//! Folding an event costs the core's `apply` (constant or linear in the seats); the derived
//! answers (whom I may attack or target, whose mulligan decision it is) are computed by the
//! core only when the bot acts. Nothing here folds events or derives rules of its own: there
//! is one fold, and the bots use it.

use grand_melee_protocol::rules::{Stage, Table};
use grand_melee_protocol::{
    ApplyError, Event, Mirror, Phase, PlayerId, StageName, Standing, TableView, TurnStateName,
    stage_name,
};

/// Why an event could not be folded in: the bot must ask for a fresh snapshot.
pub type ModelError = ApplyError;

/// One table, mirrored for player `me`.
#[derive(Debug, Clone)]
pub struct BotModel {
    me: PlayerId,
    mirror: Mirror,
}

impl BotModel {
    /// The model of a snapshot's view, for player `me`; an error if the snapshot does not
    /// describe a table (its settings are out of range).
    pub fn from_view(view: &TableView, me: PlayerId) -> Result<Self, ModelError> {
        Ok(Self {
            me,
            mirror: Mirror::new(view)?,
        })
    }

    fn table(&self) -> &Table {
        self.mirror.table()
    }

    /// Whether the table as mirrored now would refuse `command` from `authority` (this bot, or
    /// the host's authority it holds). A refusal the server sends for a move the mirror has
    /// since made illegal crossed another player's event on the wire: a race, not a fault.
    pub fn would_refuse(
        &self,
        authority: grand_melee_protocol::rules::Authority,
        command: grand_melee_protocol::rules::Command,
    ) -> bool {
        use grand_melee_protocol::rules::{Actor, Authority};
        let actor = match authority {
            Authority::Host => Actor::Host,
            Authority::Player => Actor::Player(self.me()),
        };
        self.table().clone().handle(actor, command).is_err()
    }

    /// The number of the last event folded in.
    pub fn seq(&self) -> u64 {
        self.mirror.seq()
    }

    /// The player this model belongs to.
    pub fn me(&self) -> PlayerId {
        self.me
    }

    /// Lobby, mulligan, playing or finished.
    pub fn stage(&self) -> StageName {
        stage_name(self.table().stage())
    }

    /// The host, if any.
    pub fn host(&self) -> Option<PlayerId> {
        self.table().facts().host
    }

    /// Players seated (lobby) or in the game.
    pub fn player_count(&self) -> usize {
        match self.table().stage() {
            Stage::Lobby => self.table().lobby().len(),
            _ => self.table().players().len(),
        }
    }

    /// My hand size after mulligans.
    pub fn my_hand(&self) -> u8 {
        self.table()
            .player(self.me)
            .map_or(self.table().config().hand_size, |p| p.hand_size)
    }

    /// The final standings (empty until the game is over).
    pub fn standings(&self) -> &[Standing] {
        self.table().standings()
    }

    /// Whether I am still in the game.
    pub fn alive(&self) -> bool {
        match self.table().stage() {
            Stage::Lobby => self.table().lobby().iter().any(|(p, _)| *p == self.me),
            _ => self
                .table()
                .player(self.me)
                .is_some_and(|p| p.status.is_alive()),
        }
    }

    /// Who decides on a mulligan now (only in the mulligan stage).
    pub fn mulligan_decider(&self) -> Option<PlayerId> {
        self.table().mulligan_decider()
    }

    /// Everyone whose mulligan decision is due (all undecided players with simultaneous
    /// mulligans).
    pub fn mulligan_deciders(&self) -> Vec<PlayerId> {
        self.table().mulligan_deciders()
    }

    /// The phase of my running turn, if I am taking one.
    pub fn my_running_phase(&self) -> Option<Phase> {
        match self.table().turn_of(self.me)?.state {
            grand_melee_protocol::rules::TurnState::Running(phase) => Some(phase),
            _ => None,
        }
    }

    /// Every living player within spell range of me (me included), in seating order; empty
    /// unless the game is being played and I am alive (the core's answer).
    pub fn may_target(&self) -> Vec<PlayerId> {
        self.table().damage_targets(self.me)
    }

    /// Whom I may attack now (the core's answer: only while my turn is running in combat).
    pub fn may_attack(&self) -> Vec<PlayerId> {
        self.table().attack_targets(self.me)
    }

    /// Folds in an `events` batch whose first event is number `first_seq`. Events already
    /// included are skipped; a gap or an event that does not fit is an error (ask for a
    /// snapshot). Returns how many events were new.
    pub fn apply_batch(&mut self, first_seq: u64, events: &[Event]) -> Result<u64, ModelError> {
        let before = self.mirror.seq();
        self.mirror.apply_batch(first_seq, events)?;
        Ok(self.mirror.seq() - before)
    }

    /// The snapshot the server would send now (the projection of the fold; quadratic in the
    /// seats, so only for checks).
    pub fn view(&self) -> TableView {
        self.mirror.view()
    }

    /// Where this model's answers disagree with `view`, a snapshot of the same table at the
    /// same event, on anything a bot decides with, if anywhere (`--mirror-check`).
    pub fn disagreement(&self, view: &TableView) -> Option<String> {
        let mine = view.player(self.me);
        let checks: [(&str, bool); 7] = [
            ("seq", self.seq() == view.seq),
            ("stage", self.stage() == view.stage),
            ("host", self.host() == view.host),
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

    /// Whether the model's own snapshot survives being taken back into a fresh mirror
    /// unchanged, and its answers agree with it: the fold, its projection and `from_view`
    /// checked against each other (`--mirror-check`).
    pub fn self_check(&self) -> Option<String> {
        let view = self.view();
        match Mirror::new(&view) {
            Ok(again) if again.view() == view => self.disagreement(&view),
            Ok(_) => Some(format!(
                "the snapshot at event {} does not survive a round trip",
                view.seq
            )),
            Err(error) => Some(format!(
                "the snapshot at event {} is refused: {error}",
                view.seq
            )),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use grand_melee_protocol::rules::{Actor, Command, TableConfig};
    use grand_melee_protocol::{Settings, TableId};

    fn lobby(players: u16) -> (TableView, Vec<Event>) {
        let view = TableView::new(TableId::nil(), "t", Settings::default());
        let mut events: Vec<Event> = (0..players)
            .map(|player| Event::PlayerJoined {
                player,
                name: format!("p{player}"),
                entropy: String::new(),
                deck: None,
            })
            .collect();
        events.insert(1, Event::HostChanged { player: Some(0) });
        (view, events)
    }

    /// A real game decided by the rules core (every accepted command's events), with every
    /// bot's model folding the same events: after every event each model's answers agree with
    /// the live table's snapshot, and its own snapshot round-trips.
    #[test]
    fn every_bot_answers_like_the_live_table_through_a_whole_game() {
        let players: u16 = 12;
        let settings = Settings {
            seats: 12,
            spell_range: 1,
            ..Settings::default()
        };
        let config = TableConfig::from_settings(&settings, 9).unwrap();
        let mut live = Table::new(config.clone()).unwrap();
        // The live table moves a whole command at a time; this one follows event by event.
        let mut shadow = Table::new(config).unwrap();
        let empty = TableView::new(TableId::nil(), "t", settings.clone());
        let mut models: Vec<BotModel> = (0..players)
            .map(|me| BotModel::from_view(&empty, me).unwrap())
            .collect();
        let mut seq = 0u64;
        let mut step = |_live: &mut Table, models: &mut Vec<BotModel>, events: Vec<Event>| {
            for event in events {
                seq += 1;
                shadow.apply(&event).unwrap();
                let view = shadow.view(TableId::nil(), "t", seq, &settings);
                for model in models.iter_mut() {
                    assert_eq!(model.apply_batch(seq, std::slice::from_ref(&event)), Ok(1));
                    assert_eq!(model.disagreement(&view), None, "after {event:?}");
                }
            }
        };
        for p in 0..players {
            let events = live
                .handle(Actor::Host, Command::join(format!("p{p}")))
                .unwrap();
            step(&mut live, &mut models, events);
        }
        let events = live.handle(Actor::Host, Command::start(None)).unwrap();
        step(&mut live, &mut models, events);
        let mut commands = 0;
        while live.stage() != Stage::Finished && commands < 5_000 {
            commands += 1;
            // Every bot asks its model what it may do; the first one that may act does.
            let actor = models.iter().find_map(|m| {
                if m.mulligan_decider() == Some(m.me()) {
                    Some((m.me(), Command::Keep))
                } else if let Some(phase) = m.my_running_phase() {
                    let command = match (phase, m.may_attack().first()) {
                        (Phase::Combat, Some(&target)) => Command::Attack {
                            target,
                            damage: 7,
                            poison: 0,
                        },
                        (Phase::Combat, None) => Command::EndTurn,
                        _ => Command::SetPhase {
                            phase: Phase::Combat,
                        },
                    };
                    Some((m.me(), command))
                } else {
                    None
                }
            });
            let Some((me, command)) = actor else { break };
            let events = live
                .handle(Actor::Player(me), command.clone())
                .unwrap_or_else(|e| panic!("the model chose {command:?} for {me}, refused: {e}"));
            let attacked = matches!(command, Command::Attack { .. });
            step(&mut live, &mut models, events);
            if attacked && live.stage() == Stage::Playing {
                let events = live.handle(Actor::Player(me), Command::EndTurn).unwrap();
                step(&mut live, &mut models, events);
            }
        }
        assert_eq!(
            live.stage(),
            Stage::Finished,
            "the bots' moves end the game"
        );
        for model in &models {
            assert_eq!(model.self_check(), None);
            assert_eq!(model.standings(), live.standings());
        }
    }

    /// A move the mirror still allows is a fault if refused; once an event makes it illegal
    /// (here the bot's own elimination), its refusal is a race.
    #[test]
    fn a_refusal_is_a_race_only_when_the_mirror_refuses_the_move_too() {
        use grand_melee_protocol::rules::Authority;
        let settings = Settings {
            seats: 3,
            ..Settings::default()
        };
        let config = TableConfig::from_settings(&settings, 3).unwrap();
        let mut live = Table::new(config).unwrap();
        let empty = TableView::new(TableId::nil(), "t", settings);
        let mut model = BotModel::from_view(&empty, 1).unwrap();
        let mut seq = 0u64;
        let mut fold = |model: &mut BotModel, events: Vec<Event>| {
            for event in events {
                seq += 1;
                assert_eq!(model.apply_batch(seq, std::slice::from_ref(&event)), Ok(1));
            }
        };
        for p in 0..3 {
            let events = live
                .handle(Actor::Host, Command::join(format!("p{p}")))
                .unwrap();
            fold(&mut model, events);
        }
        let events = live.handle(Actor::Host, Command::start(None)).unwrap();
        fold(&mut model, events);
        while let Some(decider) = model.mulligan_decider() {
            let events = live.handle(Actor::Player(decider), Command::Keep).unwrap();
            fold(&mut model, events);
        }
        let lose = || Command::ChangeLife { delta: -1 };
        assert!(
            !model.would_refuse(Authority::Player, lose()),
            "a live player may lose life"
        );
        let events = live.handle(Actor::Player(1), Command::Concede).unwrap();
        fold(&mut model, events);
        assert!(
            model.would_refuse(Authority::Player, lose()),
            "out of the game: a race"
        );
    }

    #[test]
    fn a_gap_is_reported_and_old_events_are_skipped() {
        let (view, events) = lobby(3);
        let mut model = BotModel::from_view(&view, 0).unwrap();
        assert_eq!(model.apply_batch(1, &events), Ok(4));
        assert_eq!(model.apply_batch(2, &events[1..]), Ok(0), "already seen");
        assert_eq!(
            model.apply_batch(7, &events[..1]),
            Err(ModelError::Gap {
                expected: 5,
                got: 7
            })
        );
        assert!(matches!(
            model.apply_batch(5, &[Event::TurnBegan { turn: 9, player: 0 }]),
            Err(ModelError::Invalid(_))
        ));
        assert_eq!(model.player_count(), 3);
        assert_eq!(model.host(), Some(0));
    }
}

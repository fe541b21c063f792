//! The one fold, seen from both ends: [`Table::view`] projects the table the server decides
//! with into the `snapshot` a client receives, [`Table::from_view`] takes a snapshot back into
//! a table, and [`Mirror`] keeps a client's copy up to date by folding every `events` batch with
//! the server's own [`Table::apply`]. There is no second derivation of the rules anywhere: the
//! derived fields of a view (spheres, whom each player may attack or target, the mulligan
//! decider) are the core's answers.

use crate::error::ApplyError;
use crate::event::Event;
use crate::game::Game;
use crate::rules::{
    Player, Presence, Seat, SpellRange, Stage, Table, TableConfig, Turn, TurnState,
};
use crate::types::{PlayerStatus, StageName, TableId, TurnStateName};
use crate::view::{PlayerView, Settings, TableView, TurnView};

impl TableConfig {
    /// The rules' settings of a table created with `settings` (the session's settings, such as
    /// clocks and the password, are not the rules' business).
    pub fn from_settings(
        settings: &Settings,
        seed: u64,
    ) -> Result<Self, crate::rules::ConfigError> {
        let config = TableConfig {
            seats: settings.seats,
            spell_range: SpellRange::new(settings.spell_range)?,
            reduction: settings.reduction,
            starting_life: settings.starting_life,
            hand_size: settings.hand_size,
            rule_set: settings.rules,
            combat_dice: settings.combat_dice,
            mulligan: settings.mulligan,
            league: settings.league.is_some(),
            seed,
            ..TableConfig::default()
        };
        // A solitaire's one seat is its own range; every other table's is the rules'.
        if settings.game == crate::types::GameKind::MountainMagic {
            config.validate_solitaire()?;
        } else {
            config.validate()?;
        }
        Ok(config)
    }
}

/// A stage as a client sees it.
pub fn stage_name(stage: Stage) -> StageName {
    match stage {
        Stage::Lobby => StageName::Lobby,
        Stage::Mulligan { .. } => StageName::Mulligan,
        Stage::Playing => StageName::Playing,
        Stage::Finished => StageName::Finished,
    }
}

impl Table {
    /// The snapshot of this table: its state, its public session facts and the derived fields,
    /// with the identity and settings the session keeps (`settings` must be the ones the table
    /// was created with).
    pub fn view(&self, table: TableId, name: &str, seq: u64, settings: &Settings) -> TableView {
        let facts = self.facts();
        let mut view = TableView::new(table, name, settings.clone());
        view.seq = seq;
        view.stage = stage_name(self.stage());
        view.set_facts(facts);
        view.dice_commitment = self.dice_commitment().to_owned();
        view.dice_secret = self.dice_secret().map(str::to_owned);
        view.seating_mode = self.seating_mode();
        let config = self.config();
        let presence = |player| facts.presence(player);
        let league = self.league_seats();
        view.first_decider = self.first_decider();
        if self.stage() == Stage::Lobby {
            view.first_choice = league
                .first_choice
                .filter(|(by, _)| Some(*by) == view.first_decider)
                .map(|(_, chosen)| chosen);
            view.players = self
                .lobby()
                .iter()
                .map(|(id, name)| {
                    let Presence {
                        connected,
                        absent,
                        muted,
                    } = presence(*id);
                    PlayerView {
                        player: *id,
                        name: name.clone(),
                        seat: None,
                        life: config.starting_life,
                        poison: 0,
                        status: PlayerStatus::Alive,
                        hand_size: config.hand_size,
                        kept: false,
                        connected,
                        absent,
                        muted,
                        may_attack: Vec::new(),
                        may_target: Vec::new(),
                        extra_turns: 0,
                        extra_next: 0,
                        stacks: Vec::new(),
                        deck: league.decks.get(id).cloned(),
                        bonus: None,
                    }
                })
                .collect();
            return view;
        }
        view.first_player = self.first_player();
        view.mulligan_decider = self.mulligan_decider();
        view.mulligan_deciders = self.mulligan_deciders();
        view.players = self
            .players()
            .iter()
            .enumerate()
            .map(|(seat, p)| {
                let Presence {
                    connected,
                    absent,
                    muted,
                } = presence(p.id);
                PlayerView {
                    player: p.id,
                    name: p.name.clone(),
                    seat: u8::try_from(seat).ok(),
                    life: p.life,
                    poison: p.poison,
                    status: p.status,
                    hand_size: p.hand_size,
                    kept: p.kept,
                    connected,
                    absent,
                    muted,
                    may_attack: self.attack_targets(p.id),
                    may_target: self.damage_targets(p.id),
                    extra_turns: p.extra_turns,
                    extra_next: p.extra_next,
                    stacks: self.stacks_in_range(p.id),
                    deck: league.decks.get(&p.id).cloned(),
                    bonus: league.bonuses.get(&p.id).cloned(),
                }
            })
            .collect();
        view.ring = self.ring().map(|p| p.id).collect();
        view.turns = self
            .turns()
            .iter()
            .map(|t| {
                let holder = self.players()[t.seat].id;
                let (state, phase) = match t.state {
                    TurnState::Waiting => (TurnStateName::Waiting, None),
                    TurnState::Running(phase) => (TurnStateName::Running, Some(phase)),
                    TurnState::Ended => (TurnStateName::Ended, None),
                };
                let sphere = match t.state {
                    TurnState::Ended => Vec::new(),
                    _ => self.sphere(holder),
                };
                TurnView {
                    turn: t.id,
                    player: holder,
                    state,
                    phase,
                    marked_for_removal: t.removal_mark.is_some(),
                    designations: t.designations,
                    sphere,
                }
            })
            .collect();
        view.standings = self.standings().to_vec();
        view
    }

    /// The table a snapshot shows, to fold later events into. Only what deciding needs and no
    /// client has stays unknown: the seed (seating and first player are already drawn), the join
    /// order of a started game's lobby, the order in which past eliminations happened and in
    /// which pending reductions were chosen. Folding needs none of them, so
    /// `Table::from_view(v).view(..) == v` and applying an event to either gives the same view.
    pub fn from_view(view: &TableView) -> Result<Table, ApplyError> {
        let config = TableConfig::from_settings(&view.settings, 0)
            .map_err(|_| ApplyError::Invalid("the snapshot's settings are out of range"))?;
        let kept = view.players.iter().filter(|p| p.kept).count();
        let stage = match view.stage {
            StageName::Lobby => Stage::Lobby,
            StageName::Mulligan => Stage::Mulligan { kept },
            StageName::Playing => Stage::Playing,
            StageName::Finished => Stage::Finished,
        };
        let lobby = view
            .players
            .iter()
            .map(|p| (p.player, p.name.clone()))
            .collect();
        let mut parts = crate::rules::TableParts {
            config,
            facts: view.facts(),
            stage,
            lobby,
            players: Vec::new(),
            ring: Vec::new(),
            turns: Vec::new(),
            first: 0,
            standings: view.standings.clone(),
            commitment: view.dice_commitment.clone(),
            revealed: view.dice_secret.clone(),
            league: crate::rules::LeagueSeats {
                decks: view
                    .players
                    .iter()
                    .filter_map(|p| Some((p.player, p.deck.clone()?)))
                    .collect(),
                first_choice: match (stage, view.first_decider, view.first_choice) {
                    (Stage::Lobby, Some(by), Some(chosen)) => Some((by, chosen)),
                    _ => None,
                },
                first_decided_by: if stage == Stage::Lobby {
                    None
                } else {
                    view.first_decider
                },
                bonuses: view
                    .players
                    .iter()
                    .filter_map(|p| Some((p.player, p.bonus.clone()?)))
                    .collect(),
            },
            seating_mode: view.seating_mode,
        };
        if stage != Stage::Lobby {
            let seat_of = |player| {
                view.players
                    .iter()
                    .position(|p| p.player == player)
                    .ok_or(ApplyError::UnknownPlayer(player))
            };
            parts.ring = view
                .ring
                .iter()
                .map(|&p| seat_of(p))
                .collect::<Result<Vec<Seat>, _>>()?;
            parts.players = view
                .players
                .iter()
                .enumerate()
                .map(|(seat, p)| Player {
                    id: p.player,
                    name: p.name.clone(),
                    life: p.life,
                    poison: p.poison,
                    status: p.status,
                    hand_size: p.hand_size,
                    kept: p.kept,
                    position: parts.ring.iter().position(|&s| s == seat).unwrap_or(0),
                    extra_turns: p.extra_turns,
                    extra_next: p.extra_next,
                })
                .collect();
            parts.first = match view.first_player {
                Some(first) => seat_of(first)?,
                None => 0,
            };
            parts.turns = view
                .turns
                .iter()
                .enumerate()
                .map(|(k, t)| {
                    let state = match (t.state, t.phase) {
                        (TurnStateName::Waiting, _) => TurnState::Waiting,
                        (TurnStateName::Running, Some(phase)) => TurnState::Running(phase),
                        (TurnStateName::Running, None) => {
                            return Err(ApplyError::Invalid("a running turn without a phase"));
                        }
                        (TurnStateName::Ended, _) => TurnState::Ended,
                    };
                    Ok(Turn {
                        id: t.turn,
                        seat: seat_of(t.player)?,
                        state,
                        removal_mark: t
                            .marked_for_removal
                            .then(|| u32::try_from(k).unwrap_or(u32::MAX)),
                        // Older servers send no count: a mark is one designation.
                        designations: t.designations.max(u32::from(t.marked_for_removal)),
                    })
                })
                .collect::<Result<Vec<Turn>, _>>()?;
        }
        Ok(Table::from_parts(parts))
    }
}

/// A client's copy of a table: the snapshot it received, folded forward event by event with the
/// server's own [`Table::apply`]. [`view`](Mirror::view) gives the current snapshot;
/// [`table`](Mirror::table) answers the rules' questions (spheres, targets, whose decision).
/// Generic over the [`Game`], Grand Melee's [`Table`] unless said otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mirror<G: Game = Table> {
    table: G,
    id: TableId,
    name: String,
    settings: Settings,
    seq: u64,
}

impl Mirror {
    /// A mirror of the Grand Melee table a `snapshot` shows.
    pub fn new(snapshot: &TableView) -> Result<Self, ApplyError> {
        Self::of(snapshot)
    }
}

impl<G: Game> Mirror<G> {
    /// A mirror of the table a `snapshot` shows, whatever its game.
    pub fn of(snapshot: &TableView) -> Result<Self, ApplyError> {
        Ok(Self {
            table: G::from_view(snapshot)?,
            id: snapshot.table,
            name: snapshot.name.clone(),
            settings: snapshot.settings.clone(),
            seq: snapshot.seq,
        })
    }

    /// The table, as the rules see it.
    pub fn table(&self) -> &G {
        &self.table
    }

    /// Number of the last event included (0: none yet).
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The table's id.
    pub fn id(&self) -> TableId {
        self.id
    }

    /// The table's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The table's settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The current snapshot, exactly as the server would send it now.
    pub fn view(&self) -> TableView {
        self.table
            .view(self.id, &self.name, self.seq, &self.settings)
    }

    /// Applies event number `seq`. It must be the next one (`self.seq() + 1`), or
    /// [`ApplyError::Gap`] is returned: events were missed, ask for a `snapshot`. An event that
    /// does not fit the table is [`ApplyError::Invalid`]: the stream is not this table's, and
    /// the mirror is to be rebuilt from a fresh snapshot (a gap changes nothing).
    pub fn apply(&mut self, seq: u64, event: &Event) -> Result<(), ApplyError> {
        let expected = self.seq.saturating_add(1);
        if seq != expected {
            return Err(ApplyError::Gap { expected, got: seq });
        }
        self.table.apply(event).map_err(ApplyError::Invalid)?;
        self.seq = seq;
        Ok(())
    }

    /// Applies a batch of events numbered from `first_seq`, as carried by an `events` message.
    /// Events the mirror already includes (`seq <= self.seq()`, e.g. a batch that overlaps a
    /// snapshot just received) are skipped; a batch that starts after `self.seq() + 1` is a
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
}

impl TableView {
    /// This snapshot with `events` (numbered from `first_seq`) folded in by a [`Mirror`]: a
    /// convenience for a one-off step (tests, examples); a client that follows a table keeps the
    /// [`Mirror`] instead.
    pub fn folded(&self, first_seq: u64, events: &[Event]) -> Result<TableView, ApplyError> {
        let mut mirror = Mirror::new(self)?;
        mirror.apply_batch(first_seq, events)?;
        Ok(mirror.view())
    }
}

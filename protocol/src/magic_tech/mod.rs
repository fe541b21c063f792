//! Magic Tech (`docs/RULES.md`, "Magic Tech"): the two-player stockpile variant on the game
//! seam. [`MagicTech`] is its state: the fold of its table's events ([`Game::apply`], the only
//! place it changes); [`decide`] holds the decisions (every check first, then the events one at
//! a time, each applied as it is emitted), [`moves`] the legal moves a random player or a bot
//! picks from. Its vocabulary is [`crate::magic_tech_types`].

mod decide;
mod moves;

use crate::dice::DiceSecret;
use crate::error::{ApplyError, ErrorCode};
use crate::event::Event;
use crate::game::{Game, GameKind};
use crate::league::MemberId;
use crate::magic_tech_types::{
    Area, CardId, CardType, CardView, Colour, Correction, MagicTechView, MissionView, MtPhase,
    ProposalView, SideView, Target, Zone,
};
use crate::mirror::stage_name;
use crate::shell::{SessionFacts, Stage};
use crate::types::{
    MulliganMode, PlayerId, PlayerStatus, StageName, Standing, TableId, TurnId, TurnStateName,
};
use crate::view::{PlayerView, Settings, TableView, TurnView};

use crate::command::{Actor, Command};

/// A seated player: his name and what the shell shows of him besides his side of the board.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seat {
    player: PlayerId,
    name: String,
    entropy: String,
    kept: bool,
}

/// A Magic Tech table: the lobby, the mulligans and the game, folded from its events.
#[derive(Debug, Clone)]
pub struct MagicTech {
    facts: SessionFacts,
    stage: Stage,
    /// The dice secret (`None` in a client's mirror, which never decides).
    secret: Option<DiceSecret>,
    seats: u8,
    /// Seated players: in join order in the lobby, in seating order (first player first) after
    /// the start.
    seated: Vec<Seat>,
    next_player: PlayerId,
    first_player: Option<PlayerId>,
    commitment: String,
    dice_secret: Option<String>,
    /// Players who have lost (ran out of cards, conceded, ruled out).
    out: Vec<PlayerId>,
    standings: Vec<Standing>,
    /// The board: both sides, the cards in play, the turn, the mission, the proposal.
    board: MagicTechView,
}

impl MagicTech {
    /// The board as it stands (the snapshot's `magic_tech`).
    pub fn board(&self) -> &MagicTechView {
        &self.board
    }

    /// A player's side of the board.
    pub fn side(&self, player: PlayerId) -> Option<&SideView> {
        self.board.sides.iter().find(|s| s.player == player)
    }

    fn side_mut(&mut self, player: PlayerId) -> Result<&mut SideView, &'static str> {
        self.board
            .sides
            .iter_mut()
            .find(|s| s.player == player)
            .ok_or("unknown player")
    }

    /// A card in play.
    pub fn card(&self, card: CardId) -> Option<&CardView> {
        self.board.cards.iter().find(|c| c.card == card)
    }

    fn card_mut(&mut self, card: CardId) -> Result<&mut CardView, &'static str> {
        self.board
            .cards
            .iter_mut()
            .find(|c| c.card == card)
            .ok_or("unknown card")
    }

    /// The other player of a started game.
    pub fn opponent(&self, player: PlayerId) -> Option<PlayerId> {
        self.seated.iter().map(|s| s.player).find(|p| *p != player)
    }

    /// The colours of the basic lands `player` has in play, face up.
    pub fn basics(&self, player: PlayerId) -> Vec<Colour> {
        let mut basics: Vec<Colour> = self
            .board
            .cards
            .iter()
            .filter(|c| c.owner == player)
            .filter_map(|c| c.face.as_ref().and_then(|f| f.basic))
            .collect();
        basics.sort();
        basics.dedup();
        basics
    }

    /// Cards of `player`'s deck, in every zone: the card count the rules keep constant.
    pub fn card_count(&self, player: PlayerId) -> Option<u32> {
        let side = self.side(player)?;
        let in_play = self
            .board
            .cards
            .iter()
            .filter(|c| c.owner == player)
            .count();
        Some(
            u32::from(side.stockpile)
                + u32::from(side.hand)
                + u32::from(side.scrapheap)
                + u32::try_from(in_play).unwrap_or(u32::MAX),
        )
    }

    /// Non-land deployments allowed this turn: one on the first player's first turn, two after.
    pub fn deployments_allowed(&self) -> u8 {
        if self.board.turn_number <= 1 {
            crate::magic_tech_types::FIRST_TURN_DEPLOYMENTS
        } else {
            crate::magic_tech_types::DEPLOYMENTS_PER_TURN
        }
    }

    /// Cards drawn in the draw phase: one on the first player's first turn, two after.
    pub fn draws_this_turn(&self) -> u8 {
        if self.board.turn_number <= 1 { 1 } else { 2 }
    }

    fn seat_of(&self, player: PlayerId) -> Option<&Seat> {
        self.seated.iter().find(|s| s.player == player)
    }

    /// Takes a card out of play into its owner's `to` zone; guards of it go on patrol.
    fn remove_card(&mut self, card: CardId, to: Zone) -> Result<(), &'static str> {
        if to == Zone::Play {
            return Err("a card cannot leave play for play");
        }
        let at = self
            .board
            .cards
            .iter()
            .position(|c| c.card == card)
            .ok_or("unknown card")?;
        let removed = self.board.cards.remove(at);
        for guard in &mut self.board.cards {
            if guard.area == (Area::Guard { card: Some(card) }) {
                guard.area = Area::Patrol;
            }
        }
        let dest = zone_slot(self.side_mut(removed.owner)?, to)?;
        *dest = dest.checked_add(1).ok_or("too many cards")?;
        Ok(())
    }

    /// Moves `count` cards between two of `player`'s zones other than play.
    fn move_cards(
        &mut self,
        player: PlayerId,
        from: Zone,
        to: Zone,
        count: u8,
    ) -> Result<(), &'static str> {
        if from == to {
            return Err("a move needs two zones");
        }
        let side = self.side_mut(player)?;
        let source = zone_slot(side, from)?;
        *source = source.checked_sub(count).ok_or("not that many cards")?;
        let dest = zone_slot(side, to)?;
        *dest = dest.checked_add(count).ok_or("too many cards")?;
        Ok(())
    }

    fn final_standings(&self) -> Vec<Standing> {
        let mut standings: Vec<Standing> = self
            .seated
            .iter()
            .filter(|s| !self.out.contains(&s.player))
            .map(|s| Standing {
                player: s.player,
                place: 1,
                mana_points: 0,
            })
            .collect();
        let best_lost = u8::try_from(standings.len() + 1).unwrap_or(u8::MAX);
        for (k, player) in self.out.iter().rev().enumerate() {
            standings.push(Standing {
                player: *player,
                place: best_lost.saturating_add(u8::try_from(k).unwrap_or(u8::MAX)),
                mana_points: 0,
            });
        }
        standings
    }
}

/// The count of one of a side's zones other than play.
fn zone_slot(side: &mut SideView, zone: Zone) -> Result<&mut u8, &'static str> {
    match zone {
        Zone::Stockpile => Ok(&mut side.stockpile),
        Zone::Hand => Ok(&mut side.hand),
        Zone::Scrapheap => Ok(&mut side.scrapheap),
        Zone::Play => Err("cards in play are moved one by one"),
    }
}

impl Game for MagicTech {
    const KIND: GameKind = GameKind::MagicTech;

    fn create(settings: &Settings, secret: DiceSecret) -> Result<Self, ErrorCode> {
        if settings.game != GameKind::MagicTech
            || settings.seats != crate::limits::MAGIC_TECH_SEATS
            || settings.league.is_some()
            || settings.mulligan != MulliganMode::Paris
            || settings.combat_dice
            || settings.mountain_magic.is_some()
        {
            return Err(ErrorCode::BadSettings);
        }
        Ok(Self {
            facts: SessionFacts::default(),
            stage: Stage::Lobby,
            secret: Some(secret),
            seats: settings.seats,
            seated: Vec::new(),
            next_player: 0,
            first_player: None,
            commitment: secret.commitment(),
            dice_secret: None,
            out: Vec::new(),
            standings: Vec::new(),
            board: MagicTechView::default(),
        })
    }

    fn handle(&mut self, actor: Actor, command: Command) -> Result<Vec<Event>, ErrorCode> {
        // Decided on a copy: a refusal, wherever it comes, changes nothing.
        let mut next = self.clone();
        let events = next.decide(actor, command)?;
        *self = next;
        Ok(events)
    }

    fn apply(&mut self, event: &Event) -> Result<(), &'static str> {
        self.fold(event)
    }

    fn view(&self, table: TableId, name: &str, seq: u64, settings: &Settings) -> TableView {
        let mut view = TableView::new(table, name, settings.clone());
        view.seq = seq;
        view.stage = stage_name(self.stage);
        view.set_facts(&self.facts);
        view.first_player = self.first_player;
        view.dice_commitment = self.commitment.clone();
        view.dice_secret = self.dice_secret.clone();
        view.standings = self.standings.clone();
        let deciders = self.deciders();
        view.mulligan_decider = deciders.first().copied();
        view.mulligan_deciders = deciders;
        let started = self.stage != Stage::Lobby;
        if started {
            view.ring = self.seated.iter().map(|s| s.player).collect();
        }
        view.players = self
            .seated
            .iter()
            .enumerate()
            .map(|(k, seat)| PlayerView {
                seat: started.then(|| u8::try_from(k).unwrap_or(u8::MAX)),
                status: if self.out.contains(&seat.player) {
                    PlayerStatus::Eliminated
                } else {
                    PlayerStatus::Alive
                },
                hand_size: self.side(seat.player).map_or(0, |s| s.hand),
                kept: seat.kept,
                ..PlayerView::seated(
                    seat.player,
                    seat.name.clone(),
                    self.facts.presence(seat.player),
                )
            })
            .collect();
        view.turns = self
            .board
            .active
            .map(|player| TurnView {
                turn: 0,
                player,
                state: TurnStateName::Running,
                phase: None,
                marked_for_removal: false,
                designations: 0,
                sphere: Vec::new(),
            })
            .into_iter()
            .collect();
        view.magic_tech = Some(Box::new(self.board.clone()));
        view
    }

    fn from_view(view: &TableView) -> Result<Self, ApplyError> {
        if view.settings.game != GameKind::MagicTech {
            return Err(ApplyError::Invalid("not a Magic Tech table"));
        }
        let board = match view.magic_tech.as_deref() {
            Some(board) => board.clone(),
            // The empty table a replay or a log folds from (`TableView::new`, before any
            // event): a new table's board is the empty one.
            None if view.seq == 0 && view.stage == StageName::Lobby => MagicTechView::default(),
            None => {
                return Err(ApplyError::Invalid(
                    "a Magic Tech snapshot without its board",
                ));
            }
        };
        let seated: Vec<Seat> = view
            .players
            .iter()
            .map(|p| Seat {
                player: p.player,
                name: p.name.clone(),
                entropy: String::new(),
                kept: p.kept,
            })
            .collect();
        let stage = match view.stage {
            StageName::Lobby => Stage::Lobby,
            StageName::Mulligan => Stage::Mulligan {
                kept: seated.iter().filter(|s| s.kept).count(),
            },
            StageName::Playing => Stage::Playing,
            StageName::Finished => Stage::Finished,
        };
        Ok(Self {
            facts: view.facts(),
            stage,
            secret: None,
            seats: view.settings.seats,
            next_player: view.players.iter().map(|p| p.player + 1).max().unwrap_or(0),
            first_player: view.first_player,
            commitment: view.dice_commitment.clone(),
            dice_secret: view.dice_secret.clone(),
            out: view
                .players
                .iter()
                .filter(|p| !p.status.is_alive())
                .map(|p| p.player)
                .collect(),
            standings: view.standings.clone(),
            seated,
            board,
        })
    }

    fn facts(&self) -> &SessionFacts {
        &self.facts
    }

    fn stage(&self) -> Stage {
        self.stage
    }

    fn name_of(&self, player: PlayerId) -> Option<&str> {
        self.seat_of(player).map(|s| s.name.as_str())
    }

    fn is_alive(&self, player: PlayerId) -> bool {
        self.seat_of(player).is_some() && !self.out.contains(&player)
    }

    fn living(&self) -> usize {
        self.seated.len() - self.out.len()
    }

    /// Two players across one board: both seated, once the game has started.
    fn within_range(&self, a: PlayerId, b: PlayerId) -> bool {
        self.stage != Stage::Lobby && self.seat_of(a).is_some() && self.seat_of(b).is_some()
    }

    fn running(&self) -> Vec<(TurnId, PlayerId)> {
        match (self.stage, self.board.active) {
            (Stage::Playing, Some(player)) => vec![(0, player)],
            _ => Vec::new(),
        }
    }

    fn deciders(&self) -> Vec<PlayerId> {
        match self.stage {
            // Paris: the first player decides first, then the other.
            Stage::Mulligan { .. } => self
                .seated
                .iter()
                .find(|s| !s.kept)
                .map(|s| s.player)
                .into_iter()
                .collect(),
            _ => Vec::new(),
        }
    }

    fn league_members(&self) -> Vec<MemberId> {
        Vec::new()
    }
}

/// The `turn` a Magic Tech `turn_began` / `turn_ended` carries: the turn's number from 1, as the
/// board counts it (`turn_number`), so a log says "turn 3" where the board does; 255 from then
/// on (the field is a [`TurnId`]).
pub(crate) fn turn_label(number: u32) -> TurnId {
    TurnId::try_from(number).unwrap_or(TurnId::MAX)
}

/// Whether an event's `turn` names turn `number`: its label, or 0 (journals written before the
/// events carried the number).
fn labels(turn: TurnId, number: u32) -> bool {
    turn == 0 || turn == turn_label(number)
}

impl MagicTech {
    /// Folds one event: the only place the state changes.
    fn fold(&mut self, event: &Event) -> Result<(), &'static str> {
        match event {
            Event::PlayerJoined {
                player,
                name,
                entropy,
                ..
            } => {
                if self.stage != Stage::Lobby || self.seat_of(*player).is_some() {
                    return Err("join outside the lobby");
                }
                self.seated.push(Seat {
                    player: *player,
                    name: name.clone(),
                    entropy: entropy.clone(),
                    kept: false,
                });
                self.board.sides.push(SideView {
                    player: *player,
                    deck: None,
                    stockpile: 0,
                    hand: 0,
                    scrapheap: 0,
                    mana: 0,
                });
                self.next_player = player + 1;
                self.facts.seat(*player);
            }
            Event::PlayerLeft { player } => {
                if self.stage != Stage::Lobby {
                    return Err("leave outside the lobby");
                }
                self.seated.retain(|s| s.player != *player);
                self.board.sides.retain(|s| s.player != *player);
                self.facts.unseat(*player)?;
            }
            Event::MagicTechDeckDeclared { player, size } => {
                if self.stage != Stage::Lobby {
                    return Err("deck declared outside the lobby");
                }
                self.side_mut(*player)?.deck = Some(*size);
            }
            Event::GameStarted {
                seating,
                first_player,
                commitment,
                ..
            } => {
                if self.stage != Stage::Lobby
                    || seating.len() != self.seated.len()
                    || seating.first() != Some(first_player)
                {
                    return Err("start does not fit the lobby");
                }
                let mut seated = Vec::new();
                let mut sides = Vec::new();
                for player in seating {
                    let seat = self.seat_of(*player).ok_or("unknown player")?.clone();
                    let mut side = self.side(*player).ok_or("unknown player")?.clone();
                    let deck = side.deck.ok_or("deck size not declared")?;
                    side.hand = crate::magic_tech_types::STARTING_HAND;
                    side.stockpile = deck
                        .checked_sub(side.hand)
                        .ok_or("deck smaller than a hand")?;
                    seated.push(seat);
                    sides.push(side);
                }
                self.seated = seated;
                self.board.sides = sides;
                self.first_player = Some(*first_player);
                self.commitment = commitment.clone();
                self.stage = Stage::Mulligan { kept: 0 };
            }
            Event::Mulliganed { player, hand_size } => {
                if self.deciders().first() != Some(player) {
                    return Err("mulligan out of turn");
                }
                let side = self.side_mut(*player)?;
                let back = side
                    .hand
                    .checked_sub(*hand_size)
                    .ok_or("a mulligan does not grow a hand")?;
                side.hand = *hand_size;
                side.stockpile = side.stockpile.checked_add(back).ok_or("too many cards")?;
            }
            Event::Kept {
                player, hand_size, ..
            } => {
                if self.deciders().first() != Some(player) {
                    return Err("keep out of turn");
                }
                if self.side(*player).map(|s| s.hand) != Some(*hand_size) {
                    return Err("kept a hand of another size");
                }
                let seat = self
                    .seated
                    .iter_mut()
                    .find(|s| s.player == *player)
                    .ok_or("unknown player")?;
                seat.kept = true;
                let kept = self.seated.iter().filter(|s| s.kept).count();
                self.stage = if kept == self.seated.len() {
                    Stage::Playing
                } else {
                    Stage::Mulligan { kept }
                };
            }
            Event::TurnBegan { turn, player } => {
                if self.stage != Stage::Playing || self.board.active.is_some() {
                    return Err("turn began out of place");
                }
                if !labels(*turn, self.board.turn_number.saturating_add(1)) {
                    return Err("turn began with another number");
                }
                self.seat_of(*player).ok_or("unknown player")?;
                self.board.active = Some(*player);
                self.board.phase = None;
                self.board.turn_number = self.board.turn_number.saturating_add(1);
                self.board.deployed = 0;
                self.board.lands = 0;
            }
            Event::TurnEnded { turn, player, .. } => {
                if self.board.active != Some(*player) {
                    return Err("ended a turn not running");
                }
                if !labels(*turn, self.board.turn_number) {
                    return Err("ended a turn with another number");
                }
                self.board.active = None;
                self.board.phase = None;
                self.board.mission = None;
                for side in &mut self.board.sides {
                    side.mana = 0;
                }
            }
            Event::MagicTechPhaseBegan { player, phase } => {
                if self.board.active != Some(*player) {
                    return Err("phase of a turn not running");
                }
                self.board.phase = Some(*phase);
                for side in &mut self.board.sides {
                    side.mana = 0;
                }
                match phase {
                    MtPhase::Untap => {
                        for card in &mut self.board.cards {
                            card.fresh = false;
                            if card.owner == *player {
                                card.tapped = false;
                            }
                        }
                    }
                    MtPhase::End => {
                        for card in &mut self.board.cards {
                            let creature = card
                                .face
                                .as_ref()
                                .is_some_and(|f| f.card_type == CardType::Creature);
                            if card.owner == *player && creature && card.area == Area::Deploy {
                                card.area = Area::Patrol;
                            }
                        }
                    }
                    _ => {}
                }
            }
            Event::MagicTechDrew { player, count } => {
                self.move_cards(*player, Zone::Stockpile, Zone::Hand, *count)?;
            }
            Event::MagicTechDeployed { player, card, land } => {
                if *card != self.board.next_card {
                    return Err("cards are numbered in order");
                }
                let side = self.side_mut(*player)?;
                side.hand = side.hand.checked_sub(1).ok_or("no card in hand")?;
                if land.is_some() {
                    self.board.lands = self.board.lands.saturating_add(1);
                } else {
                    self.board.deployed = self.board.deployed.saturating_add(1);
                }
                self.board.cards.push(CardView {
                    card: *card,
                    owner: *player,
                    face: land.clone(),
                    counters: 0,
                    damage: 0,
                    tapped: false,
                    area: Area::Deploy,
                    fresh: true,
                    shown: false,
                });
                self.board.next_card = card.checked_add(1).ok_or("too many cards")?;
            }
            Event::MagicTechTapped { card, mana } => {
                let view = self.card_mut(*card)?;
                if view.tapped {
                    return Err("already tapped");
                }
                view.tapped = true;
                let owner = view.owner;
                let side = self.side_mut(owner)?;
                side.mana = side.mana.saturating_add(u16::from(*mana));
            }
            Event::MagicTechPaid {
                player,
                card,
                amount,
            } => {
                let side = self.side_mut(*player)?;
                side.mana = side.mana.checked_sub(*amount).ok_or("not enough mana")?;
                if let Some(card) = card {
                    let view = self.card_mut(*card)?;
                    let amount = u8::try_from(*amount).map_err(|_| "too many counters")?;
                    view.counters = view
                        .counters
                        .checked_add(amount)
                        .ok_or("too many counters")?;
                }
            }
            Event::MagicTechRevealed { card, face, .. } => {
                let view = self.card_mut(*card)?;
                if view.face.is_some() {
                    return Err("already face up");
                }
                view.face = Some(face.clone());
                view.counters = 0;
                view.fresh = true;
                view.shown = false;
                if !face.card_type.is_permanent() {
                    self.remove_card(*card, Zone::Scrapheap)?;
                }
            }
            Event::MagicTechRelocated { card, area } => {
                self.card_mut(*card)?.area = *area;
            }
            Event::MagicTechMissionBegan {
                player,
                attackers,
                target,
            } => {
                if self.board.mission.is_some() {
                    return Err("a mission is under way");
                }
                self.board.mission = Some(MissionView {
                    player: *player,
                    attackers: attackers.clone(),
                    target: *target,
                });
            }
            Event::MagicTechBlocked { .. } => {
                if self.board.mission.is_none() {
                    return Err("no mission to block");
                }
            }
            Event::MagicTechDamaged { target, effect, .. } => match target {
                Target::Card { card } => {
                    let view = self.card_mut(*card)?;
                    if view.face.is_some() {
                        view.damage = view.damage.saturating_add(*effect);
                    } else {
                        let effect = u8::try_from(*effect).map_err(|_| "too many counters")?;
                        view.counters = view
                            .counters
                            .checked_sub(effect)
                            .ok_or("not that many counters")?;
                        if effect > 0 {
                            view.shown = true;
                        }
                    }
                }
                Target::Stockpile { player } => {
                    let count = u8::try_from(*effect).map_err(|_| "not that many cards")?;
                    self.move_cards(*player, Zone::Stockpile, Zone::Scrapheap, count)?;
                }
            },
            Event::MagicTechDestroyed { card, .. } => self.remove_card(*card, Zone::Scrapheap)?,
            Event::MagicTechMissionEnded { tapped } => {
                if self.board.mission.is_none() {
                    return Err("no mission to end");
                }
                for card in tapped {
                    self.card_mut(*card)?.tapped = true;
                }
                self.board.mission = None;
            }
            Event::MagicTechScrapped { player, count } => {
                self.move_cards(*player, Zone::Stockpile, Zone::Scrapheap, *count)?;
            }
            Event::MagicTechRecovered { player, count } => {
                self.move_cards(*player, Zone::Scrapheap, Zone::Stockpile, *count)?;
            }
            Event::MagicTechHealed { card, amount } => {
                let view = self.card_mut(*card)?;
                view.damage = view
                    .damage
                    .checked_sub(*amount)
                    .ok_or("not that much damage")?;
            }
            Event::MagicTechLeftPlay { card, to } => self.remove_card(*card, *to)?,
            Event::MagicTechProposed { player, correction } => {
                if self.board.proposal.is_some() {
                    return Err("a proposal is open");
                }
                self.board.proposal = Some(ProposalView {
                    player: *player,
                    correction: correction.clone(),
                });
            }
            Event::MagicTechDeclined { .. } => {
                self.board.proposal.take().ok_or("no proposal")?;
            }
            Event::MagicTechCorrected { correction, by } => {
                if by.is_some() {
                    self.board.proposal.take().ok_or("no proposal")?;
                }
                self.correct(correction)?;
            }
            Event::MagicTechRanOut { player } => {
                self.seat_of(*player).ok_or("unknown player")?;
                if !self.out.contains(player) {
                    self.out.push(*player);
                }
            }
            Event::Eliminated { players, .. } => {
                for player in players {
                    self.seat_of(*player).ok_or("unknown player")?;
                    if !self.out.contains(player) {
                        self.out.push(*player);
                    }
                }
            }
            Event::GameAbandoned => {}
            Event::GameOver { standings } => {
                self.stage = Stage::Finished;
                self.standings = standings.clone();
                self.board.active = None;
                self.board.phase = None;
                self.board.mission = None;
                self.board.proposal = None;
            }
            Event::DiceRevealed { secret } => self.dice_secret = Some(secret.clone()),
            shell => return self.facts.apply(shell, self.stage),
        }
        Ok(())
    }

    /// A correction's effect on the board.
    fn correct(&mut self, correction: &Correction) -> Result<(), &'static str> {
        use Correction as C;
        match correction {
            C::Counters { card, counters } => self.card_mut(*card)?.counters = *counters,
            C::Damage { card, damage } => self.card_mut(*card)?.damage = *damage,
            C::Tapped { card, tapped } => self.card_mut(*card)?.tapped = *tapped,
            C::Mana { player, mana } => self.side_mut(*player)?.mana = *mana,
            C::Move {
                player,
                from,
                to,
                count,
            } => self.move_cards(*player, *from, *to, *count)?,
        }
        Ok(())
    }
}

//! Magic Tech's decisions: every check first, then the events one at a time, each folded as it
//! is emitted (so a later check sees what an earlier event did). A refusal returns before the
//! first event; [`Game::handle`] decides on a copy, so nothing a refusal could leave behind
//! reaches the table.

use super::{MagicTech, turn_label};
use crate::command::{Actor, Command};
use crate::dice::{Dice, entropy_digest};
use crate::error::ErrorCode;
use crate::event::Event;
use crate::game::Game;
use crate::limits::{
    MAX_CARD_NUMBER, MAX_COUNTERS, MAX_LIFE_CHANGE, MAX_MAGIC_TECH_AMOUNT as MAX_AMOUNT,
    MAX_TAP_MANA, MAX_UNSPENT_MANA,
};
use crate::magic_tech_types::{
    Area, Block, CardFace, CardId, CardType, Colour, Correction, MAX_COLOURED_SYMBOLS, MAX_DECK,
    MagicTechCommand, ManaCost, MtPhase, STARTING_HAND, Target, Zone,
};
use crate::shell::{Stage, check_seat_text, check_seating_order};
use crate::text;
use crate::types::{EliminationCause, KeepReason, PlayerId, Ruling, SeatingMode, TurnEndReason};

impl MagicTech {
    /// Folds `event` and records it: the one way a decision changes the state.
    fn emit(&mut self, out: &mut Vec<Event>, event: Event) -> Result<(), ErrorCode> {
        // Every event is checked before it is emitted; one that does not fold is a bug, and
        // the whole command is refused (the copy it was decided on is dropped).
        self.fold(&event).map_err(|_| ErrorCode::BadMessage)?;
        out.push(event);
        Ok(())
    }

    pub(super) fn decide(
        &mut self,
        actor: Actor,
        command: Command,
    ) -> Result<Vec<Event>, ErrorCode> {
        let mut out = Vec::new();
        match command {
            Command::Join {
                name,
                entropy,
                deck,
            } => {
                if deck.is_some() {
                    return Err(ErrorCode::BadMessage);
                }
                self.join(name, entropy, &mut out)?;
            }
            Command::Leave => {
                let player = self.lobby_player(actor)?;
                self.emit(&mut out, Event::PlayerLeft { player })?;
            }
            Command::Start {
                first_player,
                seating,
                order,
            } => self.start(actor, first_player, seating, order, &mut out)?,
            Command::Mulligan => {
                let player = self.decider(actor)?;
                let hand = self.side(player).map_or(0, |s| s.hand);
                if hand == 0 {
                    return Err(ErrorCode::NoCardsLeft);
                }
                let hand_size = hand - 1;
                self.emit(&mut out, Event::Mulliganed { player, hand_size })?;
            }
            Command::Keep => {
                let player = self.decider(actor)?;
                self.keep(player, KeepReason::Decided, &mut out)?;
            }
            Command::ExpireMulligan { player, reason } => {
                require_host(actor)?;
                self.expect_decider(player)?;
                self.keep(player, reason.into(), &mut out)?;
            }
            Command::EndTurn => {
                let player = self.active_player(actor)?;
                self.no_open_mission()?;
                self.end_turn(player, TurnEndReason::Finished, &mut out)?;
            }
            Command::ExpireTurn { player, reason } => {
                require_host(actor)?;
                self.expect_running(player)?;
                self.end_turn(player, reason.into(), &mut out)?;
            }
            Command::Concede => {
                let player = self.living_player(actor)?;
                self.eliminate(vec![player], EliminationCause::Conceded, &mut out)?;
            }
            Command::Ruling(ruling) => self.rule(actor, ruling, &mut out)?,
            Command::Abandon => {
                require_host(actor)?;
                if !matches!(self.stage, Stage::Mulligan { .. } | Stage::Playing) {
                    return Err(ErrorCode::NotPlaying);
                }
                self.emit(&mut out, Event::GameAbandoned)?;
                self.finish(&mut out)?;
            }
            Command::MagicTech(command) => self.decide_own(actor, command, &mut out)?,
            // Another game's command.
            _ => return Err(ErrorCode::BadMessage),
        }
        Ok(out)
    }

    // ----- The shell's commands ------------------------------------------------------------

    fn join(
        &mut self,
        name: String,
        entropy: String,
        out: &mut Vec<Event>,
    ) -> Result<(), ErrorCode> {
        if self.stage != Stage::Lobby {
            return Err(ErrorCode::GameStarted);
        }
        let name = check_seat_text(&name, &entropy)?;
        if self.seated.len() >= usize::from(self.seats) || self.next_player == PlayerId::MAX {
            return Err(ErrorCode::TableFull);
        }
        if self
            .seated
            .iter()
            .any(|s| s.name.to_lowercase() == name.to_lowercase())
        {
            return Err(ErrorCode::NameTaken);
        }
        if self
            .seated
            .iter()
            .any(|s| text::names_confusable(&s.name, &name))
        {
            return Err(ErrorCode::ConfusableName);
        }
        let player = self.next_player;
        self.emit(
            out,
            Event::PlayerJoined {
                player,
                name,
                entropy,
                deck: None,
            },
        )
    }

    fn start(
        &mut self,
        actor: Actor,
        first_player: Option<PlayerId>,
        seating_mode: SeatingMode,
        order: Vec<PlayerId>,
        out: &mut Vec<Event>,
    ) -> Result<(), ErrorCode> {
        require_host(actor)?;
        if self.stage != Stage::Lobby {
            return Err(ErrorCode::GameStarted);
        }
        if self.seated.len() < 2 {
            return Err(ErrorCode::NotEnoughPlayers);
        }
        if self.board.sides.iter().any(|s| s.deck.is_none()) {
            return Err(ErrorCode::NoDeckSize);
        }
        let joined: Vec<PlayerId> = self.seated.iter().map(|s| s.player).collect();
        check_seating_order(seating_mode, &order, &joined)?;
        if let Some(first) = first_player
            && !joined.contains(&first)
        {
            return Err(ErrorCode::UnknownPlayer);
        }
        let secret = self.secret.ok_or(ErrorCode::BadMessage)?;
        // The first player: chosen by the host, first of an arranged order, or drawn by the
        // table's verifiable dice over the join order (the same draw as Grand Melee's).
        let first = match (first_player, seating_mode) {
            (Some(first), _) => first,
            (None, SeatingMode::Arranged) => *order.first().ok_or(ErrorCode::BadSeating)?,
            (None, _) => {
                let entropy = entropy_digest(self.seated.iter().map(|s| s.entropy.as_str()));
                joined[Dice::new(secret, entropy).first_seat(joined.len())]
            }
        };
        let mut seating = vec![first];
        seating.extend(joined.iter().copied().filter(|p| *p != first));
        self.emit(
            out,
            Event::GameStarted {
                seating,
                first_player: first,
                turn_holders: vec![first],
                commitment: secret.commitment(),
                first_player_chosen: first_player.is_some(),
                first_decided_by: None,
                bonuses: Vec::new(),
                seating_mode,
            },
        )
    }

    fn keep(
        &mut self,
        player: PlayerId,
        reason: KeepReason,
        out: &mut Vec<Event>,
    ) -> Result<(), ErrorCode> {
        let hand_size = self.side(player).map_or(0, |s| s.hand);
        self.emit(
            out,
            Event::Kept {
                player,
                hand_size,
                reason,
            },
        )?;
        if self.stage == Stage::Playing {
            let first = self.first_player.ok_or(ErrorCode::BadMessage)?;
            self.begin_turn(first, out)?;
        }
        Ok(())
    }

    fn rule(
        &mut self,
        actor: Actor,
        ruling: Ruling,
        out: &mut Vec<Event>,
    ) -> Result<(), ErrorCode> {
        require_host(actor)?;
        match ruling {
            Ruling::Keep { player } => {
                self.expect_decider(player)?;
                self.keep(player, KeepReason::Ruling, out)
            }
            Ruling::Eliminate { players } => {
                if self.stage != Stage::Playing {
                    return Err(ErrorCode::NotPlaying);
                }
                if players.is_empty() {
                    return Err(ErrorCode::NoPlayers);
                }
                let mut seen = Vec::new();
                for player in &players {
                    if self.seat_of(*player).is_none() {
                        return Err(ErrorCode::UnknownPlayer);
                    }
                    if !self.is_alive(*player) {
                        return Err(ErrorCode::TargetEliminated);
                    }
                    if seen.contains(player) {
                        return Err(ErrorCode::DuplicatePlayer);
                    }
                    seen.push(*player);
                }
                self.eliminate(players, EliminationCause::Ruling, out)
            }
            Ruling::EndTurn { player } => {
                self.expect_running(player)?;
                self.end_turn(player, TurnEndReason::Ruling, out)
            }
            // Life, poison and extra turns are not Magic Tech's.
            _ => Err(ErrorCode::BadMessage),
        }
    }

    // ----- Turns, the end --------------------------------------------------------------------

    /// `player` begins his turn: untap, draw (one on the first player's first turn, two after),
    /// then his upkeep, where he acts.
    fn begin_turn(&mut self, player: PlayerId, out: &mut Vec<Event>) -> Result<(), ErrorCode> {
        let turn = turn_label(self.board.turn_number.saturating_add(1));
        self.emit(out, Event::TurnBegan { turn, player })?;
        for phase in [MtPhase::Untap, MtPhase::Draw] {
            self.emit(out, Event::MagicTechPhaseBegan { player, phase })?;
        }
        let count = self.draws_this_turn();
        self.draw(player, count, out)?;
        if self.stage == Stage::Playing {
            let phase = MtPhase::Upkeep;
            self.emit(out, Event::MagicTechPhaseBegan { player, phase })?;
        }
        Ok(())
    }

    /// Ends `player`'s turn (a mission waiting for blocks ends unresolved), with the end phase,
    /// and begins the other player's.
    fn end_turn(
        &mut self,
        player: PlayerId,
        reason: TurnEndReason,
        out: &mut Vec<Event>,
    ) -> Result<(), ErrorCode> {
        if let Some(mission) = self.board.mission.clone() {
            let tapped = mission
                .attackers
                .iter()
                .copied()
                .filter(|a| self.card(*a).is_some())
                .collect();
            self.emit(out, Event::MagicTechMissionEnded { tapped })?;
        }
        let phase = MtPhase::End;
        self.emit(out, Event::MagicTechPhaseBegan { player, phase })?;
        self.emit(
            out,
            Event::TurnEnded {
                turn: turn_label(self.board.turn_number),
                player,
                reason,
            },
        )?;
        let next = self.opponent(player).ok_or(ErrorCode::BadMessage)?;
        self.begin_turn(next, out)
    }

    /// `player` draws `count`: what his stockpile holds, and if it holds fewer he has run out.
    fn draw(&mut self, player: PlayerId, count: u8, out: &mut Vec<Event>) -> Result<(), ErrorCode> {
        let have = self.side(player).map_or(0, |s| s.stockpile);
        let drawn = count.min(have);
        if drawn > 0 {
            self.emit(
                out,
                Event::MagicTechDrew {
                    player,
                    count: drawn,
                },
            )?;
        }
        if count > have {
            self.ran_out(player, out)?;
        }
        Ok(())
    }

    fn ran_out(&mut self, player: PlayerId, out: &mut Vec<Event>) -> Result<(), ErrorCode> {
        self.emit(out, Event::MagicTechRanOut { player })?;
        self.finish(out)
    }

    fn eliminate(
        &mut self,
        players: Vec<PlayerId>,
        cause: EliminationCause,
        out: &mut Vec<Event>,
    ) -> Result<(), ErrorCode> {
        self.emit(out, Event::Eliminated { players, cause })?;
        self.finish(out)
    }

    /// The game is over: the standings, and the dice secret.
    fn finish(&mut self, out: &mut Vec<Event>) -> Result<(), ErrorCode> {
        let standings = self.final_standings();
        self.emit(out, Event::GameOver { standings })?;
        if let Some(secret) = self.secret {
            let secret = secret.to_hex();
            self.emit(out, Event::DiceRevealed { secret })?;
        }
        Ok(())
    }

    // ----- Who may act -----------------------------------------------------------------------

    fn lobby_player(&self, actor: Actor) -> Result<PlayerId, ErrorCode> {
        let player = seated_player(actor)?;
        if self.stage != Stage::Lobby {
            return Err(ErrorCode::GameStarted);
        }
        self.seat_of(player).ok_or(ErrorCode::UnknownPlayer)?;
        Ok(player)
    }

    fn decider(&self, actor: Actor) -> Result<PlayerId, ErrorCode> {
        let player = seated_player(actor)?;
        self.expect_decider(player)?;
        Ok(player)
    }

    fn expect_decider(&self, player: PlayerId) -> Result<(), ErrorCode> {
        if !matches!(self.stage, Stage::Mulligan { .. }) {
            return Err(ErrorCode::NotMulliganing);
        }
        if self.deciders().first() != Some(&player) {
            return Err(ErrorCode::NotYourDecision);
        }
        Ok(())
    }

    /// A seated player still in a game in play.
    fn living_player(&self, actor: Actor) -> Result<PlayerId, ErrorCode> {
        let player = seated_player(actor)?;
        if self.stage != Stage::Playing {
            return Err(ErrorCode::NotPlaying);
        }
        self.seat_of(player).ok_or(ErrorCode::UnknownPlayer)?;
        if !self.is_alive(player) {
            return Err(ErrorCode::Eliminated);
        }
        Ok(player)
    }

    /// The player taking the turn.
    fn active_player(&self, actor: Actor) -> Result<PlayerId, ErrorCode> {
        let player = self.living_player(actor)?;
        self.expect_active(player)?;
        Ok(player)
    }

    fn expect_active(&self, player: PlayerId) -> Result<(), ErrorCode> {
        if self.stage != Stage::Playing {
            return Err(ErrorCode::NotPlaying);
        }
        if self.board.active != Some(player) {
            return Err(ErrorCode::NotYourTurn);
        }
        Ok(())
    }

    /// The player a ruling (or the turn clock) names is taking the turn: as at a Grand Melee
    /// table, a player not seated is `unknown_player`, one out of the game `target_eliminated`,
    /// one not taking it `no_running_turn` (`not_your_turn` is for the one who asks).
    fn expect_running(&self, player: PlayerId) -> Result<(), ErrorCode> {
        if self.stage != Stage::Playing {
            return Err(ErrorCode::NotPlaying);
        }
        if self.seat_of(player).is_none() {
            return Err(ErrorCode::UnknownPlayer);
        }
        if !self.is_alive(player) {
            return Err(ErrorCode::TargetEliminated);
        }
        if self.board.active != Some(player) {
            return Err(ErrorCode::NoRunningTurn);
        }
        Ok(())
    }

    fn in_phase(&self, phase: MtPhase) -> Result<(), ErrorCode> {
        if self.board.phase != Some(phase) {
            return Err(ErrorCode::WrongPhase);
        }
        Ok(())
    }

    fn no_open_mission(&self) -> Result<(), ErrorCode> {
        if self.board.mission.is_some() {
            return Err(ErrorCode::NoMission);
        }
        Ok(())
    }

    /// One of `player`'s cards in play.
    fn own_card(
        &self,
        player: PlayerId,
        card: CardId,
    ) -> Result<&crate::magic_tech_types::CardView, ErrorCode> {
        let view = self.card(card).ok_or(ErrorCode::UnknownCard)?;
        if view.owner != player {
            return Err(ErrorCode::NotYourCard);
        }
        Ok(view)
    }

    /// One of `player`'s face-up creatures.
    fn own_creature(
        &self,
        player: PlayerId,
        card: CardId,
    ) -> Result<(&crate::magic_tech_types::CardView, &CardFace), ErrorCode> {
        let view = self.own_card(player, card)?;
        match &view.face {
            Some(face) if face.card_type == CardType::Creature => Ok((view, face)),
            _ => Err(ErrorCode::BadCard),
        }
    }

    // ----- Magic Tech's own requests ---------------------------------------------------------

    fn decide_own(
        &mut self,
        actor: Actor,
        command: MagicTechCommand,
        out: &mut Vec<Event>,
    ) -> Result<(), ErrorCode> {
        use MagicTechCommand as C;
        if let C::DeclareDeck { size } = command {
            let player = self.lobby_player(actor)?;
            if !(STARTING_HAND..=MAX_DECK).contains(&size) {
                return Err(ErrorCode::BadAmount);
            }
            return self.emit(out, Event::MagicTechDeckDeclared { player, size });
        }
        if let C::Rule { correction } = command {
            require_host(actor)?;
            if self.stage != Stage::Playing {
                return Err(ErrorCode::NotPlaying);
            }
            self.check_correction(&correction)?;
            self.emit(
                out,
                Event::MagicTechCorrected {
                    correction: correction.clone(),
                    by: None,
                },
            )?;
            return self.destroy_if_lethal(&correction, out);
        }
        let player = self.living_player(actor)?;
        match command {
            C::DeclareDeck { .. } | C::Rule { .. } => Err(ErrorCode::BadMessage),
            C::NextPhase => {
                self.expect_active(player)?;
                self.no_open_mission()?;
                // The end phase passes the turn at once.
                match self.board.phase.and_then(MtPhase::next) {
                    Some(phase) if phase != MtPhase::End => {
                        self.emit(out, Event::MagicTechPhaseBegan { player, phase })
                    }
                    _ => self.end_turn(player, TurnEndReason::Finished, out),
                }
            }
            C::Deploy { land } => self.deploy(player, land, out),
            C::Tap { card, mana } => {
                let view = self.own_card(player, card)?;
                let Some(face) = &view.face else {
                    return Err(ErrorCode::BadCard);
                };
                if view.tapped {
                    return Err(ErrorCode::BadCard);
                }
                if mana > MAX_TAP_MANA || (face.basic.is_some() && mana > 1) {
                    return Err(ErrorCode::BadAmount);
                }
                let unspent = self.side(player).map_or(0, |s| s.mana);
                if unspent.saturating_add(u16::from(mana)) > MAX_UNSPENT_MANA {
                    return Err(ErrorCode::BadAmount);
                }
                self.emit(out, Event::MagicTechTapped { card, mana })
            }
            C::Pay { card, amount } => {
                if amount == 0 || amount > MAX_AMOUNT {
                    return Err(ErrorCode::BadAmount);
                }
                if let Some(card) = card {
                    self.expect_active(player)?;
                    self.in_phase(MtPhase::Deploy)?;
                    let view = self.own_card(player, card)?;
                    if view.face.is_some() {
                        return Err(ErrorCode::BadCard);
                    }
                    if u16::from(view.counters) + amount > u16::from(MAX_COUNTERS) {
                        return Err(ErrorCode::BadAmount);
                    }
                }
                if self.side(player).map_or(0, |s| s.mana) < amount {
                    return Err(ErrorCode::NotEnoughMana);
                }
                self.emit(
                    out,
                    Event::MagicTechPaid {
                        player,
                        card,
                        amount,
                    },
                )
            }
            C::Reveal { card, face } => self.reveal(player, card, face, out),
            C::Relocate { card, area } => self.relocate(player, card, area, out),
            C::Mission { attackers, target } => self.mission(player, attackers, target, out),
            C::Block { blocks } => self.block(player, blocks, out),
            C::Damage { target, amount } => {
                if amount == 0 || amount > MAX_AMOUNT {
                    return Err(ErrorCode::BadAmount);
                }
                match target {
                    Target::Card { card } => {
                        self.card(card).ok_or(ErrorCode::UnknownCard)?;
                    }
                    Target::Stockpile { player } => {
                        self.side(player).ok_or(ErrorCode::UnknownPlayer)?;
                    }
                }
                self.deal(target, amount, None, out)
            }
            C::Heal { card, amount } => {
                let view = self.card(card).ok_or(ErrorCode::UnknownCard)?;
                if view.face.is_none() {
                    return Err(ErrorCode::BadCard);
                }
                if amount == 0 || amount > view.damage {
                    return Err(ErrorCode::BadAmount);
                }
                self.emit(out, Event::MagicTechHealed { card, amount })
            }
            C::Regenerate { card } => {
                self.expect_active(player)?;
                self.in_phase(MtPhase::Upkeep)?;
                let (view, face) = self.own_creature(player, card)?;
                let Some(cost) = &face.keywords.regeneration else {
                    return Err(ErrorCode::BadCard);
                };
                if view.damage == 0 {
                    return Err(ErrorCode::BadAmount);
                }
                let amount = cost.to_pay(&self.basics(player));
                if self.side(player).map_or(0, |s| s.mana) < amount {
                    return Err(ErrorCode::NotEnoughMana);
                }
                if amount > 0 {
                    let card = None;
                    self.emit(
                        out,
                        Event::MagicTechPaid {
                            player,
                            card,
                            amount,
                        },
                    )?;
                }
                self.emit(out, Event::MagicTechHealed { card, amount: 1 })
            }
            C::Draw { count } => {
                if count == 0 {
                    return Err(ErrorCode::BadAmount);
                }
                self.draw(player, count, out)
            }
            C::Life { delta } => self.life(player, delta, out),
            C::LeavePlay { card, to } => {
                self.own_card(player, card)?;
                if to == Zone::Play {
                    return Err(ErrorCode::BadCard);
                }
                self.emit(out, Event::MagicTechLeftPlay { card, to })
            }
            C::Propose { correction } => {
                if self.board.proposal.is_some() {
                    return Err(ErrorCode::NoProposal);
                }
                self.check_correction(&correction)?;
                self.emit(out, Event::MagicTechProposed { player, correction })
            }
            C::Answer { accept } => {
                let proposal = self.board.proposal.clone().ok_or(ErrorCode::NoProposal)?;
                match (proposal.player == player, accept) {
                    (true, true) => Err(ErrorCode::NoProposal),
                    (_, false) => self.emit(out, Event::MagicTechDeclined { player }),
                    (false, true) => {
                        // The board may have moved since: the correction must still fit.
                        self.check_correction(&proposal.correction)?;
                        self.emit(
                            out,
                            Event::MagicTechCorrected {
                                correction: proposal.correction.clone(),
                                by: Some(player),
                            },
                        )?;
                        self.destroy_if_lethal(&proposal.correction, out)
                    }
                }
            }
        }
    }

    fn deploy(
        &mut self,
        player: PlayerId,
        land: Option<CardFace>,
        out: &mut Vec<Event>,
    ) -> Result<(), ErrorCode> {
        self.expect_active(player)?;
        self.in_phase(MtPhase::Deploy)?;
        if self.side(player).map_or(0, |s| s.hand) == 0 {
            return Err(ErrorCode::BadCard);
        }
        let mut land = land;
        match &mut land {
            Some(face) => {
                check_face(face)?;
                if face.card_type != CardType::Land {
                    return Err(ErrorCode::BadCard);
                }
                if self.board.lands >= crate::magic_tech_types::LANDS_PER_TURN {
                    return Err(ErrorCode::LimitReached);
                }
            }
            None => {
                if self.board.deployed >= self.deployments_allowed() {
                    return Err(ErrorCode::LimitReached);
                }
            }
        }
        let card = self.board.next_card;
        if card > MAX_CARD_NUMBER {
            return Err(ErrorCode::CardNumbersUsedUp);
        }
        self.emit(out, Event::MagicTechDeployed { player, card, land })
    }

    fn reveal(
        &mut self,
        player: PlayerId,
        card: CardId,
        mut face: CardFace,
        out: &mut Vec<Event>,
    ) -> Result<(), ErrorCode> {
        let view = self.own_card(player, card)?;
        if view.face.is_some() {
            return Err(ErrorCode::BadCard);
        }
        check_face(&mut face)?;
        match face.card_type {
            CardType::Land => return Err(ErrorCode::BadCard),
            CardType::Instant => {}
            CardType::Sorcery => self.expect_active(player)?,
            _ => {
                self.expect_active(player)?;
                self.in_phase(MtPhase::Deploy)?;
            }
        }
        let cost = face.cost.to_pay(&self.basics(player));
        if u16::from(view.counters) < cost {
            return Err(ErrorCode::NotEnoughMana);
        }
        self.emit(out, Event::MagicTechRevealed { card, face, cost })
    }

    fn relocate(
        &mut self,
        player: PlayerId,
        card: CardId,
        area: Area,
        out: &mut Vec<Event>,
    ) -> Result<(), ErrorCode> {
        self.expect_active(player)?;
        self.in_phase(MtPhase::Deploy)?;
        let (view, face) = self.own_creature(player, card)?;
        if view.fresh && !face.keywords.haste {
            return Err(ErrorCode::BadCard);
        }
        if area == Area::Deploy || area == view.area {
            return Err(ErrorCode::BadCard);
        }
        if let Area::Guard {
            card: Some(guarded),
        } = area
        {
            self.own_card(player, guarded)?;
            if guarded == card {
                return Err(ErrorCode::BadCard);
            }
        }
        self.emit(out, Event::MagicTechRelocated { card, area })
    }

    fn mission(
        &mut self,
        player: PlayerId,
        attackers: Vec<CardId>,
        target: Target,
        out: &mut Vec<Event>,
    ) -> Result<(), ErrorCode> {
        self.expect_active(player)?;
        self.in_phase(MtPhase::Missions)?;
        self.no_open_mission()?;
        if attackers.is_empty() {
            return Err(ErrorCode::BadCard);
        }
        for (k, attacker) in attackers.iter().enumerate() {
            if attackers[..k].contains(attacker) {
                return Err(ErrorCode::BadCard);
            }
            let (view, _) = self.own_creature(player, *attacker)?;
            if view.tapped || view.area == Area::Deploy {
                return Err(ErrorCode::BadCard);
            }
        }
        let opponent = self.opponent(player).ok_or(ErrorCode::BadMessage)?;
        match target {
            Target::Card { card } => {
                let view = self.card(card).ok_or(ErrorCode::UnknownCard)?;
                if view.owner != opponent {
                    return Err(ErrorCode::BadCard);
                }
                // An untapped creature on patrol cannot be attacked; a tapped one can.
                if view.area == Area::Patrol && !view.tapped {
                    return Err(ErrorCode::BadCard);
                }
            }
            Target::Stockpile { player } if player != opponent => {
                return Err(ErrorCode::UnknownPlayer);
            }
            Target::Stockpile { .. } => {}
        }
        self.emit(
            out,
            Event::MagicTechMissionBegan {
                player,
                attackers,
                target,
            },
        )
    }

    /// Whether `blocker` may block `attacker` in the mission against `target`, as declared.
    pub fn may_block(&self, blocker: CardId, attacker: CardId) -> bool {
        let (Some(mission), Some(b), Some(a)) =
            (&self.board.mission, self.card(blocker), self.card(attacker))
        else {
            return false;
        };
        let (Some(bf), Some(af)) = (&b.face, &a.face) else {
            return false;
        };
        if bf.card_type != CardType::Creature
            || b.tapped
            || b.owner == mission.player
            || !mission.attackers.contains(&attacker)
        {
            return false;
        }
        match b.area {
            Area::Deploy => false,
            // A guard blocks any attacker of its card, whatever the evasion, and only those.
            Area::Guard { card } => match (card, mission.target) {
                (None, Target::Stockpile { .. }) => true,
                (Some(guarded), Target::Card { card }) => guarded == card,
                _ => false,
            },
            // A patrol blocks what it could normally block.
            Area::Patrol => {
                let (ak, bk) = (&af.keywords, &bf.keywords);
                let defender_basics = self.basics(b.owner);
                !(ak.shadow != bk.shadow
                    || (ak.flying && !bk.flying && !bk.reach)
                    || ak.landwalk.iter().any(|c| defender_basics.contains(c))
                    || bf.colours().iter().any(|c| ak.protection.contains(c)))
            }
        }
    }

    fn block(
        &mut self,
        player: PlayerId,
        blocks: Vec<Block>,
        out: &mut Vec<Event>,
    ) -> Result<(), ErrorCode> {
        let mission = self.board.mission.clone().ok_or(ErrorCode::NoMission)?;
        if mission.player == player {
            return Err(ErrorCode::NoMission);
        }
        for (k, block) in blocks.iter().enumerate() {
            self.card(block.blocker).ok_or(ErrorCode::UnknownCard)?;
            if blocks[..k].iter().any(|b| b.blocker == block.blocker)
                || !self.may_block(block.blocker, block.attacker)
            {
                return Err(ErrorCode::IllegalBlock);
            }
        }
        self.emit(
            out,
            Event::MagicTechBlocked {
                blocks: blocks.clone(),
            },
        )?;
        // First strike, then the others; a creature destroyed by first strike deals nothing.
        for first_strike in [true, false] {
            let hits =
                self.combat_damage(&mission.attackers, mission.target, &blocks, first_strike);
            for (target, amount, armour) in hits {
                let still_there = match target {
                    Target::Card { card } => self.card(card).is_some(),
                    Target::Stockpile { .. } => true,
                };
                if amount > 0 && still_there && self.stage == Stage::Playing {
                    self.deal(target, amount, Some(armour), out)?;
                }
            }
            if self.stage != Stage::Playing {
                return Ok(());
            }
        }
        let mut tapped: Vec<CardId> = mission.attackers.clone();
        tapped.extend(blocks.iter().map(|b| b.blocker));
        tapped.retain(|c| self.card(*c).is_some());
        self.emit(out, Event::MagicTechMissionEnded { tapped })
    }

    /// The combat damage of one step (first strike or not): each hit's target, amount, and the
    /// armour it meets (flanking and rampage change it for the mission). Hits on one target
    /// in one step are added up: they are dealt at once.
    fn combat_damage(
        &self,
        attackers: &[CardId],
        target: Target,
        blocks: &[Block],
        first_strike: bool,
    ) -> Vec<(Target, u16, u16)> {
        let mut hits: Vec<(Target, u16, u16)> = Vec::new();
        let hit =
            |hits: &mut Vec<(Target, u16, u16)>, t: Target, amount: u16, armour: u16| match hits
                .iter_mut()
                .find(|(h, _, _)| *h == t)
            {
                Some(entry) => entry.1 = entry.1.saturating_add(amount),
                None => hits.push((t, amount, armour)),
            };
        let face = |card: CardId| self.card(card).and_then(|c| c.face.as_ref());
        let target_armour = match target {
            Target::Card { card } => self
                .card(card)
                .map_or(0, |c| c.face.as_ref().map_or(0, CardFace::armour)),
            Target::Stockpile { .. } => 0,
        };
        for &attacker in attackers {
            let Some(af) = face(attacker) else { continue };
            let blockers: Vec<CardId> = blocks
                .iter()
                .filter(|b| b.attacker == attacker && self.card(b.blocker).is_some())
                .map(|b| b.blocker)
                .collect();
            let declared = blocks.iter().filter(|b| b.attacker == attacker).count();
            let rampage = u16::from(af.keywords.rampage)
                * u16::try_from(declared.saturating_sub(1)).unwrap_or(0);
            let attacker_armour = af.armour().saturating_add(rampage);
            if af.keywords.first_strike == first_strike {
                let mut left = af.attack().saturating_add(rampage);
                if declared == 0 {
                    hit(&mut hits, target, left, target_armour);
                }
                for (k, &blocker) in blockers.iter().enumerate() {
                    let (Some(bv), Some(bf)) = (self.card(blocker), face(blocker)) else {
                        continue;
                    };
                    let armour = flanked(af, bf, bf.armour());
                    let lethal = armour + bf.structure().saturating_sub(bv.damage).max(1);
                    let last = k + 1 == blockers.len();
                    let give = if last && !af.keywords.trample {
                        left
                    } else {
                        left.min(lethal)
                    };
                    hit(&mut hits, Target::Card { card: blocker }, give, armour);
                    left -= give;
                }
                if af.keywords.trample && declared > 0 && left > 0 {
                    hit(&mut hits, target, left, target_armour);
                }
            }
            for &blocker in &blockers {
                let Some(bf) = face(blocker) else { continue };
                if bf.keywords.first_strike == first_strike {
                    let power = flanked(af, bf, bf.attack());
                    hit(
                        &mut hits,
                        Target::Card { card: attacker },
                        power,
                        attacker_armour,
                    );
                }
            }
        }
        hits
    }

    /// Deals `amount` to `target` (meeting `armour`, or the card's own): structure counters on
    /// a face-up card (destroyed at its structure), counters off a face-down one (every two
    /// points one; none: buried), cards off a stockpile (too few: its owner runs out).
    fn deal(
        &mut self,
        target: Target,
        amount: u16,
        armour: Option<u16>,
        out: &mut Vec<Event>,
    ) -> Result<(), ErrorCode> {
        match target {
            Target::Card { card } => {
                let view = self.card(card).ok_or(ErrorCode::UnknownCard)?.clone();
                match &view.face {
                    Some(face) => {
                        let effect = amount.saturating_sub(armour.unwrap_or_else(|| face.armour()));
                        self.emit(
                            out,
                            Event::MagicTechDamaged {
                                target,
                                amount,
                                effect,
                            },
                        )?;
                        if effect > 0 && view.damage.saturating_add(effect) >= face.structure() {
                            self.emit(
                                out,
                                Event::MagicTechDestroyed {
                                    card,
                                    buried: false,
                                },
                            )?;
                        }
                    }
                    None if view.counters == 0 => {
                        let effect = 0;
                        self.emit(
                            out,
                            Event::MagicTechDamaged {
                                target,
                                amount,
                                effect,
                            },
                        )?;
                        self.emit(out, Event::MagicTechDestroyed { card, buried: true })?;
                    }
                    None => {
                        let effect = (amount / 2).min(u16::from(view.counters));
                        self.emit(
                            out,
                            Event::MagicTechDamaged {
                                target,
                                amount,
                                effect,
                            },
                        )?;
                    }
                }
                Ok(())
            }
            Target::Stockpile { player } => {
                let have = self.side(player).map_or(0, |s| u16::from(s.stockpile));
                let effect = amount.min(have);
                self.emit(
                    out,
                    Event::MagicTechDamaged {
                        target,
                        amount,
                        effect,
                    },
                )?;
                if amount > have {
                    self.ran_out(player, out)?;
                }
                Ok(())
            }
        }
    }

    fn life(
        &mut self,
        player: PlayerId,
        delta: i32,
        out: &mut Vec<Event>,
    ) -> Result<(), ErrorCode> {
        if delta.unsigned_abs() > MAX_LIFE_CHANGE {
            return Err(ErrorCode::BadAmount);
        }
        let count = u8::try_from(delta.unsigned_abs()).map_err(|_| ErrorCode::BadAmount)?;
        let side = self.side(player).ok_or(ErrorCode::UnknownPlayer)?.clone();
        if delta == 0 {
            return Err(ErrorCode::BadAmount);
        }
        if delta > 0 {
            // Gain life: the player puts back as many as he chooses, at most his scrapheap.
            if count > side.scrapheap {
                return Err(ErrorCode::BadAmount);
            }
            return self.emit(out, Event::MagicTechRecovered { player, count });
        }
        let scrapped = count.min(side.stockpile);
        if scrapped > 0 {
            self.emit(
                out,
                Event::MagicTechScrapped {
                    player,
                    count: scrapped,
                },
            )?;
        }
        if count > side.stockpile {
            self.ran_out(player, out)?;
        }
        Ok(())
    }

    pub(super) fn check_correction(&self, correction: &Correction) -> Result<(), ErrorCode> {
        let face_of = |card: CardId| {
            self.card(card)
                .map(|c| c.face.is_some())
                .ok_or(ErrorCode::UnknownCard)
        };
        match correction {
            Correction::Counters { card, .. } => {
                if face_of(*card)? {
                    return Err(ErrorCode::BadCard);
                }
            }
            Correction::Damage { card, damage } => {
                if !face_of(*card)? {
                    return Err(ErrorCode::BadCard);
                }
                if *damage > MAX_AMOUNT {
                    return Err(ErrorCode::BadAmount);
                }
            }
            Correction::Tapped { card, .. } => {
                face_of(*card)?;
            }
            Correction::Mana { player, mana } => {
                self.side(*player).ok_or(ErrorCode::UnknownPlayer)?;
                if *mana > MAX_UNSPENT_MANA {
                    return Err(ErrorCode::BadAmount);
                }
            }
            Correction::Move {
                player,
                from,
                to,
                count,
            } => {
                let side = self.side(*player).ok_or(ErrorCode::UnknownPlayer)?;
                let held = match from {
                    Zone::Stockpile => side.stockpile,
                    Zone::Hand => side.hand,
                    Zone::Scrapheap => side.scrapheap,
                    Zone::Play => return Err(ErrorCode::BadAmount),
                };
                if *to == Zone::Play || from == to || *count == 0 || *count > held {
                    return Err(ErrorCode::BadAmount);
                }
            }
        }
        Ok(())
    }

    /// After a damage correction: a card whose counters reach its structure is destroyed.
    fn destroy_if_lethal(
        &mut self,
        correction: &Correction,
        out: &mut Vec<Event>,
    ) -> Result<(), ErrorCode> {
        if let Correction::Damage { card, damage } = *correction
            && damage > 0
            && let Some(face) = self.card(card).and_then(|c| c.face.as_ref())
            && damage >= face.structure()
        {
            self.emit(
                out,
                Event::MagicTechDestroyed {
                    card,
                    buried: false,
                },
            )?;
        }
        Ok(())
    }
}

/// A value (a blocker's attack or armour) as flanking changes it: a blocker without flanking
/// blocking a flanking attacker has one less.
fn flanked(attacker: &CardFace, blocker: &CardFace, value: u16) -> u16 {
    if attacker.keywords.flanking && !blocker.keywords.flanking {
        value.saturating_sub(1)
    } else {
        value
    }
}

fn require_host(actor: Actor) -> Result<(), ErrorCode> {
    match actor {
        Actor::Host => Ok(()),
        Actor::Player(_) => Err(ErrorCode::NotHost),
    }
}

/// A declaration the server can count with, its name normalised: a name by the rules of every
/// other name ([`text::normalize_card_name`]: 1–64 characters, no control, format, separator or
/// private-use character, something visible); a land costs nothing and has no power or
/// toughness; only a land is basic; `landwalk` and `protection` name each colour at most once;
/// a cost and a regeneration cost have at most [`MAX_COLOURED_SYMBOLS`] coloured symbols; no
/// keyword the server does not know. So a face has a bounded size: a snapshot of a table full
/// of the largest faces stays far below the 1 MiB a client accepts.
fn check_face(face: &mut CardFace) -> Result<(), ErrorCode> {
    face.name = text::normalize_card_name(&face.name).map_err(|_| ErrorCode::BadCard)?;
    let land = face.card_type == CardType::Land;
    if land && (face.cost.converted() > 0 || face.power > 0 || face.toughness > 0) {
        return Err(ErrorCode::BadCard);
    }
    if !land && face.basic.is_some() {
        return Err(ErrorCode::BadCard);
    }
    let keywords = &face.keywords;
    let once_each = |colours: &[Colour]| {
        colours
            .iter()
            .enumerate()
            .all(|(i, c)| !colours[..i].contains(c))
    };
    let symbols_within = |cost: &ManaCost| cost.coloured.len() <= MAX_COLOURED_SYMBOLS;
    if !keywords.unknown.0.is_empty()
        || !once_each(&keywords.landwalk)
        || !once_each(&keywords.protection)
        || !symbols_within(&face.cost)
        || !keywords.regeneration.as_ref().is_none_or(symbols_within)
    {
        return Err(ErrorCode::BadCard);
    }
    Ok(())
}

/// The player behind a request: the host's own authority is not a player's.
fn seated_player(actor: Actor) -> Result<PlayerId, ErrorCode> {
    match actor {
        Actor::Player(player) => Ok(player),
        Actor::Host => Err(ErrorCode::NotAPlayer),
    }
}

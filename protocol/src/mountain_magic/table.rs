//! Mountain Magic behind the game seam: [`MountainMagic`] is a table of one seat whose game is
//! a [`Climb`]. The shell's commands apply as they do to a solitaire: one player joins (and may
//! leave) in the lobby; the host's `start` deals the climb from the table's dice (the default
//! deck drawn by the dice, then the deal: `docs/RULES.md`, "Mountain Magic"); there are no
//! mulligans and no turn clocks; a conceding or ruled-out player ends the climb; an abandoned
//! table ends as it stands. When the climb is over, `game_over` carries the one standing and
//! `dice_revealed` lets anyone deal the mountain again.

use super::day::Day;
use super::pool::{Deck, Pool};
use super::{Climb, Deal};
use crate::command::{Actor, Command};
use crate::dice::{Dice, DiceSecret, entropy_digest};
use crate::error::{ApplyError, ErrorCode};
use crate::event::Event;
use crate::game::{Game, GameKind};
use crate::league::{MemberId, SeatDeck};
use crate::mirror::stage_name;
use crate::mountain_magic_types::{MmPhase, MountainError, MountainView};
use crate::shell::{SessionFacts, Stage, check_seat_text};
use crate::types::{
    EliminationCause, PlayerId, PlayerStatus, Ruling, SeatingMode, StageName, Standing, TableId,
    TurnId,
};
use crate::view::{PlayerView, Settings, TableView};

/// The one seat of a climb.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seat {
    player: PlayerId,
    name: String,
    entropy: String,
    /// A league climb's member (his number; a climb has no deck power).
    deck: Option<SeatDeck>,
}

/// A Mountain Magic table: its lobby and its climb, folded from its events.
#[derive(Debug, Clone)]
pub struct MountainMagic {
    facts: SessionFacts,
    stage: Stage,
    /// The dice secret (`None` in a client's mirror, which never decides).
    secret: Option<DiceSecret>,
    seat: Option<Seat>,
    next_player: PlayerId,
    commitment: String,
    dice_secret: Option<String>,
    /// Whether the climber conceded or was ruled out.
    out: bool,
    standings: Vec<Standing>,
    /// The climber's own deck (`Settings.mountain_magic.deck`), checked at creation; `None`:
    /// the default deck the dice draw.
    deck: Option<Deck>,
    /// Today's mountain: the table's secret is the day's, the climber's entropy is not mixed
    /// in (every table of the day deals the same mountain), and the secret is not revealed
    /// when the climb ends (the day's standings reveal it once the day is over).
    day: bool,
    /// A league climb: the seat is for a member of the league.
    league: bool,
    climb: Climb,
}

/// A refusal of the climb's, as the wire names it.
fn code(error: MountainError) -> ErrorCode {
    match error {
        MountainError::NotNow => ErrorCode::WrongPhase,
        MountainError::IllegalPlacement => ErrorCode::IllegalPlacement,
        MountainError::BadPath => ErrorCode::BadPath,
        MountainError::BadMana => ErrorCode::BadMana,
        MountainError::BadCard => ErrorCode::BadCard,
        MountainError::BadTarget => ErrorCode::BadTarget,
    }
}

fn seated_player(actor: Actor) -> Result<PlayerId, ErrorCode> {
    match actor {
        Actor::Player(player) => Ok(player),
        Actor::Host => Err(ErrorCode::NotAPlayer),
    }
}

fn require_host(actor: Actor) -> Result<(), ErrorCode> {
    match actor {
        Actor::Host => Ok(()),
        Actor::Player(_) => Err(ErrorCode::NotHost),
    }
}

impl MountainMagic {
    /// The climb as it stands.
    pub fn climb(&self) -> &Climb {
        &self.climb
    }

    /// The climber, once seated.
    pub fn player(&self) -> Option<PlayerId> {
        self.seat.as_ref().map(|s| s.player)
    }

    /// The climb dealt face down from the dice — the table's secret and the climber's entropy
    /// (the same mixing as every other random outcome, PROTOCOL.md "Verifiable dice") — with
    /// the default deck the dice draw; `None` without the secret (a mirror, which never
    /// decides).
    fn dealt(&self, seat: &Seat) -> Option<Climb> {
        let secret = self.secret?;
        let entropy = if self.day {
            entropy_digest(std::iter::empty())
        } else {
            entropy_digest(std::iter::once(seat.entropy.as_str()))
        };
        let dice = Dice::new(secret, entropy);
        let pool = Pool::builtin();
        let deck = match &self.deck {
            Some(own) => own.clone(),
            None => Deck::default_from_dice(pool, &dice),
        };
        Some(Climb::new(Deal::from_dice(pool, &deck, &dice)))
    }

    /// Folds `event` and records it: the one way a decision changes the state.
    fn emit(&mut self, out: &mut Vec<Event>, event: Event) -> Result<(), ErrorCode> {
        self.fold(&event).map_err(|_| ErrorCode::BadMessage)?;
        out.push(event);
        Ok(())
    }

    fn decide(&mut self, actor: Actor, command: Command) -> Result<Vec<Event>, ErrorCode> {
        let mut out = Vec::new();
        match command {
            Command::Join {
                name,
                entropy,
                deck,
            } => {
                match (&deck, self.league) {
                    (None, true) => return Err(ErrorCode::LeagueSeat),
                    (Some(_), false) => return Err(ErrorCode::BadMessage),
                    _ => {}
                }
                // A climb counts the member, not a deck: no power, no last duel.
                let deck = deck.map(|d| SeatDeck {
                    member: d.member,
                    deck: String::new(),
                    power: 0,
                    last_duel: None,
                });
                if self.stage != Stage::Lobby {
                    return Err(ErrorCode::GameStarted);
                }
                let name = check_seat_text(&name, &entropy)?;
                if self.seat.is_some() || self.next_player == PlayerId::MAX {
                    return Err(ErrorCode::TableFull);
                }
                let player = self.next_player;
                self.emit(
                    &mut out,
                    Event::PlayerJoined {
                        player,
                        name,
                        entropy,
                        deck,
                    },
                )?;
            }
            Command::Leave => {
                let player = seated_player(actor)?;
                if self.stage != Stage::Lobby {
                    return Err(ErrorCode::GameStarted);
                }
                if self.player() != Some(player) {
                    return Err(ErrorCode::UnknownPlayer);
                }
                self.emit(&mut out, Event::PlayerLeft { player })?;
            }
            Command::Start {
                first_player,
                seating,
                order,
            } => self.start(actor, first_player, seating, &order, &mut out)?,
            Command::Mulligan | Command::Keep | Command::ExpireMulligan { .. } => {
                return Err(ErrorCode::NotMulliganing);
            }
            Command::ExpireTurn { .. } => return Err(ErrorCode::NoRunningTurn),
            Command::Concede => {
                let player = self.living_player(actor)?;
                self.emit(
                    &mut out,
                    Event::Eliminated {
                        players: vec![player],
                        cause: EliminationCause::Conceded,
                    },
                )?;
                self.finish(&mut out)?;
            }
            Command::Ruling(ruling) => self.rule(actor, ruling, &mut out)?,
            Command::Abandon => {
                require_host(actor)?;
                if self.stage != Stage::Playing {
                    return Err(ErrorCode::NotPlaying);
                }
                self.emit(&mut out, Event::GameAbandoned)?;
                self.finish(&mut out)?;
            }
            Command::MountainMagic(command) => {
                self.living_player(actor)?;
                let events = self.climb.handle(command).map_err(code)?;
                // The climb has folded them already; the table records them and ends the game
                // when the climb is over.
                out.extend(events);
                if self.climb.view().phase == MmPhase::Over {
                    self.finish(&mut out)?;
                }
            }
            // Another game's command.
            _ => return Err(ErrorCode::BadMessage),
        }
        Ok(out)
    }

    fn start(
        &mut self,
        actor: Actor,
        first_player: Option<PlayerId>,
        seating: SeatingMode,
        order: &[PlayerId],
        out: &mut Vec<Event>,
    ) -> Result<(), ErrorCode> {
        require_host(actor)?;
        if self.stage != Stage::Lobby {
            return Err(ErrorCode::GameStarted);
        }
        let player = self.player().ok_or(ErrorCode::NotEnoughPlayers)?;
        crate::shell::check_seating_order(seating, order, &[player])?;
        if first_player.is_some_and(|first| first != player) {
            return Err(ErrorCode::UnknownPlayer);
        }
        let secret = self.secret.ok_or(ErrorCode::BadMessage)?;
        self.emit(
            out,
            Event::GameStarted {
                seating: vec![player],
                first_player: player,
                turn_holders: vec![player],
                commitment: secret.commitment(),
                first_player_chosen: first_player.is_some(),
                first_decided_by: None,
                bonuses: Vec::new(),
                seating_mode: seating,
            },
        )?;
        // Folding `game_started` dealt the climb face down; the bottom row is turned up now.
        let dealt = self.climb.begin().map_err(code)?;
        out.extend(dealt);
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
            Ruling::Keep { .. } => Err(ErrorCode::NotMulliganing),
            Ruling::Eliminate { players } => {
                if self.stage != Stage::Playing {
                    return Err(ErrorCode::NotPlaying);
                }
                match players.as_slice() {
                    [] => Err(ErrorCode::NoPlayers),
                    [player] if Some(*player) == self.player() => {
                        if self.out {
                            return Err(ErrorCode::TargetEliminated);
                        }
                        self.emit(
                            out,
                            Event::Eliminated {
                                players,
                                cause: EliminationCause::Ruling,
                            },
                        )?;
                        self.finish(out)
                    }
                    [_] => Err(ErrorCode::UnknownPlayer),
                    _ => Err(ErrorCode::DuplicatePlayer),
                }
            }
            Ruling::EndTurn { .. } => Err(ErrorCode::NoRunningTurn),
            // Life, poison and extra turns are not Mountain Magic's.
            _ => Err(ErrorCode::BadMessage),
        }
    }

    /// The climber, in a climb under way.
    fn living_player(&self, actor: Actor) -> Result<PlayerId, ErrorCode> {
        let player = seated_player(actor)?;
        if self.stage != Stage::Playing {
            return Err(ErrorCode::NotPlaying);
        }
        if self.player() != Some(player) {
            return Err(ErrorCode::UnknownPlayer);
        }
        if self.out {
            return Err(ErrorCode::Eliminated);
        }
        Ok(player)
    }

    /// The climb is over: the one standing, and the dice secret.
    fn finish(&mut self, out: &mut Vec<Event>) -> Result<(), ErrorCode> {
        let standings = self
            .player()
            .map(|player| Standing {
                player,
                place: 1,
                mana_points: 0,
            })
            .into_iter()
            .collect();
        self.emit(out, Event::GameOver { standings })?;
        if let Some(secret) = self.secret.filter(|_| !self.day) {
            let secret = secret.to_hex();
            self.emit(out, Event::DiceRevealed { secret })?;
        }
        Ok(())
    }

    /// Folds one event: the only place the table changes (the climb's own events are folded
    /// by the climb).
    fn fold(&mut self, event: &Event) -> Result<(), &'static str> {
        if event.name().starts_with("mountain_magic.") {
            if self.stage != Stage::Playing || self.out {
                return Err("a climb's event outside the climb");
            }
            return self.climb.apply(event);
        }
        match event {
            Event::PlayerJoined {
                player,
                name,
                entropy,
                deck,
            } => {
                if self.stage != Stage::Lobby || self.seat.is_some() {
                    return Err("join outside the lobby or at a full table");
                }
                self.seat = Some(Seat {
                    player: *player,
                    name: name.clone(),
                    entropy: entropy.clone(),
                    deck: deck.clone(),
                });
                self.next_player = player.checked_add(1).ok_or("too many players")?;
                self.facts.seat(*player);
            }
            Event::PlayerLeft { player } => {
                if self.stage != Stage::Lobby || self.player() != Some(*player) {
                    return Err("leave outside the lobby");
                }
                self.seat = None;
                self.facts.unseat(*player)?;
            }
            Event::GameStarted {
                seating,
                first_player,
                commitment,
                ..
            } => {
                let player = self.player().ok_or("nobody to climb")?;
                if self.stage != Stage::Lobby
                    || seating.as_slice() != [player]
                    || *first_player != player
                {
                    return Err("start does not fit the lobby");
                }
                self.commitment = commitment.clone();
                self.stage = Stage::Playing;
                // The deal is a function of the dice: folding the start (live or from the
                // journal) deals the same climb.
                if let Some(climb) = self.seat.as_ref().and_then(|seat| self.dealt(seat)) {
                    self.climb = climb;
                }
            }
            Event::Eliminated { players, .. } => {
                if self.stage != Stage::Playing
                    || players.as_slice() != [self.player().ok_or("nobody")?]
                {
                    return Err("eliminated someone not climbing");
                }
                self.out = true;
            }
            Event::GameAbandoned => {
                if self.stage != Stage::Playing {
                    return Err("abandoned outside a game");
                }
            }
            Event::GameOver { standings } => {
                self.stage = Stage::Finished;
                self.standings = standings.clone();
            }
            Event::DiceRevealed { secret } => self.dice_secret = Some(secret.clone()),
            shell => return self.facts.apply(shell, self.stage),
        }
        Ok(())
    }
}

impl Game for MountainMagic {
    const KIND: GameKind = GameKind::MountainMagic;

    /// One seat, no Ascension league game, no Combat with Dice; an own deck that follows the
    /// recipe, or today's mountain (a date: the server resolves `today` and passes the day's
    /// secret as `secret`), maybe a league climb.
    fn create(settings: &Settings, secret: DiceSecret) -> Result<Self, ErrorCode> {
        if settings.game != GameKind::MountainMagic
            || settings.seats != crate::limits::MOUNTAIN_MAGIC_SEATS
            || settings.league.is_some()
            || settings.combat_dice
        {
            return Err(ErrorCode::BadSettings);
        }
        let own = settings.mountain_magic.clone().unwrap_or_default();
        let day = match &own.day {
            Some(day) if Day::parse(day).is_some() && own.deck.is_none() => true,
            Some(_) => return Err(ErrorCode::BadSettings),
            None => false,
        };
        if own.league.is_some() && !day {
            return Err(ErrorCode::BadSettings);
        }
        let deck = match own.deck.as_ref() {
            Some(file) => {
                Some(Deck::from_file(Pool::builtin(), file).map_err(|_| ErrorCode::BadSettings)?)
            }
            None => None,
        };
        Ok(Self {
            facts: SessionFacts::default(),
            stage: Stage::Lobby,
            secret: Some(secret),
            seat: None,
            next_player: 0,
            commitment: secret.commitment(),
            dice_secret: None,
            out: false,
            standings: Vec::new(),
            deck,
            day,
            league: own.league.is_some(),
            climb: Climb::mirror(),
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
        let mut next = self.clone();
        next.fold(event)?;
        *self = next;
        Ok(())
    }

    fn view(&self, table: TableId, name: &str, seq: u64, settings: &Settings) -> TableView {
        let mut view = TableView::new(table, name, settings.clone());
        view.seq = seq;
        view.stage = stage_name(self.stage);
        view.set_facts(&self.facts);
        let started = self.stage != Stage::Lobby;
        if started {
            view.first_player = self.player();
            view.ring = self.player().into_iter().collect();
        }
        view.dice_commitment = self.commitment.clone();
        view.dice_secret = self.dice_secret.clone();
        view.standings = self.standings.clone();
        view.players = self
            .seat
            .iter()
            .map(|seat| PlayerView {
                seat: started.then_some(0),
                status: if self.out {
                    PlayerStatus::Eliminated
                } else {
                    PlayerStatus::Alive
                },
                kept: started,
                deck: seat.deck.clone(),
                ..PlayerView::seated(
                    seat.player,
                    seat.name.clone(),
                    self.facts.presence(seat.player),
                )
            })
            .collect();
        view.mountain_magic = Some(Box::new(self.climb.view().clone()));
        view
    }

    fn from_view(view: &TableView) -> Result<Self, ApplyError> {
        if view.settings.game != GameKind::MountainMagic {
            return Err(ApplyError::Invalid("not a Mountain Magic table"));
        }
        let climb = match view.mountain_magic.as_deref() {
            Some(climb) => Climb::from_view(climb.clone()),
            // The empty table a replay or a log folds from (`TableView::new`, before any
            // event): a new table's climb is the undealt one.
            None if view.seq == 0 && view.stage == StageName::Lobby => {
                Climb::from_view(MountainView::default())
            }
            None => {
                return Err(ApplyError::Invalid(
                    "a Mountain Magic snapshot without its climb",
                ));
            }
        };
        if view.players.len() > 1 {
            return Err(ApplyError::Invalid("a climb has one seat"));
        }
        let own = view.settings.mountain_magic.clone().unwrap_or_default();
        let seat = view.players.first();
        let stage = match view.stage {
            StageName::Lobby => Stage::Lobby,
            StageName::Mulligan => {
                return Err(ApplyError::Invalid("a climb has no mulligans"));
            }
            StageName::Playing => Stage::Playing,
            StageName::Finished => Stage::Finished,
        };
        Ok(Self {
            facts: view.facts(),
            stage,
            secret: None,
            seat: seat.map(|p| Seat {
                player: p.player,
                name: p.name.clone(),
                entropy: String::new(),
                deck: p.deck.clone(),
            }),
            next_player: view.players.iter().map(|p| p.player + 1).max().unwrap_or(0),
            commitment: view.dice_commitment.clone(),
            dice_secret: view.dice_secret.clone(),
            out: seat.is_some_and(|p| !p.status.is_alive()),
            standings: view.standings.clone(),
            deck: None,
            day: own.day.is_some(),
            league: own.league.is_some(),
            climb,
        })
    }

    fn facts(&self) -> &SessionFacts {
        &self.facts
    }

    fn stage(&self) -> Stage {
        self.stage
    }

    fn name_of(&self, player: PlayerId) -> Option<&str> {
        self.seat
            .as_ref()
            .filter(|s| s.player == player)
            .map(|s| s.name.as_str())
    }

    fn is_alive(&self, player: PlayerId) -> bool {
        self.player() == Some(player) && !self.out
    }

    fn living(&self) -> usize {
        usize::from(self.seat.is_some() && !self.out)
    }

    /// A solitaire has no turn clock: the climber takes his time.
    fn running(&self) -> Vec<(TurnId, PlayerId)> {
        Vec::new()
    }

    fn deciders(&self) -> Vec<PlayerId> {
        Vec::new()
    }

    /// A climb holds no league seat: a member may climb while he sits at a league table.
    fn league_members(&self) -> Vec<MemberId> {
        Vec::new()
    }
}

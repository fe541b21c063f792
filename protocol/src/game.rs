//! What a game is, to the shell that hosts it.
//!
//! The shell — seats and tokens, the host, absence, clocks, pause, kick, mute, spectators,
//! chat ([`crate::session`]), the server's table actor, the journal and the cluster, replays,
//! leagues' crediting, the page's frame and the terminal client's frame — is the same for every
//! game. A game is a pure state machine behind the [`Game`] trait, registered by a
//! [`GameKind`], which a table's settings name. `ARCHITECTURE.md` ("How to add a game") lists
//! the places a new game touches.

use crate::command::{Actor, Command};
use crate::dice::DiceSecret;
use crate::error::{ApplyError, ErrorCode};
use crate::event::Event;
use crate::league::MemberId;
use crate::shell::{SessionFacts, Stage};
pub use crate::types::GameKind;
use crate::types::{PlayerId, TableId, TurnId};
use crate::view::{Settings, TableView};

/// A game, as the shell sees it: a pure, deterministic state machine whose state is the fold of
/// its table's events. [`Session`](crate::session::Session) is generic over it and asks nothing
/// else of a game; the server's table actor, journal, cluster and replays only see the session.
///
/// **What a game owns.** Its state (`Self`), built from the table's [`Settings`] (which name
/// the game) and the dice secret; the commands it decides ([`Game::handle`], which returns the
/// events it caused, already applied, or an [`ErrorCode`] that changed nothing); the one fold
/// ([`Game::apply`], the only place its state changes: replaying a journal is folding it); and
/// the snapshot ([`Game::view`]). A game's own events and commands are variants of the one wire
/// vocabulary ([`Event`], [`Command`]); a game that receives another game's refuses it.
///
/// **What the shell asks of it.** The table-level facts it folds with
/// [`SessionFacts::apply`] for every event that is not its own ([`Game::facts`]); the stage of
/// the game's life ([`Game::stage`]); who is still in the game; who acts now on a clock
/// ([`Game::running`], [`Game::deciders`]); the players' names. And it decides the shell's own
/// commands: `join`, `leave`, `start` and `choose_first` in the lobby; `ruling` `keep` and
/// `eliminate` (a kick, an absent player ruled out); `expire_turn` and `expire_mulligan` (the
/// clocks); `abandon` (everybody gone); once the game is over ([`Stage::Finished`]) its
/// `game_over` event carries the standings that leagues credit and replays show.
pub trait Game: Clone + std::fmt::Debug + Send + 'static {
    /// Which game this is.
    const KIND: GameKind;

    /// A new table in its lobby, with the table's `settings` and dice `secret`; settings this
    /// game cannot play are refused with [`ErrorCode::BadSettings`].
    fn create(settings: &Settings, secret: DiceSecret) -> Result<Self, ErrorCode>;

    /// Decides a command by `actor`: the events it caused, already applied, or the refusal
    /// (which changed nothing).
    fn handle(&mut self, actor: Actor, command: Command) -> Result<Vec<Event>, ErrorCode>;

    /// Folds one event (the game's own, or a table-level one into [`Game::facts`]). An event
    /// that does not fit the state is an error: the journal is corrupt or foreign.
    fn apply(&mut self, event: &Event) -> Result<(), &'static str>;

    /// The snapshot of the table after event `seq`, as every member sees it.
    fn view(&self, table: TableId, name: &str, seq: u64, settings: &Settings) -> TableView;

    /// The state a snapshot shows, for a client's [`Mirror`](crate::Mirror): folding an event
    /// into it must give what folding it into the server's state gives, view for view.
    fn from_view(view: &TableView) -> Result<Self, ApplyError>;

    /// The table-level facts (host, presence, pause, spectators, calls), folded from the
    /// session's events.
    fn facts(&self) -> &SessionFacts;

    /// Where the game is in its life.
    fn stage(&self) -> Stage;

    /// A seated player's name (in the lobby or in the game).
    fn name_of(&self, player: PlayerId) -> Option<&str>;

    /// Whether a seated player is still in the game (before the start: every seated player).
    fn is_alive(&self, player: PlayerId) -> bool;

    /// How many players are still in the game.
    fn living(&self) -> usize;

    /// Whether two seated players are within range of each other now: who sees whose camera
    /// (issue 32; [`camera_links`](crate::camera_links)). A game that says nothing has no range:
    /// nobody is.
    fn within_range(&self, a: PlayerId, b: PlayerId) -> bool {
        let _ = (a, b);
        false
    }

    /// The turns running now, by turn and the player taking it: the turn clock and an absent
    /// player's grace period count from when each began; `expire_turn` ends one.
    fn running(&self) -> Vec<(TurnId, PlayerId)>;

    /// The players whose opening decision (a mulligan) is due now: the decision clock counts
    /// from when it came up; `expire_mulligan` takes it.
    fn deciders(&self) -> Vec<PlayerId>;

    /// The league members seated at a league table (in the lobby, those still there; after
    /// the start, every player's), from the decks they sat down with (`join`'s `deck`). A
    /// game that plays no league games refuses league settings in `create` and has none.
    fn league_members(&self) -> Vec<MemberId>;

    /// Whether `event` starts a new running period of a turn already running (an extra turn
    /// kept by its holder): its clock starts again.
    fn restarts_clock(event: &Event) -> Option<(TurnId, PlayerId)> {
        let _ = event;
        None
    }
}

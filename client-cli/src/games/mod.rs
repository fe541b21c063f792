//! What a game gives the terminal client, and the one place the client picks it: the frame
//! (connecting, seats, reconnecting, the log, chat, the shell's commands, the status and title
//! bars, the script mode's line format, replays' stepping) is the same for every game and
//! reaches a game only through this module.
//!
//! A game gives: its mirror (a variant of [`GameMirror`], chosen by the snapshot's game); the
//! words of its own events ([`wording`]); its typed commands ([`parse`], [`help`], [`names`],
//! [`arguments`]); the player's situation ([`Situation`]) and what a refusal leaves out
//! ([`refusal_hint`]); and its [`Panel`] in the
//! full-screen UI. Each game is a module under
//! `games/` (`grand_melee`: Grand Melee's; `magic_tech`: Magic Tech's; `mountain_magic`:
//! Mountain Magic's). `ARCHITECTURE.md` ("How to add a game") lists the
//! rest of what a new game touches.

pub mod grand_melee;
pub mod magic_tech;
pub mod mountain_magic;

use grand_melee_protocol::magic_tech::MagicTech;
use grand_melee_protocol::mountain_magic::MountainMagic;
use grand_melee_protocol::{
    ApplyError, ClientMessage, ErrorCode, Event, GameKind, Mirror, PlayerId, TableView,
};
use ratatui::Frame;
use ratatui::layout::Rect;

use crate::words::{CommandError, Resolver, Wording};

/// The game a table plays, from its snapshot's settings (`None`: no snapshot yet, the default
/// game; `game` absent on the wire means `grand_melee`).
pub fn kind(view: Option<&TableView>) -> GameKind {
    view.map(|view| view.settings.game).unwrap_or_default()
}

/// What this client tells the user at a table whose game it cannot show (`None`: a game it
/// plays). Such a table has no mirror: the user sees this sentence, never a half-drawn board.
pub fn unsupported(kind: GameKind) -> Option<String> {
    match kind {
        GameKind::GrandMelee | GameKind::MagicTech | GameKind::MountainMagic => None,
        other => Some(format!(
            "this table plays {}, which this client does not know",
            other.name()
        )),
    }
}

/// A client's copy of a table of any game: the protocol's [`Mirror`] of the snapshot's game,
/// folded forward with the server's own fold. Two mirrors are equal when they show the same
/// snapshot (Magic Tech's and Mountain Magic's state types are compared through their views).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum GameMirror {
    /// A Grand Melee table.
    GrandMelee(Mirror),
    /// A Magic Tech table.
    MagicTech(Mirror<MagicTech>),
    /// A Mountain Magic table.
    MountainMagic(Mirror<MountainMagic>),
}

impl GameMirror {
    /// A mirror of the table a `snapshot` shows, of the game it plays; a game this client does
    /// not know is [`ApplyError::Invalid`].
    pub fn of(snapshot: &TableView) -> Result<Self, ApplyError> {
        match kind(Some(snapshot)) {
            GameKind::GrandMelee => Ok(Self::GrandMelee(Mirror::of(snapshot)?)),
            GameKind::MagicTech => Ok(Self::MagicTech(Mirror::<MagicTech>::of(snapshot)?)),
            GameKind::MountainMagic => {
                Ok(Self::MountainMagic(Mirror::<MountainMagic>::of(snapshot)?))
            }
            _ => Err(ApplyError::Invalid("a game this client cannot show")),
        }
    }

    /// Number of the last event included (0: none yet).
    pub fn seq(&self) -> u64 {
        match self {
            Self::GrandMelee(mirror) => mirror.seq(),
            Self::MagicTech(mirror) => mirror.seq(),
            Self::MountainMagic(mirror) => mirror.seq(),
        }
    }

    /// The current snapshot, exactly as the server would send it now.
    pub fn view(&self) -> TableView {
        match self {
            Self::GrandMelee(mirror) => mirror.view(),
            Self::MagicTech(mirror) => mirror.view(),
            Self::MountainMagic(mirror) => mirror.view(),
        }
    }

    /// Applies event number `seq` (see [`Mirror::apply`]: a gap or an event that does not fit
    /// is an error, and the mirror is to be rebuilt from a fresh snapshot).
    pub fn apply(&mut self, seq: u64, event: &Event) -> Result<(), ApplyError> {
        match self {
            Self::GrandMelee(mirror) => mirror.apply(seq, event),
            Self::MagicTech(mirror) => mirror.apply(seq, event),
            Self::MountainMagic(mirror) => mirror.apply(seq, event),
        }
    }
}

impl PartialEq for GameMirror {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::GrandMelee(a), Self::GrandMelee(b)) => a == b,
            (Self::MagicTech(a), Self::MagicTech(b)) => a.seq() == b.seq() && a.view() == b.view(),
            (Self::MountainMagic(a), Self::MountainMagic(b)) => {
                a.seq() == b.seq() && a.view() == b.view()
            }
            _ => false,
        }
    }
}

impl Eq for GameMirror {}

impl From<Mirror> for GameMirror {
    fn from(mirror: Mirror) -> Self {
        Self::GrandMelee(mirror)
    }
}

/// The words of a game's own event (every event that is not the table's: the frame words
/// those), worded with the view as it was before it; `None` for an event no game here has
/// words for (a newer server's).
pub fn wording(event: &Event, view: &TableView) -> Option<Wording> {
    grand_melee::words::wording(event, view)
        .or_else(|| magic_tech::words::wording(event, view))
        .or_else(|| mountain_magic::wording(event, view))
}

/// A game's commands for `help`, each with its usage and meaning.
#[derive(Debug, Clone, Copy)]
pub struct Help {
    /// The players' commands, first in `help`.
    pub play: &'static [(&'static str, &'static str)],
    /// The host's rulings, listed with the host's other commands.
    pub host: &'static [(&'static str, &'static str)],
}

/// The commands of a game of `kind`.
pub fn help(kind: GameKind) -> Help {
    match kind {
        GameKind::GrandMelee => grand_melee::commands::HELP,
        GameKind::MagicTech => magic_tech::commands::HELP,
        GameKind::MountainMagic => mountain_magic::commands::HELP,
        _ => Help {
            play: &[],
            host: &[],
        },
    }
}

/// The first words of a game's commands, for completion.
pub fn names(kind: GameKind) -> &'static [&'static str] {
    match kind {
        GameKind::GrandMelee => grand_melee::commands::NAMES,
        GameKind::MagicTech => magic_tech::commands::NAMES,
        GameKind::MountainMagic => mountain_magic::commands::NAMES,
        _ => &[],
    }
}

/// A game's commands that cannot be undone (by first word), with the question the full-screen
/// UI asks before sending one.
pub fn confirm(kind: GameKind) -> &'static [(&'static str, &'static str)] {
    match kind {
        GameKind::GrandMelee => grand_melee::commands::CONFIRM,
        GameKind::MagicTech => magic_tech::commands::CONFIRM,
        GameKind::MountainMagic => mountain_magic::commands::CONFIRM,
        _ => &[],
    }
}

/// The script mode's `status` lines for the seats (and what the player `me` may do), in the
/// game's words.
pub fn status_lines(kind: GameKind, view: &TableView, me: Option<PlayerId>) -> Vec<String> {
    match kind {
        GameKind::GrandMelee => grand_melee::status::script_lines(view, me),
        GameKind::MagicTech => magic_tech::panel::status_lines(view, me),
        GameKind::MountainMagic => mountain_magic::panel::status_lines(view, me),
        _ => Vec::new(),
    }
}

/// What a refusal of `code` at `view` leaves out that the game can tell from the table (where
/// a card refused a place may go instead), in its words; `None` when the server's say it all.
pub fn refusal_hint(kind: GameKind, code: ErrorCode, view: &TableView) -> Option<String> {
    match kind {
        GameKind::MountainMagic => mountain_magic::situation::refusal_hint(code, view),
        _ => None,
    }
}

/// The words that complete the argument after a game's command `word`, if it takes one of a
/// few words rather than a player.
pub fn arguments(kind: GameKind, word: &str) -> Option<&'static [&'static str]> {
    match kind {
        GameKind::GrandMelee => grand_melee::commands::arguments(word),
        GameKind::MagicTech => magic_tech::commands::arguments(word),
        GameKind::MountainMagic => mountain_magic::commands::arguments(word),
        _ => None,
    }
}

/// Parses a game's command whose first word (lower-cased) is `word`, the players named by
/// `resolve`: `Ok(None)` if the game has no such command.
pub fn parse(
    kind: GameKind,
    word: &str,
    words: &[&str],
    rest: &str,
    resolve: &Resolver<'_>,
) -> Result<Option<ClientMessage>, CommandError> {
    match kind {
        GameKind::GrandMelee => grand_melee::commands::parse(word, words, rest, resolve),
        GameKind::MagicTech => magic_tech::commands::parse(word, words, rest, resolve),
        GameKind::MountainMagic => mountain_magic::commands::parse(word, words, rest, resolve),
        _ => Ok(None),
    }
}

/// How pressing the player's situation is: the header's colour and the terminal's bell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Urgency {
    /// The player is to act now (his turn, his decision): the bell rings when it comes up.
    Act,
    /// The player waits for someone else to act.
    Wait,
    /// Nothing is pressing.
    Calm,
}

/// Where the player stands right now, in the game his table plays.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Situation {
    /// At a Grand Melee table.
    GrandMelee(grand_melee::Situation),
    /// At a Magic Tech table.
    MagicTech(magic_tech::Situation),
    /// At a Mountain Magic table.
    MountainMagic(mountain_magic::Situation),
}

impl Situation {
    /// The situation of `me` (`None` for a spectator) at the table `view` shows (`None` at
    /// a game this client does not know).
    pub fn of(view: &TableView, me: Option<PlayerId>) -> Option<Self> {
        match kind(Some(view)) {
            GameKind::GrandMelee => Some(Self::GrandMelee(grand_melee::Situation::of(view, me))),
            GameKind::MagicTech => Some(Self::MagicTech(magic_tech::Situation::of(view, me))),
            GameKind::MountainMagic => {
                Some(Self::MountainMagic(mountain_magic::Situation::of(view, me)))
            }
            _ => None,
        }
    }

    /// The script-mode words (after `you `).
    pub fn script(&self) -> String {
        match self {
            Self::GrandMelee(situation) => situation.script(),
            Self::MagicTech(situation) => situation.script(),
            Self::MountainMagic(situation) => situation.script(),
        }
    }

    /// The words for the terminal UI.
    pub fn text(&self) -> String {
        match self {
            Self::GrandMelee(situation) => situation.text(),
            Self::MagicTech(situation) => situation.text(),
            Self::MountainMagic(situation) => situation.text(),
        }
    }

    /// The words for the terminal UI in at most `width` columns where the game has shorter
    /// ones (else [`Situation::text`], which the frame cuts).
    pub fn text_within(&self, width: usize) -> String {
        match self {
            Self::MountainMagic(situation) => situation.text_within(width),
            _ => self.text(),
        }
    }

    /// How pressing it is.
    pub fn urgency(&self) -> Urgency {
        match self {
            Self::GrandMelee(situation) => situation.urgency(),
            Self::MagicTech(situation) => situation.urgency(),
            Self::MountainMagic(situation) => situation.urgency(),
        }
    }
}

/// What a game draws in the full-screen UI: the middle panel beside (or above) the log, and
/// the game's facts on the frame's bars and in `status`. The frame lays the screen out around
/// the panel's sizes.
pub trait Panel: Sync {
    /// The narrowest width the panel needs for `seats` seats, and its rows there.
    fn min_size(&self, seats: usize) -> (usize, usize);
    /// Whether the panel can be drawn `width` columns wide at all.
    fn fits_width(&self, width: usize) -> bool;
    /// The rows the panel takes for `seats` seats in `width` columns (`full`: with room to
    /// spare, its roomier form).
    fn rows(&self, seats: usize, width: usize, full: bool) -> usize;
    /// Draws the panel in `area` for the player `me` (`None`: a spectator), with a title row if
    /// `titled`.
    fn render(
        &self,
        frame: &mut Frame<'_>,
        area: Rect,
        view: &TableView,
        me: Option<PlayerId>,
        titled: bool,
    );
    /// The table's facts on the title bar (after its name and stage).
    fn header_facts(&self, view: &TableView) -> String;
    /// The table's facts in `status`'s first line (after its name and stage).
    fn status_facts(&self, view: &TableView) -> String;
    /// The player's own line under the situation (`None`: he has no seat).
    fn you_line(&self, view: &TableView, me: Option<PlayerId>, width: usize) -> Option<String>;
    /// What the panel's marks mean, for `help`: a title and the marks, separated by ` · `.
    fn legend(&self) -> (&'static str, &'static str);
    /// `status`'s lines for the seats (and what the player `me` may do).
    fn status_lines(&self, view: &TableView, me: Option<PlayerId>) -> Vec<String>;
    /// Whether the log shows `event` (one of the game's own) as a milestone.
    fn milestone(&self, event: &Event) -> bool;
}

/// The panel of a game of `kind` (`None`: a game this client does not know).
pub fn panel(kind: GameKind) -> Option<&'static dyn Panel> {
    match kind {
        GameKind::GrandMelee => Some(&grand_melee::GrandMelee),
        GameKind::MagicTech => Some(&magic_tech::MagicTech),
        GameKind::MountainMagic => Some(&mountain_magic::MountainMagic),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use grand_melee_protocol::{Settings, TableId};

    use super::*;
    use crate::command::{self, Command};

    fn lobby(game: GameKind) -> TableView {
        let settings = Settings {
            game,
            ..Settings::default()
        };
        TableView::new(TableId::from_u128(1), "t", settings)
    }

    #[test]
    fn every_game_of_the_protocol_is_shown_with_a_mirror_and_a_panel() {
        for known in [
            GameKind::GrandMelee,
            GameKind::MagicTech,
            GameKind::MountainMagic,
        ] {
            assert!(panel(known).is_some());
            assert_eq!(unsupported(known), None);
            assert!(GameMirror::of(&lobby(known)).is_ok());
        }
    }

    /// The frame's modules, before their tests: what they may not name.
    const FRAME: &[(&str, &str)] = &[
        ("command.rs", include_str!("../command.rs")),
        ("describe.rs", include_str!("../describe.rs")),
        ("draw.rs", include_str!("../draw.rs")),
        ("replay.rs", include_str!("../replay.rs")),
        ("script.rs", include_str!("../script.rs")),
        ("session.rs", include_str!("../session.rs")),
        ("tui.rs", include_str!("../tui.rs")),
    ];

    #[test]
    fn the_frame_names_no_concept_of_grand_melee() {
        // Grand Melee's state and rules: its view's fields and types, its commands' words.
        let concepts = [
            "life",
            "poison",
            "sphere",
            "attack",
            "spell_range",
            "may_target",
            "mulligan_deciders",
            "turn_of",
            "Phase",
            "TurnStateName",
            "PlayerStatus",
            "Ruling",
            "LEGEND",
        ];
        for (file, source) in FRAME {
            let code = source.split("#[cfg(test)]").next().unwrap_or_default();
            for (n, line) in code.lines().enumerate() {
                let code = line.split("//").next().unwrap_or_default();
                for concept in concepts {
                    assert!(
                        !code.contains(concept),
                        "{file}:{}: `{concept}` is Grand Melee's: {line}",
                        n + 1
                    );
                }
            }
        }
    }

    #[test]
    fn no_command_of_the_table_shadows_one_of_magic_tech() {
        // The frame parses the table's own commands first: each of Magic Tech's, typed at a
        // Magic Tech table, must reach the game's parser unchanged.
        let mut view = TableView::new(TableId::nil(), "t", Settings::default());
        view.settings.game = GameKind::MagicTech;
        view.players = Vec::new();
        let resolve = Resolver {
            view: Some(&view),
            me: Some(0),
        };
        for line in [
            "accept",
            "deck 8",
            "keep",
            "next",
            "remove 2 hand",
            "block none",
        ]
        .into_iter()
        .chain(names(GameKind::MagicTech).iter().copied())
        {
            let words: Vec<&str> = line.split_whitespace().collect();
            let game = parse(GameKind::MagicTech, words[0], &words[1..], line, &resolve);
            let frame = command::parse(line, Some(&view), Some(0));
            match game {
                Ok(Some(message)) => {
                    assert_eq!(frame, Ok(Some(Command::Request(message))), "{line}");
                }
                Ok(None) => panic!("{line}: not Magic Tech's"),
                Err(error) => assert_eq!(frame, Err(error), "{line}"),
            }
        }
    }

    #[test]
    fn no_command_of_the_table_shadows_one_of_mountain_magic() {
        let mut view = lobby(GameKind::MountainMagic);
        view.players = Vec::new();
        let resolve = Resolver {
            view: Some(&view),
            me: Some(0),
        };
        for line in [
            "place 1:0",
            "path 0 0 0 0 0 0 0",
            "mana y1 r",
            "attack o1 y0",
            "cast y2 o0",
        ]
        .into_iter()
        .chain(names(GameKind::MountainMagic).iter().copied())
        {
            let words: Vec<&str> = line.split_whitespace().collect();
            let game = parse(
                GameKind::MountainMagic,
                words[0],
                &words[1..],
                line,
                &resolve,
            );
            let frame = command::parse(line, Some(&view), Some(0));
            match game {
                Ok(Some(message)) => {
                    assert_eq!(frame, Ok(Some(Command::Request(message))), "{line}");
                }
                Ok(None) => panic!("{line}: not Mountain Magic's"),
                Err(error) => assert_eq!(frame, Err(error), "{line}"),
            }
        }
    }

    #[test]
    fn every_command_in_help_and_completion_reaches_the_frame_or_the_game() {
        let view = TableView::new(TableId::nil(), "t", Settings::default());
        let kind = kind(Some(&view));
        let help = command::help(kind);
        let game = super::help(kind);
        assert_eq!(
            help.len(),
            game.play.len() + game.host.len() + 18,
            "the game's commands and the table's, each once"
        );
        for name in names(kind) {
            // Each of the game's first words is parsed by the game, through the frame: a
            // request or a usage error, never an unknown command.
            let parsed = command::parse(name, Some(&view), Some(0));
            assert!(
                !matches!(parsed, Err(CommandError::UnknownCommand(_))),
                "{name}: {parsed:?}"
            );
            assert!(
                help.iter()
                    .any(|(usage, _)| usage.split(' ').next() == Some(name)),
                "{name} has no line in help"
            );
        }
        assert_eq!(
            command::parse("end", Some(&view), Some(0)),
            Ok(Some(Command::Request(ClientMessage::EndTurn { id: 0 })))
        );
        assert_eq!(
            command::parse("say hi", Some(&view), Some(0)),
            Ok(Some(Command::Request(ClientMessage::Chat {
                id: 0,
                text: "hi".into()
            })))
        );
        assert!(matches!(
            command::parse("fly", Some(&view), Some(0)),
            Err(CommandError::UnknownCommand(word)) if word == "fly"
        ));
    }
}

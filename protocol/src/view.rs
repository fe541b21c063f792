//! The state of a table as a client sees it: the `snapshot` message's [`TableView`]. It is a
//! projection of the one fold ([`Table::view`](crate::rules::Table::view)); clients keep it up
//! to date with a [`Mirror`](crate::Mirror), which folds `events` batches with the same
//! [`Table::apply`](crate::rules::Table::apply) the server uses.

use serde::{Deserialize, Serialize};

use crate::client::ClientMessage;
use crate::league::{Bonus, LeagueId, SeatDeck};
use crate::limits::{
    DEFAULT_ABSENCE_LIMIT_SECS, DEFAULT_HAND_SIZE, DEFAULT_MAX_SPECTATORS,
    DEFAULT_MULLIGAN_CLOCK_SECS, DEFAULT_SPELL_RANGE, DEFAULT_STARTING_LIFE, MAX_SEATS,
    default_max_spectators, default_mulligan_clock,
};
use crate::magic_tech_types::MagicTechView;
use crate::mountain_magic_types::{MountainMagicSettings, MountainView};
use crate::shell::{Presence, SessionFacts, resume_quorum};
use crate::types::GameKind;
use crate::types::{
    HostCall, MulliganMode, Phase, PlayerId, PlayerStatus, Reduction, RuleSet, SeatingMode,
    StageName, Standing, TableId, TurnId, TurnStateName,
};

/// A table's settings, fixed when it is created: the one home of every table setting. The
/// `create_table` request ([`Settings::requested`]), the lobby's [`TableSummary`](crate::TableSummary::new), the rules'
/// [`TableConfig`](crate::rules::TableConfig::from_settings) and the server's journal are derived
/// from it; the defaults of the fields a request may leave out are `limits`' `default_*`
/// functions.
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
    /// `seed` or `cr807`.
    #[serde(default)]
    pub rules: RuleSet,
    /// Whether the table plays Combat with Dice.
    #[serde(default)]
    pub combat_dice: bool,
    /// `paris` or `simultaneous` mulligans.
    #[serde(default)]
    pub mulligan: MulliganMode,
    /// The league this table's game counts for, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub league: Option<LeagueId>,
    /// Which game the table plays (absent: `grand_melee`; or `magic_tech`, `mountain_magic`).
    #[serde(default, skip_serializing_if = "GameKind::is_default")]
    pub game: GameKind,
    /// A Mountain Magic table's own settings (absent: its defaults; every other game refuses
    /// them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mountain_magic: Option<MountainMagicSettings>,
}

impl Settings {
    /// The league whose members take the seats: a league game's, or a league climb's
    /// (Mountain Magic's `mountain_magic.league`).
    pub fn seat_league(&self) -> Option<crate::league::LeagueId> {
        self.league
            .or_else(|| self.mountain_magic.as_ref().and_then(|m| m.league))
    }

    /// The settings a `create_table` request asks for (`None` for any other request), with the spell
    /// range 0 taken as the rules' own (2 for `seed`, 1 for `cr807`) and the password as whether
    /// there is one. Nothing is checked here: the server checks them (and
    /// [`TableConfig::from_settings`](crate::rules::TableConfig::from_settings) the rules' part).
    pub fn requested(request: &ClientMessage) -> Option<Self> {
        let ClientMessage::CreateTable {
            seats,
            spell_range,
            reduction,
            starting_life,
            password,
            turn_clock_secs,
            absence_limit_secs,
            mulligan_clock_secs,
            max_spectators,
            rules,
            combat_dice,
            mulligan,
            game,
            league,
            mountain_magic,
            ..
        } = request
        else {
            return None;
        };
        let spell_range = match (*spell_range, rules) {
            (0, RuleSet::Cr807) => 1,
            (0, RuleSet::Seed) => DEFAULT_SPELL_RANGE,
            (range, _) => range,
        };
        Some(Self {
            seats: *seats,
            spell_range,
            reduction: *reduction,
            starting_life: *starting_life,
            password: password.is_some(),
            turn_clock_secs: *turn_clock_secs,
            absence_limit_secs: *absence_limit_secs,
            mulligan_clock_secs: *mulligan_clock_secs,
            max_spectators: *max_spectators,
            rules: *rules,
            combat_dice: *combat_dice,
            mulligan: *mulligan,
            league: *league,
            game: *game,
            mountain_magic: mountain_magic.clone(),
            ..Self::default()
        })
    }
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
            rules: RuleSet::Seed,
            combat_dice: false,
            mulligan: MulliganMode::Paris,
            league: None,
            game: GameKind::default(),
            mountain_magic: None,
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
    /// Extra turns he takes right after the turn he is taking.
    #[serde(default)]
    pub extra_turns: u8,
    /// Extra turns he takes just before his next turn.
    #[serde(default)]
    pub extra_next: u8,
    /// The running turns within his range, whose stacks he may act on (derived: CR 807.5a;
    /// under the seed's rules the turns whose spheres hold him).
    #[serde(default)]
    pub stacks: Vec<TurnId>,
    /// At a league table: his member number, deck and its power when he sat down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deck: Option<SeatDeck>,
    /// At a league table, once the game has started: his deck power bonus, if his deck is 5 or
    /// more points behind the strongest (already in his life and hand size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bonus: Option<Bonus>,
}

impl PlayerView {
    /// A seated player as the shell knows him — id, name and presence (`connected`, `absent`,
    /// `muted`) — in the game, with every game-specific field empty (no life, hand, spheres or
    /// deck); a game fills in what it shows.
    pub fn seated(player: PlayerId, name: String, presence: Presence) -> Self {
        Self {
            player,
            name,
            seat: None,
            life: 0,
            poison: 0,
            status: PlayerStatus::Alive,
            hand_size: 0,
            kept: false,
            connected: presence.connected,
            absent: presence.absent,
            muted: presence.muted,
            may_attack: Vec::new(),
            may_target: Vec::new(),
            extra_turns: 0,
            extra_next: 0,
            stacks: Vec::new(),
            deck: None,
            bonus: None,
        }
    }
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
    /// How many times it is designated for removal (CR 807.4f; 0 or 1 under the seed's rules).
    #[serde(default)]
    pub designations: u32,
    /// The holder's sphere of influence, in ring order starting R positions to his right
    /// (derived; empty for an ended turn).
    pub sphere: Vec<PlayerId>,
}

/// The whole state of a table, as sent in `snapshot` (see [`Mirror`](crate::Mirror) for keeping
/// it up to date).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableView {
    /// The table's id.
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
    /// Everyone whose mulligan decision is due (derived: the decider, or with simultaneous
    /// mulligans every player who has not kept).
    #[serde(default)]
    pub mulligan_deciders: Vec<PlayerId>,
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
    /// Whether the host has adjourned the game (`table_adjourned`).
    #[serde(default)]
    pub adjourned: bool,
    /// While adjourned: who has asked to resume it (`resume_requested`), in the order they
    /// asked. The game resumes when they are [`resume_quorum`](Self::resume_quorum).
    #[serde(default)]
    pub resume_asks: Vec<PlayerId>,
    /// Whether the host has muted the spectators' chat.
    #[serde(default)]
    pub spectators_muted: bool,
    /// SHA-256 of the dice secret, in hex (from `game_started`; empty before).
    #[serde(default)]
    pub dice_commitment: String,
    /// The dice secret, once revealed at the end of the game.
    #[serde(default)]
    pub dice_secret: Option<String>,
    /// At a league table: who decides who plays first (derived in the lobby: the player whose
    /// deck is furthest behind the strongest, by 5 points or more; after the start, who did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_decider: Option<PlayerId>,
    /// At a league table in its lobby: whom the decider has chosen to play first, if anyone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_choice: Option<PlayerId>,
    /// After the start: how the players were seated (`random`, `joined` or `arranged`; absent
    /// in the lobby).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seating_mode: Option<SeatingMode>,
    /// Open calls for the host, oldest first (absent: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<HostCall>,
    /// At a Magic Tech table: its board (absent at every other game's table; boxed, as it
    /// is large and most tables are not Magic Tech tables).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub magic_tech: Option<Box<MagicTechView>>,
    /// At a Mountain Magic table: the climb as everyone sees it — the mountain, the discard
    /// pile, the battle (absent at every other game's table; boxed, as for `magic_tech`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mountain_magic: Option<Box<MountainView>>,
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
            mulligan_deciders: Vec::new(),
            players: Vec::new(),
            ring: Vec::new(),
            turns: Vec::new(),
            standings: Vec::new(),
            spectators: 0,
            paused: false,
            adjourned: false,
            resume_asks: Vec::new(),
            spectators_muted: false,
            dice_commitment: String::new(),
            dice_secret: None,
            first_decider: None,
            first_choice: None,
            seating_mode: None,
            calls: Vec::new(),
            magic_tech: None,
            mountain_magic: None,
        }
    }

    /// Writes the shell's facts every member sees into the snapshot: the host, spectators,
    /// pause, adjournment and its asks, the spectators' mute and the open calls (a player's
    /// presence is the game's to place, in its own player entries).
    pub fn set_facts(&mut self, facts: &SessionFacts) {
        self.host = facts.host;
        self.spectators = facts.spectators;
        self.paused = facts.paused;
        self.adjourned = facts.adjourned;
        self.resume_asks = facts.resume_asks.clone();
        self.spectators_muted = facts.spectators_muted;
        self.calls = facts.calls.clone();
    }

    /// The shell's facts this snapshot shows: [`set_facts`](Self::set_facts)'s inverse, with
    /// each player's presence from his entry (what the session acts on alone — kicks during
    /// mulligans — is not in a snapshot).
    pub fn facts(&self) -> SessionFacts {
        SessionFacts {
            host: self.host,
            spectators: self.spectators,
            paused: self.paused,
            adjourned: self.adjourned,
            resume_asks: self.resume_asks.clone(),
            spectators_muted: self.spectators_muted,
            kicked_in_mulligan: Vec::new(),
            calls: self.calls.clone(),
            presence: self
                .players
                .iter()
                .map(|p| {
                    let presence = Presence {
                        connected: p.connected,
                        absent: p.absent,
                        muted: p.muted,
                    };
                    (p.player, presence)
                })
                .collect(),
        }
    }

    // ----- Queries ---------------------------------------------------------------------------

    /// How many asks resume an adjourned game without the host: a majority of the players still
    /// in the game ([`resume_quorum`]).
    pub fn resume_quorum(&self) -> usize {
        resume_quorum(self.living())
    }

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
}

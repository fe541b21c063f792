//! Requests a client sends. Every request carries an `id` the client chooses; the server echoes
//! it as `reply_to` in the answer (`ack`, `error`, …).

use serde::{Deserialize, Serialize};

use crate::camera::Peer;
use crate::league::{DeckSpec, LeagueId, MemberId, MemberToken, Purchase, Remedy};
use crate::limits::{
    DEFAULT_PAGE_ITEMS, default_absence_limit, default_max_spectators, default_mulligan_clock,
    default_starting_life,
};
use crate::magic_tech_types::{Area, Block, CardFace, CardId, Correction, Target, Zone};
use crate::mountain_magic_types::{ForceRef, ManaPlace, MountainCommand, MountainMagicSettings};
use crate::types::GameKind;
use crate::types::{
    MulliganMode, OrganiserSecret, Phase, PlayerId, Reduction, RuleSet, Ruling, SeatToken,
    SeatingMode, TableId,
};

fn default_page_items() -> u32 {
    DEFAULT_PAGE_ITEMS
}

fn first_event() -> u64 {
    1
}

/// A message from a client to the server.
#[derive(
    Debug, Clone, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr, strum::VariantNames,
)]
#[serde(tag = "type", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ClientMessage {
    /// Opens the session; must be the first message.
    Hello {
        /// Request id.
        id: u32,
        /// The protocol version the client speaks ([`PROTOCOL_VERSION`](crate::PROTOCOL_VERSION)).
        protocol: u16,
        /// Required: the client's name and version, for the server's logs (at most 64
        /// characters, no control characters; may be empty).
        client: String,
    },
    /// Asks for one page of the list of tables, sorted by name then id.
    ListTables {
        /// Request id.
        id: u32,
        /// How many tables of the sorted list to skip (default 0).
        #[serde(default)]
        from: u32,
        /// The most tables in the page (default 100, at most 500; a page also ends before it
        /// would pass [`MAX_PAGE_BYTES`](crate::MAX_PAGE_BYTES)).
        #[serde(default = "default_page_items")]
        limit: u32,
    },
    /// Creates a table, answered by `table_created`; `join` it to sit down.
    CreateTable {
        /// Request id.
        id: u32,
        /// Required: the table's display name (1–32 characters).
        name: String,
        /// Required: most players who may sit (2–40).
        seats: u8,
        /// Spell range R (1–4; 0 or absent: the rules' own, 2 for `seed` and 1 for `cr807`,
        /// which allows no other).
        #[serde(default)]
        spell_range: u8,
        /// Turn reduction policy (default eager).
        #[serde(default)]
        reduction: Reduction,
        /// Starting life (1–1000, default 20).
        #[serde(default = "default_starting_life")]
        starting_life: i32,
        /// A password to join or watch, if any.
        #[serde(default)]
        password: Option<String>,
        /// Kept for the record only: every random outcome (seating, first player, dice) comes
        /// from the table's verifiable dice, which nobody can predict or choose.
        #[serde(default)]
        seed: Option<u64>,
        /// Turn clock in seconds: a running turn that lasts longer ends by itself. 0 (the
        /// default) means no clock.
        #[serde(default)]
        turn_clock_secs: u32,
        /// Seconds a player may be disconnected before everyone is told he is absent (and the
        /// host may rule him out). Default 600.
        #[serde(default = "default_absence_limit")]
        absence_limit_secs: u32,
        /// Seconds each player has for a mulligan decision before it is taken as `keep`
        /// (default 60; 0: no clock). A decider who is disconnected past the server's grace
        /// period keeps too, clock or not.
        #[serde(default = "default_mulligan_clock")]
        mulligan_clock_secs: u32,
        /// Most spectators at once (0–1000, default 100).
        #[serde(default = "default_max_spectators")]
        max_spectators: u32,
        /// Which rules: `seed` (the default: the seed's Grand Melee) or `cr807` (the
        /// Comprehensive Rules' variant).
        #[serde(default)]
        rules: RuleSet,
        /// Combat with Dice: attack rolls and counter strikes by the server's verifiable dice.
        #[serde(default)]
        combat_dice: bool,
        /// `paris` (the default: one player at a time) or `simultaneous` (everyone at once).
        #[serde(default)]
        mulligan: MulliganMode,
        /// Which game (absent: `grand_melee`; or `magic_tech`).
        #[serde(default, skip_serializing_if = "GameKind::is_default")]
        game: GameKind,
        /// A league game: its seats are taken by the league's members with their member token,
        /// and its mana points are credited to their decks. Needs `organiser`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        league: Option<LeagueId>,
        /// The league's organiser secret (with `league`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        organiser: Option<OrganiserSecret>,
        /// At a Mountain Magic table: its own settings (the climber's own deck).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mountain_magic: Option<MountainMagicSettings>,
    },
    /// Takes a seat at a table in its lobby.
    Join {
        /// Request id.
        id: u32,
        /// The table.
        table: TableId,
        /// Display name at that table.
        name: String,
        /// The table's password, if it has one.
        #[serde(default)]
        password: Option<String>,
        /// Optional: up to 64 characters the client contributes to the table's dice (random
        /// text it chose; published in `player_joined`).
        #[serde(default)]
        entropy: Option<String>,
        /// At a league table: your member token (the seat takes your member name and deck).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        member_token: Option<MemberToken>,
    },
    /// Watches a table as a spectator.
    Watch {
        /// Request id.
        id: u32,
        /// The table.
        table: TableId,
        /// The table's password, if it has one.
        #[serde(default)]
        password: Option<String>,
    },
    /// Takes back a seat after a disconnection, with the token from `seated`.
    Resume {
        /// Request id.
        id: u32,
        /// The table.
        table: TableId,
        /// The seat token.
        token: SeatToken,
    },
    /// Leaves the table the connection sits at or watches. A player leaving in the lobby gives
    /// up his seat (`player_left`).
    Leave {
        /// Request id.
        id: u32,
    },
    /// Starts the game (host only).
    Start {
        /// Request id.
        id: u32,
        /// The first player, if the host chooses; otherwise drawn from the table's seed.
        #[serde(default)]
        first_player: Option<PlayerId>,
        /// How to seat the players: `random` (the default: the verifiable dice draw the
        /// seating, CR 807.3), `joined` (join order) or `arranged` (the host's `order`).
        #[serde(default, skip_serializing_if = "SeatingMode::is_random")]
        seating: SeatingMode,
        /// With `arranged`: every seated player's id exactly once, seat 0 first (the next
        /// seat is to the left). Must be empty otherwise.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        order: Vec<PlayerId>,
    },
    /// Asks for a fresh snapshot of the table (after a sequence gap, for instance).
    Snapshot {
        /// Request id.
        id: u32,
    },
    /// At a league table in its lobby, the player furthest behind in deck power (5 points or
    /// more) chooses who plays first.
    ChooseFirst {
        /// Request id.
        id: u32,
        /// Who plays first.
        player: PlayerId,
    },
    /// Paris mulligan: redraw one card fewer.
    Mulligan {
        /// Request id.
        id: u32,
    },
    /// Keeps the current hand; the decision passes to the next player.
    Keep {
        /// Request id.
        id: u32,
    },
    /// Moves the phase indicator of one's running turn.
    SetPhase {
        /// Request id.
        id: u32,
        /// The new phase.
        phase: Phase,
    },
    /// Ends one's running turn; it passes to the left.
    EndTurn {
        /// Request id.
        id: u32,
    },
    /// Attacks an opponent in range during combat.
    Attack {
        /// Request id.
        id: u32,
        /// The defending player.
        target: PlayerId,
        /// Combat damage dealt (0 if fully blocked).
        #[serde(default)]
        damage: u32,
        /// Poison counters dealt.
        #[serde(default)]
        poison: u32,
    },
    /// Deals damage to a player in range (a spell or ability).
    DealDamage {
        /// Request id.
        id: u32,
        /// The player who is dealt damage.
        target: PlayerId,
        /// How much (at least 1).
        amount: u32,
    },
    /// Changes one's own life total.
    ChangeLife {
        /// Request id.
        id: u32,
        /// Gained (positive) or lost (negative), not 0.
        delta: i32,
    },
    /// Changes one's own poison counters (never below 0).
    ChangePoison {
        /// Request id.
        id: u32,
        /// Added (positive) or removed (negative), not 0.
        delta: i32,
    },
    /// Leaves the game.
    Concede {
        /// Request id.
        id: u32,
    },
    /// Takes an extra turn after the turn he is taking (Time Walk and friends).
    ExtraTurn {
        /// Request id.
        id: u32,
    },
    /// Combat with Dice: the player taking his turn rolls for one attacking creature during
    /// his combat.
    AttackRoll {
        /// Request id.
        id: u32,
        /// The defending player (one he may attack).
        defender: PlayerId,
        /// The attacking creature's power.
        attacker_power: u32,
        /// The blocking creatures' powers; empty for an undefended attack.
        #[serde(default)]
        blocker_powers: Vec<u32>,
    },
    /// Combat with Dice: the blocking player's defensive counter strike against an attack of
    /// the player taking his turn that he blocked in this combat.
    CounterRoll {
        /// Request id.
        id: u32,
        /// The attacking player.
        attacker: PlayerId,
        /// The blocking creature's power.
        blocker_power: u32,
        /// The attacking creature's power.
        attacker_power: u32,
    },
    /// A ruling by the host.
    Ruling {
        /// Request id.
        id: u32,
        /// What is ruled.
        ruling: Ruling,
    },
    /// Says something to everyone at the table.
    Chat {
        /// Request id.
        id: u32,
        /// The line (1–500 characters).
        text: String,
    },
    /// Host only: pauses (`paused: true`) or resumes the whole table. While paused, game
    /// requests are refused with `table_paused` and turn clocks stand still.
    Pause {
        /// Request id.
        id: u32,
        /// Pause or resume.
        paused: bool,
    },
    /// Host only, during mulligans or play: adjourns the game (`table_adjourned`). Every clock
    /// stops and nobody is judged absent until it is resumed (`resume_game`); players keep their
    /// seats and tokens and may leave. Refused with `not_playing` in the lobby or after the
    /// game, `table_adjourned` if it already is.
    Adjourn {
        /// Request id.
        id: u32,
    },
    /// Resumes an adjourned game (not to be confused with `resume`, which takes a seat back
    /// with its token). From the host it resumes the game at once; from another player still in
    /// the game it is an ask (`resume_requested`, once per player: `already_asked`), and the
    /// ask that makes a majority of the players still in the game resumes it. `not_adjourned`
    /// if it is not adjourned.
    ResumeGame {
        /// Request id.
        id: u32,
    },
    /// Host only, in every stage: removes a player. In the lobby he loses his seat; during
    /// mulligans his decision is taken as `keep` and he is eliminated when play begins; during
    /// play he is eliminated by ruling. Either way his connection is closed and his seat token
    /// revoked.
    Kick {
        /// Request id.
        id: u32,
        /// Who.
        player: PlayerId,
        /// Also refuse his address at this table from now on (`join` and `watch` answer
        /// `banned`), so he cannot come back under another name.
        #[serde(default)]
        ban: bool,
    },
    /// Host only: mutes (or unmutes) a player's chat, or every spectator's (`player` absent).
    /// A muted member's `chat` is refused with `muted`.
    Mute {
        /// Request id.
        id: u32,
        /// Whose chat; absent (nil) for all spectators.
        #[serde(default)]
        player: Option<PlayerId>,
        /// Mute (`true`) or unmute.
        muted: bool,
    },
    /// Host only: hands the host role to another seated player.
    TransferHost {
        /// Request id.
        id: u32,
        /// The new host.
        player: PlayerId,
    },
    /// Lists one page of the finished games kept as replays, newest first. Needs no table.
    ListReplays {
        /// Request id.
        id: u32,
        /// How many games of the list to skip (default 0).
        #[serde(default)]
        from: u32,
        /// The most games in the page (default 100, at most 500; a page also ends before it
        /// would pass [`MAX_PAGE_BYTES`](crate::MAX_PAGE_BYTES)).
        #[serde(default = "default_page_items")]
        limit: u32,
    },
    /// Fetches one page of a finished game's events, from event `from_seq` on. Needs no table;
    /// a game played at a table with a password needs that password or a seat token of it.
    GetReplay {
        /// Request id.
        id: u32,
        /// The finished table.
        table: TableId,
        /// The first event wanted (default 1). The answer says where the next page starts.
        #[serde(default = "first_event")]
        from_seq: u64,
        /// The table's password, if it had one.
        #[serde(default)]
        password: Option<String>,
        /// Or a seat token of that table.
        #[serde(default)]
        token: Option<SeatToken>,
    },
    /// Fetches one page of the events of the table you sit at or watch, from event `from_seq`
    /// on: how a client rebuilds its event log and chat after a reload or a resume.
    GetEvents {
        /// Request id.
        id: u32,
        /// Your table.
        table: TableId,
        /// The first event wanted (default 1; 0 counts as 1). The answer says where the next
        /// page starts.
        #[serde(default = "first_event")]
        from_seq: u64,
        /// The most events in the page (default 100, at most 500; a page also ends before it
        /// would pass [`MAX_PAGE_BYTES`](crate::MAX_PAGE_BYTES)).
        #[serde(default = "default_page_items")]
        limit: u32,
    },
    /// Creates an Ascension league, answered by `league_created` with the organiser secret.
    CreateLeague {
        /// Request id.
        id: u32,
        /// Its name (1–32 characters, unique on the server).
        name: String,
        /// A password members need to join, if any (1–64 characters).
        #[serde(default)]
        password: Option<String>,
    },
    /// Asks for one page of the leagues, sorted by name.
    ListLeagues {
        /// Request id.
        id: u32,
        /// How many leagues to skip (default 0).
        #[serde(default)]
        from: u32,
        /// The most leagues in the page (default 100, at most 500).
        #[serde(default = "default_page_items")]
        limit: u32,
    },
    /// Joins a league as a member, answered by `league_joined` with the member token.
    JoinLeague {
        /// Request id.
        id: u32,
        /// The league.
        league: LeagueId,
        /// Your name in the league (1–32 characters, unique in it).
        name: String,
        /// The league's password, if it has one.
        #[serde(default)]
        password: Option<String>,
    },
    /// One page of the league's standings and games, answered by `league`: the standings and
    /// the games at positions `from`.. of each list (a page also ends before it would pass
    /// [`MAX_PAGE_BYTES`](crate::MAX_PAGE_BYTES)).
    GetLeague {
        /// Request id.
        id: u32,
        /// The league.
        league: LeagueId,
        /// How many members (and games) to skip (default 0).
        #[serde(default)]
        from: u32,
        /// The most members (and games) in the page (default 100, at most 500).
        #[serde(default = "default_page_items")]
        limit: u32,
    },
    /// One member's deck and its whole ledger, answered by `deck`.
    GetDeck {
        /// Request id.
        id: u32,
        /// The league.
        league: LeagueId,
        /// The member.
        member: MemberId,
    },
    /// Registers your deck (once), answered by `deck`.
    RegisterDeck {
        /// Request id.
        id: u32,
        /// The league.
        league: LeagueId,
        /// Your member token.
        token: MemberToken,
        /// The deck.
        deck: DeckSpec,
    },
    /// Buys a deck option with your deck's unspent mana points (between games), answered by
    /// `deck`. Refused with a typed error, changing nothing, if it breaks a limit or overspends.
    Buy {
        /// Request id.
        id: u32,
        /// The league.
        league: LeagueId,
        /// Your member token.
        token: MemberToken,
        /// The option.
        purchase: Purchase,
        /// Cards taken out of the deck to keep it within 70 (default 0).
        #[serde(default)]
        remove: u8,
    },
    /// Takes the losing-streak remedy (once, within the deck's first ten games, after five
    /// losses in a row), answered by `deck`.
    TakeRemedy {
        /// Request id.
        id: u32,
        /// The league.
        league: LeagueId,
        /// Your member token.
        token: MemberToken,
        /// Which remedy.
        remedy: Remedy,
    },
    /// A seated player calls the host (a dispute, a question): `host_called` tells the table,
    /// and the call stays open (the snapshot's `calls`) until the host answers it with
    /// `answer_call` or any accepted `ruling`. At most one call per player every 30 seconds
    /// (`rate_limited`); a spectator is refused with `not_a_player`.
    CallHost {
        /// Request id.
        id: u32,
        /// Why: one line of 1–120 characters (the chat's character rules).
        reason: String,
    },
    /// Host only: answers an open call for the host (`host_answered`), one player's or all of
    /// them; refused with `no_open_call` if there is none.
    AnswerCall {
        /// Request id.
        id: u32,
        /// Whose call; absent (nil) for every open call.
        #[serde(default)]
        player: Option<PlayerId>,
    },
    /// A seated player says whether his camera is on, answered by `ice_servers`. Links form
    /// with the players within range whose camera is on, while the game runs (`camera_peers`).
    /// A spectator is refused with `not_a_player`.
    Camera {
        /// Request id.
        id: u32,
        /// Whether the camera is on.
        on: bool,
        /// The host's display may also show it, when it shows a sphere holding him.
        #[serde(default)]
        stream: bool,
        /// Once eliminated, he keeps his links while his position is still in the ring (a
        /// spectator of his sphere's game) instead of the camera stopping.
        #[serde(default)]
        stay: bool,
    },
    /// From a watching connection (the host's display page): shows the cameras (`stream`) of
    /// one player's sphere, answered by `ice_servers`. One display per table: a newer one
    /// replaces the older.
    CameraDisplay {
        /// Request id.
        id: u32,
        /// The host's own seat token: proof the host chose it.
        token: SeatToken,
        /// The player whose sphere the display shows; absent (nil) stops it.
        #[serde(default)]
        center: Option<PlayerId>,
    },
    /// Relays `payload` to `to`, only if the sender and `to` are linked now (`camera_peers`).
    /// Answered by `ack`; never journaled.
    Signal {
        /// Request id.
        id: u32,
        /// Who receives it.
        to: Peer,
        /// Opaque to the server (at most 12 000 bytes): the page's JSON
        /// `{"description": …}` or `{"candidate": …}`.
        payload: String,
    },
    /// Magic Tech: In the lobby of a Magic Tech table: declares one's deck size.
    #[serde(rename = "magic_tech.declare_deck")]
    #[strum(serialize = "magic_tech.declare_deck")]
    MagicTechDeclareDeck {
        /// Request id.
        id: u32,
        /// Cards in the deck (5–60).
        size: u8,
    },
    /// Magic Tech: Moves one's Magic Tech turn to its next phase (from the end phase: passes the turn).
    #[serde(rename = "magic_tech.next_phase")]
    #[strum(serialize = "magic_tech.next_phase")]
    MagicTechNextPhase {
        /// Request id.
        id: u32,
    },
    /// Magic Tech: Deploys a card from hand: face down, or a land face up at once.
    #[serde(rename = "magic_tech.deploy")]
    #[strum(serialize = "magic_tech.deploy")]
    MagicTechDeploy {
        /// Request id.
        id: u32,
        /// The land, declared, if it is one (absent: face down).
        #[serde(default)]
        land: Option<CardFace>,
    },
    /// Magic Tech: Taps one's untapped face-up card, for mana or not.
    #[serde(rename = "magic_tech.tap")]
    #[strum(serialize = "magic_tech.tap")]
    MagicTechTap {
        /// Request id.
        id: u32,
        /// Which card.
        card: CardId,
        /// Mana it makes (a basic land: 1; 0: tapped for something else).
        mana: u8,
    },
    /// Magic Tech: Spends unspent mana: counters on one's face-down card, or an activation cost.
    #[serde(rename = "magic_tech.pay")]
    #[strum(serialize = "magic_tech.pay")]
    MagicTechPay {
        /// Request id.
        id: u32,
        /// The face-down card (absent: an activation cost).
        #[serde(default)]
        card: Option<CardId>,
        /// How much (at least 1).
        amount: u16,
    },
    /// Magic Tech: Turns one's face-down card face up, declaring what it is.
    #[serde(rename = "magic_tech.reveal")]
    #[strum(serialize = "magic_tech.reveal")]
    MagicTechReveal {
        /// Request id.
        id: u32,
        /// Which card.
        card: CardId,
        /// What it is.
        face: CardFace,
    },
    /// Magic Tech: In one's deploy phase: moves a creature that began the turn in play.
    #[serde(rename = "magic_tech.relocate")]
    #[strum(serialize = "magic_tech.relocate")]
    MagicTechRelocate {
        /// Request id.
        id: u32,
        /// Which creature.
        card: CardId,
        /// `patrol`, or `guard` a card or the stockpile.
        area: Area,
    },
    /// Magic Tech: In one's missions phase: sends untapped creatures against a target.
    #[serde(rename = "magic_tech.mission")]
    #[strum(serialize = "magic_tech.mission")]
    MagicTechMission {
        /// Request id.
        id: u32,
        /// The attackers (at least one).
        attackers: Vec<CardId>,
        /// An opponent's card in play or his stockpile.
        target: Target,
    },
    /// Magic Tech: The defender's blocks for the mission under way; the mission resolves.
    #[serde(rename = "magic_tech.block")]
    #[strum(serialize = "magic_tech.block")]
    MagicTechBlock {
        /// Request id.
        id: u32,
        /// The blocks (empty: none).
        blocks: Vec<Block>,
    },
    /// Magic Tech: A spell or ability of one's own deals damage.
    #[serde(rename = "magic_tech.damage")]
    #[strum(serialize = "magic_tech.damage")]
    MagicTechDamage {
        /// Request id.
        id: u32,
        /// A card in play or a stockpile.
        target: Target,
        /// How much (at least 1).
        amount: u16,
    },
    /// Magic Tech: A healing effect removes damage counters from a card.
    #[serde(rename = "magic_tech.heal")]
    #[strum(serialize = "magic_tech.heal")]
    MagicTechHeal {
        /// Request id.
        id: u32,
        /// Which card.
        card: CardId,
        /// How many (at least 1).
        amount: u16,
    },
    /// Magic Tech: In one's upkeep: pays a creature's regeneration cost to remove one damage counter.
    #[serde(rename = "magic_tech.regenerate")]
    #[strum(serialize = "magic_tech.regenerate")]
    MagicTechRegenerate {
        /// Request id.
        id: u32,
        /// Which creature.
        card: CardId,
    },
    /// Magic Tech: A card effect makes one draw.
    #[serde(rename = "magic_tech.draw")]
    #[strum(serialize = "magic_tech.draw")]
    MagicTechDraw {
        /// Request id.
        id: u32,
        /// How many (at least 1).
        count: u8,
    },
    /// Magic Tech: Pays or loses life (negative: scraps that many) or gains it (positive: puts that many scrapheap cards under the stockpile).
    #[serde(rename = "magic_tech.life")]
    #[strum(serialize = "magic_tech.life")]
    MagicTechLife {
        /// Request id.
        id: u32,
        /// The change, not 0.
        delta: i32,
    },
    /// Magic Tech: A card effect takes one's card out of play.
    #[serde(rename = "magic_tech.leave_play")]
    #[strum(serialize = "magic_tech.leave_play")]
    MagicTechLeavePlay {
        /// Request id.
        id: u32,
        /// Which card.
        card: CardId,
        /// `hand`, `stockpile` or `scrapheap`.
        to: Zone,
    },
    /// Magic Tech: Proposes a correction to the opponent.
    #[serde(rename = "magic_tech.propose")]
    #[strum(serialize = "magic_tech.propose")]
    MagicTechPropose {
        /// Request id.
        id: u32,
        /// The correction.
        correction: Correction,
    },
    /// Magic Tech: Accepts or declines the opponent's proposed correction.
    #[serde(rename = "magic_tech.answer")]
    #[strum(serialize = "magic_tech.answer")]
    MagicTechAnswer {
        /// Request id.
        id: u32,
        /// Accept?
        accept: bool,
    },
    /// Magic Tech: The host corrects a number at a Magic Tech table.
    #[serde(rename = "magic_tech.rule")]
    #[strum(serialize = "magic_tech.rule")]
    MagicTechRule {
        /// Request id.
        id: u32,
        /// The correction.
        correction: Correction,
    },
    /// Mountain Magic: Turns over the top card of the spell deck.
    #[serde(rename = "mountain_magic.flip")]
    #[strum(serialize = "mountain_magic.flip")]
    MountainMagicFlip {
        /// Request id.
        id: u32,
    },
    /// Mountain Magic: Places the turned-over card (or, right after a placement, the discard pile's top card) on the mountain, touching cards `pos` and `pos + 1` of the row below.
    #[serde(rename = "mountain_magic.place")]
    #[strum(serialize = "mountain_magic.place")]
    MountainMagicPlace {
        /// Request id.
        id: u32,
        /// The row (1 is the row above the bottom row, 6 the top).
        row: u8,
        /// Its place in the row (from 0, left).
        pos: u8,
    },
    /// Mountain Magic: Puts the turned-over card face up on the discard pile.
    #[serde(rename = "mountain_magic.discard")]
    #[strum(serialize = "mountain_magic.discard")]
    MountainMagicDiscard {
        /// Request id.
        id: u32,
    },
    /// Mountain Magic: Chooses the path down the complete mountain: the player's forces.
    #[serde(rename = "mountain_magic.path")]
    #[strum(serialize = "mountain_magic.path")]
    MountainMagicPath {
        /// Request id.
        id: u32,
        /// The place in each row, top row (always 0) first: seven places.
        path: Vec<u8>,
    },
    /// Mountain Magic: Puts the land just drawn on one of one's cards or its ability (absent: lets it go).
    #[serde(rename = "mountain_magic.mana")]
    #[strum(serialize = "mountain_magic.mana")]
    MountainMagicMana {
        /// Request id.
        id: u32,
        /// Where (absent: nowhere).
        #[serde(default)]
        place: Option<ManaPlace>,
    },
    /// Mountain Magic: One's powered creatures attack one enemy creature.
    #[serde(rename = "mountain_magic.attack")]
    #[strum(serialize = "mountain_magic.attack")]
    MountainMagicAttack {
        /// Request id.
        id: u32,
        /// One's powered creatures, by their place in one's forces.
        attackers: Vec<u8>,
        /// The enemy creature, by its place in the occupying forces.
        target: u8,
    },
    /// Mountain Magic: Uses one's powered non-creature card.
    #[serde(rename = "mountain_magic.cast")]
    #[strum(serialize = "mountain_magic.cast")]
    MountainMagicCast {
        /// Request id.
        id: u32,
        /// Which of one's cards.
        force: u8,
        /// Its target, if its effect has one.
        #[serde(default)]
        target: Option<ForceRef>,
    },
    /// Mountain Magic: Uses a stored use of one's powered creature's activated ability.
    #[serde(rename = "mountain_magic.activate")]
    #[strum(serialize = "mountain_magic.activate")]
    MountainMagicActivate {
        /// Request id.
        id: u32,
        /// Which of one's creatures.
        force: u8,
        /// Its target, if its effect has one.
        #[serde(default)]
        target: Option<ForceRef>,
    },
    /// Mountain Magic: Ends one's battle turn: the occupying forces draw and act.
    #[serde(rename = "mountain_magic.end_turn")]
    #[strum(serialize = "mountain_magic.end_turn")]
    MountainMagicEndTurn {
        /// Request id.
        id: u32,
    },
    /// Mountain Magic: a day's mountain: its dice commitment, its standings so far and, once
    /// the day is over, its secret. Answered by `mountain_magic.standings`; not at a table.
    #[serde(rename = "mountain_magic.standings")]
    #[strum(serialize = "mountain_magic.standings")]
    MountainMagicStandings {
        /// Request id.
        id: u32,
        /// `YYYY-MM-DD` (UTC), or `today`; `bad_day` otherwise.
        day: String,
        /// Only this league's climbs (`unknown_league` if there is none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        league: Option<LeagueId>,
        /// How many places to skip (default 0).
        #[serde(default)]
        from: u32,
        /// The most climbs in the page (default 100, at most 500).
        #[serde(default = "default_page_items")]
        limit: u32,
    },
}

/// Matches every request, binding its `id` field: the one list of variants behind
/// [`ClientMessage::id`] and [`ClientMessage::id_mut`].
macro_rules! with_request_id {
    ($message:expr, $id:ident => $body:expr) => {
        match $message {
            ClientMessage::Hello { $id, .. }
            | ClientMessage::ListTables { $id, .. }
            | ClientMessage::CreateTable { $id, .. }
            | ClientMessage::Join { $id, .. }
            | ClientMessage::Watch { $id, .. }
            | ClientMessage::Resume { $id, .. }
            | ClientMessage::Leave { $id, .. }
            | ClientMessage::Start { $id, .. }
            | ClientMessage::Snapshot { $id, .. }
            | ClientMessage::Mulligan { $id, .. }
            | ClientMessage::Keep { $id, .. }
            | ClientMessage::SetPhase { $id, .. }
            | ClientMessage::EndTurn { $id, .. }
            | ClientMessage::Attack { $id, .. }
            | ClientMessage::DealDamage { $id, .. }
            | ClientMessage::ChangeLife { $id, .. }
            | ClientMessage::ChangePoison { $id, .. }
            | ClientMessage::Concede { $id, .. }
            | ClientMessage::ExtraTurn { $id, .. }
            | ClientMessage::AttackRoll { $id, .. }
            | ClientMessage::CounterRoll { $id, .. }
            | ClientMessage::Ruling { $id, .. }
            | ClientMessage::Chat { $id, .. }
            | ClientMessage::Pause { $id, .. }
            | ClientMessage::Adjourn { $id, .. }
            | ClientMessage::ResumeGame { $id, .. }
            | ClientMessage::Kick { $id, .. }
            | ClientMessage::TransferHost { $id, .. }
            | ClientMessage::Mute { $id, .. }
            | ClientMessage::ListReplays { $id, .. }
            | ClientMessage::GetReplay { $id, .. }
            | ClientMessage::GetEvents { $id, .. }
            | ClientMessage::ChooseFirst { $id, .. }
            | ClientMessage::CreateLeague { $id, .. }
            | ClientMessage::ListLeagues { $id, .. }
            | ClientMessage::JoinLeague { $id, .. }
            | ClientMessage::GetLeague { $id, .. }
            | ClientMessage::GetDeck { $id, .. }
            | ClientMessage::RegisterDeck { $id, .. }
            | ClientMessage::Buy { $id, .. }
            | ClientMessage::TakeRemedy { $id, .. }
            | ClientMessage::CallHost { $id, .. }
            | ClientMessage::AnswerCall { $id, .. }
            | ClientMessage::Camera { $id, .. }
            | ClientMessage::CameraDisplay { $id, .. }
            | ClientMessage::Signal { $id, .. }
            | ClientMessage::MagicTechDeclareDeck { $id, .. }
            | ClientMessage::MagicTechNextPhase { $id, .. }
            | ClientMessage::MagicTechDeploy { $id, .. }
            | ClientMessage::MagicTechTap { $id, .. }
            | ClientMessage::MagicTechPay { $id, .. }
            | ClientMessage::MagicTechReveal { $id, .. }
            | ClientMessage::MagicTechRelocate { $id, .. }
            | ClientMessage::MagicTechMission { $id, .. }
            | ClientMessage::MagicTechBlock { $id, .. }
            | ClientMessage::MagicTechDamage { $id, .. }
            | ClientMessage::MagicTechHeal { $id, .. }
            | ClientMessage::MagicTechRegenerate { $id, .. }
            | ClientMessage::MagicTechDraw { $id, .. }
            | ClientMessage::MagicTechLife { $id, .. }
            | ClientMessage::MagicTechLeavePlay { $id, .. }
            | ClientMessage::MagicTechPropose { $id, .. }
            | ClientMessage::MagicTechAnswer { $id, .. }
            | ClientMessage::MagicTechRule { $id, .. }
            | ClientMessage::MountainMagicFlip { $id, .. }
            | ClientMessage::MountainMagicPlace { $id, .. }
            | ClientMessage::MountainMagicDiscard { $id, .. }
            | ClientMessage::MountainMagicPath { $id, .. }
            | ClientMessage::MountainMagicMana { $id, .. }
            | ClientMessage::MountainMagicAttack { $id, .. }
            | ClientMessage::MountainMagicCast { $id, .. }
            | ClientMessage::MountainMagicActivate { $id, .. }
            | ClientMessage::MountainMagicEndTurn { $id, .. }
            | ClientMessage::MountainMagicStandings { $id, .. } => $body,
        }
    };
}

impl ClientMessage {
    /// The request id, echoed by the server as `reply_to`.
    pub fn id(&self) -> u32 {
        *with_request_id!(self, id => id)
    }

    /// The request id, to set it (a client builds a request, then numbers it).
    pub fn id_mut(&mut self) -> &mut u32 {
        with_request_id!(self, id => id)
    }

    /// The `type` tag (`"create_table"`, …).
    pub fn name(&self) -> &'static str {
        self.into()
    }

    /// Every `type` tag a client may send, in declaration order: serde's names (the same
    /// snake_case rule, held equal by the codec tests).
    pub const NAMES: &'static [&'static str] = <Self as strum::VariantNames>::VARIANTS;

    /// The request asking for a Mountain Magic command, numbered `id` (what a client or a bot
    /// sends for a move the climb offers, `Climb::legal_moves`).
    pub fn mountain_magic(id: u32, command: MountainCommand) -> Self {
        use MountainCommand as C;
        match command {
            C::Flip => Self::MountainMagicFlip { id },
            C::Place { row, pos } => Self::MountainMagicPlace { id, row, pos },
            C::Discard => Self::MountainMagicDiscard { id },
            C::Path { path } => Self::MountainMagicPath { id, path },
            C::Mana { place } => Self::MountainMagicMana { id, place },
            C::Attack { attackers, target } => Self::MountainMagicAttack {
                id,
                attackers,
                target,
            },
            C::Cast { force, target } => Self::MountainMagicCast { id, force, target },
            C::Activate { force, target } => Self::MountainMagicActivate { id, force, target },
            C::EndTurn => Self::MountainMagicEndTurn { id },
        }
    }
}

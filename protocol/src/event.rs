//! What happened at a table: the rules core's events and the session's table-level events
//! (connections, host, chat, …), one enum, folded by [`Table::apply`](crate::rules::Table::apply).
//! Events are numbered consecutively per table from 1.

use serde::{Deserialize, Serialize};

use crate::league::{Bonus, SeatDeck};
use crate::magic_tech_types::{Area, Block, CardFace, CardId, Correction, MtPhase, Target, Zone};
use crate::mountain_magic_types::{CardNo, Ending, ForceRef, ManaPlace, Removal, Side, Spot};
use crate::types::{
    EliminationCause, KeepReason, Phase, PlayerId, RollResult, SeatingMode, Standing,
    TurnEndReason, TurnId, TurnRemovalReason,
};

/// One fact about a table, in the order it happened. New kinds are added as the game grows
/// (non-exhaustive): a client shows one it does not know by its `kind` and fields.
#[derive(
    Debug, Clone, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr, strum::VariantNames,
)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// A player took a seat in the lobby.
    PlayerJoined {
        /// His id (join order).
        player: PlayerId,
        /// His display name.
        name: String,
        /// What his client contributed to the table's dice (at most 64 characters; empty if
        /// nothing): mixed into every random outcome (PROTOCOL.md, "Verifiable dice").
        #[serde(default, skip_serializing_if = "String::is_empty")]
        entropy: String,
        /// At a league table: his member number, deck and deck power.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        deck: Option<SeatDeck>,
    },
    /// At a league table, the player whose deck is furthest behind chose who plays first.
    FirstPlayerChosen {
        /// Who chose.
        by: PlayerId,
        /// Who will play first.
        player: PlayerId,
    },
    /// A player gave up his seat before the start.
    PlayerLeft {
        /// Who.
        player: PlayerId,
    },
    /// The game started: seating, first player and starting turns are fixed.
    GameStarted {
        /// Players in seating order (seat 0 first; the next seat is to the left).
        seating: Vec<PlayerId>,
        /// Who plays (and decides on mulligans) first.
        first_player: PlayerId,
        /// Holders of the starting turns, turn 0 first.
        turn_holders: Vec<PlayerId>,
        /// SHA-256 of the table's dice secret, in hex: every random outcome (this seating, the
        /// first player, each d20) comes from that secret, revealed at the end of the game
        /// (`dice_revealed`). Empty for tables started before verifiable dice existed.
        #[serde(default)]
        commitment: String,
        /// Whether the host chose the first player (otherwise the dice drew him).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        first_player_chosen: bool,
        /// At a league table, who decided who plays first (the player furthest behind in deck
        /// power, 5 points or more), if anyone did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        first_decided_by: Option<PlayerId>,
        /// At a league table, the deck power bonuses (the seed's table, each deck against the
        /// strongest deck at the table): already in the players' life and hand sizes.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        bonuses: Vec<Bonus>,
        /// How the seating was made: `random` (the dice drew it; left out, and the default for
        /// journals written before the host could choose), `joined` (join order) or `arranged`
        /// (the host's order). Only a random seating is the dice's to verify.
        #[serde(default, skip_serializing_if = "SeatingMode::is_random")]
        seating_mode: SeatingMode,
    },
    /// The deciding player mulliganed.
    Mulliganed {
        /// Who.
        player: PlayerId,
        /// His new hand size.
        hand_size: u8,
    },
    /// The deciding player kept; after the last keep, play begins.
    Kept {
        /// Who.
        player: PlayerId,
        /// The hand size he kept.
        hand_size: u8,
        /// Why: he decided (the default), his mulligan clock ran out, he was disconnected past
        /// the grace period, or the host ruled it.
        #[serde(default)]
        reason: KeepReason,
    },
    /// A player began the turn he holds.
    TurnBegan {
        /// Which turn.
        turn: TurnId,
        /// Whose.
        player: PlayerId,
    },
    /// The phase indicator of a running turn moved.
    PhaseChanged {
        /// Which turn.
        turn: TurnId,
        /// The new phase.
        phase: Phase,
    },
    /// A player attacked an opponent in range.
    Attacked {
        /// The player taking his turn.
        attacker: PlayerId,
        /// The defending player.
        defender: PlayerId,
        /// Combat damage dealt; the defender's life goes down by it.
        damage: u32,
        /// Poison counters dealt.
        poison: u32,
    },
    /// A spell or ability dealt damage.
    DamageDealt {
        /// Who dealt it.
        source: PlayerId,
        /// Who took it.
        target: PlayerId,
        /// How much.
        amount: u32,
    },
    /// A life total was set (a player's own change, or a ruling).
    LifeChanged {
        /// Whose.
        player: PlayerId,
        /// The new total.
        life: i32,
    },
    /// Poison counters were set.
    PoisonChanged {
        /// Whose.
        player: PlayerId,
        /// The new count.
        poison: u32,
    },
    /// Players left the game together.
    Eliminated {
        /// Who (their positions still count for range until removed).
        players: Vec<PlayerId>,
        /// Why.
        cause: EliminationCause,
    },
    /// A turn is marked to be removed when it ends (a pending reduction).
    TurnMarkedForRemoval {
        /// Which turn.
        turn: TurnId,
    },
    /// A pending reduction was made unnecessary by a merge; the turn will pass again.
    TurnRemovalCancelled {
        /// Which turn.
        turn: TurnId,
    },
    /// A running turn ended; the next event passes it on or removes it.
    TurnEnded {
        /// Which turn.
        turn: TurnId,
        /// Whose it was.
        player: PlayerId,
        /// Why.
        reason: TurnEndReason,
    },
    /// A turn passed to the left; its new holder waits until he may begin it.
    TurnPassed {
        /// Which turn.
        turn: TurnId,
        /// Previous holder.
        from: PlayerId,
        /// New holder.
        to: PlayerId,
    },
    /// A turn left the table: one fewer simultaneous turn.
    TurnRemoved {
        /// Which turn.
        turn: TurnId,
        /// Its last holder.
        player: PlayerId,
        /// Why.
        reason: TurnRemovalReason,
    },
    /// Eliminated players' positions were taken out of the ring.
    PositionsRemoved {
        /// Whose positions, in ring order.
        players: Vec<PlayerId>,
    },
    /// Every living player has been disconnected for the table's absence limit (never less than
    /// the grace period): the game ends where it stands. `game_over` (the living players share
    /// the best place) and `dice_revealed` follow in the same batch.
    GameAbandoned,
    /// One player or none is left, or the game was abandoned (`game_abandoned` just before).
    GameOver {
        /// Everyone's place and mana points, best place first.
        standings: Vec<Standing>,
    },
    /// The game is over: the dice secret whose SHA-256 `game_started` published, in hex, so
    /// anyone can recompute every random outcome of the game.
    DiceRevealed {
        /// 32 bytes in hex.
        secret: String,
    },
    /// A player takes an extra turn (Time Walk and friends).
    ExtraTurnGranted {
        /// Who.
        player: PlayerId,
        /// `false`: right after the turn he is taking; `true`: just before his next turn (he
        /// is not taking one, or could not keep his turn for it).
        before_next: bool,
    },
    /// An extra turn a player was to take after his current turn will come just before his
    /// next turn instead: another turn is too close for him to keep his own.
    ExtraTurnDeferred {
        /// Who.
        player: PlayerId,
    },
    /// A turn that just ended stays with its player for an extra turn (or, after an extra
    /// turn taken before it, for his normal turn). It waits, and begins when it may.
    TurnKept {
        /// The turn.
        turn: TurnId,
        /// Its player.
        player: PlayerId,
    },
    /// Combat with Dice: an attack roll or a defensive counter strike, rolled by the server.
    AttackRolled {
        /// The roll's index in the game (0 for the first d20): the dice input (PROTOCOL.md).
        roll: u32,
        /// Who rolled: the attacking player, or for a counter strike the blocking player.
        roller: PlayerId,
        /// The other player: the defender, or for a counter strike the attacking player.
        opponent: PlayerId,
        /// Whether this is a defensive counter strike.
        counter: bool,
        /// The rolling creature's power.
        power: u32,
        /// The opposing creatures' powers (empty: an undefended attack on the player).
        opposing: Vec<u32>,
        /// The natural d20 (1–20).
        natural: u8,
        /// What was added to it: the power minus the opposing creatures' average power
        /// (rounded down).
        modifier: i64,
        /// natural + modifier.
        total: i64,
        /// The Attack Table's result.
        result: RollResult,
        /// Damage the rolling creature deals (to the player if undefended, otherwise to the
        /// opposing creatures).
        damage: u32,
        /// Damage the rolling creature takes itself (a critical miss: half its power).
        self_damage: u32,
    },
    /// A seated player's connection dropped or came back.
    ConnectionChanged {
        /// Who.
        player: PlayerId,
        /// Whether a connection holds his seat now.
        connected: bool,
    },
    /// Host rights moved to another player (or to nobody).
    HostChanged {
        /// The new host; `None` if no seated player holds host rights.
        player: Option<PlayerId>,
    },
    /// The number of spectators changed.
    SpectatorsChanged {
        /// How many connections watch the table now.
        spectators: u32,
    },
    /// A chat line.
    Chat {
        /// The player who said it; `None` for a spectator or the server.
        from: Option<PlayerId>,
        /// The speaker's display name (the server's lines use `"server"`).
        name: String,
        /// What was said.
        text: String,
    },
    /// The host paused or resumed the table.
    TablePaused {
        /// Whether the table is paused now.
        paused: bool,
    },
    /// The host adjourned the game (`adjourned: true`): every clock stops, nobody is judged
    /// absent, the game is never abandoned, seats and seat tokens stay valid and everyone may
    /// leave, however long it lasts (across restarts too). `adjourned: false`: it was resumed
    /// (by the host, or by a quorum of players asking: `resume_requested`), and play goes on
    /// where it stopped. Adjourning ends a pause.
    TableAdjourned {
        /// Whether the game is adjourned now.
        adjourned: bool,
    },
    /// A player asked to resume an adjourned game. When a majority of the players still in the
    /// game have asked, `table_adjourned` with `adjourned: false` follows in the same batch.
    ResumeRequested {
        /// Who asked.
        player: PlayerId,
    },
    /// A player has been disconnected for longer than the table's absence limit; the host may
    /// rule him out. Cleared when he reconnects (`connection_changed`).
    PlayerAbsent {
        /// Who.
        player: PlayerId,
    },
    /// The host removed a player. In the lobby `player_left` follows; during play
    /// `eliminated`; during mulligans `kept` follows if his decision was due, and `eliminated`
    /// follows when play begins.
    PlayerKicked {
        /// Who.
        player: PlayerId,
        /// Whether his address is also refused at this table from now on.
        #[serde(default)]
        banned: bool,
    },
    /// The host muted or unmuted a player's chat, or every spectator's.
    PlayerMuted {
        /// Whose chat; `None` for all spectators.
        player: Option<PlayerId>,
        /// Whether it is muted now.
        muted: bool,
    },
    /// A player called the host (`call_host`): his call is open until the host answers it
    /// (`host_answered`). A player's new call replaces his open one.
    HostCalled {
        /// Who called.
        player: PlayerId,
        /// Why, one short line.
        reason: String,
    },
    /// The host answered open calls (`answer_call`, or a `ruling`, which answers every open
    /// call): they are closed.
    HostAnswered {
        /// Whose call; `None`: every open call.
        player: Option<PlayerId>,
    },
    /// Magic Tech: A player declared his deck size (lobby).
    #[serde(rename = "magic_tech.deck_declared")]
    #[strum(serialize = "magic_tech.deck_declared")]
    MagicTechDeckDeclared {
        /// Who.
        player: PlayerId,
        /// Cards in his deck.
        size: u8,
    },
    /// Magic Tech: The active player's turn entered a phase (`untap`: his permanents untap; `end`: his creatures activated this turn go on patrol).
    #[serde(rename = "magic_tech.phase_began")]
    #[strum(serialize = "magic_tech.phase_began")]
    MagicTechPhaseBegan {
        /// Whose turn.
        player: PlayerId,
        /// The phase.
        phase: MtPhase,
    },
    /// Magic Tech: A player drew cards from his stockpile (his draw phase, or a card effect).
    #[serde(rename = "magic_tech.drew")]
    #[strum(serialize = "magic_tech.drew")]
    MagicTechDrew {
        /// Who.
        player: PlayerId,
        /// How many.
        count: u8,
    },
    /// Magic Tech: A card left a hand for play: face down, or a land face up.
    #[serde(rename = "magic_tech.deployed")]
    #[strum(serialize = "magic_tech.deployed")]
    MagicTechDeployed {
        /// Whose.
        player: PlayerId,
        /// Its new number.
        card: CardId,
        /// The land, if it is one (absent: face down).
        #[serde(default)]
        land: Option<CardFace>,
    },
    /// Magic Tech: A card was tapped by its owner, for `mana` unspent mana.
    #[serde(rename = "magic_tech.tapped")]
    #[strum(serialize = "magic_tech.tapped")]
    MagicTechTapped {
        /// Which.
        card: CardId,
        /// Mana it made.
        mana: u8,
    },
    /// Magic Tech: Unspent mana was spent: counters on a face-down card, or an activation cost.
    #[serde(rename = "magic_tech.paid")]
    #[strum(serialize = "magic_tech.paid")]
    MagicTechPaid {
        /// Whose mana.
        player: PlayerId,
        /// The face-down card (absent: an activation cost).
        #[serde(default)]
        card: Option<CardId>,
        /// How much.
        amount: u16,
    },
    /// Magic Tech: A face-down card was turned face up as declared; its counters were spent (an instant or sorcery goes on to the scrapheap).
    #[serde(rename = "magic_tech.revealed")]
    #[strum(serialize = "magic_tech.revealed")]
    MagicTechRevealed {
        /// Which.
        card: CardId,
        /// What it is.
        face: CardFace,
        /// What revealing it cost (the server's reckoning).
        cost: u16,
    },
    /// Magic Tech: A creature moved to patrol or to guard.
    #[serde(rename = "magic_tech.relocated")]
    #[strum(serialize = "magic_tech.relocated")]
    MagicTechRelocated {
        /// Which.
        card: CardId,
        /// Where it is now.
        area: Area,
    },
    /// Magic Tech: A mission began; the defender blocks next.
    #[serde(rename = "magic_tech.mission_began")]
    #[strum(serialize = "magic_tech.mission_began")]
    MagicTechMissionBegan {
        /// The attacking player.
        player: PlayerId,
        /// His attackers.
        attackers: Vec<CardId>,
        /// What they attack.
        target: Target,
    },
    /// Magic Tech: The defender's blocks for the mission under way.
    #[serde(rename = "magic_tech.blocked")]
    #[strum(serialize = "magic_tech.blocked")]
    MagicTechBlocked {
        /// The blocks (empty: none).
        blocks: Vec<Block>,
    },
    /// Magic Tech: Damage was dealt to a card or a stockpile, with its effect: damage counters added to a face-up card (after its armour), mana counters removed from a face-down one, or cards discarded from a stockpile.
    #[serde(rename = "magic_tech.damaged")]
    #[strum(serialize = "magic_tech.damaged")]
    MagicTechDamaged {
        /// What took it.
        target: Target,
        /// Damage dealt.
        amount: u16,
        /// Its effect, by target.
        effect: u16,
    },
    /// Magic Tech: A card left play for the scrapheap: its damage reached its structure, or it was buried (damaged face down with no counters).
    #[serde(rename = "magic_tech.destroyed")]
    #[strum(serialize = "magic_tech.destroyed")]
    MagicTechDestroyed {
        /// Which.
        card: CardId,
        /// Buried face down.
        buried: bool,
    },
    /// Magic Tech: The mission is over: every creature involved still in play is tapped.
    #[serde(rename = "magic_tech.mission_ended")]
    #[strum(serialize = "magic_tech.mission_ended")]
    MagicTechMissionEnded {
        /// The creatures tapped.
        tapped: Vec<CardId>,
    },
    /// Magic Tech: A player put cards from the top of his stockpile on his scrapheap (paid or lost life).
    #[serde(rename = "magic_tech.scrapped")]
    #[strum(serialize = "magic_tech.scrapped")]
    MagicTechScrapped {
        /// Who.
        player: PlayerId,
        /// How many.
        count: u8,
    },
    /// Magic Tech: A player put cards from the top of his scrapheap under his stockpile (gained life).
    #[serde(rename = "magic_tech.recovered")]
    #[strum(serialize = "magic_tech.recovered")]
    MagicTechRecovered {
        /// Who.
        player: PlayerId,
        /// How many.
        count: u8,
    },
    /// Magic Tech: Damage counters were removed from a card (a healing effect, or regeneration).
    #[serde(rename = "magic_tech.healed")]
    #[strum(serialize = "magic_tech.healed")]
    MagicTechHealed {
        /// Which.
        card: CardId,
        /// How many.
        amount: u16,
    },
    /// Magic Tech: A card effect took a card out of play.
    #[serde(rename = "magic_tech.left_play")]
    #[strum(serialize = "magic_tech.left_play")]
    MagicTechLeftPlay {
        /// Which.
        card: CardId,
        /// Where it went.
        to: Zone,
    },
    /// Magic Tech: A player proposed a correction; the other answers.
    #[serde(rename = "magic_tech.proposed")]
    #[strum(serialize = "magic_tech.proposed")]
    MagicTechProposed {
        /// Who.
        player: PlayerId,
        /// What.
        correction: Correction,
    },
    /// Magic Tech: The proposed correction was declined (or withdrawn) and changes nothing.
    #[serde(rename = "magic_tech.declined")]
    #[strum(serialize = "magic_tech.declined")]
    MagicTechDeclined {
        /// Who declined it.
        player: PlayerId,
    },
    /// Magic Tech: A correction took effect: accepted by the other player, or ruled by the host.
    #[serde(rename = "magic_tech.corrected")]
    #[strum(serialize = "magic_tech.corrected")]
    MagicTechCorrected {
        /// What.
        correction: Correction,
        /// Who accepted it (absent: the host ruled it).
        #[serde(default)]
        by: Option<PlayerId>,
    },
    /// Magic Tech: A player had to draw or lose cards from an empty stockpile: he has lost (`game_over` follows).
    #[serde(rename = "magic_tech.ran_out")]
    #[strum(serialize = "magic_tech.ran_out")]
    MagicTechRanOut {
        /// Who.
        player: PlayerId,
    },
    /// Mountain Magic: The deal: the bottom row face up, and how many cards each face-down pile holds.
    #[serde(rename = "mountain_magic.dealt")]
    #[strum(serialize = "mountain_magic.dealt")]
    MountainMagicDealt {
        /// The seven cards of the bottom row, left to right.
        bottom: Vec<CardNo>,
        /// Cards left in the spell deck.
        spells: u16,
        /// Cards in the land deck.
        lands: u16,
    },
    /// Mountain Magic: The spell deck's top card was turned over.
    #[serde(rename = "mountain_magic.flipped")]
    #[strum(serialize = "mountain_magic.flipped")]
    MountainMagicFlipped {
        /// Which.
        card: CardNo,
    },
    /// Mountain Magic: A card was placed on the mountain.
    #[serde(rename = "mountain_magic.placed")]
    #[strum(serialize = "mountain_magic.placed")]
    MountainMagicPlaced {
        /// Which.
        card: CardNo,
        /// Its row.
        row: u8,
        /// Its place in the row.
        pos: u8,
        /// Whether it came from the discard pile (else it was the turned-over card).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        from_discard: bool,
    },
    /// Mountain Magic: The turned-over card went face up to the discard pile.
    #[serde(rename = "mountain_magic.discarded")]
    #[strum(serialize = "mountain_magic.discarded")]
    MountainMagicDiscarded {
        /// Which.
        card: CardNo,
    },
    /// Mountain Magic: The spell deck ran out before the mountain was complete.
    #[serde(rename = "mountain_magic.climb_failed")]
    #[strum(serialize = "mountain_magic.climb_failed")]
    MountainMagicClimbFailed,
    /// Mountain Magic: The path was chosen: its cards, top first, are the player's forces.
    #[serde(rename = "mountain_magic.path_chosen")]
    #[strum(serialize = "mountain_magic.path_chosen")]
    MountainMagicPathChosen {
        /// The place in each row, top row first.
        path: Vec<u8>,
    },
    /// Mountain Magic: The occupying forces were turned over: the battle begins.
    #[serde(rename = "mountain_magic.occupiers_revealed")]
    #[strum(serialize = "mountain_magic.occupiers_revealed")]
    MountainMagicOccupiersRevealed {
        /// The five cards.
        cards: Vec<CardNo>,
    },
    /// Mountain Magic: A wizard drew the land deck's top card for his turn.
    #[serde(rename = "mountain_magic.mana_drawn")]
    #[strum(serialize = "mountain_magic.mana_drawn")]
    MountainMagicManaDrawn {
        /// Whose turn.
        side: Side,
        /// The land.
        land: CardNo,
    },
    /// Mountain Magic: The land just drawn was destroyed (an earlier land destruction).
    #[serde(rename = "mountain_magic.land_destroyed")]
    #[strum(serialize = "mountain_magic.land_destroyed")]
    MountainMagicLandDestroyed {
        /// Whose.
        side: Side,
    },
    /// Mountain Magic: The land just drawn powers one of its wizard's cards (or its ability).
    #[serde(rename = "mountain_magic.mana_placed")]
    #[strum(serialize = "mountain_magic.mana_placed")]
    MountainMagicManaPlaced {
        /// Whose.
        side: Side,
        /// Where.
        place: ManaPlace,
    },
    /// Mountain Magic: The land just drawn was let go (nothing could use it, or its wizard chose so).
    #[serde(rename = "mountain_magic.mana_unused")]
    #[strum(serialize = "mountain_magic.mana_unused")]
    MountainMagicManaUnused {
        /// Whose.
        side: Side,
    },
    /// Mountain Magic: An upkeep was paid with the land deck's top card on a creature's powering.
    #[serde(rename = "mountain_magic.upkeep_paid")]
    #[strum(serialize = "mountain_magic.upkeep_paid")]
    MountainMagicUpkeepPaid {
        /// The creature.
        card: ForceRef,
        /// The land spent.
        land: CardNo,
    },
    /// Mountain Magic: A card was used (and unpowered; an ability: one stored use spent).
    #[serde(rename = "mountain_magic.used")]
    #[strum(serialize = "mountain_magic.used")]
    MountainMagicUsed {
        /// The card.
        card: ForceRef,
        /// Its activated ability rather than the card.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        ability: bool,
        /// Its target.
        target: Option<ForceRef>,
    },
    /// Mountain Magic: Creatures attacked one enemy creature.
    #[serde(rename = "mountain_magic.attacked")]
    #[strum(serialize = "mountain_magic.attacked")]
    MountainMagicAttacked {
        /// The attackers.
        attackers: Vec<ForceRef>,
        /// The creature attacked.
        target: ForceRef,
    },
    /// Mountain Magic: A card left the battle.
    #[serde(rename = "mountain_magic.removed")]
    #[strum(serialize = "mountain_magic.removed")]
    MountainMagicRemoved {
        /// Which.
        card: ForceRef,
        /// Why.
        why: Removal,
    },
    /// Mountain Magic: A powered card was tapped: unpowered.
    #[serde(rename = "mountain_magic.unpowered")]
    #[strum(serialize = "mountain_magic.unpowered")]
    MountainMagicUnpowered {
        /// Which.
        card: ForceRef,
    },
    /// Mountain Magic: An unpowered card was untapped: powered.
    #[serde(rename = "mountain_magic.untapped")]
    #[strum(serialize = "mountain_magic.untapped")]
    MountainMagicUntapped {
        /// Which.
        card: ForceRef,
    },
    /// Mountain Magic: Cards from the top of the land deck went out of play (discards, extra pick-ups).
    #[serde(rename = "mountain_magic.lands_discarded")]
    #[strum(serialize = "mountain_magic.lands_discarded")]
    MountainMagicLandsDiscarded {
        /// The wizard made to discard or pick up.
        side: Side,
        /// The lands, top first.
        lands: Vec<CardNo>,
    },
    /// Mountain Magic: The next land a wizard draws is to be destroyed.
    #[serde(rename = "mountain_magic.land_doomed")]
    #[strum(serialize = "mountain_magic.land_doomed")]
    MountainMagicLandDoomed {
        /// Whose.
        side: Side,
    },
    /// Mountain Magic: A wizard's mana pool was emptied: all his cards are unpowered.
    #[serde(rename = "mountain_magic.pool_emptied")]
    #[strum(serialize = "mountain_magic.pool_emptied")]
    MountainMagicPoolEmptied {
        /// Whose.
        side: Side,
    },
    /// Mountain Magic: The player drew cards from what is left of his mountain (top row first, left to right):
    /// Mountain Magic: they join his forces, unpowered.
    #[serde(rename = "mountain_magic.drew_from_mountain")]
    #[strum(serialize = "mountain_magic.drew_from_mountain")]
    MountainMagicDrewFromMountain {
        /// The places taken.
        cards: Vec<Spot>,
    },
    /// Mountain Magic: A wizard's turn ended.
    #[serde(rename = "mountain_magic.turn_ended")]
    #[strum(serialize = "mountain_magic.turn_ended")]
    MountainMagicTurnEnded {
        /// Whose.
        side: Side,
    },
    /// Mountain Magic: The battle ended.
    #[serde(rename = "mountain_magic.ended")]
    #[strum(serialize = "mountain_magic.ended")]
    MountainMagicEnded {
        /// How.
        ending: Ending,
    },
}

impl Event {
    /// Every `kind` tag, in declaration order: serde's names (the same snake_case rule, held
    /// equal by the codec tests).
    pub const NAMES: &'static [&'static str] = <Self as strum::VariantNames>::VARIANTS;

    /// The `kind` tag (`"turn_began"`, …).
    pub fn name(&self) -> &'static str {
        self.into()
    }

    /// Whether the event comes from the rules core (as opposed to the table-level events:
    /// connections, host, spectators and chat).
    pub fn is_game_event(&self) -> bool {
        !matches!(
            self,
            Event::ConnectionChanged { .. }
                | Event::HostChanged { .. }
                | Event::SpectatorsChanged { .. }
                | Event::Chat { .. }
                | Event::TablePaused { .. }
                | Event::TableAdjourned { .. }
                | Event::ResumeRequested { .. }
                | Event::PlayerAbsent { .. }
                | Event::PlayerKicked { .. }
                | Event::PlayerMuted { .. }
                | Event::HostCalled { .. }
                | Event::HostAnswered { .. }
        )
    }
}

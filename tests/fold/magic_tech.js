// Magic Tech's page fold (`GMFold.games.magic_tech`; tests/tests/fold.rs runs it) over a scripted
// game that reaches every `magic_tech.*` event, checking after every event what the rules keep
// (docs/RULES.md, "Magic Tech"; issue 30's property list): each player's card count is his
// declared deck (stockpile + hand + scrapheap + his cards in play), no count or counter is
// negative, a destroyed card leaves play and its guards go on patrol, the turn's deployments and
// land drops are counted; and that an event that does not fit is a FoldError. Until the rules
// core exposes random legal games, this is the fold's check; the random games of fold.rs will
// hold it to the Rust fold field for field.
//
// Usage: node magic_tech.js <path to fold.js>. Prints what went wrong and exits 1, or prints
// "the Magic Tech fold holds" and exits 0.
"use strict";

require(process.argv[2]);
const F = globalThis.GMFold;
const failures = [];
const expect = (what, ok) => { if (!ok) failures.push(what); };

const view = F.emptyView(7, "Magic Tech", { game: "magic_tech", seats: 2 });
const board = () => view.magic_tech;
const side = (id) => board().sides.find((s) => s.player === id);
const card = (id) => board().cards.find((c) => c.card === id);
const kinds = new Set();

function invariants(after) {
  for (const s of board().sides) {
    for (const k of ["stockpile", "hand", "scrapheap", "mana"]) expect(`${after}: ${k} of ${s.player} is ${s[k]}`, Number.isInteger(s[k]) && s[k] >= 0);
    if (view.stage !== "lobby") {
      const inPlay = board().cards.filter((c) => c.owner === s.player).length;
      const count = s.stockpile + s.hand + s.scrapheap + inPlay;
      expect(`${after}: player ${s.player} holds ${count} cards, his deck is ${s.deck}`, count === s.deck);
    }
    const p = view.players.find((q) => q.player === s.player);
    expect(`${after}: the seat's hand follows the side's`, p && p.hand_size === s.hand);
  }
  for (const c of board().cards) {
    expect(`${after}: counters of #${c.card}`, c.counters >= 0 && c.damage >= 0);
    if (c.area.kind === "guard" && c.area.card !== null) expect(`${after}: #${c.card} guards a card in play`, !!card(c.area.card));
  }
  const turns = view.turns.length;
  expect(`${after}: one running turn while a player is active`, turns === (board().active === null ? 0 : 1));
}

let seq = 0;
function apply(e) {
  F.applyEvent(view, ++seq, e);
  kinds.add(e.kind);
  invariants(`after ${e.kind} (${seq})`);
}

/** An event that must not fit: refused with a FoldError. */
function refused(what, e) {
  const copy = F.clone(view);
  let error = null;
  try { F.applyEvent(copy, seq + 1, e); } catch (err) { error = err; }
  expect(`${what} is refused`, error instanceof F.FoldError);
}

const land = (name, basic) => ({ name, type: "land", cost: { generic: 0, coloured: [] }, power: 0, toughness: 0, basic, keywords: {} });
const creature = (name, generic, coloured, power, toughness) => ({ name, type: "creature", cost: { generic, coloured }, power, toughness, keywords: {} });

apply({ kind: "player_joined", player: 0, name: "Ann", entropy: "" });
apply({ kind: "player_joined", player: 1, name: "Bob", entropy: "" });
apply({ kind: "player_joined", player: 2, name: "Cy", entropy: "" });
apply({ kind: "player_left", player: 2 });
expect("a player who leaves the lobby takes his side", !side(2) && board().sides.length === 2);
apply({ kind: "magic_tech.deck_declared", player: 0, size: 12 });
refused("a start before every deck is declared", { kind: "game_started", seating: [1, 0], first_player: 1, commitment: "c" });
apply({ kind: "magic_tech.deck_declared", player: 1, size: 9 });
apply({ kind: "game_started", seating: [1, 0], first_player: 1, commitment: "c" });
expect("the first player sits first", view.players[0].player === 1 && view.ring.join() === "1,0");
expect("both drew five", side(0).hand === 5 && side(1).hand === 5);
refused("the second player's mulligan first", { kind: "mulliganed", player: 0, hand_size: 4 });
apply({ kind: "mulliganed", player: 1, hand_size: 4 });
apply({ kind: "kept", player: 1, hand_size: 4 });
expect("then the other decides", view.mulligan_decider === 0);
apply({ kind: "kept", player: 0, hand_size: 5 });
expect("both kept: playing", view.stage === "playing" && view.mulligan_decider === null);

// Bob's first turn: one draw, a Forest, an Elf paid and revealed.
apply({ kind: "turn_began", turn: 0, player: 1 });
apply({ kind: "magic_tech.phase_began", player: 1, phase: "untap" });
apply({ kind: "magic_tech.phase_began", player: 1, phase: "draw" });
apply({ kind: "magic_tech.drew", player: 1, count: 1 });
apply({ kind: "magic_tech.phase_began", player: 1, phase: "upkeep" });
apply({ kind: "magic_tech.phase_began", player: 1, phase: "deploy" });
apply({ kind: "magic_tech.deployed", player: 1, card: 0, land: land("Forest", "green") });
refused("a card numbered out of order", { kind: "magic_tech.deployed", player: 1, card: 5, land: null });
apply({ kind: "magic_tech.deployed", player: 1, card: 1, land: null });
expect("one deployment and one land drop counted", board().deployed === 1 && board().lands === 1);
apply({ kind: "magic_tech.tapped", card: 0, mana: 1 });
refused("tapping a tapped card", { kind: "magic_tech.tapped", card: 0, mana: 1 });
refused("paying more than the unspent mana", { kind: "magic_tech.paid", player: 1, card: 1, amount: 2 });
apply({ kind: "magic_tech.paid", player: 1, card: 1, amount: 1 });
expect("the mana became a counter", card(1).counters === 1 && side(1).mana === 0);
apply({ kind: "magic_tech.revealed", card: 1, face: creature("Llanowar Elves", 0, ["green"], 1, 1), cost: 1 });
expect("revealed: face up, counters spent, fresh", card(1).face && card(1).counters === 0 && card(1).fresh);
apply({ kind: "magic_tech.phase_began", player: 1, phase: "missions" });
apply({ kind: "magic_tech.phase_began", player: 1, phase: "end" });
expect("the creature revealed this turn went on patrol at the end", card(1).area.kind === "patrol");
apply({ kind: "turn_ended", turn: 0, player: 1 });

// Ann's turn: two deployments, a sorcery revealed to the scrapheap, a guard, a mission.
apply({ kind: "turn_began", turn: 0, player: 0 });
expect("a new turn counts afresh", board().turn_number === 2 && board().deployed === 0 && board().lands === 0);
apply({ kind: "magic_tech.phase_began", player: 0, phase: "untap" });
expect("nothing is fresh after the untap", board().cards.every((c) => !c.fresh));
apply({ kind: "magic_tech.drew", player: 0, count: 2 });
apply({ kind: "magic_tech.deployed", player: 0, card: 2, land: land("Mountain", "red") });
apply({ kind: "magic_tech.deployed", player: 0, card: 3, land: null });
apply({ kind: "magic_tech.deployed", player: 0, card: 4, land: null });
apply({ kind: "magic_tech.corrected", correction: { kind: "mana", player: 0, mana: 3 }, by: null });
apply({ kind: "magic_tech.paid", player: 0, card: 3, amount: 2 });
apply({ kind: "magic_tech.paid", player: 0, card: null, amount: 1 });
apply({ kind: "magic_tech.revealed", card: 3, face: { name: "Shock", type: "sorcery", cost: { generic: 0, coloured: ["red"] }, power: 0, toughness: 0, keywords: {} }, cost: 1 });
expect("a sorcery goes to the scrapheap once revealed", !card(3) && side(0).scrapheap === 1);
apply({ kind: "magic_tech.damaged", target: { kind: "card", card: 1 }, amount: 2, effect: 1 });
apply({ kind: "magic_tech.healed", card: 1, amount: 1 });
refused("healing more than the damage", { kind: "magic_tech.healed", card: 1, amount: 1 });
apply({ kind: "magic_tech.relocated", card: 1, area: { kind: "guard", card: 0 } });
apply({ kind: "magic_tech.corrected", correction: { kind: "counters", card: 4, counters: 2 }, by: null });
apply({ kind: "magic_tech.damaged", target: { kind: "card", card: 4 }, amount: 2, effect: 1 });
expect("damage under construction removes a counter and shows the card", card(4).counters === 1 && card(4).shown);
refused("removing counters a card does not have", { kind: "magic_tech.damaged", target: { kind: "card", card: 4 }, amount: 4, effect: 2 });
apply({ kind: "magic_tech.mission_began", player: 0, attackers: [2], target: { kind: "card", card: 0 } });
refused("a second mission at once", { kind: "magic_tech.mission_began", player: 0, attackers: [2], target: { kind: "card", card: 0 } });
apply({ kind: "magic_tech.blocked", blocks: [] });
apply({ kind: "magic_tech.damaged", target: { kind: "card", card: 0 }, amount: 6, effect: 3 });
apply({ kind: "magic_tech.destroyed", card: 0, buried: false });
expect("the destroyed land left play for the scrapheap", !card(0) && side(1).scrapheap === 1);
expect("its guard went on patrol", card(1).area.kind === "patrol");
apply({ kind: "magic_tech.mission_ended", tapped: [2] });
expect("the mission is over and its creatures tapped", board().mission === null && card(2).tapped);
apply({ kind: "magic_tech.mission_began", player: 0, attackers: [2], target: { kind: "stockpile", player: 1 } });
apply({ kind: "magic_tech.blocked", blocks: [{ blocker: 1, attacker: 2 }] });
apply({ kind: "magic_tech.damaged", target: { kind: "stockpile", player: 1 }, amount: 2, effect: 2 });
apply({ kind: "magic_tech.mission_ended", tapped: [2, 1] });
apply({ kind: "magic_tech.scrapped", player: 0, count: 1 });
apply({ kind: "magic_tech.recovered", player: 0, count: 2 });
apply({ kind: "magic_tech.left_play", card: 4, to: "hand" });
apply({ kind: "magic_tech.proposed", player: 0, correction: { kind: "tapped", card: 2, tapped: false } });
refused("a second proposal while one is open", { kind: "magic_tech.proposed", player: 1, correction: { kind: "mana", player: 1, mana: 1 } });
apply({ kind: "magic_tech.declined", player: 1 });
apply({ kind: "magic_tech.proposed", player: 0, correction: { kind: "move", player: 1, from: "scrapheap", to: "hand", count: 1 } });
apply({ kind: "magic_tech.corrected", correction: { kind: "move", player: 1, from: "scrapheap", to: "hand", count: 1 }, by: 1 });
expect("an accepted proposal is closed and applied", board().proposal === null && side(1).hand === 4);
refused("drawing more than the stockpile holds", { kind: "magic_tech.drew", player: 1, count: side(1).stockpile + 1 });
apply({ kind: "turn_ended", turn: 0, player: 0 });
apply({ kind: "magic_tech.ran_out", player: 1 });
apply({ kind: "game_over", standings: [{ player: 0, place: 1, mana_points: 0 }, { player: 1, place: 2, mana_points: 0 }] });
expect("the game is over", view.stage === "finished" && board().active === null && view.turns.length === 0);
expect("the player who ran out is out", view.players.find((p) => p.player === 1).status === "eliminated");

const every = ["deck_declared", "phase_began", "drew", "deployed", "tapped", "paid", "revealed", "relocated", "mission_began", "blocked",
  "damaged", "destroyed", "mission_ended", "scrapped", "recovered", "healed", "left_play", "proposed", "declined", "corrected", "ran_out"];
const missed = every.filter((k) => !kinds.has(`magic_tech.${k}`));
expect(`the script reaches every magic_tech event (missed: ${missed.join(", ")})`, missed.length === 0);

if (failures.length) {
  console.log(failures.join("\n"));
  process.exit(1);
}
console.log(`${seq} events: the Magic Tech fold holds`);

// The page fold's seam (tests/tests/fold.rs runs it): the table-level events are folded once,
// by the shell, for every game; any other event goes to the fold of the game the view's
// `settings.game` names, and only to it. A toy game registered here stands for the next games.
//
// Usage: node seam.js <path to fold.js>. Prints what went wrong and exits 1, or prints
// "the seam holds" and exits 0.
"use strict";

require(process.argv[2]);
const F = globalThis.GMFold;
const failures = [];
const expect = (what, ok) => { if (!ok) failures.push(what); };
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// A toy game: each player has a score; it records every event it is handed.
const handed = [];
F.games.toy = {
  emptyView: () => ({ round: 0 }),
  apply(view, e) {
    handed.push(e.kind);
    switch (e.kind) {
      case "player_joined":
        view.players.push({ player: e.player, name: e.name, score: 0, connected: true, absent: false, muted: false });
        break;
      case "player_left":
        view.players = view.players.filter((p) => p.player !== e.player);
        F.shell.unseat(view, e.player);
        break;
      case "toy.scored":
        view.players.find((p) => p.player === e.player).score += e.points;
        break;
      default:
        throw new F.FoldError(`not a toy event: ${e.kind}`);
    }
  },
  recomputeDerived(view) { view.round = handed.length; return view; },
};

const view = F.emptyView("t", "Toy table", { seats: 2, game: "toy" });
expect("a toy view starts with the shell's fields and the game's", view.round === 0 && view.host === null &&
  view.spectators === 0 && view.calls === null && view.ring === undefined);
const events = [
  { kind: "player_joined", player: 0, name: "Ann" },
  { kind: "player_joined", player: 1, name: "Bob" },
  { kind: "host_changed", player: 0 },
  { kind: "spectators_changed", spectators: 3 },
  { kind: "chat", from: 1, text: "hi" },
  { kind: "toy.scored", player: 1, points: 5 },
  { kind: "connection_changed", player: 1, connected: false },
  { kind: "player_absent", player: 1 },
  { kind: "player_muted", player: 1, muted: true },
  { kind: "host_called", player: 1, reason: "a question" },
  { kind: "table_paused", paused: true },
  { kind: "table_adjourned", adjourned: true },
  { kind: "resume_requested", player: 1 },
  { kind: "player_kicked", player: 0 },
  { kind: "player_left", player: 1 },
];
events.forEach((e, i) => F.applyEvent(view, i + 1, e));
expect(`the game is handed its own events only, got ${JSON.stringify(handed)}`,
  same(handed, ["player_joined", "player_joined", "toy.scored", "player_left"]));
expect("the game recomputes its derived fields after every event", view.round === 4 && view.seq === events.length);
expect("the shell folds the table-level events", view.host === 0 && view.spectators === 3 && view.paused === false &&
  view.adjourned === true && same(view.resume_asks, [1]) && view.players[0].connected === false);
expect("a departing player's call goes with him", view.calls === null);

// The same shell events, a player's presence, with the calls and mutes before he left.
const again = F.emptyView("t", "Toy table", { seats: 2, game: "toy" });
events.slice(0, 10).forEach((e, i) => F.applyEvent(again, i + 1, e));
const bob = again.players.find((p) => p.player === 1);
expect("presence is the shell's", bob.connected === false && bob.absent === true && bob.muted === true && bob.score === 5 &&
  same(again.calls, [{ player: 1, reason: "a question" }]));

// A view that names no game is Grand Melee's; one that names an unknown game is refused.
const gm = F.emptyView("t", "Melee", { seats: 4, starting_life: 20, hand_size: 7, spell_range: 1 });
expect("a view naming no game is Grand Melee's", Array.isArray(gm.ring) && Array.isArray(gm.turns));
F.applyEvent(gm, 1, { kind: "player_joined", player: 0, name: "Ann" });
expect("Grand Melee folds its own join", gm.players[0].life === 20);
let refused = null;
try { F.emptyView("t", "?", { seats: 2, game: "no_such_game" }); } catch (err) { refused = err; }
expect("an unknown game is a FoldError", refused instanceof F.FoldError);
refused = null;
try { F.applyEvent(F.emptyView("t", "Toy table", { seats: 2, game: "toy" }), 1, { kind: "attacked", attacker: 0, defender: 1, damage: 1, poison: 0 }); } catch (err) { refused = err; }
expect("another game's event is refused by the toy game", refused instanceof F.FoldError);

if (failures.length) {
  console.log(failures.join("\n"));
  process.exit(1);
}
console.log("the seam holds");

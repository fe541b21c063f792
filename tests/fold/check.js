// Holds the page's fold to the Rust fold: `node check.js FOLD_JS DIR`.
//
// DIR holds one JSON file per game, written by `tests/tests/fold.rs`: `initial` (the view before
// any event) and `frames`, `[event, view after it]` for every event in order, as the wire's serde
// types encode them. For each game, fold.js starts from `emptyView` and applies every event;
// after each one its view must equal the Rust view exactly (`GMFold.diff`, derived fields
// included); a frame's third element, where there is one, is the list of requests the Rust table
// accepts after it, which the game's `legalMoves` must equal, and its fourth the targets each
// card of the battle may take (Mountain Magic's `mayTarget`). Prints the first difference of each game that has one and exits 1; otherwise prints
// "N games, M events: fold.js agrees" and exits 0.
"use strict";

const fs = require("fs");
const path = require("path");

const [foldPath, dir] = process.argv.slice(2);
if (!foldPath || !dir) {
  console.error("usage: node check.js FOLD_JS DIR");
  process.exit(2);
}
require(path.resolve(foldPath));
const F = globalThis.GMFold;

/** A key-order-free text of a request, to compare lists of them. */
const canonical = (v) => (Array.isArray(v) ? `[${v.map(canonical).join(",")}]`
  : v && typeof v === "object" ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(",")}}` : JSON.stringify(v));
/** "" when the page's legal moves are the Rust table's (as a multiset), else the difference. */
function sameMoves(page, rust, what = "legal moves") {
  const a = page.map(canonical).sort();
  const b = rust.map(canonical).sort();
  const extra = a.filter((m) => !b.includes(m));
  const missing = b.filter((m) => !a.includes(m));
  if (!extra.length && !missing.length && a.length === b.length) return "";
  return `the page's ${what} differ: offered but refused ${extra.join(" ")}; accepted but not offered ${missing.join(" ")}` +
    (a.length !== b.length ? `; ${a.length} ≠ ${b.length}` : "");
}

/** Mountain Magic: every (card left in the battle, its effect or ability, target or none) the
 * page's `mayTarget` accepts, as tests/tests/fold.rs lists the Rust ones. */
function targetsOf(mm, climb) {
  const out = [];
  const b = climb.battle;
  if (!b) return out;
  const pool = mm.pool || require(path.resolve(path.dirname(foldPath), "../../protocol/data/mountain_magic/pool.json")).cards;
  const refs = b.player.map((_, k) => ({ side: "player", force: k })).concat(b.opponent.map((_, k) => ({ side: "opponent", force: k })));
  for (const user of refs) {
    const force = (user.side === "player" ? b.player : b.opponent)[user.force];
    if (force.gone) continue;
    const face = pool[force.card];
    for (const [effect, ability] of [[face.effect, false], [face.ability && face.ability.effect, true]]) {
      if (!effect) continue;
      for (const target of [null].concat(refs)) if (mm.mayTarget(climb, user, effect, target)) out.push({ user, ability, target });
    }
  }
  return out;
}

let games = 0;
let events = 0;
let failures = 0;
for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".json")).sort()) {
  const game = JSON.parse(fs.readFileSync(path.join(dir, file), "utf8"));
  games += 1;
  const { initial, frames } = game;
  const view = F.emptyView(initial.table, initial.name, initial.settings);
  // The one field a replay's start cannot know: the table's dice commitment is in its
  // snapshots from the start, and reaches a replay with `game_started`.
  view.dice_commitment = initial.dice_commitment;
  let difference = F.diff(view, initial);
  let where = "the empty view";
  let i = 0;
  for (; !difference && i < frames.length; i++) {
    const [event, expected, moves, targets] = frames[i];
    where = `event ${i + 1} (${event.kind}: ${JSON.stringify(event)})`;
    try {
      F.applyEvent(view, i + 1, event);
      difference = F.diff(view, expected);
      if (!difference && moves) difference = sameMoves(F.games[view.settings.game].legalMoves(view.mountain_magic), moves);
      if (!difference && targets) difference = sameMoves(targetsOf(F.games[view.settings.game], view.mountain_magic), targets, "targets");
    } catch (err) {
      difference = `fold.js threw: ${err.message}`;
    }
  }
  events += i;
  if (difference) {
    failures += 1;
    console.log(`${file}: after ${where}: ${difference}`);
  }
}
if (failures) {
  console.log(`${failures} of ${games} games: fold.js disagrees with Table::apply`);
  process.exit(1);
}
console.log(`${games} games, ${events} events: fold.js agrees`);

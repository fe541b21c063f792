// Mountain Magic's panel on the table page, the display and the replay (docs/RULES.md,
// "Mountain Magic"): the mountain (the pyramid, top row first), the card turned over and the
// places it may go (each a button), the discard pile, the path down the mountain, and the battle
// (both sides' forces powered or not with the mana on them, the land just drawn, what the
// occupying forces did and why, in words), the ending by its name. Not part of the page's first
// load: table.js loads it when a table plays Mountain Magic; it adds its stylesheet
// (games/mountain_magic.css), fetches the card pool
// (protocol/data/mountain_magic/pool.json, served as /assets/games/mountain_magic_pool.json),
// hands it to the fold (`GMFold.games.mountain_magic.pool`) and then registers itself in
// `GM.games.mountain_magic`. No state of its own but what the player is choosing (`ui`).
"use strict";

(function () {
  const GM = window.GM;
  const FOLD = window.GMFold.games.mountain_magic;
  const { printable, state, nameOf, STAGES } = GM;
  const { html, render, go, Button, options } = GM.frame;

  const ROWS = 7;
  const LETTER = { white: "W", blue: "U", black: "B", red: "R", green: "G" };
  const ENDINGS = {
    total_victory: "Total victory", victory: "Victory", draw_no_creatures: "Draw (no creatures)",
    draw_both_creatures: "Draw (both sides' creatures: the passing dragon's lunch)", defeat: "Defeat",
    humiliating_defeat: "The absolute, total, humiliating defeat",
  };
  /** Why the battle ended so, in words (docs/RULES.md, "Mountain Magic": the ending). */
  const ENDING_WHY = {
    total_victory: "your forces destroyed every card in the enemy's territory",
    victory: "the mana ran out with creatures on your side and none on the enemy's",
    draw_no_creatures: "the mana ran out with no creatures left on either side: you fought for naught",
    draw_both_creatures: "the mana ran out with creatures still on both sides",
    defeat: "the mana ran out with creatures on the enemy's side and none on yours",
    humiliating_defeat: "the enemy destroyed all your cards",
  };
  const GONE = { killed: "killed", countered: "countered", tapped_away: "tapped away (out of the game)", walked_off: "walked off the battlefield" };
  const EFFECTS = {
    damage: (a) => `${a === undefined || a === null ? "X" : a} damage`, counter: () => "counters a spell", tap: () => "taps a card",
    untap: () => "untaps a card", draw: (a) => `draws ${a === undefined || a === null ? "X" : a}`,
    discard: (a) => `discards ${a === undefined || a === null ? "X" : a}`, destroy_land: () => "destroys a land", empty_pool: () => "empties a mana pool",
  };
  /** What the player is choosing. Handlers change it, then `render()`. */
  const ui = { path: [0], attackers: [], target: "", aim: {} };

  let pool = [];
  const card = (no) => pool[no] || { name: `card ${no}`, type: "?" };
  const climbOf = (view) => view.mountain_magic || { phase: "undealt", mountain: [], discard: [], flipped: null, may_recover: false, spells_left: 0, lands_left: 0, path: [], battle: null, outcome: null };
  const costWords = (c) => {
    if (!c.cost) return "";
    const g = c.cost.generic || 0;
    const x = c.cost.x ? "X" : "";
    return `${g || (x || (c.cost.coloured || []).length) ? (g || "") : "0"}${x}${(c.cost.coloured || []).map((k) => LETTER[k]).join("")}`;
  };
  /** One card in words: name, type, cost, power and toughness, what it does. */
  function cardWords(no) {
    const c = card(no);
    const bits = [c.type === "interrupt" || c.type === "instant" ? `${c.type} (fast effect)` : c.type];
    if (c.type === "land") bits.push(`makes ${(c.produces || []).join(" or ")}`);
    else if (c.cost) bits.push(costWords(c));
    if (c.type === "creature") bits.push(`${c.power}/${c.toughness}`);
    if (c.flying) bits.push("flying");
    if (c.landwalk) bits.push(`${c.landwalk} landwalk`);
    if (c.upkeep && c.upkeep.length) bits.push(`upkeep ${c.upkeep.map((k) => LETTER[k]).join("")}`);
    if (c.effect) bits.push(EFFECTS[c.effect.kind] ? EFFECTS[c.effect.kind](c.effect.amount) : c.effect.kind);
    if (c.ability) bits.push(`ability ${c.ability.cost.map((k) => LETTER[k]).join("")}${c.ability.tap ? ", tap" : ""}: ${EFFECTS[c.ability.effect.kind] ? EFFECTS[c.ability.effect.kind](c.ability.effect.amount) : c.ability.effect.kind}`);
    return bits.join(" · ");
  }
  /** A card in a few words, for the mountain's narrow places: type, cost, power and toughness. */
  function shortWords(no) {
    const c = card(no);
    return [c.type, c.type === "land" ? "" : costWords(c), c.type === "creature" ? `${c.power}/${c.toughness}` : "", c.flying ? "flying" : ""].filter(Boolean).join(" · ");
  }
  const colourClass = (no) => {
    const c = card(no);
    const cols = [...new Set(c.type === "land" ? c.produces || [] : (c.cost && c.cost.coloured) || [])];
    return c.type === "artifact" ? "mm-artifact" : cols.length === 1 ? `mm-${cols[0]}` : cols.length ? "mm-multi" : "";
  };
  const sideName = (side) => (side === "player" ? "your forces" : "the occupying forces");
  const forceName = (view, ref) => {
    const b = climbOf(view).battle;
    const f = b && (ref.side === "player" ? b.player : b.opponent)[ref.force];
    return f ? `${printable(card(f.card).name)} (${ref.side === "player" ? "yours" : "theirs"})` : `card ${ref.force}`;
  };

  /** Where the card turned over (or the discard pile's top card) may go: [row, pos] pairs
   * (the rules' legal placements, fold.js's `legalMoves`). */
  const placements = (climb) => FOLD.legalMoves(climb).filter((m) => m.type === "mountain_magic.place").map((m) => [m.row, m.pos]);
  const recovering = (climb) => (climb.may_recover && climb.flipped === null && climb.discard.length ? climb.discard[climb.discard.length - 1] : null);

  // ---------------------------------------------------------------- words

  /** The table in a few words (its settings, or the lobby's summary of it). */
  function settingsWords(settings) {
    const date = settings && settings.mountain_magic && settings.mountain_magic.day;
    return date ? `Mountain Magic · the mountain of ${date}${settings.mountain_magic.league ? ", a league's climb" : ""}` : "Mountain Magic · a solitaire climb";
  }

  const LEGEND = [
    ["▲", "the mountain: each card stands on two adjacent cards of the row below"],
    ["+ Here", "a place the card turned over may go (a thing in common with each card below, a set, or an artifact)"],
    ["⚡", "powered: the mana on it covers its coloured symbols; it may be used this turn"],
    ["○", "unpowered: it waits for mana"], ["✝", "gone from the battle"],
  ];

  /** The climb's events by their seq, for the table shown (fed by `recall` from the live
   * stream, `get_events` and the replay's pages alike): what the occupying forces did is worded
   * from them, so a reload or a replay tells it as it was told live. */
  const past = { table: null, events: new Map() };
  function recall(seq, e, table) {
    if (!e || typeof e.kind !== "string" || !e.kind.startsWith("mountain_magic.")) return;
    if (table !== past.table) {
      past.table = table;
      past.events = new Map();
    }
    past.events.set(seq, e);
  }

  /** One event of the occupying forces' turn in words, and why (the opponent's order,
   * docs/RULES.md); null for what needs no line. */
  function theirLine(view, e) {
    const battle = climbOf(view).battle;
    const ref = (r) => forceName(view, r);
    const theirs = (r) => r && r.side === "opponent";
    switch (e.kind) {
      case "mountain_magic.mana_drawn":
        return e.side === "opponent" ? `They drew ${printable(card(e.land).name)}.` : null;
      case "mountain_magic.mana_placed":
        return e.side === "opponent" ? `Its ${e.place.colour} mana went to ${ref({ side: "opponent", force: e.place.force })}${e.place.ability ? "'s ability" : ""} — the first card in its order (counterspells, damage spells, creatures, other cards, abilities) that could use it.` : null;
      case "mountain_magic.mana_unused":
        return e.side === "opponent" ? "None of its cards could use that land: it went unused." : null;
      case "mountain_magic.land_destroyed":
        return e.side === "opponent" ? "That land was destroyed (your land destruction)." : null;
      case "mountain_magic.used": {
        if (!theirs(e.card)) return null;
        const f = card(battle && battle.opponent[e.card.force] ? battle.opponent[e.card.force].card : -1);
        const kind = e.ability ? f.ability && f.ability.effect.kind : f.effect && f.effect.kind;
        const why = { counter: "its counterspells take your counterspells first, then your damage spells",
          damage: "its damage goes to your creature with the highest power", tap: "it taps an unpowered card of yours first (it leaves the game), then a powered one",
          untap: "it untaps another of its unpowered cards" }[kind];
        return `${ref(e.card)} ${e.ability ? "used its ability" : "was used"}${e.target ? ` on ${ref(e.target)}` : ""}${why ? ` — ${why}` : ""}.`;
      }
      case "mountain_magic.attacked":
        return theirs(e.attackers[0]) ? `${e.attackers.map(ref).join(" and ")} attacked ${ref(e.target)} — its creatures attack your creature with the highest power that they survive.` : null;
      case "mountain_magic.removed":
        return `${ref(e.card)} was ${GONE[e.why] || e.why}.`;
      case "mountain_magic.unpowered":
      case "mountain_magic.untapped":
      case "mountain_magic.pool_emptied":
      case "mountain_magic.lands_discarded":
      case "mountain_magic.land_doomed":
      case "mountain_magic.upkeep_paid":
        // Told with the view shown (a replay's step), not the page's live one: a replay has none,
        // and a card named by its place would come out as "card 1".
        return `${GM.describe(e, view)}.`;
      default:
        return null;
    }
  }

  /** What the occupying forces did on their last turn up to the view's event, and why, in
   * words: from their draw to the end of their turn. */
  function theirTurn(view) {
    if (past.table !== view.table) return [];
    const seqs = [...past.events.keys()].filter((s) => s <= view.seq).sort((a, b) => a - b);
    let from = -1;
    for (let i = seqs.length - 1; i >= 0 && from < 0; i--) {
      const e = past.events.get(seqs[i]);
      if (e.kind === "mountain_magic.mana_drawn" && e.side === "opponent") from = i;
    }
    const lines = [];
    for (let i = Math.max(from, 0); from >= 0 && i < seqs.length; i++) {
      const e = past.events.get(seqs[i]);
      if (e.kind === "mountain_magic.turn_ended" || (i > from && e.kind === "mountain_magic.mana_drawn")) break;
      const line = theirLine(view, e);
      if (line) lines.push(line);
    }
    return lines;
  }

  function alertFor() {
    return null;
  }

  function sentence(view, me) {
    const climb = climbOf(view);
    const mine = view.players.some((p) => p.player === me);
    if (view.stage === "lobby") return mine ? "Start the climb when you are ready." : "Waiting for the climber.";
    if (view.stage === "finished" || climb.phase === "over") return `The climb is over: ${endingWords(view)}.`;
    const who = mine ? "You" : `${nameOf(view.players[0] ? view.players[0].player : null)}`;
    switch (climb.phase) {
      case "climbing":
        if (climb.flipped !== null) return `${who}: place ${printable(card(climb.flipped).name)} on the mountain or discard it.`;
        if (recovering(climb) !== null) return `${who}: turn over the next card, or place the discard pile's top card.`;
        return `${who}: turn over the next card (${climb.spells_left} left).`;
      case "path": return `${who}: the mountain is complete — choose a path down it.`;
      case "battle": {
        const b = climb.battle;
        if (b.turn === "player") {
          if (b.pending_land === null) return `▶ ${who}: use your powered cards, then end the turn.`;
          // A land a card can use must go on one (the seed: "place it on the card").
          return FOLD.manaPlaces(climb, "player").length ? `▶ ${who}: put ${printable(card(b.pending_land).name)} on a card that can use it.` : `▶ ${who}: none of your cards can use ${printable(card(b.pending_land).name)}: let it go.`;
        }
        return "The occupying forces act.";
      }
      default: return "The climb is being dealt.";
    }
  }

  function moment(view, me) {
    const climb = climbOf(view);
    if (view.stage !== "playing" || !view.players.some((p) => p.player === me)) return null;
    if (climb.phase === "climbing" || climb.phase === "path" || (climb.phase === "battle" && climb.battle.turn === "player")) {
      return { key: `mm-${climb.phase}`, banner: "▶ Your move", title: "▶ Your move", lead: /^▶/ };
    }
    return null;
  }

  /** The ending's colour: a victory green (the frame's `winner`), a draw neutral, anything
   * else (a defeat, a failed climb, a climb given up) sombre. */
  function endingTone(view) {
    const o = climbOf(view).outcome;
    const ending = o && o.kind === "battle" ? o.ending : null;
    if (ending === "total_victory" || ending === "victory") return "mm-won";
    if (ending === "draw_no_creatures" || ending === "draw_both_creatures") return "mm-drawn";
    return "mm-lost";
  }

  function endingWords(view) {
    const o = climbOf(view).outcome;
    if (o && o.kind === "failed_climb") return "the climb failed (the spell deck ran out before the mountain was complete)";
    if (o && o.kind === "battle") return `${ENDINGS[o.ending] || o.ending}${ENDING_WHY[o.ending] ? ` — ${ENDING_WHY[o.ending]}` : ""}`;
    if (view.players.some((p) => p.status !== "alive")) return "the climber gave up";
    return "abandoned";
  }

  // ---------------------------------------------------------------- the climb

  function Slot({ no, row, pos, onPath, chosen, place }) {
    if (no === null) {
      return html`<li class="mm-slot empty" data-testid=${`mm-slot-${row}-${pos}`}>${place ? html`<button type="button" data-testid=${`mm-place-${row}-${pos}`} class="primary" aria-label=${`Place it here: row ${row}, place ${pos + 1}`} onClick=${place}>+ Here</button>` : html`<span class="meta">·</span>`}</li>`;
    }
    const c = card(no);
    return html`<li class=${`mm-slot ${colourClass(no)}${onPath ? " mm-path" : ""}${chosen ? " mm-chosen" : ""}`} data-testid=${`mm-slot-${row}-${pos}`} data-card=${no}>
      <strong>${printable(c.name)}</strong> <span class="meta">${shortWords(no)}</span></li>`;
  }

  function Mountain({ view, me, acting }) {
    const climb = climbOf(view);
    if (climb.mountain.length !== ROWS) return null;
    const placing = climb.flipped !== null ? climb.flipped : recovering(climb);
    const spots = acting && climb.phase === "climbing" ? placements(climb) : [];
    const fromDiscard = climb.flipped === null;
    const path = climb.phase === "path" ? ui.path : climb.path;
    const rows = [];
    for (let row = ROWS - 1; row >= 0; row--) {
      const k = ROWS - 1 - row;
      rows.push(html`<ol key=${row} class=${`mm-row mm-r${row}`} aria-label=${`Row ${row}${row === 0 ? " (the bottom row)" : ""}`}>
        ${climb.mountain[row].map((no, pos) => html`<${Slot} key=${pos} no=${no} row=${row} pos=${pos} onPath=${path[k] === pos && climb.phase === "path"}
          chosen=${path[k] === pos && climb.phase !== "path" && climb.path.length}
          place=${spots.some(([r, p]) => r === row && p === pos) ? () => go({ type: "mountain_magic.place", row, pos }) : null} />`)}</ol>`);
    }
    return html`<section class="mm-mountain" data-testid="mm-mountain" aria-label="The mountain, top row first">
      <h3>▲ The mountain</h3>
      ${acting && climb.phase === "climbing" && placing !== null ? html`<p class="meta" data-testid="mm-spots">${spots.length
        ? `${printable(card(placing).name)}${fromDiscard ? " (the discard pile's top card)" : ""} may go in ${spots.length} place${spots.length === 1 ? "" : "s"}: the + Here buttons.`
        : `${printable(card(placing).name)} fits nowhere on the mountain${fromDiscard ? "" : ": discard it"}.`}</p>` : null}
      <div class="mm-rows" data-testid="mm-rows" tabindex="0" role="group" aria-label="The mountain's rows (scroll sideways on a narrow screen)"><div class="mm-pyramid">${rows}</div></div></section>`;
  }

  function Climbing({ view, me, acting }) {
    const climb = climbOf(view);
    const top = climb.discard.length ? climb.discard[climb.discard.length - 1] : null;
    return html`<section class="mm-climb" data-testid="mm-climb">
      <p class="mm-counts"><span>Spell deck <b data-testid="mm-spells-left">${climb.spells_left}</b></span> <span>Land deck <b data-testid="mm-lands-left">${climb.lands_left}</b></span></p>
      <div class="mm-next" data-testid="mm-next"><h3>Turned over</h3>
        ${climb.flipped !== null ? html`<p class=${`mm-card ${colourClass(climb.flipped)}`} data-card=${climb.flipped}><strong>${printable(card(climb.flipped).name)}</strong> <span class="meta">${cardWords(climb.flipped)}</span></p>`
          : html`<p class="meta">No card turned over.</p>`}
        ${acting ? html`<div class="row">
          ${climb.flipped === null && climb.spells_left > 0 ? html`<${Button} id="mm-flip" cls="primary" label="Turn over the next card" onClick=${() => go({ type: "mountain_magic.flip" })} />` : null}
          ${climb.flipped !== null ? html`<${Button} id="mm-discard" label="Discard it" onClick=${() => go({ type: "mountain_magic.discard" })} />` : null}</div>` : null}</div>
      <div class="mm-discard" data-testid="mm-discard"><h3>Discard pile (${climb.discard.length})</h3>
        ${top !== null ? html`<p><span class=${`mm-card ${colourClass(top)}`} data-card=${top}><strong>${printable(card(top).name)}</strong> <span class="meta">${cardWords(top)}</span></span>
          ${recovering(climb) !== null ? html` <span class="badge">may be placed now</span>` : null}</p>
          ${climb.discard.length > 1 ? html`<p class="meta">Below: ${climb.discard.slice(0, -1).reverse().map((no) => printable(card(no).name)).join(", ")}</p>` : null}` : html`<p class="meta">empty</p>`}</div>
    </section>`;
  }

  function PathChoice({ view }) {
    const climb = climbOf(view);
    const path = ui.path;
    const done = path.length === ROWS;
    const row = ROWS - 1 - path.length;
    const last = path[path.length - 1];
    const at = (r, p) => climb.mountain[r][p];
    return html`<section class="mm-pathchoice" data-testid="mm-path-choice"><h3>The path down</h3>
      <p class="meta">From the top card, one touching card per row down to the bottom row: these cards are your forces.</p>
      <ol class="mm-chosen-list">${path.map((p, k) => html`<li key=${k}>${printable(card(at(ROWS - 1 - k, p)).name)}</li>`)}</ol>
      <div class="row">
        ${done ? null : [0, 1].map((d) => html`<${Button} key=${d} id=${`mm-path-${d ? "right" : "left"}`} label=${`${d ? "↘" : "↙"} ${printable(card(at(row, last + d)).name)}`}
          onClick=${() => { ui.path = path.concat([last + d]); render(); }} />`)}
        ${path.length > 1 ? html`<${Button} id="mm-path-back" label="Back one row" onClick=${() => { ui.path = path.slice(0, -1); render(); }} />` : null}
        ${done ? html`<${Button} id="mm-path-choose" cls="primary" label="Take this path" onClick=${() => go({ type: "mountain_magic.path", path })} />` : null}
      </div></section>`;
  }

  // ---------------------------------------------------------------- the battle

  function needs(force, ability) {
    const c = card(force.card);
    const cost = ability ? (c.ability ? c.ability.cost.slice() : []) : ((c.cost && c.cost.coloured) || []).slice();
    for (const k of ability ? force.ability_mana || [] : force.mana) {
      const i = cost.indexOf(k);
      if (i >= 0) cost.splice(i, 1);
    }
    return cost;
  }

  function ForceBox({ view, side, force, k, acting }) {
    const c = card(force.card);
    const b = climbOf(view).battle;
    const mine = side === "player";
    const state = force.gone ? `✝ ${GONE[force.gone] || force.gone}` : force.powered ? "⚡ powered" : "○ unpowered";
    const land = b.pending_land;
    const climb = climbOf(view);
    const self = { side, force: k };
    // Only what the rules allow (fold.js's checks, held to the Rust table's by tests/tests/fold.rs).
    const mana = acting && mine && land !== null ? FOLD.manaPlaces(climb, "player").filter((p) => p.force === k).map((p) => [!!p.ability, p.colour]) : [];
    const ready = acting && mine && land === null;
    const effect = !ready ? null : c.type === "creature" ? FOLD.activatable(climb, self) : FOLD.castable(climb, self);
    const wantsTarget = !!effect && !FOLD.mayTarget(climb, self, effect, null);
    const targets = [];
    if (wantsTarget) {
      for (const s of ["opponent", "player"]) {
        (s === "player" ? b.player : b.opponent).forEach((_, j) => {
          const t = { side: s, force: j };
          if (FOLD.mayTarget(climb, self, effect, t)) targets.push([`${s}:${j}`, forceName(view, t)]);
        });
      }
    }
    const aimKey = `${k}`;
    const aim = targets.some(([key]) => key === ui.aim[aimKey]) ? ui.aim[aimKey] : "";
    const targetOf = () => (aim === "" ? null : { side: aim.split(":")[0], force: Number(aim.split(":")[1]) });
    const usable = !!effect && (!wantsTarget || targets.length > 0);
    return html`<li class=${`mm-force ${colourClass(force.card)} ${force.gone ? "gone" : force.powered ? "powered" : "unpowered"}`} data-testid=${`mm-force-${side}-${k}`}
        data-powered=${String(force.powered)} data-gone=${force.gone || ""}>
      <strong>${printable(c.name)}</strong> <span class="badge">${state}</span>
      <span class="meta">${cardWords(force.card)}</span>
      ${force.gone ? null : html` <span class="meta">mana on it: ${force.mana.length ? force.mana.map((m) => LETTER[m]).join("") : "none"}${
        c.type !== "artifact" && !force.powered ? ` · needs ${needs(force, false).map((m) => LETTER[m]).join("") || "nothing"}` : ""}${
        c.ability ? ` · ability: ${force.uses} stored use${force.uses === 1 ? "" : "s"}${(force.ability_mana || []).length ? `, ${force.ability_mana.map((m) => LETTER[m]).join("")} toward the next` : ""}` : ""}${force.used ? " · used this turn" : ""}</span>`}
      ${mana.length ? html`<div class="row">${mana.map(([ability, colour]) => html`<${Button} key=${`${ability}${colour}`} id=${`mm-mana-${k}-${ability ? "ability-" : ""}${colour}`} cls="primary"
        label=${`Put ${colour} mana on ${ability ? "its ability" : "it"}`} onClick=${() => go({ type: "mountain_magic.mana", place: ability ? { force: k, ability: true, colour } : { force: k, colour } })} />`)}</div>` : null}
      ${usable ? html`<div class="row">
        ${wantsTarget ? html`<label class="grow"><span>Target</span><select data-testid=${`mm-aim-${k}`} value=${aim} onChange=${(ev) => { ui.aim[aimKey] = ev.target.value; render(); }}>
          ${options([["", "choose…"], ...targets])}</select></label>` : null}
        <${Button} id=${`mm-use-${k}`} label=${c.type === "creature" ? "Use its ability" : "Use it"} disabled=${wantsTarget && aim === ""}
          onClick=${() => go({ type: c.type === "creature" ? "mountain_magic.activate" : "mountain_magic.cast", force: k, target: targetOf() })} /></div>` : null}
    </li>`;
  }

  /** One side's forces. `mine`: the climber is looking (else a spectator or a replay). */
  function SideForces({ view, side, acting, mine }) {
    const b = climbOf(view).battle;
    const forces = side === "player" ? b.player : b.opponent;
    const live = forces.filter((f) => !f.gone);
    return html`<section class=${`mm-side${b.turn === side ? " active" : ""}`} data-testid=${`mm-side-${side}`}>
      <h3>${side === "opponent" ? "The occupying forces" : mine ? "Your forces" : "The climber's forces"}${b.turn === side ? html` <span class="badge" data-testid=${`mm-turn-${side}`}>▶ ${side === "opponent" ? "their turn" : mine ? "your turn" : "the climber's turn"}</span>` : null}</h3>
      <p class="meta">${live.filter((f) => f.powered).length} powered, ${live.filter((f) => !f.powered).length} unpowered, ${forces.length - live.length} gone · turns ${b.turns[side === "player" ? 0 : 1]}${
        b.doomed[side === "player" ? 0 : 1] ? ` · ${b.doomed[side === "player" ? 0 : 1]} land(s) to be destroyed` : ""}</p>
      ${forces.length ? html`<ol>${forces.map((f, k) => html`<${ForceBox} key=${k} view=${view} side=${side} force=${f} k=${k} acting=${acting} />`)}</ol>` : html`<p class="meta">face down</p>`}
    </section>`;
  }

  function Attack({ view }) {
    const b = climbOf(view).battle;
    const climb = climbOf(view);
    const mine = (k) => ({ side: "player", force: k });
    const theirs = (k) => ({ side: "opponent", force: k });
    // The creatures that can attack someone, and whom the ones ticked (else any of them alone) can attack.
    const can = (attackers, t) => FOLD.mayAttack(climb, attackers.map(mine), theirs(t));
    const ready = b.player.map((f, k) => [f, k]).filter(([, k]) => b.opponent.some((_, t) => can([k], t)));
    if (!ready.length) return null;
    ui.attackers = ui.attackers.filter((k) => ready.some(([, j]) => j === k));
    const enemies = b.opponent.map((f, k) => [f, k]).filter(([, t]) => (ui.attackers.length ? can(ui.attackers, t) : ready.some(([, a]) => can([a], t))));
    if (ui.target !== "" && !enemies.some(([, t]) => String(t) === ui.target)) ui.target = "";
    return html`<fieldset class="mm-attack" data-testid="mm-attack"><legend>Attack</legend>
      ${ready.map(([f, k]) => html`<label key=${k} class="inline"><input type="checkbox" data-testid=${`mm-attacker-${k}`} checked=${ui.attackers.includes(k)}
        onChange=${(ev) => { ui.attackers = ev.target.checked ? ui.attackers.concat([k]) : ui.attackers.filter((j) => j !== k); render(); }} /> ${printable(card(f.card).name)}</label>`)}
      <label class="grow"><span>Against</span><select data-testid="mm-attack-target" value=${ui.target} onChange=${(ev) => { ui.target = ev.target.value; render(); }}>
        ${options([["", "choose…"], ...enemies.map(([f, k]) => [String(k), `${printable(card(f.card).name)} (${card(f.card).power}/${card(f.card).toughness}${f.powered ? ", powered" : ""})`])])}</select></label>
      <${Button} id="mm-attack-go" cls="primary" label="Attack" disabled=${!ui.attackers.length || ui.target === ""}
        onClick=${() => {
          const attack = { type: "mountain_magic.attack", attackers: ui.attackers.slice().sort((a, c) => a - c), target: Number(ui.target) };
          ui.attackers = [];
          ui.target = "";
          go(attack);
        }} />
    </fieldset>`;
  }

  function Battle({ view, acting, mine }) {
    const b = climbOf(view).battle;
    const land = b.pending_land;
    const they = theirTurn(view);
    return html`<section class="mm-battle" data-testid="mm-battle">
      <p class="mm-counts"><span>Land deck <b data-testid="mm-battle-lands">${climbOf(view).lands_left}</b></span>
        ${land !== null ? html` <span data-testid="mm-pending-land">Drawn: <b>${printable(card(land).name)}</b> (${(card(land).produces || []).join(" or ")})</span>` : null}</p>
      ${they.length ? html`<div class="mm-opponent" data-testid="mm-opponent-did" role="status"><h3>What the occupying forces did</h3>
        <ul>${they.map((line, k) => html`<li key=${k}>${line}</li>`)}</ul></div>` : null}
      ${acting && b.turn === "player" ? html`<div class="row">
        ${land !== null ? (FOLD.manaPlaces(climbOf(view), "player").length ? null : html`<${Button} id="mm-let-go" label="Let the land go" onClick=${() => go({ type: "mountain_magic.mana", place: null })} />`)
          : html`<${Button} id="mm-end-turn" cls="primary" label="End my turn" onClick=${() => go({ type: "mountain_magic.end_turn" })} />`}</div>` : null}
      ${acting && b.turn === "player" && land === null ? html`<${Attack} view=${view} />` : null}
      <${SideForces} view=${view} side="opponent" acting=${false} mine=${mine} />
      <${SideForces} view=${view} side="player" acting=${acting && b.turn === "player"} mine=${mine} />
    </section>`;
  }

  function Ending({ view }) {
    const date = view.settings.mountain_magic && view.settings.mountain_magic.day;
    return html`<div class=${`winner ${endingTone(view)}`} data-testid="mm-ending" role="status">${endingWords(view)}</div>
      ${date ? html`<p><a href=${standingsAddress(date, view.settings.mountain_magic.league)} data-testid="mm-day-standings">${date === todayUtc() ? "Today's standings" : `The standings of ${date}`} ▸</a></p>` : null}`;
  }

  // ---------------------------------------------------------------- a day's mountain

  /** Today's date, UTC, as a day's mountain names it. */
  const todayUtc = () => new Date().toISOString().slice(0, 10);
  const standingsAddress = (day, league) => `/?mountain=${encodeURIComponent(day)}${league ? `&league=${encodeURIComponent(league)}` : ""}`;
  /** How a climb of a day ended (the protocol's `ClimbEnd`), by its name. */
  const CLIMB_ENDS = Object.assign({}, ENDINGS, { failed_climb: "A failed climb", gave_up: "Gave up" });
  /** The standings page: the day and league shown, and the server's answer. */
  const day = { root: null, day: "today", league: null, answer: null };

  /** Draws the standings of `which` (`today` or `YYYY-MM-DD`) into `root` (the page
   * `/?mountain=…`, lobby.js), asking the server (`mountain_magic.standings`). */
  async function standings(root, which, league) {
    // The page's own "Loading…" goes: the standings are drawn here from now on.
    if (day.root !== root) root.textContent = "";
    Object.assign(day, { root, day: which, league: league || null });
    drawDay();
    const request = { type: "mountain_magic.standings", day: which, limit: 500 };
    if (league) request.league = league;
    const kind = "mountain_magic.standings";
    let answer = await GM.send(request);
    // Every page (500 climbers each), unless another day was asked for meanwhile.
    const lines = answer.type === kind ? answer.standings.slice() : [];
    for (let next = answer.next; answer.type === kind && next != null && day.day === which; ) {
      const more = await GM.send(Object.assign({}, request, { from: next }));
      if (more.type !== kind || more.next === next) break;
      lines.push(...more.standings);
      next = more.next;
    }
    if (day.day !== which) return;
    day.answer = answer.type === kind ? Object.assign({}, answer, { standings: lines }) : null;
    drawDay();
  }

  function drawDay() {
    window.preact.render(html`<${DayPage} />`, day.root);
  }

  async function climbToday() {
    const message = { type: "create_table", name: "Today's mountain", seats: 1, game: "mountain_magic", mountain_magic: { day: "today" } };
    if (day.league) message.mountain_magic.league = day.league;
    const answer = await GM.send(message);
    if (answer.type === "table_created") location.assign(`/t/${answer.table}`);
  }

  function DayPage() {
    const a = day.answer;
    const today = todayUtc();
    const shown = a ? a.day : day.day === "today" ? today : day.day;
    const pick = (ev) => {
      const d = ev.target.value;
      if (!/^\d{4}-\d{2}-\d{2}$/.test(d) || d === shown) return;
      history.replaceState(null, "", standingsAddress(d, day.league));
      standings(day.root, d, day.league);
    };
    return html`<div class="mm-day">
      <div class="lobby-head"><h2>${shown === today ? "Today's mountain" : `The mountain of ${shown}`}</h2><a href="/">◂ Tables</a></div>
      <p>Everyone who climbs a day's mountain gets the same deal: the same cards to turn over, the same lands, the same occupying forces. Each climber's first finished climb of the day counts.</p>
      <div class="row mm-day-tools">
        <label><span>Day (UTC)</span><input type="date" data-testid="mm-day-pick" value=${shown} max=${today} onChange=${pick} /></label>
        ${shown === today ? html`<${Button} id="mm-climb-today" cls="primary" label=${day.league ? "Climb it for the league" : "Climb today's mountain"} onClick=${climbToday} />` : null}
      </div>
      ${day.league ? html`<p>Only <a href=${`/leagues/${day.league}`}>the league</a>'s members' climbs. <a href=${standingsAddress(shown, null)}>Everyone's standings ▸</a></p>` : null}
      ${a ? html`<${DayTable} a=${a} />` : html`<p class="meta">Loading the standings…</p>`}
      ${a ? html`<${DayDice} a=${a} />` : null}
    </div>`;
  }

  function DayTable({ a }) {
    if (!a.standings.length) return html`<p data-testid="mm-standings-empty">Nobody has finished this day's climb yet.</p>`;
    return html`<table class="mm-standings" data-testid="mm-standings">
      <caption>${a.climbers} climber${a.climbers === 1 ? "" : "s"} · ${a.climbs} climb${a.climbs === 1 ? "" : "s"} finished</caption>
      <thead><tr><th scope="col">Place</th><th scope="col">Climber</th><th scope="col">Ending</th><th scope="col">Cards left</th></tr></thead>
      <tbody>${a.standings.map((l) => html`<tr key=${l.table} data-testid="mm-standing" data-place=${l.place} data-climber=${l.climber} data-end=${l.end}>
        <td>${l.place}</td><td class="pname">${printable(l.climber)}<br /><a class="nowrap" href=${`/replays/${l.table}`} aria-label=${`The replay of ${printable(l.climber)}'s climb`}>Replay ▸</a></td>
        <td>${CLIMB_ENDS[l.end] || l.end}</td><td>${l.cards_left}</td></tr>`)}</tbody></table>
      <p class="meta">Best ending first; equal endings by cards left (your forces still in the battle at its end; for a failed climb, the cards placed on the mountain).</p>`;
  }

  function DayDice({ a }) {
    return html`<section class="mm-day-dice" data-testid="mm-day-dice"><h3>Checking the deal</h3>
      <p>The day's commitment: <code class="mm-hex" data-testid="mm-commitment">${a.commitment}</code></p>
      <p class="meta">Fixed before the day began and shown by every climb of the day: the deal cannot have been changed for anyone.</p>
      ${a.secret ? html`<p>The day's secret: <code class="mm-hex" data-testid="mm-secret">${a.secret}</code></p>
        <p class="meta">The commitment is its SHA-256. With it anyone can deal the day's mountain again and check every climb's cards (grand-melee verify).</p>`
        : html`<p class="meta" data-testid="mm-secret-later">The day's secret, which deals its mountain, is published here once the day is over (UTC): nobody can learn the deal before climbing it.</p>`}
    </section>`;
  }

  function Board({ view, me }) {
    const climb = climbOf(view);
    const acting = view.stage === "playing" && me !== null && view.players.some((p) => p.player === me && p.status === "alive");
    if (climb.phase !== "path") ui.path = [0];
    return html`<div class="mm-board" data-testid="mm-board" data-phase=${climb.phase}>
      ${view.stage === "finished" || climb.phase === "over" ? html`<${Ending} view=${view} />` : null}
      ${climb.phase === "climbing" && view.stage !== "finished" ? html`<${Climbing} view=${view} me=${me} acting=${acting} />` : null}
      ${climb.phase === "path" && acting ? html`<${PathChoice} view=${view} />` : null}
      ${climb.battle ? html`<${Battle} view=${view} acting=${acting} mine=${me !== null && view.players.some((p) => p.player === me)} />` : null}
      <${Mountain} view=${view} me=${me} acting=${acting} />
    </div>`;
  }

  /** The frame's "more actions": giving up. */
  function play(view, me) {
    const mine = view.players.find((p) => p.player === me);
    if (view.stage !== "playing" || !mine || mine.status !== "alive") return [];
    return [html`<div key="mm-play" class="group"><div class="row">
      <${Button} id="concede" label="Give up the climb…" cls="danger" onClick=${() => { if (window.confirm("Give up this climb for good?")) go({ type: "concede" }); }} /></div></div>`];
  }

  function LobbyTools({ host }) {
    return host ? html`<div class="host-only"><p class="meta">The server deals the mountain from the table's dice${""} when you start.</p>
      <${Button} id="start" label="Start the climb" cls="primary" onClick=${() => go({ type: "start", first_player: null })} /></div>` : null;
  }

  function Rulings() {
    return null;
  }

  function SeatList({ view, me }) {
    return html`<table class="seat-list" data-testid="seat-list"><caption>The climber</caption>
      <thead><tr><th scope="col">Player</th><th scope="col">State</th></tr></thead>
      <tbody>${view.players.map((p) => html`<tr key=${p.player} class=${p.player === me ? "you" : ""}><td class="pname">${printable(p.name)}</td>
        <td>${[p.player === me ? "you" : "", view.host === p.player ? "★ host" : "", p.status !== "alive" ? "gave up" : ""].filter(Boolean).join(", ")}</td></tr>`)}</tbody></table>`;
  }

  function Main({ view, me }) {
    return view.stage === "lobby" ? null : html`<${Board} view=${view} me=${me} />`;
  }

  function Display({ view }) {
    return html`<${Board} view=${view} me=${null} />`;
  }


  /** The pool, then the registration: table.js waits for `GM.gameReady.mountain_magic`. */
  GM.gameReady = GM.gameReady || {};
  GM.gameReady.mountain_magic = fetch("/assets/games/mountain_magic_pool.json")
    .then((r) => { if (!r.ok) throw new Error(`the card pool: ${r.status}`); return r.json(); })
    .then((data) => {
      pool = data.cards;
      FOLD.pool = pool;
      const style = document.createElement("link");
      style.rel = "stylesheet";
      style.href = "/assets/games/mountain_magic.css";
      document.head.append(style);
      GM.cardName = (no) => printable(card(no).name);
      GM.endingName = (ending) => ENDINGS[ending] || String(ending).replace(/_/g, " ");
      // A hook for the browser tests (see README.md in this folder): what the player is choosing.
      GM.testHooks.mountainMagic = ui;
      GM.games.mountain_magic = {
        stages: STAGES, settingsWords, legend: LEGEND, sentence, moment, alertFor, heard: () => {}, recall, stillIn: (p) => p && p.status === "alive",
        chapter: { starts: (e) => e.kind === "mountain_magic.mana_drawn" && e.side === "player", back: "« turn", on: "turn »", backAria: "Back one turn", onAria: "On one turn" },
        Main, Side: () => null, Foot: () => null, Display, Replay: Display, Seats: SeatList, LobbyTools, Rulings, play, standings,
      };
    });
})();

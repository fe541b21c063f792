// Magic Tech's panel on the table page, the display and the replay (docs/RULES.md, "Magic
// Tech"): the two-sided board drawn from the snapshot's `magic_tech` (each side's stockpile,
// hand and scrapheap, its cards face down with their counters or face up with attack, armour,
// structure and damage, its patrol and its guards drawn against what they guard), the mission
// under way, whose phase it is and what he may still do, and the action bar with one form per
// request (`magic_tech.*`). It registers itself in `GM.games.magic_tech`, as grand_melee.js
// does; the frame (table.js) keeps everything else. No state of its own but what the player is
// choosing (`ui`).
"use strict";

(function () {
  const GM = window.GM;
  const { printable, state, showError, nameOf, STAGES, MT_PHASES, mtCardName, mtTarget, mtArea, mtCorrection } = GM;
  const { html, render, go, Button, options, num } = GM.frame;

  const COLOURS = [["white", "W", "Plains"], ["blue", "U", "Island"], ["black", "B", "Swamp"], ["red", "R", "Mountain"], ["green", "G", "Forest"]];
  const LETTER = Object.fromEntries(COLOURS.map(([c, l]) => [c, l]));
  const BY_LETTER = Object.fromEntries(COLOURS.map(([c, l]) => [l, c]));
  const FLAGS = [["flying", "flying"], ["reach", "reach"], ["shadow", "shadow"], ["trample", "trample"], ["first_strike", "first strike"],
    ["banding", "banding"], ["flanking", "flanking"], ["phasing", "phasing"], ["haste", "immune to summoning sickness"]];
  const TYPES = ["creature", "artifact", "enchantment", "sorcery", "instant"];
  const ACTIONS = [["deploy", "Deploy"], ["tap", "Tap for mana"], ["pay", "Pay (counters)"], ["reveal", "Reveal"], ["relocate", "Relocate"],
    ["mission", "Mission"], ["block", "Block"], ["damage", "Damage"], ["heal", "Heal / regenerate"], ["cards", "Draw, life, leave play"],
    ["correct", "Correction"]];
  /** The actions only the player whose turn it is takes. */
  const ACTIVE_ONLY = ["deploy", "relocate", "mission"];
  /** The phase of one's own turn an action (or a request) belongs to; the others are for any time. */
  const PHASE_OF = { deploy: "deploy", relocate: "deploy", mission: "missions" };
  const NEEDS = { "magic_tech.deploy": ["deploying", "deploy"], "magic_tech.relocate": ["relocating", "deploy"],
    "magic_tech.mission": ["a mission", "missions"], "magic_tech.regenerate": ["regenerating", "upkeep"] };
  const PHASE_ORDER = ["untap", "draw", "upkeep", "deploy", "missions", "end"];

  /** What the player is choosing. Handlers change it, then `render()`. */
  const ui = {
    action: "tap", phase: "", land: { basic: "", name: "" }, tap: { card: "", mana: 1 }, pay: { card: "", amount: 1 },
    reveal: null,
    relocate: { card: "", area: "patrol" }, mission: { attackers: [], target: "" }, blocks: {}, damage: { target: "", amount: 1 },
    heal: { card: "", amount: 1 }, cards: { count: 1, delta: -1, card: "", to: "hand" },
    correct: { kind: "damage", card: "", player: "", value: 0, from: "stockpile", to: "scrapheap" }, first: "", deck: 40,
  };
  /** The reveal form as it opens, and again after each reveal (the card revealed is done with). */
  const freshReveal = () => ({ card: "", name: "", type: "creature", generic: 0, coloured: "", power: 1, toughness: 1, flags: {}, landwalk: "", protection: "", rampage: 0, regen: "" });
  ui.reveal = freshReveal();

  const boardOf = (view) => view.magic_tech || { sides: [], cards: [], active: null, phase: null, turn_number: 0, deployed: 0, lands: 0, mission: null, proposal: null, next_card: 0 };
  const sideOf = (view, id) => boardOf(view).sides.find((s) => s.player === id) || null;
  const cardOf = (view, id) => boardOf(view).cards.find((c) => c.card === id) || null;
  const alive = (p) => p && p.status === "alive";
  const isCreature = (c) => !!(c.face && c.face.type === "creature");
  const opponentOf = (view, me) => { const o = view.players.find((p) => p.player !== me); return o ? o.player : null; };
  const deploymentsAllowed = (board) => (board.turn_number <= 1 ? 1 : 2);
  /** The colours of the basic lands a player has in play. */
  const basicsOf = (view, id) => [...new Set(boardOf(view).cards.filter((c) => c.owner === id && c.face && c.face.basic).map((c) => c.face.basic))];
  /** What a cost comes to for a player with `basics` in play: a coloured symbol counts 1 with its land, else 3. */
  const toPay = (cost, basics) => cost.generic + cost.coloured.reduce((n, c) => n + (basics.includes(c) ? 1 : 3), 0);
  const converted = (face) => (face.cost ? face.cost.generic + face.cost.coloured.length : 0);
  const stats = (face) => ({
    attack: face.type === "creature" ? face.power : 0,
    armour: face.type === "creature" ? face.toughness : face.type === "land" ? 3 : converted(face),
    structure: face.type === "land" ? 3 : converted(face),
  });
  const costWords = (cost) => `${cost.generic || (cost.coloured.length ? "" : "0")}${cost.coloured.map((c) => LETTER[c]).join("")}`;
  /** Colour letters ("GGW") into colours; null if one is not a colour. */
  const letters = (text) => {
    const out = [];
    for (const ch of String(text).toUpperCase().replace(/[\s,{}]/g, "")) {
      if (!BY_LETTER[ch]) return null;
      out.push(BY_LETTER[ch]);
    }
    return out;
  };
  const cardLabel = (view, id) => {
    const c = cardOf(view, id);
    return c && c.face ? `${mtCardName(id)} ${printable(c.face.name)}` : `${mtCardName(id)} face down`;
  };
  const cardOptions = (view, cards) => options(cards.map((c) => [String(c.card), cardLabel(view, c.card)]));

  // ---------------------------------------------------------------- words

  function settingsWords(settings) {
    return settings.seats === 2 ? "Magic Tech · 2 players" : "Magic Tech";
  }

  /** Who the camera shows you to: at a table of two, your opponent. */
  const CAMERA_WORDS = {
    off: "Your camera is off: your opponent does not see you. Turn it on to show your cards to your opponent and see theirs.",
    waiting: "Your camera is on: your opponent sees you once the game starts.",
    nobody: "Your opponent has no camera on.",
  };

  /** The card's numbers in words (on every board, under the turn line). */
  const STATS_KEY = "ATK attack · ARM armour · STR structure · ✸ damage: the card is destroyed when its ✸ reaches its STR";
  const LEGEND = [
    ["▮", "a card face down (under construction), with its mana counters"], ["ATK / ARM / STR", "attack, armour and structure"],
    ["✸", "damage counters: the card is destroyed when they reach its structure"], ["⤵", "tapped"],
    ["new", "entered play this turn"], ["🛡", "a guard: blocks any attacker of the card (or stockpile) it is drawn against, and only those"],
    ["⚔", "attacking in the mission under way"],
  ];

  function heard() {}

  /** An alert for what happened to me; it goes once what it announced is over (`moot`): the
   * mission blocked or ended, the proposal answered or withdrawn. */
  function alertFor(e, me) {
    if (e.kind === "magic_tech.mission_began" && e.player !== me) {
      return { text: `⚔ ${nameOf(e.player)} sent a mission against ${mtTarget(e.target)}: block now`, moot: (view) => !boardOf(view).mission };
    }
    if (e.kind === "magic_tech.proposed" && e.player !== me) {
      return { text: `✎ ${nameOf(e.player)} proposes: ${mtCorrection(e.correction)}`, moot: (view) => !boardOf(view).proposal };
    }
    return null;
  }

  /** What the player may still do this turn, in words. */
  function leftWords(board) {
    const deploys = Math.max(0, deploymentsAllowed(board) - board.deployed);
    const lands = Math.max(0, 2 - board.lands);
    return `${deploys} deployment${deploys === 1 ? "" : "s"} and ${lands} land drop${lands === 1 ? "" : "s"} left`;
  }

  function sentence(view, me) {
    const board = boardOf(view);
    switch (view.stage) {
      case "mulligan": {
        const d = view.mulligan_decider;
        if (d === me) return "Your decision: keep this hand or mulligan (one card fewer).";
        return d === null ? "Opening hands." : `${nameOf(d)} chooses: keep the opening hand or mulligan.`;
      }
      case "finished": {
        const first = view.standings.filter((st) => st.place === 1).map((st) => nameOf(st.player));
        return `Game over: ${first.length ? first.join(", ") + " wins" : "no winner"}.`;
      }
      case "playing": {
        if (board.proposal && board.proposal.player !== me && view.players.some((p) => p.player === me)) {
          return `✎ ${nameOf(board.proposal.player)} proposes ${mtCorrection(board.proposal.correction)}: accept or decline.`;
        }
        if (board.mission) {
          return board.mission.player === me ? `⚔ Your mission against ${mtTarget(board.mission.target)}: waiting for the blocks.`
            : `⚔ ${nameOf(board.mission.player)}'s mission against ${mtTarget(board.mission.target)}: ${me !== null && view.players.some((p) => p.player === me) ? "choose your blocks" : "waiting for the blocks"}.`;
        }
        if (board.active === null) return "Between turns.";
        const phase = board.phase ? MT_PHASES[board.phase] : "start";
        const who = board.active === me ? "▶ Your turn" : `${nameOf(board.active)}'s turn`;
        return `${who}: ${phase} phase — ${leftWords(board)}.`;
      }
      default:
        return "";
    }
  }

  function moment(view, me) {
    const board = boardOf(view);
    if (view.stage === "mulligan" && view.mulligan_decider === me) return { key: "decision", banner: "Your decision", title: "● Your decision" };
    if (view.stage !== "playing") return null;
    if (board.mission && board.mission.player !== me) return { key: "block", banner: "⚔ Block", title: "⚔ Block" };
    if (board.active === me) return { key: "turn", banner: "▶ Your turn", title: "▶ Your turn", lead: /^▶ Your turn/ };
    return null;
  }

  // ---------------------------------------------------------------- the board

  function CardBox({ view, card, depth }) {
    const board = boardOf(view);
    const mission = board.mission;
    const guards = board.cards.filter((g) => g.area.kind === "guard" && g.area.card === card.card);
    const attacking = mission && mission.attackers.includes(card.card);
    const targeted = mission && mission.target.kind === "card" && mission.target.card === card.card;
    const cls = ["mt-card", card.face ? "up" : "down", card.tapped ? "tapped" : "", attacking ? "attacking" : "", targeted ? "targeted" : ""].join(" ");
    let body;
    if (card.face) {
      const st = stats(card.face);
      const kw = FLAGS.filter(([k]) => card.face.keywords && card.face.keywords[k]).map(([, w]) => w);
      body = html`<strong>${printable(card.face.name)}</strong> <span class="meta">${card.face.type}${card.face.type === "land" ? "" : ` · ${costWords(card.face.cost)}`}</span>
        <span class="mt-stats"><abbr title="attack">ATK</abbr> <b data-num="attack">${st.attack}</b> · <abbr title="armour">ARM</abbr> <b data-num="armour">${st.armour}</b>${" · "}<abbr title="structure">STR</abbr> <b data-num="structure">${st.structure}</b> · <abbr title="damage">✸</abbr> <b data-num="damage">${card.damage}</b></span>${kw.length ? html`<span class="meta">${kw.join(", ")}</span>` : null}`;
    } else {
      body = html`<strong>▮ face down</strong> <span class="mt-stats">counters <b data-num="counters">${card.counters}</b>${card.shown ? " · shown" : ""}</span>
        <span class="meta">to reveal: its cost (${basicsOf(view, card.owner).map((c) => LETTER[c]).join("") || "no basic lands"}: those symbols 1, others 3)</span>`;
    }
    return html`<li class=${cls} data-testid=${`mt-card-${card.card}`} data-card=${card.card} data-tapped=${String(card.tapped)}>
      <span class="mt-id">${mtCardName(card.card)}</span> ${body}
      ${card.tapped ? html` <span class="badge">⤵ tapped</span>` : null}${card.fresh ? html` <span class="badge">new</span>` : null}
      ${attacking ? html` <span class="badge">⚔ attacking</span>` : null}${targeted ? html` <span class="badge">◎ target</span>` : null}
      ${guards.length && depth < 4 ? html`<ul class="mt-guards" aria-label=${`Guarding ${mtCardName(card.card)}`}>
        ${guards.map((g) => html`<${CardBox} key=${g.card} view=${view} card=${g} depth=${depth + 1} />`)}</ul>` : null}
    </li>`;
  }

  function Area({ view, cards, label, testid }) {
    return html`<div class="mt-area" data-testid=${testid}><h4>${label}</h4>
      ${cards.length ? html`<ul>${cards.map((c) => html`<${CardBox} key=${c.card} view=${view} card=${c} depth=${0} />`)}</ul>` : html`<p class="meta">none</p>`}</div>`;
  }

  function SideBox({ view, side, me }) {
    const board = boardOf(view);
    const mine = board.cards.filter((c) => c.owner === side.player);
    const stockGuards = mine.filter((c) => c.area.kind === "guard" && (c.area.card === null || c.area.card === undefined));
    const orphan = mine.filter((c) => c.area.kind === "guard" && c.area.card !== null && c.area.card !== undefined && !cardOf(view, c.area.card));
    const p = view.players.find((q) => q.player === side.player);
    const active = board.active === side.player;
    const targeted = board.mission && board.mission.target.kind === "stockpile" && board.mission.target.player === side.player;
    return html`<section class=${`mt-side${active ? " active" : ""}${side.player === me ? " you" : ""}`} data-testid=${`mt-side-${side.player}`} data-player=${side.player}>
      <h3>${printable(p ? p.name : "?")}${side.player === me ? " (you)" : ""}${active ? html` <span class="badge">▶ ${board.phase ? MT_PHASES[board.phase] : "turn"}</span>` : null}
        ${p && p.status !== "alive" ? html` <span class="badge">OUT</span>` : null}</h3>
      <p class="mt-counts">
        <span class=${targeted ? "targeted" : ""}>Stockpile <b data-num="stockpile">${side.stockpile}</b>${targeted ? " ◎" : ""}</span>
        <span>Hand <b data-num="hand">${side.hand}</b></span>
        <span>Scrapheap <b data-num="scrapheap">${side.scrapheap}</b></span>
        <span>Mana <b data-num="mana">${side.mana}</b></span>
        <span class="meta">deck ${side.deck === null ? "?" : side.deck}</span></p>
      ${stockGuards.length ? html`<div class="mt-area"><h4>🛡 Guarding the stockpile</h4><ul>${stockGuards.map((c) => html`<${CardBox} key=${c.card} view=${view} card=${c} depth=${1} />`)}</ul></div>` : null}
      <${Area} view=${view} label="Patrol" testid=${`mt-patrol-${side.player}`} cards=${mine.filter((c) => c.area.kind === "patrol").concat(orphan)} />
      <${Area} view=${view} label="Deploy area" testid=${`mt-deploy-${side.player}`} cards=${mine.filter((c) => c.area.kind === "deploy")} />
    </section>`;
  }

  function Mission({ view }) {
    const m = boardOf(view).mission;
    if (!m) return null;
    const against = m.target.kind === "card" ? cardLabel(view, m.target.card) : mtTarget(m.target);
    return html`<p class="mt-mission" data-testid="mt-mission" role="status">${`⚔ ${nameOf(m.player)}'s mission: ${m.attackers.map((id) => cardLabel(view, id)).join(", ")} against ${against}`}${
      Object.keys(ui.blocks).length ? ` — blocks chosen: ${Object.entries(ui.blocks).filter(([, a]) => a !== "").map(([b, a]) => `${mtCardName(b)} blocks ${mtCardName(a)}`).join(", ") || "none"}` : ""}</p>`;
  }

  function Board({ view, me }) {
    const board = boardOf(view);
    const sides = board.sides.slice();
    if (sides.some((s) => s.player === me)) sides.sort((a, b) => (a.player === me) - (b.player === me));
    const prop = board.proposal;
    return html`<div class="mt-board" data-testid="mt-board">
      <p class="meta" data-testid="mt-turn">Turn ${board.turn_number}${board.active !== null ? ` · ${nameOf(board.active)} · ${board.phase ? MT_PHASES[board.phase] : "starting"} · ${leftWords(board)}` : ""}</p>
      ${board.cards.some((c) => c.face) ? html`<p class="meta mt-key" data-testid="mt-key">${STATS_KEY}</p>` : null}
      ${sides.map((s, k) => html`${k === 1 ? html`<${Mission} view=${view} />` : null}<${SideBox} key=${s.player} view=${view} side=${s} me=${me} />`)}
      ${sides.length < 2 ? html`<${Mission} view=${view} />` : null}
      ${prop ? html`<p class="mt-proposal" data-testid="mt-proposal">✎ ${nameOf(prop.player)} proposes: ${mtCorrection(prop.correction)}</p>` : null}
    </div>`;
  }

  function Winner({ view }) {
    const first = view.standings.filter((st) => st.place === 1).map((st) => nameOf(st.player));
    return html`<div class="winner" data-testid="winner" role="status">♛ ${first.length ? `${first.join(", ")} wins!` : "No winner"}</div>`;
  }

  // ---------------------------------------------------------------- actions

  const field = (label, obj, key, attrs) => html`<label class=${(attrs && attrs.cls) || "small"}><span>${label}</span><input data-testid=${`mt-${key}`} value=${obj[key]}
    onInput=${(ev) => { obj[key] = ev.target.value; render(); }} onChange=${(ev) => { obj[key] = ev.target.value; render(); }} ...${attrs || {}} /></label>`;
  const picker = (label, testid, obj, key, list, empty) => html`<label class="grow"><span>${label}</span>
    <select data-testid=${testid} value=${obj[key]} onChange=${(ev) => { obj[key] = ev.target.value; render(); }}>
      <option value="">${empty}</option>${list}</select></label>`;
  const whole = (v, min) => Number.isInteger(v) && v >= min;

  /** Sends a request of the action bar. A request out of its phase is refused with what to do:
   * the phase it is for, and Next phase ▸ while that phase is still ahead this turn. */
  const act = (message) => go(message).then((answer) => {
    if (answer && answer.type === "error" && answer.code === "wrong_phase" && NEEDS[message.type]) {
      const [what, need] = NEEDS[message.type];
      const board = boardOf(state.view);
      const now = board.phase || "untap";
      const ahead = PHASE_ORDER.indexOf(need) > PHASE_ORDER.indexOf(now);
      showError(`Not in your ${MT_PHASES[now]} phase: ${what} is for your ${MT_PHASES[need]} phase — ${ahead
        ? "press Next phase ▸ to get there" : "it has passed for this turn"}.`);
    }
    return answer;
  });

  /** A line over an action's form when it waits for a later phase of one's turn. */
  function phaseHint(view, me, action) {
    const board = boardOf(view);
    const need = PHASE_OF[action];
    if (!need || board.active !== me || board.phase === need) return null;
    return html`<p class="hint" data-testid="mt-phase-hint">${`This is for your ${MT_PHASES[need]} phase (now: ${MT_PHASES[board.phase] || "untap"}): press Next phase ▸ to get there.`}</p>`;
  }

  /** A declared face from the reveal form, or an error in words. */
  function declaredFace() {
    const r = ui.reveal;
    const coloured = letters(r.coloured);
    const landwalk = letters(r.landwalk);
    const protection = letters(r.protection);
    const regen = r.regen.trim() === "" ? null : { generic: num(r.regen.replace(/[^0-9]/g, ""), 0), coloured: letters(r.regen.replace(/[0-9]/g, "")) };
    if (!r.name.trim()) return { error: "Name the card as printed." };
    if (coloured === null || landwalk === null || protection === null || (regen && regen.coloured === null)) return { error: "Colours are letters: W U B R G." };
    const generic = num(r.generic, -1);
    const power = r.type === "creature" ? num(r.power, -1) : 0;
    const toughness = r.type === "creature" ? num(r.toughness, -1) : 0;
    if (![generic, power, toughness, num(r.rampage, -1)].every((n) => whole(n, 0) && n <= 255)) return { error: "Cost, power and toughness are whole numbers, 0 to 255." };
    const keywords = {};
    for (const [k] of FLAGS) if (r.flags[k]) keywords[k] = true;
    if (landwalk.length) keywords.landwalk = landwalk;
    if (protection.length) keywords.protection = protection;
    if (num(r.rampage, 0)) keywords.rampage = num(r.rampage, 0);
    if (regen) keywords.regeneration = regen;
    return { face: { name: r.name.trim(), type: r.type, cost: { generic, coloured }, power, toughness, keywords } };
  }

  function RevealForm({ view, me }) {
    const r = ui.reveal;
    const down = boardOf(view).cards.filter((c) => c.owner === me && !c.face);
    const declared = declaredFace();
    // Only a card still face down is being revealed (one revealed, by this page or the host, is done).
    const card = down.find((c) => String(c.card) === r.card) || null;
    if (!card) r.card = "";
    const due = declared.face ? toPay(declared.face.cost, basicsOf(view, me)) : null;
    return html`<div class="mt-form" data-testid="mt-reveal-form">
      <div class="row">${picker("Card", "mt-reveal-card", r, "card", cardOptions(view, down), down.length ? "— pick —" : "no face-down card")}
        ${field("Name", r, "name", { cls: "grow", maxlength: 64, autocomplete: "off" })}</div>
      <div class="row"><label class="small"><span>Type</span><select data-testid="mt-reveal-type" value=${r.type} onChange=${(ev) => { r.type = ev.target.value; render(); }}>
          ${options(TYPES.map((t) => [t, t]))}</select></label>
        ${field("Generic", r, "generic", { type: "number", min: 0, inputmode: "numeric" })}
        ${field("Colours (GG, W…)", r, "coloured", { autocomplete: "off" })}
        ${r.type === "creature" ? html`${field("Power", r, "power", { type: "number", min: 0 })}${field("Toughness", r, "toughness", { type: "number", min: 0 })}` : null}</div>
      ${r.type === "creature" ? html`<details><summary>Keywords</summary><div class="row">
        ${FLAGS.map(([k, w]) => html`<label class="inline" key=${k}><input type="checkbox" data-testid=${`mt-kw-${k}`} checked=${!!r.flags[k]}
          onChange=${(ev) => { r.flags[k] = ev.target.checked; render(); }} /> ${w}</label>`)}
        ${field("Landwalk", r, "landwalk", {})}${field("Protection", r, "protection", {})}${field("Rampage", r, "rampage", { type: "number", min: 0 })}
        ${field("Regeneration cost", r, "regen", { placeholder: "e.g. 1G" })}</div></details>` : null}
      <p class="hint" data-testid="mt-reveal-cost">${due === null ? declared.error : `Cost to reveal: ${due}${card ? ` · counters ${card.counters}${card.counters < due ? ` (${due - card.counters} more needed)` : " ✓"}` : ""}`}</p>
      <div class="row bar-row"><${Button} id="mt-reveal" label="Reveal" cls="primary" disabled=${!card || !declared.face || card.counters < due}
        onClick=${() => {
          const now = declaredFace();
          if (!now.face) { showError(now.error); return; }
          act({ type: "magic_tech.reveal", card: Number(r.card), face: now.face }).then((answer) => {
            // Revealed: the form starts again for the next card.
            if (answer && answer.type !== "error") { ui.reveal = freshReveal(); render(); }
          });
        }} /></div></div>`;
  }

  function Form({ view, me }) {
    const board = boardOf(view);
    const mineCards = board.cards.filter((c) => c.owner === me);
    const theirs = board.cards.filter((c) => c.owner !== me);
    const opp = opponentOf(view, me);
    const targetList = (cards) => options(cards.map((c) => [`card:${c.card}`, cardLabel(view, c.card)]).concat(
      view.players.map((p) => [`stockpile:${p.player}`, `${nameOf(p.player)}'s stockpile`])));
    const parseTarget = (v) => { const [k, n] = v.split(":"); return k === "card" ? { kind: "card", card: Number(n) } : { kind: "stockpile", player: Number(n) }; };
    switch (ui.action) {
      case "deploy": {
        // One choice, one land: a basic land is named by its kind; only another land is typed in.
        const l = ui.land;
        const other = l.basic === "other";
        const basic = COLOURS.find(([c]) => c === l.basic);
        return html`<div class="mt-form">${phaseHint(view, me, "deploy")}<div class="row bar-row"><${Button} id="mt-deploy" label="Deploy face down" cls="primary" onClick=${() => act({ type: "magic_tech.deploy" })} /></div>
          <div class="row"><label class="grow"><span>Land</span><select data-testid="mt-land-basic" value=${l.basic} onChange=${(ev) => { l.basic = ev.target.value; render(); }}>
              ${options([["", "— pick —"], ...COLOURS.map(([c, letter, n]) => [c, `${n} (basic, ${letter})`]), ["other", "another land (not basic)…"]])}</select></label>
            ${other ? html`<label class="grow"><span>Its name</span><input data-testid="mt-land-name" value=${l.name} maxlength="64" autocomplete="off"
              onInput=${(ev) => { l.name = ev.target.value; render(); }} /></label>` : null}
            <${Button} id="mt-deploy-land" label=${basic ? `Deploy ${basic[2]}` : "Deploy land"} disabled=${!basic && !(other && l.name.trim())} onClick=${() => {
              const land = { name: basic ? basic[2] : l.name.trim(), type: "land", cost: { generic: 0, coloured: [] }, power: 0, toughness: 0, keywords: {} };
              if (basic) land.basic = basic[0];
              act({ type: "magic_tech.deploy", land });
            }} /></div></div>`;
      }
      case "tap": {
        const up = mineCards.filter((c) => c.face && !c.tapped);
        return html`<div class="mt-form"><div class="row">${picker("Card", "mt-tap-card", ui.tap, "card", cardOptions(view, up), up.length ? "— pick —" : "nothing untapped")}
          ${field("Mana", ui.tap, "mana", { type: "number", min: 0 })}
          <${Button} id="mt-tap" label="Tap" cls="primary" disabled=${ui.tap.card === ""} onClick=${() => go({ type: "magic_tech.tap", card: Number(ui.tap.card), mana: num(ui.tap.mana, 0) })} /></div></div>`;
      }
      case "pay": {
        const down = mineCards.filter((c) => !c.face);
        return html`<div class="mt-form"><div class="row">${picker("Onto", "mt-pay-card", ui.pay, "card", cardOptions(view, down), "an activation cost")}
          ${field("Amount", ui.pay, "amount", { type: "number", min: 1 })}
          <${Button} id="mt-pay" label="Pay" cls="primary" onClick=${() => go({ type: "magic_tech.pay", card: ui.pay.card === "" ? null : Number(ui.pay.card), amount: num(ui.pay.amount, 0) })} /></div></div>`;
      }
      case "reveal":
        return html`<${RevealForm} view=${view} me=${me} />`;
      case "relocate": {
        // Creatures that began the turn in play, and those immune to summoning sickness.
        const movers = mineCards.filter((c) => isCreature(c) && (!c.fresh || c.face.keywords.haste));
        const spots = [["patrol", "Patrol"], ["stockpile", "Guard my stockpile"], ...mineCards.filter((c) => String(c.card) !== ui.relocate.card).map((c) => [String(c.card), `Guard ${cardLabel(view, c.card)}`])];
        return html`<div class="mt-form">${phaseHint(view, me, "relocate")}<div class="row">${picker("Creature", "mt-relocate-card", ui.relocate, "card", cardOptions(view, movers), movers.length ? "— pick —" : "no creature")}
          <label class="grow"><span>To</span><select data-testid="mt-relocate-area" value=${ui.relocate.area} onChange=${(ev) => { ui.relocate.area = ev.target.value; }}>${options(spots)}</select></label>
          <${Button} id="mt-relocate" label="Move" cls="primary" disabled=${ui.relocate.card === ""} onClick=${() => {
            const a = ui.relocate.area;
            const area = a === "patrol" ? { kind: "patrol" } : { kind: "guard", card: a === "stockpile" ? null : Number(a) };
            act({ type: "magic_tech.relocate", card: Number(ui.relocate.card), area });
          }} /></div></div>`;
      }
      case "mission": {
        // The deploy area's creatures do not go on missions (relocate one immune to summoning sickness first).
        const ready = mineCards.filter((c) => isCreature(c) && !c.tapped && c.area.kind !== "deploy");
        const m = ui.mission;
        m.attackers = m.attackers.filter((id) => ready.some((c) => c.card === id));
        const attackable = theirs.filter((c) => !(c.area.kind === "patrol" && !c.tapped));
        return html`<div class="mt-form">${phaseHint(view, me, "mission")}<div class="row mt-pick" role="group" aria-label="Attackers">${ready.length ? ready.map((c) => html`<label class="inline" key=${c.card}>
            <input type="checkbox" data-testid=${`mt-attacker-${c.card}`} checked=${m.attackers.includes(c.card)}
              onChange=${(ev) => { m.attackers = ev.target.checked ? m.attackers.concat([c.card]) : m.attackers.filter((id) => id !== c.card); render(); }} /> ${cardLabel(view, c.card)}</label>`)
            : html`<span class="hint">No untapped creature on patrol or guard.</span>`}</div>
          <div class="row">${picker("Against", "mt-mission-target", m, "target", options(attackable.map((c) => [`card:${c.card}`, cardLabel(view, c.card)])
              .concat(opp === null ? [] : [[`stockpile:${opp}`, `${nameOf(opp)}'s stockpile`]])), "— pick —")}
            <${Button} id="mt-mission" label="⚔ Send" cls="primary" disabled=${!m.attackers.length || m.target === ""}
              onClick=${() => act({ type: "magic_tech.mission", attackers: m.attackers.slice(), target: parseTarget(m.target) })} /></div></div>`;
      }
      case "block": {
        const mission = board.mission;
        if (!mission || mission.player === me) return html`<p class="hint">No mission against you to block.</p>`;
        const blockers = mineCards.filter((c) => isCreature(c) && !c.tapped && c.area.kind !== "deploy");
        for (const k of Object.keys(ui.blocks)) if (!blockers.some((c) => String(c.card) === k)) delete ui.blocks[k];
        const attackers = options(mission.attackers.map((id) => [String(id), `blocks ${cardLabel(view, id)}`]));
        return html`<div class="mt-form">${blockers.length ? blockers.map((c) => html`<div class="row" key=${c.card}>
            <label class="grow"><span>${cardLabel(view, c.card)} (${mtArea(c.area)})</span><select data-testid=${`mt-block-${c.card}`} value=${ui.blocks[c.card] || ""}
              onChange=${(ev) => { ui.blocks[c.card] = ev.target.value; render(); }}><option value="">does not block</option>${attackers}</select></label></div>`)
            : html`<p class="hint">No untapped creature on patrol or guard.</p>`}
          <div class="row bar-row"><${Button} id="mt-block" label="Block (the mission resolves)" cls="primary" onClick=${() => {
            const blocks = Object.entries(ui.blocks).filter(([, a]) => a !== "").map(([b, a]) => ({ blocker: Number(b), attacker: Number(a) }));
            ui.blocks = {};
            go({ type: "magic_tech.block", blocks });
          }} /></div></div>`;
      }
      case "damage":
        return html`<div class="mt-form"><div class="row">${picker("To", "mt-damage-target", ui.damage, "target", targetList(board.cards), "— pick —")}
          ${field("Amount", ui.damage, "amount", { type: "number", min: 1 })}
          <${Button} id="mt-damage" label="Deal damage" cls="primary" disabled=${ui.damage.target === ""}
            onClick=${() => go({ type: "magic_tech.damage", target: parseTarget(ui.damage.target), amount: num(ui.damage.amount, 0) })} /></div></div>`;
      case "heal":
        return html`<div class="mt-form"><div class="row">${picker("Card", "mt-heal-card", ui.heal, "card", cardOptions(view, board.cards.filter((c) => c.damage > 0)), "— pick —")}
          ${field("Amount", ui.heal, "amount", { type: "number", min: 1 })}
          <${Button} id="mt-heal" label="Heal" disabled=${ui.heal.card === ""} onClick=${() => go({ type: "magic_tech.heal", card: Number(ui.heal.card), amount: num(ui.heal.amount, 0) })} />
          <${Button} id="mt-regenerate" label="Regenerate (upkeep)" disabled=${ui.heal.card === ""} onClick=${() => act({ type: "magic_tech.regenerate", card: Number(ui.heal.card) })} /></div></div>`;
      case "cards": {
        const c = ui.cards;
        return html`<div class="mt-form"><div class="row">${field("Draw", c, "count", { type: "number", min: 1 })}
            <${Button} id="mt-draw" label="Draw" onClick=${() => go({ type: "magic_tech.draw", count: num(c.count, 0) })} />
            ${field("Life ±", c, "delta", { type: "number" })}
            <${Button} id="mt-life" label="Life" title="Negative: scrap that many; positive: scrapheap cards under the stockpile" onClick=${() => go({ type: "magic_tech.life", delta: num(c.delta, 0) })} /></div>
          <div class="row">${picker("Card leaves play", "mt-leave-card", c, "card", cardOptions(view, mineCards), "— pick —")}
            <label class="small"><span>To</span><select data-testid="mt-leave-to" value=${c.to} onChange=${(ev) => { c.to = ev.target.value; }}>${options([["hand", "hand"], ["stockpile", "stockpile"], ["scrapheap", "scrapheap"]])}</select></label>
            <${Button} id="mt-leave" label="Leave play" disabled=${c.card === ""} onClick=${() => go({ type: "magic_tech.leave_play", card: Number(c.card), to: c.to })} /></div></div>`;
      }
      case "correct":
        return html`<${CorrectionForm} view=${view} me=${me} submit=${(correction) => go({ type: "magic_tech.propose", correction })} label="Propose" />`;
      default:
        return null;
    }
  }

  /** A correction's fields (the players propose one; the host rules one). */
  function CorrectionForm({ view, submit, label }) {
    const c = ui.correct;
    const board = boardOf(view);
    const onCard = ["counters", "damage", "tapped"].includes(c.kind);
    const build = () => {
      const value = num(c.value, -1);
      if (onCard && c.card === "") return showError("Pick the card.");
      if (!onCard && c.player === "") return showError("Pick the player.");
      if (c.kind !== "tapped" && !whole(value, 0)) return showError("A whole number, 0 or more.");
      const card = Number(c.card);
      const player = Number(c.player);
      const correction = c.kind === "counters" ? { kind: "counters", card, counters: value }
        : c.kind === "damage" ? { kind: "damage", card, damage: value }
          : c.kind === "tapped" ? { kind: "tapped", card, tapped: num(c.value, 0) !== 0 }
            : c.kind === "mana" ? { kind: "mana", player, mana: value }
              : { kind: "move", player, from: c.from, to: c.to, count: value };
      return submit(correction);
    };
    const zones = options([["stockpile", "stockpile"], ["hand", "hand"], ["scrapheap", "scrapheap"]]);
    return html`<div class="mt-form" data-testid="mt-correction-form"><div class="row">
      <label class="small"><span>Set</span><select data-testid="mt-correct-kind" value=${c.kind} onChange=${(ev) => { c.kind = ev.target.value; render(); }}>
        ${options([["damage", "damage"], ["counters", "mana counters"], ["tapped", "tapped (1/0)"], ["mana", "unspent mana"], ["move", "move cards"]])}</select></label>
      ${onCard ? picker("Card", "mt-correct-card", c, "card", cardOptions(view, board.cards), "— pick —")
        : picker("Player", "mt-correct-player", c, "player", options(view.players.map((p) => [String(p.player), nameOf(p.player)])), "— pick —")}
      ${c.kind === "move" ? html`<label class="small"><span>From</span><select value=${c.from} onChange=${(ev) => { c.from = ev.target.value; }}>${zones}</select></label>
        <label class="small"><span>To</span><select value=${c.to} onChange=${(ev) => { c.to = ev.target.value; }}>${zones}</select></label>` : null}
      ${field(c.kind === "move" ? "Count" : "Value", c, "value", { type: "number", min: 0 })}
      <${Button} id=${`mt-${label.toLowerCase()}`} label=${label} onClick=${build} /></div></div>`;
  }

  /** The action bar: the phase and what is left, the opponent's proposal, the chosen action's form. */
  function ActionBar({ view, me }) {
    if (state.role !== "player" || view.adjourned) return null;
    const mine = view.players.find((p) => p.player === me);
    if (!alive(mine)) return null;
    if (view.stage === "mulligan") {
      if (view.mulligan_decider !== me) return null;
      return html`<div class="action-bar" data-testid="action-bar"><div class="row bar-row">
        <${Button} id="keep" label="Keep this hand" cls="primary" onClick=${() => go({ type: "keep" })} />
        <${Button} id="mulligan" label="Mulligan" onClick=${() => go({ type: "mulligan" })} /></div></div>`;
    }
    if (view.stage !== "playing") return null;
    const board = boardOf(view);
    const side = sideOf(view, me);
    const prop = board.proposal;
    const defending = board.mission && board.mission.player !== me;
    if (defending && ui.action !== "block" && !ui.forced) { ui.action = "block"; ui.forced = true; }
    if (!board.mission) ui.forced = false;
    // Only what this player may do now: deploying, relocating and missions are the active
    // player's; blocking is the other's (anything else — an instant and its mana, damage,
    // corrections — either may do at any time). On one's turn, what is for this phase first,
    // then what is for any time, then what waits for a later phase (so named); what a past phase allowed is gone for this turn.
    const at = PHASE_ORDER.indexOf(board.phase || "untap");
    const myTurn = board.active === me;
    const offered = !myTurn ? ACTIONS.filter(([key]) => !ACTIVE_ONLY.includes(key))
      : ACTIONS.filter(([key]) => PHASE_OF[key] === board.phase)
        .concat(ACTIONS.filter(([key]) => key !== "block" && !PHASE_OF[key]))
        .concat(ACTIONS.filter(([key]) => PHASE_OF[key] && PHASE_ORDER.indexOf(PHASE_OF[key]) > at).map(([key, label]) => [key, `${label} (${MT_PHASES[PHASE_OF[key]]} phase)`]));
    // A new phase (or turn) opens on its first action.
    const phaseKey = `${board.turn_number}:${board.active}:${board.phase}`;
    if (ui.phase !== phaseKey) { ui.phase = phaseKey; if (myTurn && !defending) ui.action = offered[0][0]; }
    if (!offered.some(([key]) => key === ui.action)) ui.action = offered[0][0];
    return html`<div class="action-bar mt-bar" data-testid="action-bar" aria-label="Your actions">
      <div class="row mt-head">
        <span class="mt-left" data-testid="mt-left">${board.active === me ? `${board.phase ? MT_PHASES[board.phase] : "start"} · ${leftWords(board)}` : `${nameOf(board.active)}'s turn`} · mana ${side ? side.mana : 0}</span>
        ${board.active === me ? html`<${Button} id="mt-next-phase" label=${board.phase === "missions" || board.phase === "end" ? "End turn ▸" : "Next phase ▸"} cls="primary" disabled=${!!board.mission}
          onClick=${() => go({ type: "magic_tech.next_phase" })} />` : null}</div>
      ${prop && prop.player !== me ? html`<div class="row bar-row confirm" data-testid="mt-answer"><span>✎ ${mtCorrection(prop.correction)}?</span>
        <${Button} id="mt-accept" label="Accept" cls="primary" onClick=${() => go({ type: "magic_tech.answer", accept: true })} />
        <${Button} id="mt-decline" label="Decline" onClick=${() => go({ type: "magic_tech.answer", accept: false })} /></div>` : null}
      ${prop && prop.player === me ? html`<div class="row bar-row"><span class="hint">Your proposal waits for an answer.</span>
        <${Button} id="mt-withdraw" label="Withdraw" onClick=${() => go({ type: "magic_tech.answer", accept: false })} /></div>` : null}
      <div class="row"><label class="grow"><span class="phone-hidden">Action</span><select data-testid="mt-action" value=${ui.action} onChange=${(ev) => { ui.action = ev.target.value; render(); }}>
        ${options(offered)}</select></label></div>
      <${Form} view=${view} me=${me} />
    </div>`;
  }

  /** The frame's "more actions": conceding. */
  function play(view, me) {
    const mine = view.players.find((p) => p.player === me);
    if (view.stage !== "playing" || !alive(mine)) return [];
    return [html`<div key="mt-play" class="group"><div class="row">
      <${Button} id="concede" label="Concede…" cls="danger" onClick=${() => { if (window.confirm("Leave the game for good?")) go({ type: "concede" }); }} /></div></div>`];
  }

  /** The lobby: one's deck size, and the host's start (who plays first). */
  function LobbyTools({ view, me, host }) {
    const side = sideOf(view, me);
    const ids = view.players.map((p) => p.player);
    if (ui.first !== "" && !ids.includes(Number(ui.first))) ui.first = "";
    return html`
      ${side ? html`<div class="row"><label class="small"><span>My deck (cards, 5 to 60)</span><input type="number" min="5" max="60" data-testid="mt-deck-size" value=${ui.deck}
          onInput=${(ev) => { ui.deck = ev.target.value; }} onChange=${(ev) => { ui.deck = ev.target.value; }} /></label>
        <${Button} id="mt-declare-deck" label=${side.deck === null ? "Declare my deck" : `Declared: ${side.deck} — change`} onClick=${() => {
          const size = num(ui.deck, 0);
          if (!whole(size, 5) || size > 60) { showError("A deck has 5 to 60 cards: at least the opening hand."); return; }
          go({ type: "magic_tech.declare_deck", size });
        }} /></div>` : null}
      ${host ? html`<div class="host-only">
        <label><span>First player</span><select data-testid="start-first" value=${ui.first} onChange=${(ev) => { ui.first = ev.target.value; }}>
          ${options([["", "Drawn at random (the dice)"], ...view.players.map((p) => [String(p.player), printable(p.name)])])}</select></label>
        <${Button} id="start" label="Start the game" cls="primary" onClick=${() => go({ type: "start", first_player: ui.first === "" ? null : Number(ui.first) })} />
      </div>` : null}`;
  }

  /** The host's rulings: a correction ruled at once. */
  function Rulings({ view }) {
    return html`<fieldset><legend>Rulings (Magic Tech)</legend>
      <${CorrectionForm} view=${view} submit=${(correction) => go({ type: "magic_tech.rule", correction })} label="Rule" /></fieldset>`;
  }

  function SeatList({ view, me, replay: isReplay }) {
    return html`<table class="seat-list" data-testid="seat-list"><caption>${view.stage === "lobby" ? "Seated, in order of arrival" : "Players, first player first"}</caption>
      <thead><tr><th scope="col">Player</th><th scope="col">Deck</th><th scope="col">Stockpile</th><th scope="col">State</th></tr></thead>
      <tbody>${view.players.map((p) => {
        const side = sideOf(view, p.player);
        const bits = [];
        if (p.player === me) bits.push("you");
        if (view.host === p.player) bits.push("★ host");
        if (p.status !== "alive") bits.push("OUT");
        if (!p.connected && !isReplay) bits.push(p.absent ? "away" : "offline");
        if (boardOf(view).active === p.player) bits.push("▶ his turn");
        return html`<tr key=${p.player} class=${p.player === me ? "you" : ""}><td class="pname">${printable(p.name)}</td>
          <td>${side && side.deck !== null ? side.deck : "?"}</td><td>${side ? side.stockpile : ""}</td><td>${bits.join(", ")}</td></tr>`;
      })}</tbody></table>`;
  }

  function Main({ view, me }) {
    return html`${view.stage === "finished" ? html`<${Winner} view=${view} />` : null}${view.stage === "lobby" ? null : html`<${Board} view=${view} me=${me} />`}`;
  }

  function Side({ view, me }) {
    return html`<${ActionBar} view=${view} me=${me} />`;
  }

  function Display({ view }) {
    return html`${view.stage === "finished" ? html`<${Winner} view=${view} />` : null}<${Board} view=${view} me=${null} />`;
  }

  GM.games = GM.games || {};
  // Loaded when a table plays it (table.js's LAZY): registered as soon as it runs.
  GM.gameReady = GM.gameReady || {};
  GM.gameReady.magic_tech = Promise.resolve();
  GM.games.magic_tech = {
    stages: STAGES, settingsWords, legend: LEGEND, sentence, moment, alertFor, heard, stillIn: alive, cameraWords: CAMERA_WORDS,
    chapter: { starts: (e) => e.kind === "turn_began", back: "« turn", on: "turn »", backAria: "Back one turn", onAria: "On one turn" },
    Main, Side, Foot: () => null, Display, Replay: Display, Seats: SeatList, LobbyTools, Rulings, play,
  };
})();

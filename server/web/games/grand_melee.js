// Grand Melee's panel on the table page, the display and the replay: the ring, the
// neighbourhood, the action bar and the other tools of play, the seat list, the standings, the
// dice, and the game's words (alerts, status line, legend). It registers itself in
// `GM.games.grand_melee`, the registry the page's frame (table.js) draws a table's game from;
// the frame keeps the entry, the seat, the reconnection, the log and chat, the host's table
// tools and the sharing. Drawn from the folded view like the rest of the page: no state of its
// own but what the player is choosing (`ui`).
"use strict";

(function () {
  const GM = window.GM;
  const { PHASES, PHASE_NAMES, printable, shorten, state, showError, nameOf, tn, describe, bonusWords,
    STAGES, rulesWords } = GM;
  const { html, render, go, Button, options, num } = GM.frame;

  /** What the player is choosing in Grand Melee's panel. Handlers change it, then `render()`. */
  const ui = {
    target: "", amount: 1, poison: 0, selected: null, zoom: 1, confirm: null, rollResult: "",
    roll: { defender: "", power: 2, blockers: "" }, counter: { who: "", mine: 2, theirs: 2 },
    host: { value: 20 }, first: "", choose: "", seating: "random", commit: { secret: null, ok: null },
  };

  const alive = (p) => p && p.status === "alive";
  const playerOf = (view, id) => (view && id !== null && id !== undefined ? view.players.find((p) => p.player === id) : null);
  const sortedBySeat = (view) => view.players.slice().sort((a, b) => (a.seat ?? 1e9) - (b.seat ?? 1e9) || a.player - b.player);
  const runningTurn = (view, id) => view.turns.find((t) => t.player === id && t.state !== "ended");

  // ---------------------------------------------------------------- words

  /** What the game makes of an event as it is put in the log: a combat roll's result for the roller and his opponent. */
  function heard(e, me) {
    if (e.kind === "attack_rolled" && (e.roller === me || e.opponent === me)) ui.rollResult = describe(e);
  }

  /** An alert for what just happened to me, a seated player (live events only, never the rebuilt past). */
  function alertFor(e, me) {
    switch (e.kind) {
      case "attacked":
        if (e.defender !== me) return null;
        return `⚔ ${nameOf(e.attacker)} attacked you: ${e.damage} damage` + (e.poison ? ` and ${e.poison} poison` : "");
      case "damage_dealt":
        return e.target === me && e.source !== me ? `✦ ${nameOf(e.source)} dealt you ${e.amount} damage` : null;
      case "attack_rolled":
        if (e.opponent !== me || !e.damage) return null;
        return `⚄ ${nameOf(e.roller)} ${e.counter ? "struck back at" : "hit"} you: ${e.damage} damage`;
      case "poison_changed":
        // Poison from an attack is in the attack's alert; one's own change or a host's ruling is not news.
        return null;
      case "turn_passed":
        // A turn passed to me that has already begun is said by the status line, not an alert.
        return e.to === me ? {
          text: `▶ ${tn(e.turn)} passed to you: it begins when the turns around you end`,
          moot: (view) => view.turns.some((t) => t.player === me && t.state === "running"),
        } : null;
      case "eliminated":
        return e.players.includes(me) ? "✕ You are out of the game. You can still watch and chat." : null;
      default: return null;
    }
  }

  /** What a person needs to know now, in one sentence, once the game has started. */
  function sentence(view, me) {
    const mine = playerOf(view, me);
    switch (view.stage) {
      case "mulligan": {
        const deciders = view.mulligan_deciders || [];
        if (deciders.includes(me)) {
          return view.settings.mulligan === "simultaneous"
            ? "Your mulligan decision: keep or mulligan (everyone decides at once)."
            : "Your mulligan decision: keep or mulligan.";
        }
        if (view.settings.mulligan === "simultaneous") {
          const names = deciders.map(nameOf);
          return `Waiting for ${deciders.length} player${deciders.length === 1 ? "" : "s"} to decide on mulligans` +
            (names.length && names.length <= 6 ? `: ${names.join(", ")}.` : ".");
        }
        return `${nameOf(view.mulligan_decider)} decides on a mulligan.`;
      }
      case "finished": {
        const first = (view.standings || []).filter((st) => st.place === 1).map((st) => nameOf(st.player));
        return first.length > 1 ? `The game is over: ${first.join(", ")} share first place.`
          : first.length ? `The game is over: ${first[0]} wins.` : "The game is over.";
      }
      default: {
        if (mine && mine.status !== "alive") return "You are out of the game; you can still watch and chat.";
        const running = view.turns.filter((t) => t.state === "running");
        const own = view.turns.find((t) => t.player === me && t.state !== "ended");
        const extra = mine ? extraWords(mine) : "";
        const after = extra ? ` ${extra}` : "";
        if (own && own.state === "running") return `▶ Your turn (${tn(own.turn)}) — ${PHASE_NAMES[own.phase]}.${after}`;
        const stacks = mine ? mine.stacks || [] : [];
        const blocking = running.filter((t) => stacks.includes(t.turn) && t.player !== me);
        if (own && own.state === "waiting") {
          const others = running.filter((t) => t.sphere.some((id) => own.sphere.includes(id)));
          return `Your turn (${tn(own.turn)}) waits for ${others.map((t) => nameOf(t.player)).join(", ") || "the table"} to finish.${after}`;
        }
        if (blocking.length) {
          const whose = blocking.map((t) => nameOf(t.player) + "'s").join(" and ");
          return (state.rules === "cr807"
            ? `You are in range of ${whose} turn (${blocking.map((t) => tn(t.turn)).join(", ")}).`
            : `You are in ${whose} sphere (${blocking.map((t) => tn(t.turn)).join(", ")}).`) + after;
        }
        if (running.length) return `Playing now: ${running.map((t) => nameOf(t.player)).join(", ")}.${after}`;
        return `Between turns.${after}`;
      }
    }
  }

  /** "You have an extra turn to come." and the like, or "". */
  function extraWords(p) {
    const n = (p.extra_turns || 0) + (p.extra_next || 0);
    if (!n) return "";
    return n === 1 ? "You have an extra turn to come." : `You have ${n} extra turns to come.`;
  }

  /** A player's state in words: "in the game, host, offline". */
  function stateWords(view, p, options) {
    const bits = [p.status === "alive" ? "in the game" : p.status === "eliminated" ? "out (position still counts)" : "out (position removed)"];
    if (!(options && options.replay)) {
      if (!p.connected) bits.push(p.absent ? "away" : "offline");
    }
    if (view.host === p.player) bits.push("host");
    return bits.join(", ");
  }

  /** How far apart two players sit, counting the positions still on the ring, or null. */
  function distance(view, a, b) {
    const ring = view.ring || [];
    const i = ring.indexOf(a);
    const j = ring.indexOf(b);
    if (i < 0 || j < 0) return null;
    const d = Math.abs(i - j);
    return Math.min(d, ring.length - d);
  }


  // ---------------------------------------------------------------- the ring

  /** The ring as SVG: seats, spheres, turns, you and your range. Every seat is a button. */
  function Ring({ view, me, big, replay: isReplay, onSeat }) {
    const c = 500;
    const players = sortedBySeat(view);
    const n = Math.max(players.length, 1);
    const R = 300;
    const step = (2 * Math.PI) / n;
    // A display across a room gets discs as large as the ring allows and larger names.
    const r = Math.max(14, Math.min(58, R * Math.sin(step / 2) * (big ? 0.9 : 0.78)));
    const angle = (i) => -Math.PI / 2 + i * step; // seat 0 at the top; the next seat (to the left) clockwise
    const at = (i, radius) => [c + radius * Math.cos(angle(i)), c + radius * Math.sin(angle(i))];
    const index = new Map(players.map((p, i) => [p.player, i]));
    const mine = playerOf(view, me);
    const inMyRange = new Set(mine ? mine.may_target : []);
    const nameFont = big ? (n <= 15 ? 34 : n <= 28 ? 30 : 28) : n <= 15 ? 30 : n <= 28 ? 24 : 21;
    const maxChars = n <= 15 ? 14 : 12;
    // Room for the longest name on every side: nothing is clipped at 3 or 9 o'clock.
    const reach = R + r + 10 + maxChars * nameFont * 0.62 + 12;
    const box = `${(c - reach).toFixed(0)} ${(c - reach).toFixed(0)} ${(2 * reach).toFixed(0)} ${(2 * reach).toFixed(0)}`;
    const live = view.turns.filter((t) => t.state !== "ended" && t.sphere.length);
    const placed = []; // the turn labels' boxes so far: the next one keeps clear of them
    const bands = live.map((t, k) => {
      const idx = t.sphere.map((id) => index.get(id)).filter((i) => i !== undefined);
      if (!idx.length) return null;
      const inner = R - r - 18 - (k % 3) * 22;
      const cls = `sphere sphere-${t.turn % 6} ${t.state}`;
      let arc;
      if (t.sphere.length >= view.ring.length) {
        arc = html`<circle cx=${c} cy=${c} r=${inner} class=${cls} stroke-width="16" fill="none" />`;
      } else {
        const first = idx[0];
        const span = ((idx[idx.length - 1] - first) % n + n) % n;
        const a0 = angle(first) - step / 2.4;
        const a1 = angle(first) + span * step + step / 2.4;
        const large = a1 - a0 > Math.PI ? 1 : 0;
        const p0 = [c + inner * Math.cos(a0), c + inner * Math.sin(a0)];
        const p1 = [c + inner * Math.cos(a1), c + inner * Math.sin(a1)];
        arc = html`<path d=${`M ${p0[0].toFixed(1)} ${p0[1].toFixed(1)} A ${inner} ${inner} 0 ${large} 1 ${p1[0].toFixed(1)} ${p1[1].toFixed(1)}`}
          class=${cls} stroke-width="16" fill="none" />`;
      }
      // The turn's label: its number (and designations) over its phase, inside its arc at the
      // arc's middle, as near the arc as its box (its width estimated on the generous side)
      // stays clear of the arc and of the labels placed before it; smaller if it must.
      let mid = index.get(t.player);
      if (t.sphere.length < view.ring.length) {
        const span = ((idx[idx.length - 1] - idx[0]) % n + n) % n;
        mid = idx[0] + span / 2;
      }
      let label = null;
      if (mid !== undefined) {
        const head = (t.state === "running" ? `▶${tn(t.turn)}` : `…${tn(t.turn)}`) + (t.designations ? ` ✕${t.designations}` : "");
        const phase = t.state === "running" ? PHASE_NAMES[t.phase] || "" : "";
        const cos = Math.cos(angle(mid)), sin = Math.sin(angle(mid));
        const anchor = cos < -0.35 ? "start" : cos > 0.35 ? "end" : "middle";
        const limit = inner - 12;
        const place = (font) => {
          const small = font * 0.8, lh = font * 1.1;
          const w = Math.max(head.length * font, phase.length * small) * 0.66, h = (phase ? 2 : 1) * lh;
          const xs = anchor === "start" ? [0, w] : anchor === "end" ? [-w, 0] : [-w / 2, w / 2];
          const box = (rr) => ({ x0: rr * cos + xs[0], x1: rr * cos + xs[1], y0: rr * sin - h / 2, y1: rr * sin + h / 2 });
          const inside = (b) => [b.x0, b.x1].every((px) => [b.y0, b.y1].every((py) => Math.hypot(px, py) <= limit));
          const apart = (b) => placed.every((o) => b.x1 + 4 < o.x0 || o.x1 + 4 < b.x0 || b.y1 + 4 < o.y0 || o.y1 + 4 < b.y0);
          for (let rr = limit - h / 2; rr >= 0; rr -= 4) {
            const b = box(rr);
            if (inside(b) && apart(b)) return { rr, font, small, lh, b };
          }
          return null;
        };
        const base = Math.max(16, nameFont - 4);
        const spot = place(base) || place(base * 0.8) || place(base * 0.65) || place(base * 0.5);
        if (!spot) return html`<g key=${`t${t.turn}`} aria-hidden="true">${arc}</g>`;
        placed.push(spot.b);
        const [x, y] = [c + spot.rr * cos, c + spot.rr * sin];
        const top = phase ? y - spot.lh / 2 : y;
        label = html`<text class=${`turn-label sphere-text-${t.turn % 6}`} text-anchor=${anchor}
          dominant-baseline="middle" font-size=${spot.font} data-inner=${inner}><tspan x=${x} y=${top}>${head}</tspan>${phase
            ? html`<tspan x=${x} y=${top + spot.lh} font-size=${spot.small}>${phase}</tspan>` : null}</text>`;
      }
      return html`<g key=${`t${t.turn}`} aria-hidden="true">${arc}${label}</g>`;
    });
    const seats = players.map((p, i) => {
      const [x, y] = at(i, R);
      const you = p.player === me;
      const turn = runningTurn(view, p.player);
      const classes = ["seat", p.status, isReplay || p.connected ? "on" : "off"];
      if (you) classes.push("you");
      if (inMyRange.has(p.player) && !you) classes.push("in-range");
      if (turn && turn.state === "running") classes.push("running");
      if (ui.selected === p.player) classes.push("selected");
      const radius = p.status === "removed" ? r * 0.6 : r;
      const marks = [
        you ? "@" : "",
        view.host === p.player ? "★" : "",
        turn ? (turn.state === "running" ? "▶" : "…") : "",
        isReplay || p.connected ? "" : (p.absent ? "away" : "off"),
      ].filter(Boolean).join(" ");
      const deg = (angle(i) * 180) / Math.PI;
      const right = Math.cos(angle(i)) >= -1e-9;
      const [lx, ly] = at(i, R + radius + 10);
      const label = `${printable(p.name)}${you ? " (you)" : ""}: life ${p.life}, poison ${p.poison}, ${stateWords(view, p, { replay: isReplay })}` +
        (turn ? (turn.state === "running" ? `, taking ${tn(turn.turn)} (${PHASE_NAMES[turn.phase]})` : `, ${tn(turn.turn)} waiting`) : "") +
        (inMyRange.has(p.player) && !you ? ", within your range" : "");
      const pick = () => onSeat && onSeat(p.player);
      return html`<g key=${p.player} class=${classes.join(" ")} data-testid="seat" data-player=${p.player}
          role=${onSeat ? "button" : "img"} tabindex=${onSeat ? 0 : undefined}
          onClick=${pick} onKeyDown=${(ev) => { if (onSeat && (ev.key === "Enter" || ev.key === " ")) { ev.preventDefault(); pick(); } }}>
        <title>${label}</title>
        <circle cx=${x} cy=${y} r=${radius} class="disc" />
        ${inMyRange.has(p.player) && !you ? html`<circle cx=${x} cy=${y} r=${radius + 7} class="range-mark" />` : null}
        ${p.status === "alive" ? html`
          <text aria-hidden="true" x=${x} y=${y + (p.poison ? -radius * 0.12 : 0)} class="life" text-anchor="middle" dominant-baseline="middle"
            font-size=${Math.max(14, radius * 0.8)} data-num="life" data-player=${p.player}>${p.life}</text>
          ${p.poison ? html`<text aria-hidden="true" x=${x} y=${y + radius * 0.55} class="poison" text-anchor="middle" dominant-baseline="middle"
            font-size=${Math.max(11, radius * 0.45)}>☠<tspan data-num="poison" data-player=${p.player}>${p.poison}</tspan></text>` : null}`
        : html`<text aria-hidden="true" x=${x} y=${y} class="out" text-anchor="middle" dominant-baseline="middle"
            font-size=${Math.max(12, radius * 0.6)}>${p.status === "removed" ? "✕" : "OUT"}</text>`}
        <text aria-hidden="true" x=${lx} y=${ly} class="name" text-anchor=${right ? "start" : "end"} dominant-baseline="middle" font-size=${nameFont}
          transform=${`rotate(${(right ? deg : deg + 180).toFixed(2)} ${lx.toFixed(1)} ${ly.toFixed(1)})`}>${right
            ? (marks ? marks + " " : "") + shorten(p.name, maxChars) : shorten(p.name, maxChars) + (marks ? " " + marks : "")}</text>
      </g>`;
    });
    return html`<svg viewBox=${box} class=${"ring" + (big ? " big" : "")} role="group"
        aria-label=${`The table's ring: ${players.length} seats in seating order (the seat list says the same in words)`}>
      ${bands}${seats}</svg>`;
  }

  /** The ring in a box that can be zoomed and panned (phones), with its zoom buttons. */
  function RingBox({ view, me, big, replay: isReplay }) {
    const zoomed = ui.zoom > 1;
    const centre = (el) => {
      if (!el || !zoomed || el.dataset.zoom === String(ui.zoom)) return;
      el.dataset.zoom = String(ui.zoom);
      const mine = el.querySelector(".seat.you circle.disc");
      requestAnimationFrame(() => {
        if (!mine) { el.scrollLeft = (el.scrollWidth - el.clientWidth) / 2; el.scrollTop = (el.scrollHeight - el.clientHeight) / 2; return; }
        const a = mine.getBoundingClientRect();
        const b = el.getBoundingClientRect();
        el.scrollLeft += a.left + a.width / 2 - (b.left + b.width / 2);
        el.scrollTop += a.top + a.height / 2 - (b.top + b.height / 2);
      });
    };
    const zoom = (z) => { ui.zoom = z; render(); };
    return html`<div class="ring-area">
      ${big || view.players.length < 10 ? null : html`<div class="zoom" role="group" aria-label="Zoom the ring">
        <button type="button" data-testid="zoom-out" aria-label="Zoom out" disabled=${ui.zoom <= 1} onClick=${() => zoom(Math.max(1, ui.zoom - 1))}>−</button>
        <button type="button" data-testid="zoom-in" aria-label="Zoom in" disabled=${ui.zoom >= 3} onClick=${() => zoom(Math.min(3, ui.zoom + 1))}>+</button>
      </div>`}
      <div class=${"ring-box" + (zoomed ? " zoomed" : "")} ref=${centre} tabindex=${zoomed ? 0 : undefined}
          aria-label=${zoomed ? "The ring, zoomed: scroll or drag to pan" : undefined}>
        <div class="ring-scale" style=${{ width: `${ui.zoom * 100}%` }}>
          <${Ring} view=${view} me=${me} big=${big} replay=${isReplay} onSeat=${big || isReplay ? null : select} />
        </div>
      </div>
    </div>`;
  }

  /** Taps on a seat (ring, neighbourhood): show it, and pick it as the target where that is possible. */
  function select(player) {
    ui.selected = player;
    const mine = playerOf(state.view, state.me);
    if (mine && alive(mine) && player !== state.me && mine.may_target.includes(player)) ui.target = String(player);
    render();
  }

  /** The seat tapped last, in words, drawn from the state every time. */
  function Detail({ view, me }) {
    const p = playerOf(view, ui.selected);
    if (!p) return html`<p class="detail">Tap a seat to see it${state.role === "player" ? " and pick it as your target" : ""}.</p>`;
    const mine = playerOf(view, me);
    let reach = "";
    if (mine && p.player !== me && alive(mine) && !alive(p)) {
      reach = " He is out of the game: nobody can target him.";
    } else if (mine && p.player !== me && alive(mine)) {
      const d = distance(view, me, p.player);
      reach = mine.may_target.includes(p.player) ? " Within your range: you may target him."
        : ` Out of your range${d !== null ? ` (${d} seat${d === 1 ? "" : "s"} away; your range is ${view.settings.spell_range})` : ""}: you cannot target him.`;
    }
    return html`<p class="detail" data-testid="seat-detail" aria-live="polite"><strong>${printable(p.name)}</strong>${" — life "}
      <span data-num="life" data-player=${p.player}>${p.life}</span>, poison <span data-num="poison" data-player=${p.player}>${p.poison}</span>,
      ${" " + stateWords(view, p)}.${reach}</p>`;
  }

  // ---------------------------------------------------------------- the neighbourhood

  /** One player, large: name, life, poison, markers. Tapping him picks him. */
  function Card({ view, p, me, side }) {
    const turn = runningTurn(view, p.player);
    const mine = playerOf(view, me);
    const targetable = mine && alive(mine) && p.player !== me && mine.may_target.includes(p.player);
    const chosen = ui.target === String(p.player);
    const marks = [view.host === p.player ? "★ host" : null,
      turn ? (turn.state === "running" ? `▶ ${tn(turn.turn)} ${PHASE_NAMES[turn.phase]}` : `… ${tn(turn.turn)}`) : null,
      p.connected ? null : p.absent ? "away" : "offline", p.status === "alive" ? null : p.status === "removed" ? "✕ out" : "OUT"].filter(Boolean);
    return html`<button type="button" class=${`card ${p.status}${chosen ? " chosen" : ""}${p.player === me ? " me" : ""}${turn && turn.state === "running" ? " running" : ""}`}
        data-testid="neighbour" data-player=${p.player} aria-pressed=${targetable ? String(chosen) : undefined}
        onClick=${() => select(p.player)}>
      <span class="nb-name">${p.player === me ? "You" : printable(p.name)}</span>
      <span class="nb-life"><span data-num="life" data-player=${p.player}>${p.life}</span><small> life</small></span>
      ${p.poison ? html`<span class="nb-poison">☠ <span data-num="poison" data-player=${p.player}>${p.poison}</span></span>` : null}
      ${marks.length ? html`<span class="nb-marks">${marks.join(" · ")}</span>` : null}
      ${side ? html`<span class="nb-side">${side}</span>` : null}
      ${targetable ? html`<span class="sr-only">${chosen ? ", your target" : ", tap to target"}</span>` : null}
    </button>`;
  }

  /** The players within my spell range on each side of me, large and tappable. */
  function Neighbourhood({ view, me }) {
    const mine = playerOf(view, me);
    if (!mine || view.stage === "lobby" || view.stage === "finished" || mine.seat === null) return null;
    const ring = view.ring || [];
    const at = ring.indexOf(me);
    const range = view.settings.spell_range || 1;
    const left = [];
    const right = [];
    if (at >= 0 && ring.length > 1) {
      const seen = new Set([me]);
      for (let k = 1; k <= range && k <= Math.floor((ring.length - 1) / 2) + 1; k++) {
        const l = ring[(at + k) % ring.length];
        const r = ring[(at - k + ring.length) % ring.length];
        if (!seen.has(l)) { left.push([l, k]); seen.add(l); }
        if (!seen.has(r)) { right.push([r, k]); seen.add(r); }
      }
    }
    const card = ([id, k], side) => {
      const p = playerOf(view, id);
      return p ? html`<${Card} key=${id} view=${view} p=${p} me=${me} side=${`${k} to your ${side}`} />` : null;
    };
    return html`<section class="neighbourhood" data-testid="neighbourhood" aria-label="Your neighbourhood: the players within your spell range">
      <div class="nb-me"><${Card} view=${view} p=${mine} me=${me} /></div>
      <div class="nb-col nb-left"><h3 class="phone-hidden">◀ To your left</h3>${left.map((x) => card(x, "left"))}</div>
      <div class="nb-col nb-right"><h3 class="phone-hidden">To your right ▶</h3>${right.map((x) => card(x, "right"))}</div>
    </section>`;
  }

  // ---------------------------------------------------------------- seat list, standings, dice

  /** The seats in words: the ring's text alternative (and, in a replay, the seats at the step). */
  function SeatList({ view, me, replay: isReplay }) {
    const players = sortedBySeat(view);
    return html`<table class="seat-list" data-testid="seat-list">
      <caption>${isReplay ? "Seats at this step" : view.stage === "lobby" ? "Seated, in order of arrival" : "Seats, in seating order (the next seat is to the left)"}</caption>
      <thead><tr><th scope="col">#</th><th scope="col">Player</th><th scope="col">Life</th><th scope="col">Poison</th><th scope="col">State</th></tr></thead>
      <tbody>${players.map((p) => {
        const bits = [];
        if (p.player === me) bits.push("you");
        if (view.host === p.player) bits.push("★ host");
        if (p.status === "eliminated") bits.push("OUT (position counts)");
        if (p.status === "removed") bits.push("OUT (position removed)");
        if (!p.connected && !isReplay) bits.push(p.absent ? "away" : "offline");
        if (p.muted) bits.push("muted");
        const t = runningTurn(view, p.player);
        if (t) bits.push(t.state === "running" ? `▶ ${tn(t.turn)} ${PHASE_NAMES[t.phase]}` : `… ${tn(t.turn)} waiting`);
        if (t && t.designations) bits.push(`designated ×${t.designations}`);
        const extra = (p.extra_turns || 0) + (p.extra_next || 0);
        if (extra) bits.push(`+${extra} extra turn${extra === 1 ? "" : "s"}`);
        if (p.deck) bits.push(`deck ${printable(p.deck.deck)}, power ${p.deck.power}`);
        if (p.bonus) bits.push(`bonus: ${bonusWords(p.bonus)}`);
        if (view.stage === "lobby" && view.first_decider === p.player) bits.push("decides who plays first");
        return html`<tr key=${p.player} class=${p.player === me ? "you" : ""}>
          <td>${p.seat === null ? "–" : String(p.seat + 1)}</td>
          <td class="pname">${printable(p.name)}</td>
          <td data-num="life" data-player=${p.player}>${p.life}</td><td data-num="poison" data-player=${p.player}>${p.poison}</td>
          <td>${bits.join(", ")}</td></tr>`;
      })}</tbody></table>`;
  }

  function Standings({ view }) {
    const shared = view.standings.filter((st) => st.place === 1).length > 1;
    const league = !!view.settings.league;
    return html`<table class="standings" data-testid="standings">
      <caption>Final standings</caption>
      <thead><tr><th scope="col">Place</th><th scope="col">Player</th>${league ? html`<th scope="col">Mana points</th>` : null}</tr></thead>
      <tbody>${view.standings.map((st) => html`<tr key=${st.player} data-testid="standing-row">
        <td>${st.place === 1 ? (shared ? "1 — shared" : "1 — winner") : String(st.place)}</td>
        <td>${nameOf(st.player)}</td>${league ? html`<td>${st.mana_points}</td>` : null}</tr>`)}</tbody></table>`;
  }

  /** The winner, large. */
  function Winner({ view }) {
    const first = view.standings.filter((st) => st.place === 1).map((st) => nameOf(st.player));
    const words = first.length > 1 ? `${first.join(", ")} share first place` : first.length ? `${first[0]} wins!` : "No winner";
    return html`<div class="winner" data-testid="winner" role="status">♛ ${words}</div>`;
  }

  /** The dice commitment and, after the game, the secret: what anyone needs to check the dice. */
  function Dice({ view }) {
    if (!view.dice_commitment) return null;
    let check = "";
    if (view.dice_secret) {
      if (ui.commit.secret !== view.dice_secret) {
        ui.commit = { secret: view.dice_secret, ok: null };
        checkCommitment(view.dice_secret, view.dice_commitment).then((ok) => { ui.commit.ok = ok; render(); });
      }
      check = ui.commit.ok === true ? "✓ matches the commitment" : ui.commit.ok === false ? "✗ does NOT match the commitment" : "";
    }
    return html`<details class="dice" data-testid="dice" open=${!!view.dice_secret}>
      <summary>The dice${view.dice_secret ? ": check them" : ""}</summary>
      <p>Commitment (SHA-256 of the table's dice secret, published before anyone joined): <code data-testid="dice-commitment">${view.dice_commitment}</code></p>
      ${view.dice_secret ? html`<p>Secret, revealed at the end: <code data-testid="dice-secret">${view.dice_secret}</code> <span data-testid="dice-check">${check}</span></p>
        <p class="meta">Every seat, the first player and every d20 can be recomputed from it: <code>grand-melee verify ${view.table}</code></p>` : null}
    </details>`;
  }

  /** Whether SHA-256(secret) is the commitment; null where the browser cannot hash (not https). */
  async function checkCommitment(secretHex, commitment) {
    if (!(window.crypto && crypto.subtle) || !/^[0-9a-f]{64}$/.test(secretHex)) return null;
    const bytes = new Uint8Array(secretHex.match(/../g).map((b) => parseInt(b, 16)));
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
    return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("") === commitment;
  }


  const LEGEND_ALL = [
    ["@", "you"], ["★", "the host"], ["▶", "a turn being taken now, with its phase"], ["…", "a turn waiting to begin"],
    ["T0, T1 …", "the simultaneous turns, numbered", "seed"],
    ["M1, M2 …", "the turn markers, numbered", "cr807"],
    ["✕2", "a turn marker designated to leave the table, and how many times", "cr807"],
    ["☠3", "poison counters"], ["OUT", "out of the game; his position still counts for range"],
    ["✕ (small seat)", "out of the game and his position removed from the ring"],
    ["off, offline", "lost the connection (a dashed seat outline)"], ["away", "gone longer than the table's absence limit"],
    ["thick blue outline", "your seat"], ["dotted circle", "a player within your spell range"],
    ["coloured band", "a turn's sphere: the players it may affect (solid: being taken, dashed: waiting); its label names the turn"],
  ];
  /** The legend at a table: the symbols its rules use (Rules 807's markers only under them). */
  const LEGEND = (settings) => LEGEND_ALL.filter(([, , rules]) => !rules || rules === (settings.rules === "cr807" ? "cr807" : "seed"))
    .map(([k, v]) => [k, v]);

  /** My decision or my turn, which the status line highlights and the tab's title and a sound announce, or null. */
  function moment(view, me) {
    if (view.stage === "mulligan" && (view.mulligan_deciders || []).includes(me)) {
      return { key: "decision", banner: "Your decision", title: "● Your decision" };
    }
    if (view.stage === "playing" && view.turns.some((t) => t.player === me && t.state === "running")) {
      return { key: "turn", banner: "▶ Your turn", title: "▶ Your turn", lead: /^▶ Your turn / };
    }
    return null;
  }

  // ---------------------------------------------------------------- actions

  /** Why Attack is greyed, in words, or null when it is not. */
  function attackBlocked(view, me, mine, target) {
    if (target === "") return "Pick a target: tap a player above or choose one in the list.";
    const own = view.turns.find((t) => t.player === me && t.state === "running");
    if (!own) return "You attack only during your own turn.";
    if (own.phase !== "combat") return "Attacks happen in combat: press the combat phase first.";
    if (!mine.may_attack.includes(Number(target))) {
      return view.settings.rules === "cr807" ? "Under CR 807 you may attack only the player on your left." : "You cannot attack that player now.";
    }
    return null;
  }

  function attack(view) {
    const target = Number(ui.target);
    go({ type: "attack", target, damage: num(ui.amount, 0), poison: num(ui.poison, 0) }).then((a) => {
      if (a.type === "ack") { ui.target = ""; ui.poison = 0; render(); }
    });
  }

  function dealDamage() {
    go({ type: "deal_damage", target: Number(ui.target), amount: num(ui.amount, 0) }).then((a) => {
      if (a.type === "ack") { ui.target = ""; render(); }
    });
  }

  /** The bar that stays on screen: on my turn the phases, target, amounts, Attack and End turn. */
  function ActionBar({ view, me }) {
    if (state.role !== "player" || view.adjourned) return null;
    const mine = playerOf(view, me);
    if (!alive(mine)) return null;
    if (view.stage === "mulligan") {
      if (!(view.mulligan_deciders || []).includes(me)) return null;
      return html`<div class="action-bar" data-testid="action-bar">
        <div class="row"><${Button} id="keep" label="Keep this hand" cls="primary" onClick=${() => go({ type: "keep" })} />
          <${Button} id="mulligan" label="Mulligan" onClick=${() => go({ type: "mulligan" })} /></div></div>`;
    }
    if (view.stage !== "playing") return null;
    const own = view.turns.find((t) => t.player === me && t.state === "running");
    const targets = mine.may_target.filter((id) => id !== me);
    if (ui.target !== "" && !targets.includes(Number(ui.target))) ui.target = "";
    const blocked = own ? attackBlocked(view, me, mine, ui.target) : null;
    const targetName = ui.target === "" ? null : nameOf(Number(ui.target));
    const amount = num(ui.amount, 0);
    return html`<div class="action-bar" data-testid="action-bar" aria-label="Your actions">
      ${own ? html`<div class="phases" role="group" aria-label="Phase">${PHASES.map((ph) => html`<button type="button" key=${ph}
          data-testid=${`phase-${ph}`} aria-pressed=${String(own.phase === ph)} class=${own.phase === ph ? "current" : ""}
          onClick=${() => go({ type: "set_phase", phase: ph })}>${PHASE_NAMES[ph]}</button>`)}</div>` : null}
      <div class="row bar-row">
        <label class="grow"><span>Target</span>
          <select data-testid="target" aria-label="Target (players in your range)" value=${ui.target}
            onChange=${(ev) => { ui.target = ev.target.value; ui.selected = ev.target.value === "" ? ui.selected : Number(ev.target.value); render(); }}>
            <option value="">${targets.length ? "— pick —" : "nobody in range"}</option>
            ${options(targets.map((id) => [String(id), `${nameOf(id)} (life ${playerOf(view, id).life})`]))}
          </select></label>
        <label class="small"><span>Damage</span><input type="number" data-testid="amount" min="1" inputmode="numeric" value=${ui.amount}
          onInput=${(ev) => { ui.amount = ev.target.value; }} onChange=${(ev) => { ui.amount = ev.target.value; render(); }} /></label>
        ${own ? html`<label class="small"><span>Poison</span><input type="number" data-testid="attack-poison" min="0" inputmode="numeric" value=${ui.poison}
          onInput=${(ev) => { ui.poison = ev.target.value; }} onChange=${(ev) => { ui.poison = ev.target.value; }} /></label>` : null}
      </div>
      <div class="row bar-row">
        ${own ? html`<button type="button" data-testid="attack" disabled=${!!blocked} title=${blocked || undefined}
          aria-label=${targetName ? `Attack ${targetName} for ${amount}` : "Attack"} onClick=${() => attack(view)}>⚔ Attack</button>` : null}
        <button type="button" data-testid="damage" disabled=${ui.target === ""} aria-label=${targetName ? `Deal ${amount} damage to ${targetName}` : "Deal damage (pick a target first)"}
          onClick=${dealDamage}>✦ Damage</button>
        ${own ? html`<${Button} id="end-turn" label="End turn ▶" cls="primary" onClick=${() => go({ type: "end_turn" })} />` : null}
      </div>
      ${own && blocked && ui.target !== "" ? html`<p class="hint" data-testid="attack-hint">${blocked}</p>` : null}
    </div>`;
  }

  /** A living player's tools while the game is played (the frame puts them among its own). */
  function play(view, me) {
    const mine = playerOf(view, me);
    const parts = [];
    if (view.stage === "playing" && alive(mine)) {
      const own = view.turns.find((t) => t.player === me && t.state === "running");
      if (view.settings.combat_dice) parts.push(html`<${DiceTools} key="dice" view=${view} me=${me} mine=${mine} />`);
      parts.push(html`<div key="play" class="group">
        <div class="row counters">
          <span>My life <strong data-num="life" data-player=${me}>${mine.life}</strong></span>
          <${Button} id="life-minus" label="−1" onClick=${() => go({ type: "change_life", delta: -1 })} />
          <${Button} id="life-plus" label="+1" onClick=${() => go({ type: "change_life", delta: 1 })} />
          <span>Poison <strong data-num="poison" data-player=${me}>${mine.poison}</strong></span>
          <${Button} id="poison-minus" label="−1" onClick=${() => go({ type: "change_poison", delta: -1 })} />
          <${Button} id="poison-plus" label="+1" onClick=${() => go({ type: "change_poison", delta: 1 })} />
        </div>
        <div class="row">
          ${own ? html`<${Button} id="extra-turn" label="Extra turn…" onClick=${() => { ui.confirm = "extra"; render(); }} />` : null}
          <${Button} id="concede" label="Concede…" cls="danger" onClick=${() => { ui.confirm = "concede"; render(); }} />
        </div>
        ${ui.confirm === "extra" && own ? html`<div class="confirm"><span>Take an extra turn after this one (a card says so)?</span>
          <${Button} id="extra-turn-confirm" label="Yes, extra turn" cls="primary" onClick=${() => { ui.confirm = null; go({ type: "extra_turn" }); render(); }} />
          <${Button} id="extra-turn-cancel" label="No" onClick=${() => { ui.confirm = null; render(); }} /></div>` : null}
        ${ui.confirm === "concede" ? html`<div class="confirm"><span>Leave the game for good?</span>
          <${Button} id="concede-confirm" label="Yes, concede" cls="danger" onClick=${() => { ui.confirm = null; go({ type: "concede" }); render(); }} />
          <${Button} id="concede-cancel" label="No" onClick=${() => { ui.confirm = null; render(); }} /></div>` : null}
      </div>`);
    }
    return parts;
  }

  function DiceTools({ view, me, mine }) {
    const attackable = mine.may_attack;
    const inCombat = view.turns.filter((t) => t.state === "running" && t.phase === "combat" && t.player !== me &&
      mine.may_target.includes(t.player)).map((t) => t.player);
    const r = ui.roll;
    const k = ui.counter;
    if (r.defender !== "" && !attackable.includes(Number(r.defender))) r.defender = "";
    if (k.who !== "" && !inCombat.includes(Number(k.who))) k.who = "";
    // One choice only: it is picked (the roll still needs its button).
    if (r.defender === "" && attackable.length === 1) r.defender = String(attackable[0]);
    if (k.who === "" && inCombat.length === 1) k.who = String(inCombat[0]);
    const powers = (text) => String(text).split(/[\s,;]+/).filter(Boolean).map(Number);
    const whole = (values) => values.every((x) => Number.isInteger(x) && x >= 0);
    const rollAttack = () => {
      const blockers = powers(r.blockers);
      const power = num(r.power, -1);
      if (r.defender === "") { showError("Pick the defending player (only players you may attack are listed)."); return; }
      if (!whole([power, ...blockers])) { showError("Powers are whole numbers, 0 or more (blockers: separated by spaces)."); return; }
      go({ type: "attack_roll", defender: Number(r.defender), attacker_power: power, blocker_powers: blockers });
    };
    const rollCounter = () => {
      const a = num(k.mine, -1);
      const b = num(k.theirs, -1);
      if (k.who === "") { showError("Nobody is in combat within your range."); return; }
      if (!whole([a, b])) { showError("Powers are whole numbers, 0 or more."); return; }
      go({ type: "counter_roll", attacker: Number(k.who), blocker_power: a, attacker_power: b });
    };
    const field = (label, testid, obj, key, attrs) => html`<label><span>${label}</span><input data-testid=${testid} value=${obj[key]}
      onInput=${(ev) => { obj[key] = ev.target.value; }} onChange=${(ev) => { obj[key] = ev.target.value; }} ...${attrs} /></label>`;
    return html`<fieldset class="group dice-tools"><legend>⚄ Combat with Dice</legend>
      <div class="row"><label><span>Defender</span><select data-testid="roll-defender" value=${r.defender} onChange=${(ev) => { r.defender = ev.target.value; render(); }}>
          <option value="">${attackable.length ? "— pick —" : "nobody to attack"}</option>${options(attackable.map((id) => [String(id), nameOf(id)]))}</select></label>
        ${field("Power", "roll-power", r, "power", { type: "number", min: 0 })}
        ${field("Blockers' powers", "roll-blockers", r, "blockers", { inputmode: "numeric", placeholder: "none: unblocked" })}</div>
      <div class="row"><${Button} id="attack-roll" label="⚄ Attack roll" disabled=${!attackable.length} onClick=${rollAttack} /></div>
      <div class="row"><label><span>Strike back at</span><select data-testid="counter-attacker" value=${k.who} onChange=${(ev) => { k.who = ev.target.value; render(); }}>
          <option value="">${inCombat.length ? "— pick —" : "nobody in combat"}</option>${options(inCombat.map((id) => [String(id), nameOf(id)]))}</select></label>
        ${field("My blocker's power", "counter-mine", k, "mine", { type: "number", min: 0 })}
        ${field("Attacker's power", "counter-theirs", k, "theirs", { type: "number", min: 0 })}</div>
      <div class="row"><${Button} id="counter-roll" label="⚄ Counter strike" disabled=${!inCombat.length} onClick=${rollCounter} /></div>
      <p class="roll-result" data-testid="roll-result" aria-live="polite">${ui.rollResult}</p>
    </fieldset>`;
  }

  /** The lobby: the host's start (first player, seating), a league decider's choice (the frame adds leaving). */
  function LobbyTools({ view, me, host }) {
    const decider = view.first_decider === undefined ? null : view.first_decider;
    const ids = view.players.map((p) => p.player);
    state.arranged = state.arranged.filter((id) => ids.includes(id)).concat(ids.filter((id) => !state.arranged.includes(id)));
    if (ui.first !== "" && !ids.includes(Number(ui.first))) ui.first = "";
    if (ui.choose === "" && view.first_choice !== undefined && view.first_choice !== null) ui.choose = String(view.first_choice);
    const start = () => go(Object.assign({ type: "start", first_player: ui.first === "" ? null : Number(ui.first) },
      ui.seating === "arranged" ? { seating: "arranged", order: state.arranged.slice() } : { seating: ui.seating }));
    return html`
      ${decider !== null && decider === me ? html`<div class="decider-only" data-testid="decider-box">
        <p>Your deck is furthest behind: you decide who plays first.</p>
        <label><span>Plays first</span><select data-testid="choose-first" aria-label="Who plays first" value=${ui.choose === "" ? String(ids[0]) : ui.choose}
          onChange=${(ev) => { ui.choose = ev.target.value; }}>${options(view.players.map((p) => [String(p.player), printable(p.name)]))}</select></label>
        <${Button} id="choose-first-submit" label="Choose" cls="primary" onClick=${() => go({ type: "choose_first", player: Number(ui.choose === "" ? ids[0] : ui.choose) })} />
      </div>` : null}
      ${host ? html`<div class="host-only">
        ${decider === null ? html`<label><span>First player</span><select data-testid="start-first" value=${ui.first} onChange=${(ev) => { ui.first = ev.target.value; }}>
          ${options([["", "Drawn at random (the dice)"], ...view.players.map((p) => [String(p.player), printable(p.name)])])}</select></label>` : null}
        <${Seating} view=${view} />
        <${Button} id="start" label="Start the game" cls="primary" onClick=${start} />
      </div>` : null}`;
  }


  function moveSeat(id, to) {
    const order = state.arranged.filter((p) => p !== id);
    order.splice(Math.max(0, Math.min(to, order.length)), 0, id);
    state.arranged = order;
    render();
    requestAnimationFrame(() => {
      const again = document.querySelector(`[data-testid="seating-order"] [data-player="${id}"] .seat-handle`);
      if (again) again.focus();
    });
  }

  /** The host's seating in the lobby: by the dice, in join order, or arranged (a list he reorders). */
  function Seating() {
    const order = state.arranged;
    return html`<div>
      <label><span>Seating</span><select data-testid="seating-mode" value=${ui.seating} onChange=${(ev) => { ui.seating = ev.target.value; render(); }}>
        ${options([["random", "Random (the dice)"], ["joined", "As joined"], ["arranged", "Arranged (reorder below)"]])}</select></label>
      ${ui.seating === "arranged" ? html`<ol class="arrange" data-testid="seating-order" aria-label="Seating order, seat 0 first (the next seat is to the left)">
        ${order.map((id, k) => html`<li key=${id} data-player=${id} draggable="true" data-testid=${`seat-${id}`}
            onDragStart=${(ev) => ev.dataTransfer.setData("text/plain", String(id))} onDragOver=${(ev) => ev.preventDefault()}
            onDrop=${(ev) => { ev.preventDefault(); const moved = Number(ev.dataTransfer.getData("text/plain")); if (order.includes(moved)) moveSeat(moved, k); }}>
          <span class="seat-handle" tabindex="0" role="button" aria-label=${`Seat ${k}: ${nameOf(id)} (Alt+arrow keys move him)`}
            onKeyDown=${(ev) => {
              if (ev.altKey && ev.key === "ArrowUp") { ev.preventDefault(); moveSeat(id, k - 1); }
              if (ev.altKey && ev.key === "ArrowDown") { ev.preventDefault(); moveSeat(id, k + 1); }
            }}>${k}. ${nameOf(id)}</span>
          <button type="button" data-testid=${`seat-up-${id}`} aria-label=${`Move ${nameOf(id)} up`} disabled=${k === 0} onClick=${() => moveSeat(id, k - 1)}>↑</button>
          <button type="button" data-testid=${`seat-down-${id}`} aria-label=${`Move ${nameOf(id)} down`} disabled=${k === order.length - 1} onClick=${() => moveSeat(id, k + 1)}>↓</button>
        </li>`)}</ol>` : null}
    </div>`;
  }

  /** The host's rulings about one player (inside the frame's host tools, which lend their player picker). */
  function Rulings({ view, who, pick }) {
    const rule = (ruling) => go({ type: "ruling", ruling });
    return html`<fieldset><legend>Rulings</legend>
        <div class="row">${who("rule", "Player the ruling is about")}
          <label class="small"><span>Value</span><input type="number" value=${ui.host.value} onInput=${(ev) => { ui.host.value = ev.target.value; }} onChange=${(ev) => { ui.host.value = ev.target.value; }} /></label></div>
        <div class="row">
          <${Button} id="rule-set-life" label="Set life" onClick=${() => rule({ kind: "set_life", player: pick("rule"), life: num(ui.host.value, 0) })} />
          <${Button} id="rule-set-poison" label="Set poison" onClick=${() => rule({ kind: "set_poison", player: pick("rule"), poison: num(ui.host.value, 0) })} />
          <${Button} id="rule-end-turn" label="End his turn" onClick=${() => rule({ kind: "end_turn", player: pick("rule") })} />
          <${Button} id="rule-keep" label="Keep (mulligans)" onClick=${() => {
            const decider = view.mulligan_decider;
            rule({ kind: "keep", player: decider === null || decider === undefined ? pick("rule") : decider });
          }} />
          <${Button} id="rule-extra-turn" label="Extra turn" onClick=${() => rule({ kind: "extra_turn", player: pick("rule") })} />
          <${Button} id="rule-eliminate" label="Eliminate" cls="danger" onClick=${() => { if (window.confirm(`Eliminate ${nameOf(pick("rule"))}?`)) rule({ kind: "eliminate", players: [pick("rule")] }); }} />
        </div></fieldset>`;
  }

  /** The standings in a few lines, for a screen across the room: each place with its players. */
  function PlacesList({ view }) {
    const places = new Map();
    for (const st of view.standings) places.set(st.place, (places.get(st.place) || []).concat([st.player]));
    return html`<ol class="places" data-testid="places" aria-label="Final standings">${Array.from(places.entries()).sort((a, b) => a[0] - b[0]).map(([place, ids]) =>
      html`<li key=${place} class=${ids.length > 2 ? "shared" : undefined}><strong>${place}.</strong> ${ids.map(nameOf).join(", ")}${ids.length > 1 ? ` (${ids.length} players)` : ""}</li>`)}</ol>`;
  }
  // ---------------------------------------------------------------- the panel in the frame's places

  /** The main column under the status line: the winner, the ring, the tapped seat, the standings. */
  function Main({ view, me }) {
    return html`
        ${view.stage === "finished" ? html`<${Winner} view=${view} />` : null}
        <${RingBox} view=${view} me=${me} />
        <${Detail} view=${view} me=${me} />
        ${view.stage === "finished" ? html`<div class="end"><${Standings} view=${view} /><${Dice} view=${view} /></div>` : null}`;
  }

  /** The side column under the entry and the sharing: the neighbourhood and the action bar. */
  function Side({ view, me }) {
    return html`<${Neighbourhood} view=${view} me=${me} /><${ActionBar} view=${view} me=${me} />`;
  }

  /** The side column's foot, under the log: the dice while the game goes on. */
  function Foot({ view }) {
    return view.stage !== "finished" ? html`<${Dice} view=${view} />` : null;
  }

  /** The display across the room: the ring, as large as the screen allows. */
  function Display({ view }) {
    return html`<${RingBox} view=${view} me=${null} big=${true} />`;
  }

  /** The display's column beside the ring, under its status line: the winner and the places. */
  function DisplaySide({ view }) {
    if (view.stage !== "finished") return null;
    return html`<${Winner} view=${view} /><${PlacesList} view=${view} />`;
  }

  /** A replay's step, under its line: the winner, the ring, the standings. */
  function Replay({ view }) {
    return html`
        ${view.stage === "finished" ? html`<${Winner} view=${view} />` : null}
        <${RingBox} view=${view} me=${null} replay=${true} />
        ${view.stage === "finished" ? html`<div class="end"><${Standings} view=${view} /><${Dice} view=${view} /></div>` : null}`;
  }

  GM.games = GM.games || {};
  GM.games.grand_melee = {
    // Words.
    stages: STAGES, settingsWords: rulesWords, legend: LEGEND, sentence, moment, alertFor, heard,
    /** Whether a player is still in the game (the quorum to resume an adjourned game counts them). */
    stillIn: alive,
    /** A replay's chapters: its « and » buttons jump from one turn's beginning to the next. */
    chapter: { starts: (e) => e.kind === "turn_began", back: "« turn", on: "turn »", backAria: "Back one turn", onAria: "On one turn" },
    // Components, in the frame's places.
    Main, Side, Foot, Display, DisplaySide, Replay, Seats: SeatList, LobbyTools, Rulings, play,
  };
})();

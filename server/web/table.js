// The table page, the big-screen display and the replay viewer: the ring, the seats, actions, log.
"use strict";

(function () {
  const GM = window.GM;
  const { F, MP, PROTOCOL, PHASES, PHASE_NAMES, TITLE, h, s, append, clear, put, printable, shorten, store, REFUSALS, SEATINGS, refusal, route, state, seatKey, memberKey, organiserKey, app, errorEl, beep, showError, send, nameOf, learnNames, tn, entropy, RESULTS, CAUSES, describe, bonusWords, STAGES, rulesWords, fillSelect, findTable } = GM;

  function record(seq, e) {
    if (e.kind === "spectators_changed") return; // noise in a log people read
    if (e.kind === "attack_rolled" && (e.roller === state.me || e.opponent === state.me) && table.rollResult) {
      table.rollResult.textContent = describe(e);
    }
    if (e.kind === "chat") state.chat.set(seq, describe(e));
    else state.log.set(seq, describe(e));
  }


  // ---------------------------------------------------------------- messages from the server


  function onMessage(m) {
    if (!m || typeof m !== "object") return;
    switch (m.type) {
      case "snapshot": {
        if (m.view.table !== route.table) return;
        const check = state.checks.find((c) => c.id === m.reply_to);
        if (check && state.view) {
          const d = state.view.seq === m.view.seq ? F.diff(state.view, m.view) : `seq ${state.view.seq} ≠ ${m.view.seq}`;
          check.result = { ok: d === "", seq: m.view.seq, diff: d };
        }
        state.view = F.adopt(m.view);
        learnNames(state.view);
        render();
        break;
      }
      case "events": {
        if (!state.view || m.table !== state.view.table) return;
        if (m.seq !== state.view.seq + 1) {
          resnapshot();
          return;
        }
        try {
          m.events.forEach((e, i) => {
            record(m.seq + i, e);
            F.applyEvent(state.view, m.seq + i, e);
          });
        } catch (err) {
          resnapshot();
          return;
        }
        learnNames(state.view);
        render();
        break;
      }
      case "error":
        if (m.reply_to === null || m.reply_to === undefined) showError(refusal(m));
        break;
      default:
        break;
    }
  }

  function resnapshot() {
    GM.link.request({ type: "snapshot" });
  }

  /** After the link is up: take the seat back, or watch again. */
  function onUp() {
    const P = GM.pages;
    if (route.page === "lobby") { P.lobby.refresh(); return; }
    if (route.page === "replays") { P.replays.load(); return; }
    if (route.page === "replay") { replay.load(); return; }
    if (route.page === "leagues") { P.leagues.load(); return; }
    if (route.page === "league") { P.league.load(); return; }
    if (route.page === "display") { enter("watch"); return; }
    const seat = store.get(seatKey(route.table));
    if (seat && seat.token) enter("resume");
    else if (state.wanted === "watch") enter("watch");
    else table.showEntry();
  }

  /** Joins, resumes or watches, then rebuilds the log from the journal. */
  async function enter(how, name) {
    if (state.entering) return;
    state.entering = true;
    try {
      let answer;
      if (how === "resume") {
        const seat = store.get(seatKey(route.table));
        answer = await GM.link.request({ type: "resume", table: route.table, token: seat.token });
        if (answer.type === "error") {
          if (answer.code === "bad_token") {
            store.remove(seatKey(route.table));
            showError(REFUSALS.bad_token);
            table.showEntry();
          } else if (answer.code !== "offline") {
            showError(refusal(answer));
            table.showEntry();
          }
          return;
        }
      } else if (how === "join") {
        const join = { type: "join", table: route.table, name, password: state.password || null, entropy: entropy() };
        if (state.memberToken) join.member_token = state.memberToken;
        answer = await send(join);
        if (answer.type === "error") return;
        store.set(seatKey(route.table), { token: answer.token, player: answer.player, name });
      } else {
        answer = await send({ type: "watch", table: route.table, password: state.password || null });
        if (answer.type === "error") {
          if (route.page === "display") table.showEntry();
          return;
        }
        state.wanted = "watch";
      }
      state.role = answer.type === "watching" ? "spectator" : "player";
      state.me = answer.type === "watching" ? null : answer.player;
      render();
      await rebuildLog();
    } finally {
      state.entering = false;
    }
  }

  /** Fetches the events the log does not have yet, page by page (`get_events`). */
  async function rebuildLog() {
    let from = state.fetchedTo + 1;
    for (let pages = 0; pages < 1000; pages++) {
      const answer = await GM.link.request({ type: "get_events", table: route.table, from_seq: from, limit: 500 });
      if (answer.type !== "past_events") return;
      answer.events.forEach((e, i) => {
        const seq = answer.first_seq + i;
        if (e.kind === "player_joined") state.names.set(e.player, e.name);
        record(seq, e);
        state.fetchedTo = Math.max(state.fetchedTo, seq);
      });
      if (answer.next_seq === null || answer.next_seq === undefined) break;
      from = answer.next_seq;
    }
    render();
  }


  // ---------------------------------------------------------------- the ring

  /** Draws the ring of a view as SVG: seats, spheres, turns, you and your range. */
  function ring(view, me, options) {
    const big = options && options.big;
    const size = 1000;
    const c = size / 2;
    const players = view.players.slice().sort((a, b) => (a.seat === null ? 1e9 : a.seat) - (b.seat === null ? 1e9 : b.seat));
    const n = Math.max(players.length, 1);
    const R = 300;
    const step = (2 * Math.PI) / n;
    const r = Math.max(14, Math.min(58, R * Math.sin(step / 2) * 0.78));
    const angle = (i) => -Math.PI / 2 + i * step; // seat 0 at the top; the next seat (to the left) clockwise
    const at = (i, radius) => [c + radius * Math.cos(angle(i)), c + radius * Math.sin(angle(i))];
    const index = new Map(players.map((p, i) => [p.player, i]));
    const mine = me !== null && me !== undefined ? view.players.find((p) => p.player === me) : null;
    const inMyRange = new Set(mine ? mine.may_target : []);
    const nameFont = n <= 15 ? 30 : n <= 28 ? 23 : 18;
    const maxChars = n <= 15 ? 12 : n <= 28 ? 11 : 10;

    const svg = s("svg", { viewBox: `-40 -40 ${size + 80} ${size + 80}`, class: "ring" + (big ? " big" : ""), role: "img",
      "aria-label": `The table: ${players.length} seats in seating order` });
    // Spheres: one band per waiting or running turn, inside the ring.
    const live = view.turns.filter((t) => t.state !== "ended" && t.sphere.length);
    live.forEach((t, k) => {
      const idx = t.sphere.map((id) => index.get(id)).filter((i) => i !== undefined);
      if (!idx.length) return;
      const inner = R - r - 18 - (k % 3) * 22;
      const width = 16;
      const cls = `sphere sphere-${t.turn % 6} ${t.state}`;
      if (t.sphere.length >= view.ring.length) {
        svg.append(s("circle", { cx: c, cy: c, r: inner, class: cls, "stroke-width": width, fill: "none" }));
      } else {
        const first = idx[0];
        let span = ((idx[idx.length - 1] - first) % n + n) % n;
        const a0 = angle(first) - step / 2.4;
        const a1 = angle(first) + span * step + step / 2.4;
        const large = a1 - a0 > Math.PI ? 1 : 0;
        const p0 = [c + inner * Math.cos(a0), c + inner * Math.sin(a0)];
        const p1 = [c + inner * Math.cos(a1), c + inner * Math.sin(a1)];
        svg.append(s("path", {
          d: `M ${p0[0].toFixed(1)} ${p0[1].toFixed(1)} A ${inner} ${inner} 0 ${large} 1 ${p1[0].toFixed(1)} ${p1[1].toFixed(1)}`,
          class: cls, "stroke-width": width, fill: "none",
        }));
      }
      // The turn's label near its holder, inside the band.
      const hi = index.get(t.player);
      if (hi !== undefined) {
        const [x, y] = at(hi, inner - 34);
        const label = (t.state === "running" ? `▶${tn(t.turn)} ${PHASE_NAMES[t.phase] || ""}` : `…${tn(t.turn)}`) +
          (t.designations ? ` ✕${t.designations}` : "");
        svg.append(s("text", { x, y, class: `turn-label sphere-text-${t.turn % 6}`, "text-anchor": "middle",
          "dominant-baseline": "middle", "font-size": Math.max(16, nameFont - 4) }, label));
      }
    });
    players.forEach((p, i) => {
      const [x, y] = at(i, R);
      const you = p.player === me;
      const turn = view.turns.find((t) => t.player === p.player && t.state !== "ended");
      const classes = ["seat", p.status, p.connected ? "on" : "off"];
      if (you) classes.push("you");
      if (inMyRange.has(p.player) && !you) classes.push("in-range");
      if (turn && turn.state === "running") classes.push("running");
      const g = s("g", { class: classes.join(" "), testid: "seat", "data-player": p.player, tabindex: 0,
        onclick: () => options && options.onSeat && options.onSeat(p.player),
        onkeydown: (ev) => {
          if ((ev.key === "Enter" || ev.key === " ") && options && options.onSeat) {
            ev.preventDefault();
            options.onSeat(p.player);
          }
        } });
      const status = p.status === "alive" ? "" : p.status === "eliminated" ? ", out (position still counts)" : ", out (position removed)";
      g.append(s("title", {}, `${printable(p.name)}: life ${p.life}, poison ${p.poison}${status}` +
        `${p.connected ? "" : ", disconnected"}${p.absent ? ", away" : ""}${view.host === p.player ? ", host" : ""}`));
      const radius = p.status === "removed" ? r * 0.6 : r;
      g.append(s("circle", { cx: x, cy: y, r: radius, class: "disc" }));
      if (inMyRange.has(p.player) && !you) g.append(s("circle", { cx: x, cy: y, r: radius + 7, class: "range-mark" }));
      if (p.status === "alive") {
        g.append(s("text", { x, y: y + (p.poison ? -radius * 0.12 : 0), class: "life", "text-anchor": "middle",
          "dominant-baseline": "middle", "font-size": Math.max(14, radius * 0.8) }, String(p.life)));
        if (p.poison) {
          g.append(s("text", { x, y: y + radius * 0.55, class: "poison", "text-anchor": "middle",
            "dominant-baseline": "middle", "font-size": Math.max(11, radius * 0.45) }, `☠${p.poison}`));
        }
      } else {
        g.append(s("text", { x, y, class: "out", "text-anchor": "middle", "dominant-baseline": "middle",
          "font-size": Math.max(12, radius * 0.6) }, p.status === "removed" ? "✕" : "OUT"));
      }
      // Name and markers outside the ring, along the seat's radius (no two labels overlap).
      const marks = [
        you ? "@" : "",
        view.host === p.player ? "★" : "",
        turn ? (turn.state === "running" ? "▶" : "…") : "",
        p.connected ? "" : (p.absent ? "away" : "off"),
      ].filter(Boolean).join(" ");
      const deg = (angle(i) * 180) / Math.PI;
      const right = Math.cos(angle(i)) >= -1e-9;
      const [lx, ly] = at(i, R + radius + 10);
      g.append(s("text", {
        x: lx, y: ly, class: "name", "text-anchor": right ? "start" : "end", "dominant-baseline": "middle",
        "font-size": nameFont, transform: `rotate(${(right ? deg : deg + 180).toFixed(2)} ${lx.toFixed(1)} ${ly.toFixed(1)})`,
      }, right ? (marks ? marks + " " : "") + shorten(p.name, maxChars) : shorten(p.name, maxChars) + (marks ? " " + marks : "")));
      svg.append(g);
    });
    return svg;
  }

  /** How many asks resume an adjourned game without the host: a majority of the players still in the game. */
  function resumeQuorum(view) {
    return Math.floor(view.players.filter((p) => p.status === "alive").length / 2) + 1;
  }

  /** What a person needs to know now, in one sentence. */
  function sentence(view, me) {
    if (!view) return "";
    const mine = me !== null ? view.players.find((p) => p.player === me) : null;
    if (view.adjourned) {
      return `☾ The game is adjourned — the host resumes it (or a majority of the players: ` +
        `${(view.resume_asks || []).length} of ${resumeQuorum(view)} asked).`;
    }
    if (view.paused) return "⏸ The host has paused the table.";
    switch (view.stage) {
      case "lobby": {
        const host = view.host !== null ? nameOf(view.host) : "nobody";
        return `Waiting for players: ${view.players.length} of ${view.settings.seats} seated. ${view.host === me ? "You are the host: start when everyone is here." : `${host} (host) starts the game.`}`;
      }
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
      case "finished":
        return "The game is over.";
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

  /** The dice commitment and, after the game, the secret: what anyone needs to check the dice. */
  function diceBox(view) {
    if (!view.dice_commitment) return null;
    const box = h("div", { class: "dice", testid: "dice" },
      h("p", {}, "Dice commitment (SHA-256 of the table's dice secret, published before anyone joined): ",
        h("code", { testid: "dice-commitment" }, view.dice_commitment)));
    if (view.dice_secret) {
      const check = h("span", { testid: "dice-check" });
      box.append(h("p", {}, "Dice secret, revealed at the end: ", h("code", { testid: "dice-secret" }, view.dice_secret), " ", check),
        h("p", { class: "meta" }, `Every seat, the first player and every d20 can be recomputed from it: grand-melee verify ${view.table}`));
      checkCommitment(view.dice_secret, view.dice_commitment).then((ok) => {
        if (ok === true) check.textContent = "✓ matches the commitment";
        else if (ok === false) check.textContent = "✗ does NOT match the commitment";
      });
    }
    return box;
  }

  /** Whether SHA-256(secret) is the commitment; null where the browser cannot hash (not https). */
  async function checkCommitment(secretHex, commitment) {
    if (!(window.crypto && crypto.subtle) || !/^[0-9a-f]{64}$/.test(secretHex)) return null;
    const bytes = new Uint8Array(secretHex.match(/../g).map((b) => parseInt(b, 16)));
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
    return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("") === commitment;
  }

  function standingsTable(view) {
    // An abandoned game: the players still in it share the first place.
    const shared = view.standings.filter((st) => st.place === 1).length > 1;
    return h("table", { class: "standings", testid: "standings" },
      h("caption", {}, "Final standings"),
      h("thead", {}, h("tr", {}, h("th", {}, "Place"), h("th", {}, "Player"), h("th", {}, "Mana points"))),
      h("tbody", {}, view.standings.map((st) => h("tr", { testid: "standing-row" },
        h("td", {}, st.place === 1 ? (shared ? "1 — shared" : "1 — winner") : String(st.place)),
        h("td", {}, nameOf(st.player)),
        h("td", {}, String(st.mana_points))))));
  }

  function seatList(view, me) {
    const players = view.players.slice().sort((a, b) => (a.seat ?? 1e9) - (b.seat ?? 1e9) || a.player - b.player);
    return h("table", { class: "seat-list" },
      h("caption", {}, view.stage === "lobby" ? "Seated, in order of arrival" : "Seats, in seating order (the next seat is to the left)"),
      h("thead", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, "Player"), h("th", {}, "Life"), h("th", {}, "Poison"), h("th", {}, "State"))),
      h("tbody", {}, players.map((p) => {
        const bits = [];
        if (p.player === me) bits.push("you");
        if (view.host === p.player) bits.push("★ host");
        if (p.status === "eliminated") bits.push("OUT (position counts)");
        if (p.status === "removed") bits.push("OUT (position removed)");
        if (!p.connected) bits.push(p.absent ? "away" : "offline");
        if (p.muted) bits.push("muted");
        const t = view.turns.find((u) => u.player === p.player && u.state !== "ended");
        if (t) bits.push(t.state === "running" ? `▶ ${tn(t.turn)} ${PHASE_NAMES[t.phase]}` : `… ${tn(t.turn)} waiting`);
        if (t && t.designations) bits.push(`designated ×${t.designations}`);
        const extra = (p.extra_turns || 0) + (p.extra_next || 0);
        if (extra) bits.push(`+${extra} extra turn${extra === 1 ? "" : "s"}`);
        if (p.deck) bits.push(`deck ${printable(p.deck.deck)}, power ${p.deck.power}`);
        if (p.bonus) bits.push(`bonus: ${bonusWords(p.bonus)}`);
        if (view.stage === "lobby" && view.first_decider === p.player) bits.push("decides who plays first");
        return h("tr", { class: p.player === me ? "you" : "" },
          h("td", {}, p.seat === null ? "–" : String(p.seat + 1)),
          h("td", { class: "pname", title: printable(p.name) }, printable(p.name)),
          h("td", {}, String(p.life)), h("td", {}, String(p.poison)), h("td", {}, bits.join(", ")));
      })));
  }


  // ---------------------------------------------------------------- the table page

  const table = {
    init(display) {
      this.display = display;
      document.title = TITLE;
      state.password = sessionStorage.getItem(`gm.password.${route.table}`);
      this.head = h("div", { class: "table-head" });
      this.status = h("p", { class: "status-line", testid: "status-line", "aria-live": "polite" });
      this.banner = h("div", { class: "banner", testid: "banner", role: "alert", hidden: true });
      this.callAlert = h("div", { class: "call-alert", testid: "host-call", role: "alert", hidden: true });
      this.ringBox = h("div", { class: "ring-box" });
      this.entry = h("section", { class: "entry", hidden: true });
      this.actions = h("section", { class: "actions", hidden: true });
      this.detail = h("p", { class: "detail", "aria-live": "polite" });
      this.logBox = h("ol", { class: "log", testid: "log" });
      this.chatBox = h("ol", { class: "chat-log", testid: "chat-log" });
      this.listBox = h("div", { class: "list-box" });
      this.endBox = h("div", { class: "end" });
      if (display) {
        document.body.classList.add("display");
        put(app, h("section", { class: "display-main" }, this.head, this.status, this.ringBox, this.endBox),
          h("section", { class: "display-side" }, this.entry, h("h3", {}, "Latest"), this.logBox));
        return;
      }
      this.buildActions();
      const tabs = h("div", { class: "tabs", role: "tablist" });
      const panes = { log: this.logBox, chat: h("div", {}, this.chatBox, this.chatForm), seats: this.listBox };
      const paneBox = h("div", { class: "pane" });
      const show = (key) => {
        for (const b of tabs.children) b.setAttribute("aria-selected", String(b.dataset.key === key));
        put(paneBox, panes[key]);
      };
      for (const [key, label] of [["log", "Log"], ["chat", "Chat"], ["seats", "Seats"]]) {
        tabs.append(h("button", { type: "button", role: "tab", testid: `tab-${key}`, "data-key": key, onclick: () => show(key) }, label));
      }
      show("log");
      put(app, 
        h("section", { class: "main" }, this.head, this.banner, this.callAlert, this.status, this.ringBox, this.detail, this.endBox),
        h("section", { class: "side" }, errorEl, this.entry, this.actions, tabs, paneBox));
    },

    /** The "sit down / watch" panel. */
    async showEntry() {
      this.entry.hidden = false;
      clear(this.entry);
      const summary = await findTable(route.table);
      state.summary = summary;
      if (!summary) {
        this.entry.append(h("p", {}, "This table is not open: it may have ended. "),
          h("a", { href: "/" }, "Back to the tables"));
        return;
      }
      const password = h("input", { type: "password", testid: "join-password", maxlength: 64,
        value: state.password || "", autocomplete: "off" });
      const name = h("input", { testid: "join-name", maxlength: 32, required: true, autocomplete: "nickname",
        value: store.get("gm.name") || "" });
      const pw = summary.password ? h("label", {}, h("span", {}, "Table password"), password) : null;
      const full = summary.seated >= summary.seats || summary.stage !== "lobby";
      if (summary.league && !this.display) {
        // A league game: members sit down under their league name, with their member token.
        const member = store.get(memberKey(summary.league));
        state.memberToken = member ? member.token : null;
        const leagueLink = h("a", { href: `/leagues/${summary.league}`, testid: "league-link" }, "the league's page");
        this.entry.append(h("h2", {}, printable(summary.name)),
          h("p", { class: "meta" }, `A league game · ${STAGES[summary.stage]} · ${summary.seated}/${summary.seats} seated · ${rulesWords(summary)}`));
        if (!member) {
          this.entry.append(h("p", { testid: "league-join-first" }, "Only the league's members sit at this table. Join the league on ", leagueLink,
            ", register your deck, then come back."),
          h("button", { type: "button", testid: "watch", onclick: () => enter("watch") }, "Watch"));
          return;
        }
        this.entry.append(h("p", {}, `You sit down as ${printable(member.name)}, with your league deck (`, leagueLink, ")."),
          h("div", { class: "row" },
            h("button", { type: "button", class: "primary", testid: "join-submit", disabled: full,
              onclick: () => enter("join", member.name) }, full ? "No free seat" : `Sit down as ${printable(member.name)}`),
            h("button", { type: "button", testid: "watch", onclick: () => enter("watch") }, "Watch")));
        return;
      }
      if (this.display) {
        this.entry.append(h("form", { onsubmit: (ev) => { ev.preventDefault(); state.password = password.value; enter("watch"); } },
          h("p", {}, "This table has a password."), pw, h("button", { type: "submit", testid: "watch" }, "Show the table")));
        return;
      }
      this.entry.append(
        h("h2", {}, printable(summary.name)),
        h("p", { class: "meta" }, `${STAGES[summary.stage]} · ${summary.seated}/${summary.seats} seated · ${rulesWords(summary)}`),
        h("form", { onsubmit: (ev) => {
          ev.preventDefault();
          state.password = password.value || null;
          store.set("gm.name", name.value.trim());
          enter("join", name.value.trim());
        } },
          h("label", {}, h("span", {}, "Your name"), name), pw,
          h("div", { class: "row" },
            h("button", { type: "submit", class: "primary", testid: "join-submit", disabled: full }, full ? "No free seat" : "Sit down"),
            h("button", { type: "button", testid: "watch", onclick: () => { state.password = password.value || null; enter("watch"); } }, "Watch"))));
    },

    buildActions() {
      const a = this.actions;
      const button = (testid, label, onclick, cls) => h("button", { type: "button", testid, onclick, class: cls || "" }, label);
      const go = (message) => send(message);
      this.targetSel = h("select", { testid: "target", "aria-label": "Target (players in your range)",
        onchange: () => this.syncButtons() });
      this.amount = h("input", { type: "number", testid: "amount", min: 1, value: 1, "aria-label": "Damage" });
      this.poisonIn = h("input", { type: "number", testid: "attack-poison", min: 0, value: 0, "aria-label": "Poison" });
      this.firstSel = h("select", { testid: "start-first", "aria-label": "First player" });
      const confirm = h("div", { class: "confirm", hidden: true },
        h("span", {}, "Leave the game for good?"),
        button("concede-confirm", "Yes, concede", () => { confirm.hidden = true; go({ type: "concede" }); }, "danger"),
        button("concede-cancel", "No", () => { confirm.hidden = true; }));
      const extraConfirm = h("div", { class: "confirm", hidden: true },
        h("span", {}, "Take an extra turn after this one (a card says so)?"),
        button("extra-turn-confirm", "Yes, extra turn", () => { extraConfirm.hidden = true; go({ type: "extra_turn" }); }, "primary"),
        button("extra-turn-cancel", "No", () => { extraConfirm.hidden = true; }));
      const powers = (text) => text.split(/[\s,;]+/).filter(Boolean).map(Number);
      this.rollDefender = h("select", { testid: "roll-defender", "aria-label": "Defending player" });
      this.rollPower = h("input", { type: "number", testid: "roll-power", min: 0, value: 2, "aria-label": "Attacking creature's power" });
      this.rollBlockers = h("input", { testid: "roll-blockers", inputmode: "numeric", placeholder: "none: unblocked",
        "aria-label": "Blocking creatures' powers (space between them)" });
      this.counterWho = h("select", { testid: "counter-attacker", "aria-label": "The attacking player" });
      this.counterMine = h("input", { type: "number", testid: "counter-mine", min: 0, value: 2, "aria-label": "My blocking creature's power" });
      this.counterTheirs = h("input", { type: "number", testid: "counter-theirs", min: 0, value: 2, "aria-label": "The attacking creature's power" });
      this.rollResult = h("p", { class: "roll-result", testid: "roll-result", "aria-live": "polite" });
      const whole = (values) => values.every((x) => Number.isInteger(x) && x >= 0);
      this.groups = {
        lobby: h("div", { class: "group" },
          this.deciderBox = h("div", { class: "decider-only", testid: "decider-box" },
            h("p", {}, "Your deck is furthest behind: you decide who plays first."),
            h("label", {}, h("span", {}, "Plays first"), this.chooseSel = h("select", { testid: "choose-first", "aria-label": "Who plays first" })),
            button("choose-first-submit", "Choose", () => go({ type: "choose_first", player: Number(this.chooseSel.value) }), "primary")),
          h("div", { class: "host-only" }, this.firstLabel = h("label", {}, h("span", {}, "First player"), this.firstSel),
            this.seatingTools(),
            button("start", "Start the game", () => go(Object.assign({ type: "start", first_player: this.firstSel.value === "" ? null : Number(this.firstSel.value) },
              this.seatingSel.value === "arranged" ? { seating: "arranged", order: state.arranged.slice() } : { seating: this.seatingSel.value }
            )), "primary")),
          button("leave", "Give up my seat", async () => {
            const answer = await go({ type: "leave" });
            if (answer.type === "left") { store.remove(seatKey(route.table)); location.assign("/"); }
          })),
        adjourned: h("div", { class: "group adjourned", testid: "adjourned-box" },
          this.adjournedText = h("p", { testid: "adjourned-text" }),
          this.resumeBtn = button("resume-game", "Resume the game", () => go({ type: "resume_game" }), "primary"),
          this.askResumeBtn = button("ask-resume", "Ask to resume", () => go({ type: "resume_game" }))),
        mulligan: h("div", { class: "group decider-only" },
          button("keep", "Keep this hand", () => go({ type: "keep" }), "primary"),
          button("mulligan", "Mulligan", () => go({ type: "mulligan" }))),
        turn: h("div", { class: "group" },
          h("div", { class: "phases", role: "group", "aria-label": "Phase" },
            PHASES.map((ph) => button(`phase-${ph}`, PHASE_NAMES[ph], () => go({ type: "set_phase", phase: ph })))),
          h("div", { class: "row" },
            button("end-turn", "End my turn ▶", () => go({ type: "end_turn" }), "primary"),
            button("extra-turn", "Extra turn…", () => { extraConfirm.hidden = false; })),
          extraConfirm),
        dice: h("fieldset", { class: "group dice-tools" }, h("legend", {}, "⚄ Combat with Dice"),
          h("div", { class: "row" }, h("label", {}, h("span", {}, "Defender"), this.rollDefender),
            h("label", {}, h("span", {}, "Power"), this.rollPower),
            h("label", {}, h("span", {}, "Blockers' powers"), this.rollBlockers)),
          h("div", { class: "row" }, this.rollBtn = button("attack-roll", "⚄ Attack roll", () => {
            const blockers = powers(this.rollBlockers.value);
            const power = Number(this.rollPower.value);
            if (this.rollDefender.value === "") { showError("Pick the defending player (only players you may attack are listed)."); return; }
            if (!whole([power, ...blockers])) { showError("Powers are whole numbers, 0 or more (blockers: separated by spaces)."); return; }
            go({ type: "attack_roll", defender: Number(this.rollDefender.value), attacker_power: power, blocker_powers: blockers });
          })),
          h("div", { class: "row" }, h("label", {}, h("span", {}, "Strike back at"), this.counterWho),
            h("label", {}, h("span", {}, "My blocker's power"), this.counterMine),
            h("label", {}, h("span", {}, "Attacker's power"), this.counterTheirs)),
          h("div", { class: "row" }, this.counterBtn = button("counter-roll", "⚄ Counter strike", () => {
            const mine = Number(this.counterMine.value);
            const theirs = Number(this.counterTheirs.value);
            if (this.counterWho.value === "") { showError("Nobody is in combat within your range."); return; }
            if (!whole([mine, theirs])) { showError("Powers are whole numbers, 0 or more."); return; }
            go({ type: "counter_roll", attacker: Number(this.counterWho.value), blocker_power: mine, attacker_power: theirs });
          })),
          this.rollResult),
        play: h("div", { class: "group" },
          h("div", { class: "row" }, h("label", {}, h("span", {}, "Target"), this.targetSel),
            h("label", {}, h("span", {}, "Damage"), this.amount), h("label", {}, h("span", {}, "Poison"), this.poisonIn)),
          h("div", { class: "row" },
            this.attackBtn = button("attack", "⚔ Attack", () => go({ type: "attack", target: Number(this.targetSel.value), damage: Number(this.amount.value), poison: Number(this.poisonIn.value) || 0 })),
            this.damageBtn = button("damage", "✦ Deal damage", () => go({ type: "deal_damage", target: Number(this.targetSel.value), amount: Number(this.amount.value) }))),
          h("div", { class: "row counters" },
            h("span", {}, "My life"), button("life-minus", "−1", () => go({ type: "change_life", delta: -1 })),
            button("life-plus", "+1", () => go({ type: "change_life", delta: 1 })),
            h("span", {}, "Poison"), button("poison-minus", "−1", () => go({ type: "change_poison", delta: -1 })),
            button("poison-plus", "+1", () => go({ type: "change_poison", delta: 1 }))),
          h("div", { class: "row" }, button("concede", "Concede…", () => { confirm.hidden = false; }, "danger"), confirm)),
        host: this.hostTools(go, button),
        call: this.callTools(go, button),
      };
      this.chatInput = h("input", { testid: "chat-input", maxlength: 500, placeholder: "Say something", "aria-label": "Chat" });
      this.chatForm = h("form", { class: "chat-form", onsubmit: async (ev) => {
        ev.preventDefault();
        const text = this.chatInput.value.trim();
        if (!text) return;
        const answer = await go({ type: "chat", text });
        if (answer.type === "ack") this.chatInput.value = "";
      } }, this.chatInput, h("button", { type: "submit", testid: "chat-send" }, "Send"));
      append(a, Object.values(this.groups));
      this.specLeave = button("leave-watch", "Stop watching", async () => { await go({ type: "leave" }); location.assign("/"); });
      a.append(this.specLeave);
    },

    hostTools(go, button) {
      const who = () => h("select", { class: "who", "aria-label": "Player" });
      const kickWho = who(), hostWho = who(), muteWho = who(), ruleWho = who();
      this.whoSelects = [kickWho, hostWho, muteWho, ruleWho];
      const ban = h("input", { type: "checkbox" });
      const value = h("input", { type: "number", value: 20, "aria-label": "Value" });
      const pick = (sel) => Number(sel.value);
      this.pauseBtn = button("pause", "Pause", () => go({ type: "pause", paused: !(state.view && state.view.paused) }));
      this.adjournBtn = button("adjourn", "Adjourn the game…", () => {
        if (window.confirm("Adjourn the game? Every clock stops and everyone may leave; you resume it later.")) go({ type: "adjourn" });
      });
      return h("details", { class: "group host" }, h("summary", {}, "★ Host tools"),
        h("div", { class: "row" }, this.pauseBtn, this.adjournBtn,
          button("mute-spectators", "Mute / unmute spectators", () => go({ type: "mute", player: null, muted: !state.view.spectators_muted }))),
        h("div", { class: "row" }, kickWho, h("label", { class: "inline" }, ban, " also ban"),
          button("kick", "Remove", () => { if (window.confirm(`Remove ${nameOf(pick(kickWho))} from the table?`)) go({ type: "kick", player: pick(kickWho), ban: ban.checked }); }, "danger")),
        h("div", { class: "row" }, hostWho, button("transfer-host", "Hand over host", () => go({ type: "transfer_host", player: pick(hostWho) }))),
        h("div", { class: "row" }, muteWho, button("mute", "Mute / unmute", () => {
          const p = state.view.players.find((q) => q.player === pick(muteWho));
          go({ type: "mute", player: pick(muteWho), muted: !(p && p.muted) });
        })),
        h("fieldset", {}, h("legend", {}, "Rulings"), ruleWho, value,
          h("div", { class: "row" },
            button("rule-set-life", "Set life", () => go({ type: "ruling", ruling: { kind: "set_life", player: pick(ruleWho), life: Number(value.value) } })),
            button("rule-set-poison", "Set poison", () => go({ type: "ruling", ruling: { kind: "set_poison", player: pick(ruleWho), poison: Number(value.value) } })),
            button("rule-end-turn", "End his turn", () => go({ type: "ruling", ruling: { kind: "end_turn", player: pick(ruleWho) } })),
            button("rule-keep", "Keep (mulligans)", () => {
              // Paris: the decider's hand; simultaneous: the chosen player's.
              const decider = state.view.mulligan_decider;
              go({ type: "ruling", ruling: { kind: "keep", player: decider === null || decider === undefined ? pick(ruleWho) : decider } });
            }),
            button("rule-extra-turn", "Extra turn", () => go({ type: "ruling", ruling: { kind: "extra_turn", player: pick(ruleWho) } })),
            button("rule-eliminate", "Eliminate", () => { if (window.confirm(`Eliminate ${nameOf(pick(ruleWho))}?`)) go({ type: "ruling", ruling: { kind: "eliminate", players: [pick(ruleWho)] } }); }, "danger"))));
    },

    /** The host's seating in the lobby: by the dice, in join order, or arranged (a list he reorders). */
    seatingTools() {
      this.seatingSel = h("select", { testid: "seating-mode", "aria-label": "Seating",
        onchange: () => this.renderArrange() });
      fillSelect(this.seatingSel, [["random", "Random (the dice)"], ["joined", "As joined"], ["arranged", "Arranged (reorder below)"]]);
      this.arrangeList = h("ol", { class: "arrange", testid: "seating-order", "aria-label": "Seating order, seat 0 first (the next seat is to the left)" });
      return h("div", {}, h("label", {}, h("span", {}, "Seating"), this.seatingSel), this.arrangeList);
    },

    /** Moves player `id` in the arranged order to index `to`. */
    moveSeat(id, to) {
      const order = state.arranged.filter((p) => p !== id);
      order.splice(Math.max(0, Math.min(to, order.length)), 0, id);
      state.arranged = order;
      this.renderArrange();
      const again = this.arrangeList.querySelector(`[data-player="${id}"] .seat-handle`);
      if (again) again.focus();
    },

    renderArrange() {
      const view = state.view;
      const ids = view && view.stage === "lobby" ? view.players.map((p) => p.player) : [];
      // Keep the host's order; newcomers go to the end, leavers drop out.
      state.arranged = state.arranged.filter((id) => ids.includes(id)).concat(ids.filter((id) => !state.arranged.includes(id)));
      const on = this.seatingSel.value === "arranged";
      this.arrangeList.hidden = !on;
      if (!on) return;
      const order = state.arranged;
      put(this.arrangeList, ...order.map((id, k) => {
        const li = h("li", { "data-player": id, draggable: "true", testid: `seat-${id}`,
          ondragstart: (ev) => { ev.dataTransfer.setData("text/plain", String(id)); },
          ondragover: (ev) => ev.preventDefault(),
          ondrop: (ev) => { ev.preventDefault(); const moved = Number(ev.dataTransfer.getData("text/plain")); if (order.includes(moved)) this.moveSeat(moved, k); } },
          h("span", { class: "seat-handle", tabindex: "0", "aria-label": `Seat ${k}: ${nameOf(id)} (Alt+arrow keys move him)`,
            onkeydown: (ev) => {
              if (ev.altKey && ev.key === "ArrowUp") { ev.preventDefault(); this.moveSeat(id, k - 1); }
              if (ev.altKey && ev.key === "ArrowDown") { ev.preventDefault(); this.moveSeat(id, k + 1); }
            } }, `${k}. ${nameOf(id)}`),
          h("button", { type: "button", testid: `seat-up-${id}`, "aria-label": `Move ${nameOf(id)} up`, disabled: k === 0, onclick: () => this.moveSeat(id, k - 1) }, "↑"),
          h("button", { type: "button", testid: `seat-down-${id}`, "aria-label": `Move ${nameOf(id)} down`, disabled: k === order.length - 1, onclick: () => this.moveSeat(id, k + 1) }, "↓"));
        return li;
      }));
    },

    /** A player calls the host: one short line (a dispute, a question). */
    callTools(go, button) {
      this.callReason = h("input", { testid: "call-reason", maxlength: 120, placeholder: "Why (one short line)", "aria-label": "Why you call the host" });
      return h("form", { class: "group call", onsubmit: async (ev) => {
        ev.preventDefault();
        const reason = this.callReason.value.trim();
        if (!reason) { showError("Say in one short line why you call the host."); return; }
        const answer = await go({ type: "call_host", reason });
        if (answer.type === "ack") this.callReason.value = "";
      } }, h("div", { class: "row" }, this.callReason, h("button", { type: "submit", testid: "call-host" }, "📣 Call the host")));
    },

    /** The host's alert: every open call, who and why, each with an answer button. */
    renderCalls(view, me) {
      const calls = view.calls || [];
      const host = state.role === "player" && view.host === me;
      this.callAlert.hidden = !(host && calls.length);
      const key = calls.map((c) => `${c.player}:${c.reason}`).join("\n");
      if (host && calls.some((c) => !state.calls.split("\n").includes(`${c.player}:${c.reason}`))) beep();
      state.calls = host ? key : "";
      if (!host || !calls.length) return;
      put(this.callAlert, ...calls.map((c) => h("div", { class: "row" },
        h("span", { testid: `host-call-${c.player}` }, `📣 ${nameOf(c.player)} calls the host: ${printable(c.reason)}`),
        h("button", { type: "button", testid: `answer-call-${c.player}`, onclick: () => send({ type: "answer_call", player: c.player }) }, "Answered"))),
        ...(calls.length > 1 ? [h("button", { type: "button", testid: "answer-calls", onclick: () => send({ type: "answer_call", player: null }) }, "All answered")] : []));
    },

    /** Picks a target by tapping a seat on the ring (only players offered in the list). */
    onSeat(player) {
      const p = state.view && state.view.players.find((q) => q.player === player);
      if (!p) return;
      this.detail.textContent = `${printable(p.name)} — life ${p.life}, poison ${p.poison}, ` +
        `${p.status === "alive" ? "in the game" : p.status === "eliminated" ? "out (position still counts)" : "out (position removed)"}` +
        `${p.connected ? "" : p.absent ? ", away" : ", disconnected"}${state.view.host === p.player ? ", host" : ""}`;
      if (Array.from(this.targetSel.options).some((o) => o.value === String(player))) {
        this.targetSel.value = String(player);
        this.syncButtons();
      }
    },

    syncButtons() {
      const view = state.view;
      const mine = view && view.players.find((p) => p.player === state.me);
      const target = Number(this.targetSel.value);
      const has = this.targetSel.value !== "";
      this.attackBtn.disabled = !(has && mine && mine.may_attack.includes(target));
      this.damageBtn.disabled = !(has && mine && mine.may_target.includes(target));
    },

    render() {
      const view = state.view;
      if (!view) return;
      this.entry.hidden = state.role !== null || this.entry.hidden;
      if (state.role) this.entry.hidden = true;
      const me = state.me;
      put(this.head, h("h2", {}, printable(view.name)),
        h("span", { class: "meta" }, `${STAGES[view.stage]} · ${rulesWords(view.settings)} · ${view.spectators} watching` +
          (view.adjourned ? " · ☾ adjourned" : view.paused ? " · ⏸ paused" : "") + (state.role === "spectator" && !this.display ? " · you are watching" : "")),
        view.settings.league && !this.display ? h("a", { href: `/leagues/${view.settings.league}`, class: "meta", testid: "table-league" }, "League game ▸") : null);
      this.status.textContent = sentence(view, me);
      put(this.ringBox, ring(view, me, { big: this.display, onSeat: (p) => this.onSeat(p) }));
      clear(this.endBox);
      if (view.stage === "finished") this.endBox.append(standingsTable(view), diceBox(view));
      this.renderLog();
      if (this.display) return;
      put(this.listBox, seatList(view, me), diceBox(view));
      this.renderActions(view, me);
      this.renderCalls(view, me);
      this.notify(view, me);
    },

    renderLog() {
      const lines = (map) => Array.from(map.entries()).sort((a, b) => a[0] - b[0]);
      const keep = this.display ? 12 : 400;
      put(this.logBox, ...lines(state.log).slice(-keep).reverse().map(([seq, text]) => h("li", { "data-seq": seq }, text)));
      if (this.chatBox) put(this.chatBox, ...lines(state.chat).slice(-keep).reverse().map(([seq, text]) => h("li", { "data-seq": seq }, text)));
    },

    renderActions(view, me) {
      const player = state.role === "player";
      this.actions.hidden = state.role === null;
      this.specLeave.hidden = state.role !== "spectator";
      const mine = player ? view.players.find((p) => p.player === me) : null;
      const alive = mine && mine.status === "alive";
      const own = view.turns.find((t) => t.player === me && t.state === "running");
      const host = player && view.host === me;
      const g = this.groups;
      g.lobby.hidden = !(player && view.stage === "lobby");
      g.lobby.querySelector(".host-only").hidden = !host;
      const decider = view.first_decider === undefined ? null : view.first_decider;
      this.deciderBox.hidden = !(player && view.stage === "lobby" && decider === me);
      // At a league table with a decider the host does not choose the first player.
      this.firstLabel.hidden = decider !== null;
      fillSelect(this.chooseSel, view.players.map((p) => [String(p.player), printable(p.name)]));
      if (view.first_choice !== undefined && view.first_choice !== null && document.activeElement !== this.chooseSel) {
        this.chooseSel.value = String(view.first_choice);
      }
      const deciding = (view.mulligan_deciders || []).includes(me);
      // An adjourned game stands still: only resuming it (or asking to) is offered.
      const going = !view.adjourned;
      const asks = view.resume_asks || [];
      g.adjourned.hidden = !(player && view.adjourned);
      this.adjournedText.textContent = `The game is adjourned. ${asks.length} of ${resumeQuorum(view)} players have asked to resume it` +
        (asks.length ? ` (${asks.map(nameOf).join(", ")})` : "") + ".";
      this.resumeBtn.hidden = !host;
      this.askResumeBtn.hidden = host || !alive;
      this.askResumeBtn.disabled = asks.includes(me);
      this.askResumeBtn.textContent = asks.includes(me) ? "You asked to resume" : "Ask to resume";
      g.mulligan.hidden = !(player && going && view.stage === "mulligan" && deciding);
      g.dice.hidden = !(player && going && view.stage === "playing" && alive && view.settings.combat_dice);
      g.turn.hidden = !(player && going && view.stage === "playing" && own && alive);
      g.play.hidden = !(player && going && view.stage === "playing" && alive);
      g.host.hidden = !host || view.stage === "finished";
      g.call.hidden = !player || host || view.stage === "finished";
      this.renderArrange();
      if (own) {
        for (const ph of PHASES) {
          const b = g.turn.querySelector(`[data-testid="phase-${ph}"]`);
          b.setAttribute("aria-pressed", String(own.phase === ph));
          b.classList.toggle("current", own.phase === ph);
        }
      }
      this.pauseBtn.textContent = view.paused ? "Resume" : "Pause";
      this.pauseBtn.hidden = view.adjourned;
      this.adjournBtn.hidden = view.adjourned || !(view.stage === "mulligan" || view.stage === "playing");
      if (Object.values(g).every((el) => el.hidden) && state.role === "player") this.actions.hidden = true;
      // First-player choice in the lobby.
      const firsts = [["", "Drawn at random"], ...view.players.map((p) => [String(p.player), printable(p.name)])];
      fillSelect(this.firstSel, firsts);
      for (const sel of this.whoSelects) fillSelect(sel, view.players.map((p) => [String(p.player), printable(p.name)]));
      // Only players in range are offered as targets.
      const targets = mine ? mine.may_target.filter((id) => id !== me) : [];
      fillSelect(this.targetSel, targets.map((id) => [String(id), `${nameOf(id)} (life ${view.players.find((p) => p.player === id).life})`]));
      if (view.settings.combat_dice) {
        const attackable = mine ? mine.may_attack : [];
        fillSelect(this.rollDefender, attackable.map((id) => [String(id), nameOf(id)]));
        this.rollBtn.disabled = !attackable.length;
        // Whom I may strike back at: players in my range whose running turn is in combat.
        const inCombat = view.turns.filter((t) => t.state === "running" && t.phase === "combat" && t.player !== me &&
          mine && mine.may_target.includes(t.player)).map((t) => t.player);
        fillSelect(this.counterWho, inCombat.map((id) => [String(id), nameOf(id)]));
        this.counterBtn.disabled = !inCombat.length;
      }
      this.syncButtons();
      this.chatInput.disabled = !state.role;
    },

    /** A banner, the tab title and a sound when your turn begins or your decision comes up. */
    notify(view, me) {
      const decision = state.role === "player" && view.stage === "mulligan" && (view.mulligan_deciders || []).includes(me);
      const turn = state.role === "player" && view.stage === "playing" && view.turns.some((t) => t.player === me && t.state === "running");
      if ((decision && !state.notified.decision) || (turn && !state.notified.turn)) beep();
      state.notified = { decision, turn };
      if (decision) {
        this.banner.textContent = "Your mulligan decision — keep or mulligan";
      } else if (turn) {
        this.banner.textContent = "▶ Your turn!";
      }
      this.banner.hidden = !(decision || turn);
      document.title = decision ? `● Your decision — ${TITLE}` : turn ? `▶ Your turn — ${TITLE}` : `${printable(view.name)} — ${TITLE}`;
    },
  };


  const replay = {
    init() {
      document.title = `Replay — ${TITLE}`;
      this.box = h("section", { class: "main" }, "Loading the game…");
      this.side = h("section", { class: "side" }, errorEl);
      put(app, this.box, this.side);
    },
    async load(password) {
      const seat = store.get(seatKey(route.table));
      const events = [];
      let head = null;
      let from = 1;
      for (let pages = 0; pages < 10000; pages++) {
        const answer = await GM.link.request({ type: "get_replay", table: route.table, from_seq: from,
          password: password || null, token: seat ? seat.token : null });
        if (answer.type === "error") {
          if (answer.code === "wrong_password") { this.askPassword(); return; }
          showError(refusal(answer));
          return;
        }
        head = answer;
        events.push(...answer.events);
        if (answer.next_seq === null || answer.next_seq === undefined) break;
        from = answer.next_seq;
      }
      this.views = [F.emptyView(head.table, head.name, head.settings)];
      this.lines = [""];
      state.names.clear();
      state.rules = head.settings.rules || "seed";
      let view = F.clone(this.views[0]);
      try {
        events.forEach((e, i) => {
          this.lines.push(describe(e));
          F.applyEvent(view, i + 1, e);
          this.views.push(F.clone(view));
        });
      } catch (err) {
        showError(`This replay could not be read past event ${this.views.length}: ${err.message}`);
      }
      this.at = this.views.length - 1;
      this.build();
    },
    askPassword() {
      const pw = h("input", { type: "password", testid: "replay-password", "aria-label": "Password" });
      put(this.box, h("form", { onsubmit: (ev) => { ev.preventDefault(); this.load(pw.value); } },
        h("p", {}, "This game was played at a table with a password."), pw, h("button", { type: "submit" }, "Open")));
    },
    build() {
      const last = this.views.length - 1;
      this.slider = h("input", { type: "range", min: 0, max: last, value: this.at, "aria-label": "Step",
        oninput: () => this.go(Number(this.slider.value)) });
      this.stepText = h("span", { testid: "replay-step" });
      this.ringBox = h("div", { class: "ring-box" });
      this.text = h("p", { class: "status-line" });
      this.endBox = h("div", {});
      const b = (id, label, to) => h("button", { type: "button", testid: id, onclick: () => this.go(to()) }, label);
      const leagueId = this.views[0].settings.league;
      put(this.box, h("div", { class: "table-head" }, h("h2", {}, printable(this.views[0].name)), h("a", { href: "/replays" }, "◂ Finished games"),
        leagueId ? h("a", { href: `/leagues/${leagueId}`, testid: "replay-league" }, "The league ▸") : null),
        h("div", { class: "row replay-controls" }, b("replay-first", "⏮", () => 0), b("replay-prev", "◀", () => this.at - 1),
          b("replay-next", "▶", () => this.at + 1), b("replay-last", "⏭", () => last), this.stepText),
        this.slider, this.text, this.ringBox, this.endBox);
      document.addEventListener("keydown", (ev) => {
        if (ev.key === "ArrowRight") this.go(this.at + 1);
        if (ev.key === "ArrowLeft") this.go(this.at - 1);
      });
      this.go(this.at);
    },
    go(to) {
      this.at = Math.max(0, Math.min(this.views.length - 1, to));
      const view = this.views[this.at];
      learnNames(view);
      this.slider.value = this.at;
      this.stepText.textContent = `step ${this.at} of ${this.views.length - 1}`;
      this.text.textContent = this.at === 0 ? "Before the first event." : this.lines[this.at];
      put(this.ringBox, ring(view, null, {}));
      clear(this.endBox);
      if (view.stage === "finished") this.endBox.append(standingsTable(view), diceBox(view));
    },
  };


  function render() {
    if (route.page === "table" || route.page === "display") table.render();
  }

  Object.assign(GM.pages, { table, replay, onMessage, onUp, render });
})();

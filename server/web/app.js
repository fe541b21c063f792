// The browser seat: lobby, table, big-screen display and replays, on one page.
//
// One WebSocket to the server that served the page (MessagePack frames, PROTOCOL.md). The table
// is mirrored from the snapshot and event batches with fold.js; the seat token is kept in
// localStorage so that a reload, a dropped network or a restarted server puts the player back in
// his seat; the event log and chat are rebuilt with `get_events`. Every user-typed text is put on
// the page with textContent, never as markup.
"use strict";

(function () {
  const F = window.GMFold;
  const MP = window.MessagePack;
  const PROTOCOL = 1;
  const PHASES = ["beginning", "precombat_main", "combat", "postcombat_main", "ending"];
  const PHASE_NAMES = {
    beginning: "beginning", precombat_main: "main 1", combat: "combat",
    postcombat_main: "main 2", ending: "end",
  };
  const TITLE = "Grand Melee";

  // ---------------------------------------------------------------- small DOM helpers

  /** An element with attributes (`class`, `data-*`, properties) and children (nodes or text). */
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") el.className = v;
      else if (k === "testid") el.dataset.testid = v;
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else if (k in el && typeof v !== "string") el[k] = v;
      else el.setAttribute(k, v === true ? "" : v);
    }
    append(el, children);
    return el;
  }

  function append(el, children) {
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }

  const SVG = "http://www.w3.org/2000/svg";
  function s(tag, attrs, ...children) {
    const el = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "testid") el.setAttribute("data-testid", v);
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v);
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }

  function clear(el) {
    while (el.firstChild) el.removeChild(el.firstChild);
    return el;
  }

  /** Replaces `el`'s children with `kids` (arrays flattened); a null, undefined or false child
   * (an optional part left out) is skipped, never shown as the text "null". */
  function put(el, ...kids) {
    return append(clear(el), kids);
  }

  /** Text made printable: control and invisible characters shown as \u{…} escapes. */
  function printable(text) {
    return String(text).replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}]/gu,
      (c) => `\\u{${c.codePointAt(0).toString(16)}}`);
  }

  function shorten(name, max) {
    const chars = Array.from(printable(name));
    return chars.length <= max ? chars.join("") : chars.slice(0, max - 1).join("") + "…";
  }

  const store = {
    get(key) {
      try { return JSON.parse(localStorage.getItem(key)); } catch (_) { return null; }
    },
    set(key, value) {
      try { localStorage.setItem(key, JSON.stringify(value)); } catch (_) { /* private mode */ }
    },
    remove(key) {
      try { localStorage.removeItem(key); } catch (_) { /* private mode */ }
    },
  };

  // ---------------------------------------------------------------- plain words for refusals

  const REFUSALS = {
    bad_message: "The server did not understand that request.",
    unsupported_version: "This page is older than the server: reload it.",
    hello_required: "Still connecting; try again in a moment.",
    already_in_table: "You are already at a table; leave it first.",
    not_in_table: "You are not at this table (it may have closed).",
    unknown_table: "There is no open table with that link: it may have ended or closed.",
    wrong_password: "That password is not right.",
    bad_token: "Your saved seat is no longer valid; sit down again.",
    bad_settings: "One of the table settings is out of range.",
    table_full: "Every seat at this table is taken. You can still watch.",
    bad_name: "A name must be 1 to 32 characters, with at least one letter, digit or symbol.",
    name_taken: "Someone at this table already has that name; pick another.",
    not_enough_players: "At least two players are needed to start.",
    game_started: "The game has already started.",
    not_mulliganing: "That is only possible while players decide on mulligans.",
    not_playing: "The game is not in play.",
    not_host: "Only the host may do that.",
    not_a_player: "Only seated players may do that.",
    unknown_player: "There is no such player at this table.",
    eliminated: "You have been eliminated and can no longer act in the game.",
    target_eliminated: "That player has been eliminated.",
    not_your_decision: "It is another player's turn to decide on a mulligan.",
    no_cards_left: "You have no cards left to mulligan.",
    not_your_turn: "You are not taking a turn right now.",
    no_running_turn: "That player is not taking a turn.",
    not_combat_phase: "Attacks are only possible in the combat phase.",
    same_phase: "The turn is already in that phase.",
    self_attack: "You cannot attack yourself.",
    out_of_range: "That player is out of your spell range.",
    bad_amount: "That amount is not possible (zero, too large, or below zero counters).",
    duplicate_player: "A ruling names a player twice.",
    no_players: "A ruling must name at least one player.",
    chat_too_long: "A chat line is 1 to 500 characters.",
    rate_limited: "Too many requests at once; wait a moment and try again.",
    server_busy: "The server is busy right now; try again in a moment.",
    table_paused: "The host has paused the table.",
    table_adjourned: "The game is adjourned: the host resumes it (or a majority of the players asks to).",
    not_adjourned: "The game is not adjourned.",
    already_asked: "You have already asked to resume the game.",
    unknown_replay: "That finished game is not kept (any more).",
    storage_failed: "The server could not read or write its records; try again.",
    banned: "The host removed you from this table.",
    muted: "The host has muted your chat at this table.",
    spectators_full: "This table has as many spectators as it allows.",
    reserved_name: "That name is reserved (spectator, host, server, judge); pick another.",
    confusable_name: "That name looks too much like another player's; pick another.",
    too_many_tables: "Your address has opened as many tables as allowed for now.",
    bad_text: "That text contains invisible or control characters.",
    not_attack_left: "Under these rules (CR 807) you may attack only the player on your left.",
    dice_off: "This table does not play Combat with Dice.",
    no_counter_strike: "No attack roll of that player on you was blocked in his current combat.",
    unknown_league: "There is no league with that link.",
    not_a_member: "This browser's member token is not a member's of this league; join it again.",
    not_organiser: "Only the league's organiser (the browser that created it) may create its tables.",
    league_seat: "This is a league game: join the league first, then sit down as its member.",
    already_seated: "You already sit at this table.",
    same_opponent: "League rule: you may not play the same opponent twice in a row in a two-player game.",
    not_decider: "Only the player whose deck is furthest behind decides who plays first.",
    no_deck: "Register your deck in the league first.",
    deck_registered: "You already have a deck in this league.",
    bad_seating: "An arranged seating must list every seated player exactly once.",
    no_open_call: "There is no open call to answer.",
  };

  // How the table was seated (`game_started`'s `seating_mode`), as the log says it.
  const SEATINGS = { random: " (seated by the dice)", joined: " (seated in join order)", arranged: " (seated as the host arranged)" };

  function refusal(message) {
    return REFUSALS[message.code] || printable(message.message || message.code || "refused");
  }

  // ---------------------------------------------------------------- the connection

  /** The WebSocket to the server, with hello, request ids, and reconnection with backoff. */
  class Link {
    constructor(onMessage, onUp, onStatus) {
      this.onMessage = onMessage;
      this.onUp = onUp;
      this.onStatus = onStatus;
      this.nextId = 1;
      this.pending = new Map();
      this.ws = null;
      this.up = false;
      this.delay = 250;
      this.retryAt = 0;
      this.open();
    }

    url() {
      const forced = new URLSearchParams(location.search).get("ws");
      if (forced) return forced;
      return (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws";
    }

    open() {
      let ws;
      try {
        ws = new WebSocket(this.url());
      } catch (_) {
        this.retry();
        return;
      }
      ws.binaryType = "arraybuffer";
      this.ws = ws;
      ws.onopen = () => {
        this.request({ type: "hello", protocol: PROTOCOL, client: "grand-melee-web/1" }).then((m) => {
          if (m.type !== "welcome") return;
          this.up = true;
          this.delay = 250;
          this.failures = 0;
          this.onStatus();
          this.onUp();
        });
      };
      ws.onmessage = (ev) => {
        let message;
        try {
          message = MP.decode(new Uint8Array(ev.data));
        } catch (_) {
          return;
        }
        if (message && message.reply_to !== undefined && message.reply_to !== null &&
            this.pending.has(message.reply_to)) {
          const resolve = this.pending.get(message.reply_to);
          this.pending.delete(message.reply_to);
          try { this.onMessage(message); } finally { resolve(message); }
          return;
        }
        this.onMessage(message);
      };
      ws.onclose = () => {
        if (this.ws !== ws) return;
        this.up = false;
        for (const resolve of this.pending.values()) {
          resolve({ type: "error", code: "offline", message: "The connection dropped; reconnecting." });
        }
        this.pending.clear();
        this.retry();
      };
      ws.onerror = () => { /* onclose follows */ };
    }

    retry() {
      this.ws = null;
      this.failures = (this.failures || 0) + 1;
      this.retryAt = Date.now() + this.delay;
      this.onStatus();
      setTimeout(() => this.open(), this.delay);
      this.delay = Math.min(this.delay * 2, 10000);
    }

    /** Sends a request and resolves with its answer (an `error` included). */
    request(message) {
      const m = Object.assign({}, message);
      if (m.id === undefined || m.id === null) m.id = this.nextId++;
      return new Promise((resolve) => {
        if (!this.ws || this.ws.readyState !== WebSocket.OPEN) {
          resolve({ type: "error", reply_to: m.id, code: "offline", message: "Offline: reconnecting." });
          return;
        }
        this.pending.set(m.id, resolve);
        this.ws.send(MP.encode(m));
      });
    }
  }

  // ---------------------------------------------------------------- state

  const route = (() => {
    const path = location.pathname.replace(/\/+$/, "") || "/";
    const params = new URLSearchParams(location.search);
    let m;
    if ((m = path.match(/^\/t\/([0-9a-fA-F-]{36})$/))) {
      return { page: params.has("display") ? "display" : "table", table: m[1].toLowerCase() };
    }
    if ((m = path.match(/^\/replays\/([0-9a-fA-F-]{36})$/))) return { page: "replay", table: m[1].toLowerCase() };
    if (path === "/replays") return { page: "replays" };
    if ((m = path.match(/^\/leagues\/([0-9a-fA-F-]{36})$/))) return { page: "league", league: m[1].toLowerCase() };
    if (path === "/leagues") return { page: "leagues" };
    return { page: "lobby" };
  })();

  const state = {
    role: null, // 'player' | 'spectator' | null
    me: null,
    view: null,
    summary: null, // the table's entry in list_tables
    log: new Map(), // seq → line
    chat: new Map(), // seq → line
    names: new Map(), // player id → name
    lastError: null,
    entering: false,
    wanted: null, // 'watch' after the user chose to watch (re-watch on reconnect)
    password: null,
    fetchedTo: 0, // log rebuilt from 1 up to here
    notified: { turn: false, decision: false },
    calls: "", // the open calls the host has been alerted to (player:reason, …)
    arranged: [], // the host's seating order in the lobby (player ids)
    checks: [],
  };
  const seatKey = (table) => `gm.seat.${table}`;
  // A league membership ({member, name, token}) and an organiser secret, kept per league.
  const memberKey = (league) => `gm.league.${league}`;
  const organiserKey = (league) => `gm.organiser.${league}`;

  // ---------------------------------------------------------------- the page skeleton

  const app = document.getElementById("app");
  const statusEl = document.getElementById("connection");
  const offline = h("div", { class: "offline", testid: "offline", role: "status", hidden: true });
  document.body.prepend(offline);
  const soundButton = document.getElementById("sound");
  let muted = store.get("gm.muted") === true;
  function drawSound() {
    soundButton.textContent = muted ? "♪ Sound off" : "♪ Sound on";
    soundButton.setAttribute("aria-pressed", String(!muted));
  }
  soundButton.addEventListener("click", () => { muted = !muted; store.set("gm.muted", muted); drawSound(); });
  drawSound();

  function beep() {
    if (muted) return;
    try {
      const Ctx = window.AudioContext || window.webkitAudioContext;
      const ctx = beep.ctx || (beep.ctx = new Ctx());
      const t = ctx.currentTime;
      for (const [i, f] of [[0, 660], [1, 880]]) {
        const o = ctx.createOscillator();
        const g = ctx.createGain();
        o.frequency.value = f;
        g.gain.setValueAtTime(0.0001, t + i * 0.18);
        g.gain.exponentialRampToValueAtTime(0.25, t + i * 0.18 + 0.02);
        g.gain.exponentialRampToValueAtTime(0.0001, t + i * 0.18 + 0.16);
        o.connect(g).connect(ctx.destination);
        o.start(t + i * 0.18);
        o.stop(t + i * 0.18 + 0.17);
      }
    } catch (_) { /* no audio */ }
  }

  function drawStatus() {
    const up = link && link.up;
    // Before the first connection has had a chance, the page is connecting, not offline.
    const connecting = !up && (!link || !link.failures);
    statusEl.textContent = up ? "● online" : connecting ? "○ connecting" : "○ offline";
    statusEl.className = up ? "online" : "down";
    if (up || connecting) {
      offline.hidden = true;
    } else {
      offline.hidden = false;
      const secs = Math.max(0, Math.ceil(((link ? link.retryAt : 0) - Date.now()) / 1000));
      offline.textContent = secs > 0 ? `Offline — reconnecting in ${secs} s…` : "Offline — reconnecting…";
    }
  }
  setInterval(drawStatus, 500);

  const errorEl = h("p", { class: "error", testid: "error", role: "alert", "aria-live": "assertive", hidden: true });

  function showError(text) {
    state.lastError = text;
    errorEl.textContent = "⚠ " + text;
    errorEl.hidden = false;
    clearTimeout(showError.timer);
    showError.timer = setTimeout(() => { errorEl.hidden = true; }, 12000);
  }

  /** Sends a request; a refusal is shown in plain words. Resolves with the answer. */
  function send(message) {
    return link.request(message).then((answer) => {
      if (answer.type === "error") showError(refusal(answer));
      return answer;
    });
  }

  // ---------------------------------------------------------------- describing events

  function nameOf(id) {
    if (id === null || id === undefined) return "nobody";
    return printable(state.names.get(id) || `player ${id}`);
  }

  function learnNames(view) {
    if (view) for (const p of view.players) state.names.set(p.player, p.name);
    if (view) state.rules = view.settings.rules || "seed";
  }

  /** A turn's short name: "T2", or under CR 807 (turn markers, numbered from 1) "M3". */
  function tn(turn) {
    return state.rules === "cr807" ? `M${turn + 1}` : `T${turn}`;
  }

  /** A random string for `join`'s `entropy` (the players' share of the dice). */
  function entropy() {
    const bytes = new Uint8Array(16);
    try { crypto.getRandomValues(bytes); } catch (_) { return ""; }
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  const RESULTS = {
    critical_miss: "critical miss", miss: "miss", partial_hit: "partial hit", hit: "hit", critical_hit: "critical hit",
  };

  const CAUSES = { life: "life 0 or less", poison: "10 poison counters", conceded: "conceded", ruling: "ruled out by the host" };

  function describe(e) {
    switch (e.kind) {
      case "player_joined":
        state.names.set(e.player, e.name);
        return `${nameOf(e.player)} sat down` + (e.deck ? ` with ${printable(e.deck.deck)} (deck power ${e.deck.power})` : "");
      case "first_player_chosen": return `${nameOf(e.by)} chose ${nameOf(e.player)} to play first`;
      case "player_left": return `${nameOf(e.player)} left the table`;
      case "game_started":
        return `The game started${SEATINGS[e.seating_mode || "random"] || ""}: ${nameOf(e.first_player)} plays first` +
          (e.first_decided_by !== undefined && e.first_decided_by !== null ? ` (decided by ${nameOf(e.first_decided_by)}, furthest behind in deck power)`
            : e.first_player_chosen ? " (chosen by the host)" : "") +
          `; ${e.turn_holders.length} ${state.rules === "cr807" ? "turn marker" : "simultaneous turn"}${e.turn_holders.length === 1 ? "" : "s"}` +
          (e.bonuses || []).map((b) => `; ${nameOf(b.player)} is ${b.behind} behind: ${bonusWords(b)}`).join("");
      case "mulliganed": return `${nameOf(e.player)} mulliganed to ${e.hand_size}`;
      case "kept": return `${nameOf(e.player)} kept ${e.hand_size}` + (e.reason === "decided" ? "" : ` (${e.reason})`);
      case "turn_began": return `${nameOf(e.player)} began turn ${tn(e.turn)}`;
      case "phase_changed": return `${tn(e.turn)}: ${PHASE_NAMES[e.phase] || e.phase}`;
      case "attacked":
        return `${nameOf(e.attacker)} attacked ${nameOf(e.defender)}: ${e.damage} damage` + (e.poison ? `, ${e.poison} poison` : "");
      case "damage_dealt": return `${nameOf(e.source)} dealt ${e.amount} damage to ${nameOf(e.target)}`;
      case "life_changed": return `${nameOf(e.player)}'s life is now ${e.life}`;
      case "poison_changed": return `${nameOf(e.player)} has ${e.poison} poison`;
      case "eliminated": return `Out: ${e.players.map(nameOf).join(", ")} (${CAUSES[e.cause] || e.cause})`;
      case "turn_marked_for_removal":
        return state.rules === "cr807" ? `${tn(e.turn)} designated: it leaves the table when it ends` : `${tn(e.turn)} will be removed when it ends`;
      case "turn_removal_cancelled":
        return state.rules === "cr807" ? `${tn(e.turn)}: a designation passed on` : `${tn(e.turn)} will pass on after all`;
      case "turn_ended": return `${nameOf(e.player)} ended ${tn(e.turn)}` + (e.reason === "finished" ? "" : ` (${e.reason})`);
      case "turn_passed": return `${tn(e.turn)} passed to ${nameOf(e.to)}`;
      case "turn_removed": return `${tn(e.turn)} left the table (${e.reason})`;
      case "extra_turn_granted":
        return `${nameOf(e.player)} takes an extra turn ` + (e.before_next ? "just before his next turn" : "after this one");
      case "extra_turn_deferred":
        return `${nameOf(e.player)}'s extra turn comes just before his next turn (another turn is too close)`;
      case "turn_kept": return `${nameOf(e.player)} keeps ${tn(e.turn)} for another turn`;
      case "attack_rolled": {
        const sign = e.modifier >= 0 ? "+" : "−";
        const what = e.counter ? `struck back at ${nameOf(e.opponent)}` : `attacked ${nameOf(e.opponent)}`;
        const blocked = e.opposing.length ? ` (power ${e.power} against ${e.opposing.join(", ")})` : ` (power ${e.power}, unblocked)`;
        return `⚄ ${nameOf(e.roller)} ${what}${blocked}: rolled ${e.natural} ${sign} ${Math.abs(e.modifier)} = ${e.total}, ` +
          `${RESULTS[e.result] || e.result}, ${e.damage} damage` + (e.self_damage ? `, ${e.self_damage} to itself` : "");
      }
      case "dice_revealed": return `The dice secret was revealed: ${e.secret.slice(0, 12)}… (anyone can check every roll)`;
      case "positions_removed": return `Positions removed from the ring: ${e.players.map(nameOf).join(", ")}`;
      case "game_over": {
        const first = e.standings.filter((s) => s.place === 1).map((s) => nameOf(s.player));
        if (first.length > 1) return `Game over: ${first.join(", ")} share first place`;
        return `Game over: ${first.length ? first[0] + " wins" : "no winner"}`;
      }
      case "game_abandoned": return "Everyone still in the game has been away for the table's absence limit: the game ends as it stands";
      case "connection_changed": return `${nameOf(e.player)} ${e.connected ? "is back" : "lost the connection"}`;
      case "host_changed": return e.player === null ? "Nobody is host now" : `${nameOf(e.player)} is the host`;
      case "spectators_changed": return `${e.spectators} watching`;
      case "chat": return `${printable(e.name)}: ${printable(e.text)}`;
      case "table_paused": return e.paused ? "The host paused the table" : "The table resumed";
      case "table_adjourned": return e.adjourned
        ? "The host adjourned the game: everyone may leave and come back later; the clocks stand still"
        : "The game resumed where it stopped";
      case "resume_requested": return `${nameOf(e.player)} asks to resume the game`;
      case "player_absent": return `${nameOf(e.player)} has been away for a while`;
      case "player_kicked": return `The host removed ${nameOf(e.player)}` + (e.banned ? " and banned his address" : "");
      case "player_muted":
        return (e.player === null ? "Spectators" : nameOf(e.player)) + (e.muted ? " muted" : " unmuted");
      case "host_called": return `📣 ${nameOf(e.player)} calls the host: ${printable(e.reason)}`;
      case "host_answered":
        return e.player === null || e.player === undefined ? "The host answered every open call" : `The host answered ${nameOf(e.player)}'s call`;
      default: return `(${e.kind})`;
    }
  }

  /** A deck power bonus in words: "decides who plays first, +5 life, +1 card". */
  function bonusWords(b) {
    return [b.first_choice ? "decides who plays first" : null, b.life ? `+${b.life} life` : null,
      b.cards ? `+${b.cards} card${b.cards === 1 ? "" : "s"}` : null].filter(Boolean).join(", ");
  }

  function record(seq, e) {
    if (e.kind === "spectators_changed") return; // noise in a log people read
    if (e.kind === "attack_rolled" && (e.roller === state.me || e.opponent === state.me) && table.rollResult) {
      table.rollResult.textContent = describe(e);
    }
    if (e.kind === "chat") state.chat.set(seq, describe(e));
    else state.log.set(seq, describe(e));
  }

  // ---------------------------------------------------------------- messages from the server

  let link = null;

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
    link.request({ type: "snapshot" });
  }

  /** After the link is up: take the seat back, or watch again. */
  function onUp() {
    if (route.page === "lobby") { lobby.refresh(); return; }
    if (route.page === "replays") { replays.load(); return; }
    if (route.page === "replay") { replay.load(); return; }
    if (route.page === "leagues") { leagues.load(); return; }
    if (route.page === "league") { league.load(); return; }
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
        answer = await link.request({ type: "resume", table: route.table, token: seat.token });
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
      const answer = await link.request({ type: "get_events", table: route.table, from_seq: from, limit: 500 });
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

  // ---------------------------------------------------------------- the lobby page

  const lobby = {
    init() {
      document.title = `Tables — ${TITLE}`;
      const list = h("div", { class: "table-list", "aria-live": "polite" }, "Loading the tables…");
      this.list = list;
      const field = (label, name, attrs) => h("label", {}, h("span", {}, label),
        h("input", Object.assign({ name, testid: `create-${name.replace(/_/g, "-")}` }, attrs)));
      const form = h("form", { class: "create", onsubmit: (ev) => { ev.preventDefault(); this.create(form); } },
        h("h2", {}, "Create a table"),
        field("Table name", "name", { required: true, maxlength: 32, value: "Grand Melee", autocomplete: "off" }),
        field("Seats (2–40)", "seats", { type: "number", min: 2, max: 40, value: 28, required: true }),
        h("label", {}, h("span", {}, "Rules"),
          h("select", { name: "rules", testid: "create-rules" },
            h("option", { value: "seed" }, "Grand Melee: simultaneous turns, range 2"),
            h("option", { value: "cr807" }, "Comprehensive Rules 807: turn markers, range 1, attack left"))),
        field("Spell range (1–4; empty: the rules' own)", "spell_range", { type: "number", min: 1, max: 4, placeholder: "2, or 1 under CR 807" }),
        h("label", { class: "inline" }, h("input", { type: "checkbox", name: "combat_dice", testid: "create-combat-dice" }),
          " Combat with Dice (attacks rolled on a d20 by the server)"),
        h("label", {}, h("span", {}, "Mulligans"),
          h("select", { name: "mulligan", testid: "create-mulligan" },
            h("option", { value: "paris" }, "one player at a time (Paris)"),
            h("option", { value: "simultaneous" }, "everyone at once"))),
        h("label", {}, h("span", {}, "Turn reduction"),
          h("select", { name: "reduction", testid: "create-reduction" },
            h("option", { value: "eager" }, "eager: as soon as fewer turns fit"),
            h("option", { value: "forced" }, "forced: only when turns no longer fit"))),
        field("Starting life (1–1000)", "starting_life", { type: "number", min: 1, max: 1000, value: 20 }),
        field("Password (optional)", "password", { type: "password", maxlength: 64, autocomplete: "new-password" }),
        h("details", {}, h("summary", {}, "More settings"),
          field("Turn clock, seconds (0: none)", "turn_clock_secs", { type: "number", min: 0, value: 0 }),
          field("Absence limit, seconds", "absence_limit_secs", { type: "number", min: 0, value: 600 }),
          field("Mulligan clock, seconds (0: none)", "mulligan_clock_secs", { type: "number", min: 0, value: 60 }),
          field("Most spectators (0–1000)", "max_spectators", { type: "number", min: 0, max: 1000, value: 100 })),
        h("button", { type: "submit", testid: "create-submit", class: "primary" }, "Create the table"));
      put(app, 
        h("section", { class: "lobby" },
          h("div", { class: "lobby-head" }, h("h2", {}, "Tables"), h("a", { href: "/leagues", testid: "leagues-link" }, "Leagues ▸"),
            h("a", { href: "/replays" }, "Finished games ▸")),
          list),
        h("section", { class: "panel" }, form, errorEl));
      setInterval(() => { if (link.up) this.refresh(); }, 3000);
    },

    async refresh() {
      const tables = [];
      let from = 0;
      for (let pages = 0; pages < 20; pages++) {
        const answer = await link.request({ type: "list_tables", from, limit: 500 });
        if (answer.type !== "tables") return;
        tables.push(...answer.tables);
        if (answer.next === null || answer.next === undefined) break;
        from = answer.next;
      }
      clear(this.list);
      if (!tables.length) {
        this.list.append(h("p", { class: "empty" }, "No tables yet: create one."));
        return;
      }
      this.list.append(h("ul", {}, tables.map((t) => h("li", { testid: "table-row", "data-table": t.table },
        h("a", { href: `/t/${t.table}`, class: "table-name" }, printable(t.name)),
        h("span", { class: "meta" },
          `${STAGES[t.stage] || t.stage} · ${t.seated}/${t.seats} seated · ${t.spectators} watching · ${rulesWords(t)}` +
          (t.adjourned ? " · adjourned" : "") + (t.password ? " · password" : "") + (t.league ? " · league game" : ""))))));
    },

    async create(form) {
      const v = (name) => form.elements[name].value.trim();
      const n = (name) => Number(v(name));
      const message = {
        type: "create_table", name: v("name"), seats: n("seats"),
        spell_range: v("spell_range") === "" ? 0 : n("spell_range"), rules: v("rules"),
        combat_dice: form.elements.combat_dice.checked, mulligan: v("mulligan"),
        reduction: v("reduction"), starting_life: n("starting_life"),
        password: v("password") || null,
        turn_clock_secs: n("turn_clock_secs"), absence_limit_secs: n("absence_limit_secs"),
        mulligan_clock_secs: n("mulligan_clock_secs"), max_spectators: n("max_spectators"),
      };
      if (!message.name) { showError("Give the table a name."); return; }
      for (const k of ["seats", "spell_range", "starting_life", "turn_clock_secs", "absence_limit_secs", "mulligan_clock_secs", "max_spectators"]) {
        if (!Number.isInteger(message[k]) || message[k] < 0) { showError(`${k.replace(/_/g, " ")}: a whole number, please.`); return; }
      }
      const answer = await send(message);
      if (answer.type === "table_created") {
        if (message.password) sessionStorage.setItem(`gm.password.${answer.table}`, message.password);
        location.assign(`/t/${answer.table}`);
      }
    },
  };
  const STAGES = { lobby: "waiting for players", mulligan: "mulligans", playing: "in play", finished: "finished" };

  /** A table's rules in a few words: "CR 807 · range 1 · combat dice · mulligans at once". */
  function rulesWords(settings) {
    return [settings.rules === "cr807" ? "CR 807" : null, `range ${settings.spell_range}`,
      settings.combat_dice ? "combat dice" : null, settings.mulligan === "simultaneous" ? "mulligans at once" : null]
      .filter(Boolean).join(" · ");
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

  function fillSelect(sel, options) {
    const before = sel.value;
    const same = sel.options.length === options.length && options.every(([v, t], i) => sel.options[i].value === v && sel.options[i].textContent === t);
    if (same) return;
    put(sel, ...options.map(([v, t]) => h("option", { value: v }, t)));
    if (options.some(([v]) => v === before)) sel.value = before;
  }

  async function findTable(id) {
    let from = 0;
    for (let pages = 0; pages < 20; pages++) {
      const answer = await link.request({ type: "list_tables", from, limit: 500 });
      if (answer.type !== "tables") return null;
      const found = answer.tables.find((t) => t.table === id);
      if (found) return found;
      if (answer.next === null || answer.next === undefined) return null;
      from = answer.next;
    }
    return null;
  }

  // ---------------------------------------------------------------- replays

  const replays = {
    init() {
      document.title = `Finished games — ${TITLE}`;
      this.list = h("div", { class: "table-list" }, "Loading…");
      put(app, h("section", { class: "lobby" },
        h("div", { class: "lobby-head" }, h("h2", {}, "Finished games"), h("a", { href: "/" }, "◂ Tables")), this.list, errorEl));
    },
    async load() {
      const all = [];
      let from = 0;
      for (let pages = 0; pages < 20; pages++) {
        const answer = await send({ type: "list_replays", from, limit: 500 });
        if (answer.type !== "replays") return;
        all.push(...answer.replays);
        if (answer.next === null || answer.next === undefined) break;
        from = answer.next;
      }
      clear(this.list);
      if (!all.length) { this.list.append(h("p", { class: "empty" }, "No finished games yet.")); return; }
      this.list.append(h("ul", {}, all.map((r) => h("li", { testid: "replay-row", "data-table": r.table },
        h("a", { href: `/replays/${r.table}`, class: "table-name" }, printable(r.name)),
        h("span", { class: "meta" }, `${new Date(r.finished_at_ms).toLocaleString()} · ${r.events} events` + (r.password ? " · password" : "")),
        r.league ? h("a", { href: `/leagues/${r.league}`, class: "meta" }, " · league game") : null))));
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
        const answer = await link.request({ type: "get_replay", table: route.table, from_seq: from,
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

  // ---------------------------------------------------------------- leagues

  const ALLIANCES = [
    ["white_blue", "White-Blue"], ["blue_black", "Blue-Black"], ["black_red", "Black-Red"],
    ["red_green", "Red-Green"], ["green_white", "Green-White"], ["white_blue_black", "White-Blue-Black"],
    ["blue_black_red", "Blue-Black-Red"], ["black_red_green", "Black-Red-Green"],
    ["red_green_white", "Red-Green-White"], ["green_white_blue", "Green-White-Blue"],
  ];
  const allianceName = (a) => (ALLIANCES.find(([k]) => k === a) || [a, a || "–"])[1];
  // The seed's basic sets, offered as suggestions (any set name is taken).
  const BASIC_SETS = ["7th Edition", "Ice Age", "Mirage", "Tempest", "Urza's Saga", "Mercadian Masques", "Invasion", "Odyssey"];

  function average(places, games) {
    return games ? (places / games).toFixed(1) : "–";
  }

  /** A ledger line in words. */
  function ledgerWords(entry) {
    switch (entry.kind) {
      case "registered":
        return `Registered ${printable(entry.deck.name)} (${allianceName(entry.deck.alliance)}, ${printable(entry.deck.basic_set)} / ${printable(entry.deck.expansion_set)})`;
      case "credited":
        return `+${entry.mana_points} mana points: place ${entry.place} of ${entry.players} at ${printable(entry.table_name)}`;
      case "bought": {
        const p = entry.purchase;
        const what = {
          cards: () => `${p.count} ${p.rarity}${p.gold ? " gold" : ""}${p.legend ? " Summon Legend" : ""}${p.card ? ` “${printable(p.card)}”` : ""}${p.set ? ` from ${printable(p.set)}` : ""}`,
          basic_lands: () => `${p.count} basic lands`,
          expansion_set: () => `expansion set ${printable(p.name)} (+5 commons)`,
          duplicates: () => "one more copy of a card allowed",
          sideboard: () => "five sideboard cards",
        }[p.option];
        return `Bought ${what ? what() : p.option} for ${entry.cost}` + (entry.removed ? `, ${entry.removed} cards taken out` : "");
      }
      case "remedy_taken":
        return entry.remedy.remedy === "new_deck"
          ? `Losing-streak remedy: a new deck with no rares, ${printable(entry.remedy.deck.name)}`
          : "Losing-streak remedy: five cards swapped for commons";
      default:
        return entry.kind;
    }
  }

  const leagues = {
    init() {
      document.title = `Leagues — ${TITLE}`;
      this.list = h("div", { class: "table-list", "aria-live": "polite" }, "Loading the leagues…");
      const name = h("input", { name: "name", testid: "league-name", required: true, maxlength: 32, autocomplete: "off" });
      const password = h("input", { name: "password", type: "password", testid: "league-password", maxlength: 64, autocomplete: "new-password" });
      const form = h("form", { class: "create", onsubmit: async (ev) => {
        ev.preventDefault();
        if (!name.value.trim()) { showError("Give the league a name."); return; }
        const answer = await send({ type: "create_league", name: name.value.trim(), password: password.value || null });
        if (answer.type !== "league_created") return;
        store.set(organiserKey(answer.league), answer.organiser);
        location.assign(`/leagues/${answer.league}`);
      } },
        h("h2", {}, "Start a league"),
        h("p", { class: "meta" }, "An Ascension league: every deck earns mana points game after game, buys improvements, and weaker decks get a bonus. This browser keeps the organiser's secret, which creates the league's tables."),
        h("label", {}, h("span", {}, "League name"), name),
        h("label", {}, h("span", {}, "Password for members (optional)"), password),
        h("button", { type: "submit", class: "primary", testid: "league-create" }, "Create the league"));
      put(app, 
        h("section", { class: "lobby" },
          h("div", { class: "lobby-head" }, h("h2", {}, "Leagues"), h("a", { href: "/" }, "◂ Tables")), this.list),
        h("section", { class: "panel" }, form, errorEl));
    },
    async load() {
      const all = [];
      let from = 0;
      for (let pages = 0; pages < 20; pages++) {
        const answer = await send({ type: "list_leagues", from, limit: 500 });
        if (answer.type !== "leagues") return;
        all.push(...answer.leagues);
        if (answer.next === null || answer.next === undefined) break;
        from = answer.next;
      }
      clear(this.list);
      if (!all.length) { this.list.append(h("p", { class: "empty" }, "No leagues yet: start one.")); return; }
      this.list.append(h("ul", {}, all.map((l) => h("li", { testid: "league-row", "data-league": l.league },
        h("a", { href: `/leagues/${l.league}`, class: "table-name" }, printable(l.name)),
        h("span", { class: "meta" }, `${l.members} member${l.members === 1 ? "" : "s"} · ${l.games} game${l.games === 1 ? "" : "s"}` +
          (l.password ? " · password" : "") + (store.get(memberKey(l.league)) ? " · you are a member" : ""))))));
    },
  };

  const league = {
    init() {
      document.title = `League — ${TITLE}`;
      this.head = h("div", { class: "lobby-head" }, h("h2", {}, "League"), h("a", { href: "/leagues" }, "◂ Leagues"));
      this.standings = h("div", { class: "league-standings" }, "Loading the league…");
      this.games = h("div", { class: "league-games" });
      this.ledger = h("div", { class: "ledger", testid: "ledger", "aria-live": "polite" });
      this.mine = h("div", { class: "league-mine" });
      this.notice = h("p", { class: "notice", testid: "buy-result", role: "status", "aria-live": "polite" });
      put(app, h("section", { class: "lobby" }, this.head, this.standings, this.ledger, this.games),
        h("section", { class: "panel" }, errorEl, this.notice, this.mine));
    },

    member() {
      return store.get(memberKey(route.league));
    },

    async load() {
      // Every page of the standings and games: a big league takes several.
      let view = null;
      let from = 0;
      for (;;) {
        const answer = await send({ type: "get_league", league: route.league, from, limit: 500 });
        if (answer.type !== "league") return;
        if (!view) view = answer.league;
        else {
          view.standings.push(...answer.league.standings);
          view.games.push(...answer.league.games);
        }
        if (answer.next === null || answer.next === undefined) break;
        if (!(answer.next > from)) { showError("The server sent a page of the league that does not move on; showing what came."); break; }
        from = answer.next;
      }
      this.view = view;
      document.title = `${printable(view.name)} — ${TITLE}`;
      put(this.head, h("h2", { testid: "league-title" }, printable(view.name)),
        h("span", { class: "meta" }, `${view.standings.length} members · ${view.games.length} games` + (view.password ? " · password" : "")),
        h("a", { href: "/leagues" }, "◂ Leagues"));
      const me = this.member();
      put(this.standings, h("table", { class: "standings", testid: "league-standings" },
        h("caption", {}, "Standings (deck power: every mana point earned)"),
        h("thead", {}, h("tr", {}, ...["#", "Member", "Deck", "Colours", "Power", "Unspent", "Games", "Wins", "Avg place"].map((t) => h("th", {}, t)))),
        h("tbody", {}, view.standings.map((m, i) => h("tr", { testid: "league-row", "data-member": m.member, class: me && me.member === m.member ? "you" : "" },
          h("td", {}, String(i + 1)),
          h("td", {}, h("button", { type: "button", class: "link", testid: `ledger-${m.member}`, onclick: () => this.showDeck(m.member) }, printable(m.name))),
          h("td", {}, m.deck ? printable(m.deck) : "(no deck yet)"), h("td", {}, m.alliance ? allianceName(m.alliance) : "–"),
          h("td", { testid: "power" }, String(m.power)), h("td", { testid: "balance" }, String(m.balance)),
          h("td", {}, String(m.games)), h("td", {}, String(m.wins)), h("td", {}, average(m.places, m.games)))))));
      put(this.games, h("h3", {}, "Games"), view.games.length
        ? h("ul", {}, view.games.map((g) => h("li", { testid: "league-game" },
          h("a", { href: g.finished_at_ms ? `/replays/${g.table}` : `/t/${g.table}`, class: "table-name" }, printable(g.name)),
          h("span", { class: "meta" }, g.finished_at_ms ? ` finished ${new Date(g.finished_at_ms).toLocaleString()} · replay` : " being played"))))
        : h("p", { class: "empty" }, "No games yet."));
      await this.drawMine();
    },

    async showDeck(member) {
      const answer = await send({ type: "get_deck", league: route.league, member });
      if (answer.type !== "deck") return;
      this.drawDeck(answer);
    },

    drawDeck(answer) {
      const d = answer.deck;
      const spec = d.spec;
      put(this.ledger, h("h3", {}, `${printable(answer.name)}'s deck`),
        spec ? h("p", { testid: "deck-summary" },
          `${printable(spec.name)} · ${allianceName(spec.alliance)} · ${printable(spec.basic_set)} · sets: ${d.expansion_sets.map(printable).join(", ")} · ` +
          `power ${d.power} · spent ${d.spent} · unspent ${d.power - d.spent} · ${d.cards} cards · up to ${d.duplicates} copies · sideboard ${d.sideboard}` +
          (d.no_rares ? " · no rares" : "")) : h("p", {}, "No deck registered yet."),
        h("ol", { class: "ledger-lines", testid: "ledger-lines" }, answer.ledger.map((l) => h("li", { testid: "ledger-line" },
          h("span", { class: "meta" }, new Date(l.at_ms).toLocaleDateString() + " "), ledgerWords(l.entry)))));
    },

    async drawMine() {
      const me = this.member();
      clear(this.mine);
      const organiser = store.get(organiserKey(route.league));
      if (!me) {
        const name = h("input", { testid: "member-name", maxlength: 32, required: true, value: store.get("gm.name") || "" });
        const password = h("input", { type: "password", testid: "member-password", maxlength: 64 });
        this.mine.append(h("form", { class: "create", onsubmit: async (ev) => {
          ev.preventDefault();
          const answer = await send({ type: "join_league", league: route.league, name: name.value.trim(), password: password.value || null });
          if (answer.type !== "league_joined") return;
          store.set(memberKey(route.league), { member: answer.member, name: name.value.trim(), token: answer.token });
          this.load();
        } }, h("h2", {}, "Join this league"),
          h("label", {}, h("span", {}, "Your name in the league"), name),
          this.view && this.view.password ? h("label", {}, h("span", {}, "League password"), password) : null,
          h("button", { type: "submit", class: "primary", testid: "member-join" }, "Join")));
      } else {
        const answer = await send({ type: "get_deck", league: route.league, member: me.member });
        if (answer.type === "deck") {
          this.mine.append(h("p", { testid: "member-me" }, `You are ${printable(me.name)}, member ${me.member}.`));
          if (!answer.deck.spec) this.mine.append(this.registerForm());
          else this.mine.append(this.buyForm(answer.deck), this.remedyForm(answer.deck));
          if (!this.ledger.firstChild) this.drawDeck(answer);
        }
      }
      if (organiser) this.mine.append(this.tableForm(organiser));
    },

    deckFields(prefix) {
      const list = h("datalist", { id: `${prefix}-sets` }, BASIC_SETS.map((b) => h("option", { value: b })));
      const f = {
        name: h("input", { testid: `${prefix}-deck-name`, maxlength: 32, required: true }),
        alliance: h("select", { testid: `${prefix}-alliance` }, ALLIANCES.map(([v, t]) => h("option", { value: v }, t))),
        basic: h("input", { testid: `${prefix}-basic-set`, maxlength: 32, required: true, list: `${prefix}-sets` }),
        expansion: h("input", { testid: `${prefix}-expansion-set`, maxlength: 32, required: true }),
      };
      f.nodes = [list, h("label", {}, h("span", {}, "Deck name"), f.name), h("label", {}, h("span", {}, "Colours (the seed's alliances)"), f.alliance),
        h("label", {}, h("span", {}, "Basic set"), f.basic), h("label", {}, h("span", {}, "Expansion set"), f.expansion)];
      f.spec = () => ({ name: f.name.value.trim(), alliance: f.alliance.value, basic_set: f.basic.value.trim(), expansion_set: f.expansion.value.trim() });
      return f;
    },

    registerForm() {
      const f = this.deckFields("register");
      return h("form", { class: "create", onsubmit: async (ev) => {
        ev.preventDefault();
        const answer = await send({ type: "register_deck", league: route.league, token: this.member().token, deck: f.spec() });
        if (answer.type === "deck") { this.drawDeck(answer); this.load(); }
      } }, h("h2", {}, "Register your deck"), h("p", { class: "meta" }, "A starter deck of 45 cards: one basic set and one expansion set."),
        ...f.nodes, h("button", { type: "submit", class: "primary", testid: "register-submit" }, "Register"));
    },

    buyForm(deck) {
      const option = h("select", { testid: "buy-option" },
        [["common", "Common card (1 each)"], ["uncommon", "Uncommon card (2 each)"], ["rare", "Rare card (4 each)"],
          ["basic_lands", "Basic lands (two for 1)"], ["expansion_set", "Expansion set (10, 12, 15)"],
          ["duplicates", "One more copy of a card allowed (8, then 10)"], ["sideboard", "Five sideboard cards (10, 12, 14)"]]
          .map(([v, t]) => h("option", { value: v }, t)));
      const count = h("input", { type: "number", testid: "buy-count", min: 1, max: 25, value: 1, "aria-label": "How many" });
      const gold = h("input", { type: "checkbox", testid: "buy-gold" });
      const legend = h("input", { type: "checkbox", testid: "buy-legend" });
      const card = h("input", { testid: "buy-card", maxlength: 32, placeholder: "card name (its copies are counted)" });
      // A card comes from the deck's basic set or one of its expansion sets (the seed's rule).
      const cardSets = [];
      for (const name of [deck.spec && deck.spec.basic_set, deck.spec && deck.spec.expansion_set, ...(deck.expansion_sets || [])]) {
        if (name && !cardSets.some((n) => n.toLowerCase() === name.toLowerCase())) cardSets.push(name);
      }
      const cardSet = h("select", { testid: "buy-card-set", "aria-label": "The card's set" },
        cardSets.map((name) => h("option", { value: name }, printable(name))));
      const set = h("input", { testid: "buy-set", maxlength: 32, placeholder: "the set's name" });
      const remove = h("input", { type: "number", testid: "buy-remove", min: 0, max: 25, value: 0, "aria-label": "Cards taken out" });
      const purchase = () => {
        const o = option.value;
        if (["common", "uncommon", "rare"].includes(o)) {
          return { option: "cards", rarity: o, count: Number(count.value), gold: gold.checked, legend: legend.checked, card: card.value.trim() || null, set: cardSet.value || null };
        }
        if (o === "basic_lands") return { option: "basic_lands", count: Number(count.value) };
        if (o === "expansion_set") return { option: "expansion_set", name: set.value.trim() };
        return { option: o };
      };
      return h("form", { class: "create", onsubmit: async (ev) => {
        ev.preventDefault();
        this.notice.textContent = "";
        const answer = await send({ type: "buy", league: route.league, token: this.member().token, purchase: purchase(), remove: Number(remove.value) || 0 });
        if (answer.type === "deck") {
          const last = answer.ledger[answer.ledger.length - 1];
          this.notice.textContent = `Done: ${ledgerWords(last.entry)}.`;
          this.drawDeck(answer);
          this.load();
        }
      } }, h("h2", {}, "Improve your deck"),
        h("p", { class: "meta", testid: "buy-balance" }, `${deck.power - deck.spent} unspent mana points · ${deck.cards} of 70 cards`),
        h("label", {}, h("span", {}, "Option"), option), h("label", {}, h("span", {}, "How many (cards or lands)"), count),
        h("label", { class: "inline" }, gold, " gold card (+1 each)"), h("label", { class: "inline" }, legend, " Summon Legend (+2 each)"),
        h("label", {}, h("span", {}, "Card"), card), h("label", {}, h("span", {}, "The card's set"), cardSet),
        h("label", {}, h("span", {}, "Expansion set to buy"), set),
        h("label", {}, h("span", {}, "Cards taken out to stay within 70"), remove),
        h("button", { type: "submit", class: "primary", testid: "buy-submit" }, "Buy"));
    },

    remedyForm(deck) {
      const open = deck.streak_earned && !deck.remedy_used && deck.games <= 10;
      if (!open) return null;
      const f = this.deckFields("remedy");
      return h("details", { class: "group", testid: "remedy" }, h("summary", {}, "Losing streak: take a remedy (once)"),
        h("button", { type: "button", testid: "remedy-swap", onclick: async () => {
          const answer = await send({ type: "take_remedy", league: route.league, token: this.member().token, remedy: { remedy: "swap_five" } });
          if (answer.type === "deck") this.load();
        } }, "Swap five cards (two commons) for five commons"),
        h("form", { onsubmit: async (ev) => {
          ev.preventDefault();
          const answer = await send({ type: "take_remedy", league: route.league, token: this.member().token, remedy: { remedy: "new_deck", deck: f.spec() } });
          if (answer.type === "deck") this.load();
        } }, h("p", {}, "Or build a new deck with no rare cards:"), ...f.nodes,
          h("button", { type: "submit", testid: "remedy-new-deck" }, "Take the new deck")));
    },

    tableForm(organiser) {
      const name = h("input", { testid: "league-table-name", maxlength: 32, required: true, value: `Week ${((this.view && this.view.games.length) || 0) + 1}` });
      const seats = h("input", { type: "number", testid: "league-table-seats", min: 2, max: 40, value: Math.max(2, (this.view && this.view.standings.length) || 2) });
      const rules = h("select", { testid: "league-table-rules" }, h("option", { value: "seed" }, "Grand Melee (the seed's)"), h("option", { value: "cr807" }, "Comprehensive Rules 807"));
      return h("form", { class: "create", onsubmit: async (ev) => {
        ev.preventDefault();
        const answer = await send({ type: "create_table", name: name.value.trim(), seats: Number(seats.value), rules: rules.value,
          league: route.league, organiser });
        if (answer.type === "table_created") location.assign(`/t/${answer.table}`);
      } }, h("h2", {}, "Organiser: a league game"), h("p", { class: "meta" }, "Only the league's members sit at it; their decks are credited at the end."),
        h("label", {}, h("span", {}, "Table name"), name), h("label", {}, h("span", {}, "Seats"), seats), h("label", {}, h("span", {}, "Rules"), rules),
        h("button", { type: "submit", class: "primary", testid: "league-table-create" }, "Create the league table"));
    },
  };

  // ---------------------------------------------------------------- start

  function render() {
    if (route.page === "table" || route.page === "display") table.render();
  }

  if (route.page === "lobby") lobby.init();
  else if (route.page === "replays") replays.init();
  else if (route.page === "replay") replay.init();
  else if (route.page === "leagues") leagues.init();
  else if (route.page === "league") league.init();
  else table.init(route.page === "display");

  link = new Link(onMessage, onUp, drawStatus);

  // The hooks the browser tests use (and a curious organiser may, from the console).
  window.gm = {
    view: () => state.view,
    me: () => state.me,
    role: () => state.role,
    connected: () => !!(link && link.up && state.role !== null),
    send: (message) => send(message),
    log: () => Array.from(state.log.entries()).sort((a, b) => a[0] - b[0]).map(([, t]) => t),
    chat: () => Array.from(state.chat.entries()).sort((a, b) => a[0] - b[0]).map(([, t]) => t),
    lastError: () => state.lastError,
    checkMirror: async () => {
      const id = link.nextId++;
      const check = { id, result: null };
      state.checks.push(check);
      const answer = await link.request({ type: "snapshot", id });
      state.checks = state.checks.filter((c) => c !== check);
      if (answer.type !== "snapshot") return { ok: false, seq: 0, diff: `no snapshot: ${answer.code}` };
      return check.result || { ok: false, seq: answer.view.seq, diff: "no mirror to compare" };
    },
  };
})();

// What every page shares: DOM helpers, plain words, the connection, the state, describing events.
//
// Loaded first; the pages (lobby.js, leagues.js, table.js) take what they need from `window.GM`,
// and app.js starts the page the address names.
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
    league_full: "This league has as many members as a league takes (1,000): ask the organiser to start another.",
    not_organiser: "Only the league's organiser (the browser that created it) may create its tables.",
    league_seat: "This is a league game: join the league first, then sit down as its member.",
    already_seated: "You already sit at this table.",
    same_opponent: "League rule: you may not play the same opponent twice in a row in a two-player game.",
    not_decider: "Only the player whose deck is furthest behind decides who plays first.",
    no_deck: "Register your deck in the league first.",
    deck_registered: "You already have a deck in this league.",
    bad_seating: "An arranged seating must list every seated player exactly once.",
    no_open_call: "There is no open call to answer.",
    bad_day: "That is not a day: pick a date (UTC), or today.",
    day_not_over: "A climb of today's mountain can be watched and replayed once its day is over (00:00 UTC).",
    day_over: "This climb's day is over: it can no longer be played.",
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
      this.attach(ws);
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
    }

    /** The link's handlers on `ws`: answers to their requests, the rest to the page, and a
     * reconnection when it closes (unless the link has moved on to another socket). */
    attach(ws) {
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

    /**
     * Cluster mode (`served_at`): the table's own server node is at `url`. Opens a connection
     * there; once it answers `hello`, it becomes the link's and the page enters the table again
     * on it (the seat is resumed there, which takes it over from this connection), and only then
     * is this connection closed. If the new one cannot be opened or does not answer within five
     * seconds, this one simply stays: every request works through it. A reconnection later
     * starts again at the page's own address.
     */
    moveTo(url) {
      if (this.moveSoon) { clearTimeout(this.moveSoon); this.moveSoon = null; }
      if (this.moving || !this.up || !this.ws || url === this.at) return;
      if (this.pending.size > 0) {
        // Answers are owed on this connection: move once they are in.
        this.moveSoon = setTimeout(() => { this.moveSoon = null; this.moveTo(url); }, 100);
        return;
      }
      let ws;
      try {
        ws = new WebSocket(url);
      } catch (_) {
        return; // an address this page may not open (https page, ws:// address): stay
      }
      ws.binaryType = "arraybuffer";
      this.moving = ws;
      const id = this.nextId++;
      const abandon = () => {
        if (this.moving !== ws) return;
        this.moving = null;
        this.at = url; // not tried again from this page until the next connection
        try { ws.close(); } catch (_) { /* closing anyway */ }
      };
      const patience = setTimeout(abandon, 5000);
      ws.onerror = () => { /* onclose follows */ };
      ws.onclose = () => { clearTimeout(patience); abandon(); };
      ws.onmessage = (ev) => {
        let m = null;
        try { m = MP.decode(new Uint8Array(ev.data)); } catch (_) { /* not an answer */ }
        clearTimeout(patience);
        if (!m || m.type !== "welcome" || m.reply_to !== id || this.moving !== ws || !this.up) {
          abandon();
          return;
        }
        this.moving = null;
        const old = this.ws;
        old.onmessage = null;
        old.onclose = null;
        this.ws = ws;
        this.at = url;
        this.attach(ws);
        Promise.resolve(this.onUp()).finally(() => {
          try { old.close(1000); } catch (_) { /* already closed */ }
        });
      };
      ws.onopen = () => {
        ws.send(MP.encode({ type: "hello", id, protocol: PROTOCOL, client: "grand-melee-web/1" }));
      };
    }

    retry() {
      this.ws = null;
      this.at = null;
      if (this.moving) {
        const moving = this.moving;
        this.moving = null;
        try { moving.close(); } catch (_) { /* closing anyway */ }
      }
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
    // A day's mountain: its standings (Mountain Magic), `/?mountain=today|YYYY-MM-DD[&league=…]`.
    if (path === "/" && params.has("mountain")) return { page: "mountain", day: params.get("mountain") || "today", league: params.get("league") || null };
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

  // Magic Tech's words for its numbers (games/magic_tech.js draws with them too).
  const MT_PHASES = { untap: "untap", draw: "draw", upkeep: "upkeep", deploy: "deploy", missions: "missions", end: "end" };
  const mtCardName = (id) => `#${id}`;
  const mtTarget = (t) => (t.kind === "card" ? `card ${mtCardName(t.card)}` : `${nameOf(t.player)}'s stockpile`);
  const mtArea = (a) => (a.kind === "patrol" ? "patrol" : a.kind === "deploy" ? "the deploy area"
    : `guarding ${a.card === null || a.card === undefined ? "the stockpile" : mtCardName(a.card)}`);
  function mtCorrection(c) {
    switch (c.kind) {
      case "counters": return `${mtCardName(c.card)} to ${c.counters} mana counters`;
      case "damage": return `${mtCardName(c.card)} to ${c.damage} damage`;
      case "tapped": return `${mtCardName(c.card)} ${c.tapped ? "tapped" : "untapped"}`;
      case "mana": return `${nameOf(c.player)}'s unspent mana to ${c.mana}`;
      case "move": return `${c.count} of ${nameOf(c.player)}'s cards from ${c.from} to ${c.to}`;
      default: return c.kind;
    }
  }

  /** Mountain Magic's sides and battle cards, in the log's words. */
  const mmSide = (side) => (side === "player" ? "The climber" : "The occupying forces");
  /** A card in the battle (`{side, force}`): by its name (from the view's forces, once
   * games/mountain_magic.js has the pool), else by its place. */
  const mmCard = (c, view) => {
    const battle = view && view.mountain_magic && view.mountain_magic.battle;
    const force = battle && (c.side === "player" ? battle.player : battle.opponent)[c.force];
    const whose = c.side === "player" ? "the climber's" : "the occupying forces'";
    return force && GM.cardName ? `${mmName(force.card)} (${whose})` : `${whose} card ${c.force}`;
  };
  const mmOf = (side) => (side === "player" ? "The climber's" : "The occupying forces'");
  const mmCap = (s) => s.charAt(0).toUpperCase() + s.slice(1);
  const mmName = (no) => (GM.cardName ? GM.cardName(no) : `card ${no}`);

  /** An event in words. `view`: the table it happened at (the page's own by default; a replay
   * passes the view it is folding). */
  function describe(e, view = state.view) {
    // A climb is alone: no one plays first, no turns run at once, the "deck" is a member's.
    const climb = !!view && view.settings && view.settings.game === "mountain_magic";
    // Magic Tech: two players, one turn at a time, numbered from 1 as its board counts them
    // (0: a journal written before its events carried the number).
    const mt = !!view && view.settings && view.settings.game === "magic_tech";
    const mtTurn = (n) => (n ? `turn ${n}` : "a turn");
    switch (e.kind) {
      case "player_joined":
        state.names.set(e.player, e.name);
        return `${nameOf(e.player)} sat down` + (e.deck && !climb ? ` with ${printable(e.deck.deck)} (deck power ${e.deck.power})` : e.deck ? " as a league member" : "");
      case "first_player_chosen": return `${nameOf(e.by)} chose ${nameOf(e.player)} to play first`;
      case "player_left": return `${nameOf(e.player)} left the table`;
      case "game_started":
        if (climb) return `${nameOf(e.first_player)} began the climb`;
        return `The game started${SEATINGS[e.seating_mode || "random"] || ""}: ${nameOf(e.first_player)} plays first` +
          (e.first_decided_by !== undefined && e.first_decided_by !== null ? ` (decided by ${nameOf(e.first_decided_by)}, furthest behind in deck power)`
            : e.first_player_chosen ? " (chosen by the host)" : "") +
          (mt ? "" : `; ${e.turn_holders.length} ${state.rules === "cr807" ? "turn marker" : "simultaneous turn"}${e.turn_holders.length === 1 ? "" : "s"}`) +
          (e.bonuses || []).map((b) => `; ${nameOf(b.player)} is ${b.behind} behind: ${bonusWords(b)}`).join("");
      case "mulliganed": return `${nameOf(e.player)} mulliganed to ${e.hand_size}`;
      case "kept": return `${nameOf(e.player)} kept ${e.hand_size}` + (e.reason === "decided" ? "" : ` (${e.reason})`);
      case "turn_began": return `${nameOf(e.player)} began ${mt ? mtTurn(e.turn) : `turn ${tn(e.turn)}`}`;
      case "phase_changed": return `${tn(e.turn)}: ${PHASE_NAMES[e.phase] || e.phase}`;
      case "attacked":
        return `${nameOf(e.attacker)} attacked ${nameOf(e.defender)}: ${e.damage} damage` + (e.poison ? `, ${e.poison} poison` : "");
      case "damage_dealt": return `${nameOf(e.source)} dealt ${e.amount} damage to ${nameOf(e.target)}`;
      case "life_changed": return `${nameOf(e.player)}'s life is now ${e.life}`;
      case "poison_changed": return `${nameOf(e.player)} has ${e.poison} poison`;
      case "eliminated":
        if (climb) return `${e.players.map(nameOf).join(", ")} ${e.cause === "conceded" ? "gave up the climb" : `left the climb (${CAUSES[e.cause] || e.cause})`}`;
        return `Out: ${e.players.map(nameOf).join(", ")} (${CAUSES[e.cause] || e.cause})`;
      case "turn_marked_for_removal":
        return state.rules === "cr807" ? `${tn(e.turn)} designated: it leaves the table when it ends` : `${tn(e.turn)} will be removed when it ends`;
      case "turn_removal_cancelled":
        return state.rules === "cr807" ? `${tn(e.turn)}: a designation passed on` : `${tn(e.turn)} will pass on after all`;
      case "turn_ended": return `${nameOf(e.player)} ended ${mt ? mtTurn(e.turn) : tn(e.turn)}` + (e.reason === "finished" ? "" : ` (${e.reason})`);
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
        // A climb is alone: its ending is the climb's own line, not a win.
        if (climb) return "The climb is over";
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
      case "host_called": return `${nameOf(e.player)} calls the host: ${printable(e.reason)}`;
      case "host_answered":
        return e.player === null || e.player === undefined ? "The host answered every open call" : `The host answered ${nameOf(e.player)}'s call`;
      case "magic_tech.deck_declared": return `${nameOf(e.player)} declared a deck of ${e.size}`;
      case "magic_tech.phase_began": return `${nameOf(e.player)}: ${MT_PHASES[e.phase] || e.phase} phase`;
      case "magic_tech.drew": return `${nameOf(e.player)} drew ${e.count}`;
      case "magic_tech.deployed": return `${nameOf(e.player)} deployed ${mtCardName(e.card)}` + (e.land ? `: ${printable(e.land.name)}, face up` : " face down");
      case "magic_tech.tapped": return `${mtCardName(e.card)} tapped` + (e.mana ? ` for ${e.mana} mana` : "");
      case "magic_tech.paid": return `${nameOf(e.player)} paid ${e.amount}` + (e.card === null || e.card === undefined ? " for an ability" : ` onto ${mtCardName(e.card)}`);
      case "magic_tech.revealed": return `${mtCardName(e.card)} revealed: ${printable(e.face.name)} (${e.face.type}, cost ${e.cost})`;
      case "magic_tech.relocated": return `${mtCardName(e.card)} moved to ${mtArea(e.area)}`;
      case "magic_tech.mission_began": return `${nameOf(e.player)} sent ${e.attackers.map(mtCardName).join(", ")} against ${mtTarget(e.target)}`;
      case "magic_tech.blocked": return e.blocks.length ? `Blocks: ${e.blocks.map((b) => `${mtCardName(b.blocker)} blocks ${mtCardName(b.attacker)}`).join(", ")}` : "No blocks";
      case "magic_tech.damaged": return `${mtTarget(e.target)} took ${e.amount} damage (${e.effect} ${e.target.kind === "stockpile" ? "cards discarded" : "counters"})`;
      case "magic_tech.destroyed": return `${mtCardName(e.card)} ${e.buried ? "buried" : "destroyed"}`;
      case "magic_tech.mission_ended": return `Mission over` + (e.tapped.length ? `: ${e.tapped.map(mtCardName).join(", ")} tapped` : "");
      case "magic_tech.scrapped": return `${nameOf(e.player)} scrapped ${e.count}`;
      case "magic_tech.recovered": return `${nameOf(e.player)} put ${e.count} from the scrapheap under the stockpile`;
      case "magic_tech.healed": return `${mtCardName(e.card)} healed ${e.amount}`;
      case "magic_tech.left_play": return `${mtCardName(e.card)} left play for the ${e.to}`;
      case "magic_tech.proposed": return `${nameOf(e.player)} proposes: ${mtCorrection(e.correction)}`;
      case "magic_tech.declined": return `${nameOf(e.player)} declined the correction`;
      case "magic_tech.corrected": return `Corrected: ${mtCorrection(e.correction)}` + (e.by === null || e.by === undefined ? " (the host)" : ` (accepted by ${nameOf(e.by)})`);
      case "magic_tech.ran_out": return `${nameOf(e.player)} ran out of cards`;
      // Mountain Magic: cards by their names once games/mountain_magic.js has the pool.
      case "mountain_magic.dealt": return `The mountain was dealt: ${e.spells} spells and ${e.lands} lands face down`;
      case "mountain_magic.flipped": return `Turned over ${mmName(e.card)}`;
      case "mountain_magic.placed": return `Placed ${mmName(e.card)} on row ${e.row}, place ${e.pos}` + (e.from_discard ? " from the discard pile" : "");
      case "mountain_magic.discarded": return `Discarded ${mmName(e.card)}`;
      case "mountain_magic.climb_failed": return "The spell deck ran out before the mountain was complete: the climb failed";
      case "mountain_magic.path_chosen": return `The path down the mountain: ${e.path.join(", ")}`;
      case "mountain_magic.occupiers_revealed": return "The occupying forces were turned over";
      case "mountain_magic.mana_drawn": return `${mmSide(e.side)} drew a land: ${mmName(e.land)}`;
      case "mountain_magic.land_destroyed": return `${mmOf(e.side)} land was destroyed`;
      case "mountain_magic.mana_placed": return `${mmSide(e.side)} put ${e.place.colour} mana on ${mmCard({ side: e.side, force: e.place.force }, view)}` + (e.place.ability ? "'s ability" : "");
      case "mountain_magic.mana_unused": return `${mmSide(e.side)} let the land go`;
      case "mountain_magic.upkeep_paid": return `${mmCap(mmCard(e.card, view))} paid its upkeep`;
      case "mountain_magic.used": return `${mmCap(mmCard(e.card, view))} ${e.ability ? "used its ability" : "was used"}` + (e.target ? ` on ${mmCard(e.target, view)}` : "");
      case "mountain_magic.attacked": return `${e.attackers.length} creature(s) attacked ${mmCard(e.target, view)}`;
      case "mountain_magic.removed": return `${mmCap(mmCard(e.card, view))} was ${String(e.why).replace(/_/g, " ")}`;
      case "mountain_magic.unpowered": return `${mmCap(mmCard(e.card, view))} was tapped: unpowered`;
      case "mountain_magic.untapped": return `${mmCap(mmCard(e.card, view))} was untapped: powered`;
      case "mountain_magic.lands_discarded": return `${mmSide(e.side)} lost ${e.lands.length} land(s) from the land deck`;
      case "mountain_magic.land_doomed": return `${mmOf(e.side)} next land will be destroyed`;
      case "mountain_magic.pool_emptied": return `${mmOf(e.side)} mana pool was emptied`;
      case "mountain_magic.drew_from_mountain": return `The climber drew ${e.cards.length} card(s) from the mountain`;
      case "mountain_magic.turn_ended": return `${mmOf(e.side)} turn ended`;
      case "mountain_magic.ended": return `The battle ended: ${GM.endingName ? GM.endingName(e.ending) : String(e.ending).replace(/_/g, " ")}`;
      default: return `(${e.kind})`;
    }
  }

  /** A deck power bonus in words: "decides who plays first, +5 life, +1 card". */
  function bonusWords(b) {
    return [b.first_choice ? "decides who plays first" : null, b.life ? `+${b.life} life` : null,
      b.cards ? `+${b.cards} card${b.cards === 1 ? "" : "s"}` : null].filter(Boolean).join(", ");
  }


  const STAGES = { lobby: "waiting for players", mulligan: "mulligans", playing: "in play", finished: "finished" };

  /** A table's rules in a few words: "CR 807 · range 1 · combat dice · mulligans at once". */
  function rulesWords(settings) {
    return [settings.rules === "cr807" ? "CR 807" : null, `range ${settings.spell_range}`,
      settings.combat_dice ? "combat dice" : null, settings.mulligan === "simultaneous" ? "mulligans at once" : null]
      .filter(Boolean).join(" · ");
  }


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


  // ---------------------------------------------------------------- the link

  let link = null;
  /** Opens the WebSocket (once); `onMessage` gets every message, `onUp` runs after each hello. */
  function connect(onMessage, onUp) {
    link = new Link(onMessage, onUp, drawStatus);
    GM.link = link;
    return link;
  }

  const GM = window.GM = { F, MP, PROTOCOL, PHASES, PHASE_NAMES, TITLE, h, s, append, clear, put, printable, shorten, store, REFUSALS, SEATINGS, refusal, route, state, seatKey, memberKey, organiserKey, app, errorEl, beep, showError, send, nameOf, learnNames, tn, entropy, RESULTS, CAUSES, describe, bonusWords, STAGES, rulesWords, fillSelect, findTable, connect, MT_PHASES, mtCardName, mtTarget, mtArea, mtCorrection, link: null, pages: {} };
})();

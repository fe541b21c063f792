// The frame of the table page, the big-screen display and the replay viewer, shared by every
// game: entering, the seat and reconnecting, the head, the status line, the alerts, the error
// slot, the log and chat, the host's table tools and calls, the invitation, the display's and
// the replay's frames. The game's own panel and words come from the registry `GM.games`, by the
// name a table's settings give (`settings.game`; games/<game>.js registers each, see
// games/grand_melee.js for what one provides).
//
// Every view is drawn from the folded state in one place: `render()` draws the whole page with
// Preact (htm templates, no build step) from `state` (the table view fold.js keeps, the log, who
// I am) and `ui` (what this page is doing: the open tab, the alerts, the forms). Nothing on the
// page is updated by hand, so no panel can show a number the state no longer holds.
"use strict";

(function () {
  const GM = window.GM;
  const { F, TITLE, printable, store, REFUSALS, refusal, route, state, seatKey,
    memberKey, app, errorEl, beep, showError, send, nameOf, learnNames, entropy, describe, findTable } = GM;
  const html = window.htm.bind(window.preact.h);

  /** The name of the game a table's settings (or lobby summary) carry when they name none. */
  const DEFAULT_GAME = "grand_melee";
  /** The page's part of the game a table plays (registered in `GM.games` by games/<game>.js). */
  const gameOf = (settings) => GM.games[(settings && settings.game) || DEFAULT_GAME] || GM.games[DEFAULT_GAME];
  /** The games whose part is not in the page's first load, by their wire names: their name and
   * script, loaded when a table plays them (the script resolves `GM.gameReady[kind]` once it
   * has registered itself). */
  const LAZY = {
    magic_tech: { name: "Magic Tech", src: "/assets/games/magic_tech.js" },
    mountain_magic: { name: "Mountain Magic", src: "/assets/games/mountain_magic.js" },
  };
  const loading = {};
  /** Loads a lazy game's script (once); `then` runs when it has registered itself. */
  function loadGame(kind, then) {
    if (!loading[kind]) {
      loading[kind] = new Promise((resolve, reject) => {
        const script = document.createElement("script");
        script.src = LAZY[kind].src;
        script.onload = () => Promise.resolve((GM.gameReady || {})[kind]).then(resolve, reject);
        script.onerror = () => reject(new Error("not loaded"));
        document.head.append(script);
      });
      loading[kind].then(then, (err) => showError(`${LAZY[kind].name} could not be loaded (${err.message}): reload the page.`));
    }
    return loading[kind];
  }
  /** Once a lazy game is there: the table is asked for again (its events were not folded) and drawn. */
  const arrived = () => {
    if (route.page === "table" || route.page === "display") {
      if (state.view) {
        resnapshot();
        // The events fetched before the game was there are heard again (its `recall`, the log's words).
        state.fetchedTo = 0;
        rebuildLog();
      }
      render();
    }
  };
  /** What the page says at a table whose game it cannot show now (`null`: it shows it). */
  const unshown = (settings) => {
    const kind = (settings && settings.game) || DEFAULT_GAME;
    if (GM.games[kind]) return null;
    if (LAZY[kind]) {
      loadGame(kind, arrived);
      return `Loading ${LAZY[kind].name}…`;
    }
    return `This table plays ${kind}, which this page cannot show.`;
  };

  /** What this page is doing, besides the table itself. Handlers change it, then `render()`. */
  const ui = {
    tab: "log", legend: false, share: null, copied: false, alerts: [], chatSeen: 0, nextAlert: 1,
    visiting: false, name: store.get("gm.name") || "", password: "",
    host: { kick: "", to: "", mute: "", ban: false }, callReason: "", chatText: "", showTools: false,
  };
  const playerOf = (view, id) => (view && id !== null && id !== undefined ? view.players.find((p) => p.player === id) : null);

  // ---------------------------------------------------------------- the log and the alerts

  /** Players reported away (`player_absent`): their return is the one connection line the log shows. */
  const away = new Set();

  /** Puts an event into the log or the chat. The network is not the game: a drop and a return
   * (`connection_changed`) make no line, unless the player had been reported away, when his
   * return is one line. */
  function record(seq, e) {
    if (e.kind === "spectators_changed") return;
    if (e.kind === "connection_changed") {
      if (e.connected && away.has(e.player)) {
        away.delete(e.player);
        state.log.set(seq, `${nameOf(e.player)} is back`);
      }
      return;
    }
    if (e.kind === "player_absent") away.add(e.player);
    const game = state.view ? GM.games[state.view.settings.game || DEFAULT_GAME] : null;
    if (game && game.heard) game.heard(e, state.me);
    if (game && game.recall) game.recall(seq, e, state.view.table);
    if (e.kind === "chat") state.chat.set(seq, describe(e));
    else state.log.set(seq, describe(e));
  }


  function raise(text, moot) {
    const alert = { id: ui.nextAlert++, text, moot };
    ui.alerts = [alert, ...ui.alerts].slice(0, 3);
    setTimeout(() => { if (ui.alerts.includes(alert)) { ui.alerts = ui.alerts.filter((a) => a !== alert); render(); } }, 60000);
    beep();
    try { if (navigator.vibrate) navigator.vibrate([120, 60, 120]); } catch (_) { /* not allowed */ }
  }

  /** No alert outlives what it announced: one whose news is over (the game says when) goes. */
  function dropMoot() {
    if (state.view) ui.alerts = ui.alerts.filter((a) => !(a.moot && a.moot(state.view)));
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
        dropMoot();
        learnNames(state.view);
        // A snapshot nobody asked for (the table moved to another node): the cameras tell it again.
        if ((m.reply_to === null || m.reply_to === undefined) && GM.cameras) GM.cameras.again();
        render();
        break;
      }
      case "events": {
        if (!state.view || m.table !== state.view.table) return;
        // A game the page cannot show yet is not folded (it is asked for again once loaded).
        if (unshown(state.view.settings)) return;
        if (m.seq !== state.view.seq + 1) {
          resnapshot();
          return;
        }
        const alerts = [];
        try {
          m.events.forEach((e, i) => {
            record(m.seq + i, e);
            const alert = state.role === "player" && state.me !== null ? gameOf(state.view.settings).alertFor(e, state.me) : null;
            F.applyEvent(state.view, m.seq + i, e);
            if (alert) alerts.push(alert);
          });
        } catch (err) {
          resnapshot();
          return;
        }
        // An alert the state now makes moot (the game says which) is not raised.
        for (const a of alerts) if (!(a.moot && a.moot(state.view))) raise(a.text || a, a.moot);
        dropMoot();
        learnNames(state.view);
        render();
        break;
      }
      case "error":
        if (m.reply_to === null || m.reply_to === undefined) showError(refusal(m));
        break;
      case "ice_servers":
      case "camera_peers":
      case "signal":
        if (GM.cameras) GM.cameras.onMessage(m);
        break;
      case "served_at":
        // Cluster mode: the table's own node is elsewhere; the link goes there if it can.
        if (m.table === route.table && typeof m.url === "string") GM.link.moveTo(m.url);
        break;
      default:
        break;
    }
  }

  function resnapshot() {
    GM.link.request({ type: "snapshot" });
  }

  /** After the link is up: take the seat back, or watch again (a visitor watches to see the
   * table). Returns when the table is entered again (the link then closes a connection it left). */
  function onUp() {
    const P = GM.pages;
    if (GM.cameras) GM.cameras.reset();
    if (route.page === "lobby") { P.lobby.refresh(); return; }
    if (route.page === "replays") { P.replays.load(); return; }
    if (route.page === "replay") { replay.load(); return; }
    if (route.page === "leagues") { P.leagues.load(); return; }
    if (route.page === "league") { P.league.load(); return; }
    if (route.page === "mountain") { P.mountain.load(); return; }
    if (route.page === "display") return enter("watch");
    const seat = store.get(seatKey(route.table));
    if (seat && seat.token) return enter("resume");
    if (state.wanted === "watch") return enter("watch");
    // A visitor's quiet watch ended with the old connection: watch again on this one.
    if (ui.visiting) { state.role = null; ui.visiting = false; }
    return table.visit();
  }

  /** How many times a refused-as-busy `resume` is tried (about a minute in all). */
  const RESUME_TRIES = 40;

  let entering = Promise.resolve();
  /** Joins, resumes or watches (one at a time, in order), then rebuilds the log from the journal. */
  function enter(how, name) {
    entering = entering.then(() => enterNow(how, name)).catch(() => {});
    return entering;
  }

  async function enterNow(how, name) {
    let answer;
    if (how === "resume") {
      const seat = store.get(seatKey(route.table));
      if (!seat) return;
      const link = GM.link;
      const ws = link.ws;
      for (let attempt = 1; ; attempt++) {
        answer = await link.request({ type: "resume", table: route.table, token: seat.token });
        // Busy: the table is moving to another server node (its own died; cluster mode), which
        // takes about one lease. The seat is taken back as soon as it is there, quietly.
        if (answer.type !== "error" || answer.code !== "server_busy" || attempt >= RESUME_TRIES) break;
        await new Promise((done) => setTimeout(done, Math.min(250 * attempt, 2000)));
        if (link.ws !== ws || !link.up) return; // a new connection resumes by itself
      }
      if (answer.type === "error") {
        if (answer.code === "bad_token") {
          store.remove(seatKey(route.table));
          showError(REFUSALS.bad_token);
          table.visit();
        } else if (answer.code !== "offline") {
          showError(refusal(answer));
          table.visit();
        }
        return;
      }
    } else if (how === "join") {
      if (state.role === "spectator") await GM.link.request({ type: "leave" });
      const join = { type: "join", table: route.table, name, password: ui.password || state.password || null, entropy: entropy() };
      if (state.memberToken) join.member_token = state.memberToken;
      answer = await send(join);
      if (answer.type === "error") {
        if (state.role === "spectator") { state.role = null; ui.visiting = false; table.visit(); }
        return;
      }
      store.set(seatKey(route.table), { token: answer.token, player: answer.player, name });
      ui.visiting = false;
    } else {
      const quiet = how === "visit";
      if (quiet && state.role !== null) return; // sat down or watching meanwhile
      const message = { type: "watch", table: route.table, password: ui.password || state.password || null };
      answer = quiet ? await GM.link.request(message) : await send(message);
      if (answer.type === "error") {
        // A display or a visitor refused (a password, no room for spectators): the entry panel says why.
        if (route.page === "display" || !quiet) await table.visit(true);
        render();
        return;
      }
      ui.visiting = quiet;
      if (!quiet) state.wanted = "watch";
    }
    state.role = answer.type === "watching" ? "spectator" : "player";
    state.me = answer.type === "watching" ? null : answer.player;
    render();
    await rebuildLog();
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
    ui.chatSeen = ui.tab === "chat" ? state.chat.size : Math.min(ui.chatSeen || state.chat.size, state.chat.size);
    render();
  }

  // ---------------------------------------------------------------- words

  /** How many asks resume an adjourned game without the host: a majority of the players still in the game. */
  function resumeQuorum(view) {
    return Math.floor(view.players.filter(gameOf(view.settings).stillIn).length / 2) + 1;
  }

  /** What a person needs to know now, in one sentence: the game says it once the game has started. */
  function sentence(view, me) {
    if (view.adjourned) {
      return `☾ The game is adjourned — the host resumes it (or a majority of the players: ` +
        `${(view.resume_asks || []).length} of ${resumeQuorum(view)} asked).`;
    }
    if (view.paused) return "⏸ The host has paused the table.";
    switch (view.stage) {
      case "lobby": {
        return `Waiting for players: ${view.players.length} of ${view.settings.seats} seated. ` +
          (view.host === null ? "The first to sit down is the host and starts the game."
            : view.host === me && me !== null ? "You are the host: start when everyone is here." : `${nameOf(view.host)} (host) starts the game.`);
      }
      default:
        return gameOf(view.settings).sentence(view, me);
    }
  }

  // ---------------------------------------------------------------- sharing and the legend

  // The address to invite others with, asked of the server once (`/invite.json`): undefined
  // while it is asked, null if it could not be, else `{public_url, lan_url, listen}`.
  let invite;
  let inviteAsked = false;
  function askInvite() {
    if (inviteAsked) return;
    inviteAsked = true;
    fetch("/invite.json", { cache: "no-store" })
      .then((r) => (r.ok ? r.json() : null))
      .catch(() => null)
      .then((answer) => { invite = answer && typeof answer === "object" ? answer : null; render(); });
  }
  /** Whether this page was opened on a loopback address: a link to it works on this machine only. */
  const onLoopback = () => /^(localhost|.*\.localhost|127(\.\d+){3}|\[::1\])$/.test(location.hostname);
  /** Where the table's link points: the server's --public-url; on a page opened on this machine's
   * loopback address, this machine's address on the network; else the page's own address.
   * `here` is set when none of these reaches past this machine. */
  function inviteBase() {
    if (invite && invite.public_url) return { base: invite.public_url, here: false };
    if (!onLoopback()) return { base: location.origin, here: false };
    if (invite && invite.lan_url) return { base: invite.lan_url, here: false };
    return { base: location.origin, here: invite !== undefined };
  }
  /** What to do about a link that works on this machine only, in words. */
  function hereOnlyWords() {
    const listen = invite && invite.listen ? String(invite.listen) : "";
    const port = listen.slice(listen.lastIndexOf(":") + 1) || "7878";
    if (invite && /^(0\.0\.0\.0|\[::\]):/.test(listen)) {
      return "This link works on this computer only: it has no network address that others can reach. " +
        "Connect it to your network (or start the server with --public-url) and open this page again.";
    }
    return `This link works on this computer only${listen ? ` (the server listens on ${listen})` : ""}. ` +
      `To let phones join, restart the server with --listen 0.0.0.0:${port} and open this page again.`;
  }
  const tableLink = () => `${inviteBase().base}/t/${route.table}`;
  const qrSrc = () => `/qr.svg?text=${encodeURIComponent(tableLink())}`;

  async function copyLink() {
    const text = tableLink();
    let ok = false;
    try { if (navigator.clipboard && window.isSecureContext) { await navigator.clipboard.writeText(text); ok = true; } } catch (_) { /* fall back */ }
    if (!ok) {
      const input = document.querySelector("[data-testid=\"share-link\"]");
      if (input) { input.select(); try { ok = document.execCommand("copy"); } catch (_) { ok = false; } }
    }
    ui.copied = ok ? "Copied ✓" : "Select the link and copy it";
    render();
    setTimeout(() => { ui.copied = false; render(); }, 3000);
  }

  /** Whether the table has only one seat (a solitaire): its link is for watching, not joining. */
  const solo = (view) => !!view && (view.settings.seats || 0) === 1;

  function Share({ big }) {
    if (solo(state.view)) {
      return html`<section class="share" data-testid="share" aria-label="Share this climb">
        <img class="qr" data-testid="qr" src=${qrSrc()} alt="QR code of this table's link: point a phone's camera at it to watch" width="180" height="180" />
        <div class="share-text">
          ${inviteBase().here ? html`<p class="link-warning" data-testid="link-warning" role="alert">⚠ ${hereOnlyWords()}</p>` : null}
          <label for="share-link">This climb's link — friends who open it watch you climb</label>
          <div class="row"><input id="share-link" data-testid="share-link" readonly value=${tableLink()} onFocus=${(ev) => ev.target.select()} />
            <button type="button" data-testid="share-copy" onClick=${copyLink}>Copy</button></div>
          ${ui.copied ? html`<p class="meta" role="status">${ui.copied}</p>` : null}
        </div>
      </section>`;
    }
    return html`<section class=${"share" + (big ? " big" : "")} data-testid="share" aria-label="Invite players">
      <img class="qr" data-testid="qr" src=${qrSrc()} alt="QR code of this table's link: point a phone's camera at it to join" width="180" height="180" />
      <div class="share-text">
        ${inviteBase().here ? html`<p class="link-warning" data-testid="link-warning" role="alert">⚠ ${hereOnlyWords()}</p>` : null}
        ${big ? html`<p class="join-at">Join at <strong data-testid="join-at">${tableLink()}</strong></p>
          <p>Scan the code with your phone's camera, type your name and tap <strong>Sit down</strong>.</p>`
        : html`<label for="share-link">The table's link — send it to everyone</label>
          <div class="row"><input id="share-link" data-testid="share-link" readonly value=${tableLink()} onFocus=${(ev) => ev.target.select()} />
            <button type="button" data-testid="share-copy" onClick=${copyLink}>Copy</button></div>
          ${ui.copied ? html`<p class="meta" role="status">${ui.copied}</p>` : null}
          <p class="meta">Or let them scan the code with a phone's camera.</p>`}
      </div>
    </section>`;
  }


  /** What the symbols mean, at this table (a game's `legend` is its list, or a function of
   * the table's settings giving it). Over the page on a phone, its Close button first. */
  function Legend({ view }) {
    const legend = gameOf(view.settings).legend;
    const entries = typeof legend === "function" ? legend(view.settings) : legend;
    const close = () => { ui.legend = false; render(); const b = document.querySelector("[data-testid=\"legend-button\"]"); if (b) b.focus(); };
    return html`<section class="legend" id="legend" data-testid="legend" role="dialog" aria-labelledby="legend-title"
        onKeyDown=${(ev) => { if (ev.key === "Escape") close(); }}>
      <div class="legend-head"><h3 id="legend-title">What the symbols mean</h3>
        <button type="button" data-testid="legend-close" onClick=${close}>Close</button></div>
      <dl>${entries.map(([k, v]) => html`<div key=${k}><dt>${k}</dt><dd>${v}</dd></div>`)}</dl>
    </section>`;
  }

  // ---------------------------------------------------------------- alerts, banners

  /** What is pinned to the top of the screen however far the page is scrolled: the alerts,
   * and my moment ("▶ Your turn", "Your decision") while the status line that says it is
   * scrolled out of sight (`watchStatus`). */
  function Pinned({ view, me }) {
    const moment = momentOf(view, me);
    if (!moment && !ui.alerts.length) return null;
    return html`<div class="pinned" data-testid="pinned">
      ${moment ? html`<span class="banner pinned-banner" data-testid="pinned-banner" aria-hidden="true">${moment.banner}</span>` : null}
      ${ui.alerts.length ? html`<div class="alerts" role="alert" data-testid="alerts">${ui.alerts.map((a) => html`<div key=${a.id} class="alert" data-testid="alert">
      <span>${a.text}</span>
      <button type="button" aria-label="Dismiss" onClick=${() => { ui.alerts = ui.alerts.filter((b) => b !== a); render(); }}>✕</button></div>`)}</div>` : null}
    </div>`;
  }

  /** My moment — what the game asks of me now, as it words it — or null. */
  function momentOf(view, me) {
    return state.role === "player" ? gameOf(view.settings).moment(view, me) : null;
  }

  /** The status line: what a person needs to know now; at my moment, highlighted (its banner
   * is pinned to the top of the screen too once the line is scrolled away, `Pinned`). */
  function Status({ view, me }) {
    const moment = momentOf(view, me);
    return html`<p class=${"status-line" + (moment ? " mine" : "")} data-testid="status-line" aria-live="polite">
      ${moment ? html`<span class="banner" data-testid="banner">${moment.banner}</span> ` : null}${moment && moment.lead ? sentence(view, me).replace(moment.lead, "") : sentence(view, me)}</p>`;
  }

  /** A megaphone, drawn (an emoji is an empty box where the font lacks it). */
  const Megaphone = () => html`<svg class="icon" data-icon="megaphone" viewBox="0 0 16 16" width="1em" height="1em" aria-hidden="true" focusable="false">
    <path fill="currentColor" d="M1 6h3l8-4v12l-8-4H1zM4.5 10.5 6 15h2l-1.4-4.2zM13 6.2h2v3.6h-2z" /></svg>`;

  /** The host's alert: every open call, who and why, each with an answer button. */
  function Calls({ view, me }) {
    const calls = view.calls || [];
    const host = state.role === "player" && view.host === me;
    if (!host || !calls.length) return null;
    return html`<div class="call-alert" data-testid="host-call" role="alert">
      ${calls.map((c) => html`<div class="row" key=${c.player}>
        <span data-testid=${`host-call-${c.player}`}><${Megaphone} /> ${nameOf(c.player)} calls the host: ${printable(c.reason)}</span>
        <button type="button" data-testid=${`answer-call-${c.player}`} onClick=${() => send({ type: "answer_call", player: c.player })}>Answered</button></div>`)}
      ${calls.length > 1 ? html`<button type="button" data-testid="answer-calls" onClick=${() => send({ type: "answer_call", player: null })}>All answered</button>` : null}
    </div>`;
  }

  /** Sound and the tab title when my moment comes, or a player calls me (the host). */
  function notify(view, me) {
    const moment = momentOf(view, me);
    if (moment && !state.notified[moment.key]) beep();
    state.notified = moment ? { [moment.key]: true } : {};
    const calls = view.calls || [];
    const host = state.role === "player" && view.host === me;
    const key = calls.map((c) => `${c.player}:${c.reason}`).join("\n");
    if (host && calls.some((c) => !state.calls.split("\n").includes(`${c.player}:${c.reason}`))) beep();
    state.calls = host ? key : "";
    document.title = moment ? `${moment.title} — ${TITLE}` : `${printable(view.name)} — ${TITLE}`;
  }

  // ---------------------------------------------------------------- actions

  /** A player's request. Once one succeeds, a refusal still shown is old news: it goes. */
  const go = (message) => send(message).then((answer) => {
    if (answer && answer.type !== "error") errorEl.hidden = true;
    return answer;
  });
  const Button = ({ id, label, onClick, cls, disabled, title }) =>
    html`<button type="button" data-testid=${id} class=${cls || ""} disabled=${!!disabled} title=${title} onClick=${onClick}>${label}</button>`;
  const options = (list) => list.map(([v, t]) => html`<option key=${v} value=${v}>${t}</option>`);
  const num = (v, fallback) => (v === "" || v === null || v === undefined || Number.isNaN(Number(v)) ? fallback : Number(v));

  /** Everything else a player may do: the lobby's group, resuming, the game's tools, the host's tools, calling him. */
  function MoreActions({ view, me }) {
    if (state.role !== "player" || me === null) return null;
    const game = gameOf(view.settings);
    const mine = playerOf(view, me);
    const host = view.host === me;
    const parts = [];
    const going = !view.adjourned;
    if (view.stage === "lobby") parts.push(html`<${LobbyTools} key="lobby" view=${view} me=${me} host=${host} />`);
    if (view.adjourned) {
      const asks = view.resume_asks || [];
      parts.push(html`<div key="adj" class="group adjourned" data-testid="adjourned-box">
        <p data-testid="adjourned-text">The game is adjourned. ${asks.length} of ${resumeQuorum(view)} players have asked to resume it${asks.length ? ` (${asks.map(nameOf).join(", ")})` : ""}.</p>
        ${host ? html`<${Button} id="resume-game" label="Resume the game" cls="primary" onClick=${() => go({ type: "resume_game" })} />`
          : mine && game.stillIn(mine) ? html`<${Button} id="ask-resume" label=${asks.includes(me) ? "You asked to resume" : "Ask to resume"} disabled=${asks.includes(me)} onClick=${() => go({ type: "resume_game" })} />` : null}
      </div>`);
    }
    if (going) parts.push(...game.play(view, me));
    if (host && view.stage !== "finished") parts.push(html`<${HostTools} key="host" view=${view} me=${me} />`);
    if (!host && view.stage !== "finished") parts.push(html`<${CallTools} key="call" />`);
    if (!parts.length) return null;
    // In the lobby these are the host's Start and the game's choices: on a phone they come before the game's panel.
    return html`<section class=${"actions" + (view.stage === "lobby" ? " lobby" : "")} aria-label="More actions">${parts}</section>`;
  }

  /** The lobby's group: the game's tools there (starting, who plays first), and giving up one's seat. */
  function LobbyTools({ view, me, host }) {
    const leave = async () => {
      const answer = await go({ type: "leave" });
      if (answer.type === "left") { store.remove(seatKey(route.table)); location.assign("/"); }
    };
    return html`<div class="group">
      <${gameOf(view.settings).LobbyTools} view=${view} me=${me} host=${host} />
      <${Button} id="leave" label="Give up my seat" onClick=${leave} />
    </div>`;
  }

  function HostTools({ view }) {
    const game = gameOf(view.settings);
    const ids = view.players.map((p) => p.player);
    const who = (key, label) => {
      if (ui.host[key] === "" || !ids.includes(Number(ui.host[key]))) ui.host[key] = ids.length ? String(ids[0]) : "";
      return html`<select class="who" aria-label=${label} value=${ui.host[key]} onChange=${(ev) => { ui.host[key] = ev.target.value; render(); }}>
        ${options(view.players.map((p) => [String(p.player), printable(p.name)]))}</select>`;
    };
    const pick = (key) => Number(ui.host[key]);
    return html`<details class="group host" open=${ui.showTools} onToggle=${(ev) => { ui.showTools = ev.target.open; }}>
      <summary>★ Host tools</summary>
      <div class="row">
        ${view.adjourned ? null : html`<${Button} id="pause" label=${view.paused ? "Resume" : "Pause"} onClick=${() => go({ type: "pause", paused: !view.paused })} />`}
        ${view.adjourned || view.stage === "lobby" || view.stage === "finished" ? null : html`<${Button} id="adjourn" label="Adjourn the game…"
          onClick=${() => { if (window.confirm("Adjourn the game? Every clock stops and everyone may leave; you resume it later.")) go({ type: "adjourn" }); }} />`}
        <${Button} id="mute-spectators" label="Mute / unmute spectators" onClick=${() => go({ type: "mute", player: null, muted: !view.spectators_muted })} />
      </div>
      <div class="row">${who("kick", "Player to remove")}
        <label class="inline"><input type="checkbox" checked=${ui.host.ban} onChange=${(ev) => { ui.host.ban = ev.target.checked; }} /> also ban</label>
        <${Button} id="kick" label="Remove" cls="danger" onClick=${() => { if (window.confirm(`Remove ${nameOf(pick("kick"))} from the table?`)) go({ type: "kick", player: pick("kick"), ban: ui.host.ban }); }} /></div>
      <div class="row">${who("to", "New host")}<${Button} id="transfer-host" label="Hand over host" onClick=${() => go({ type: "transfer_host", player: pick("to") })} /></div>
      <div class="row">${who("mute", "Player to mute")}<${Button} id="mute" label="Mute / unmute" onClick=${() => {
        const p = playerOf(view, pick("mute"));
        go({ type: "mute", player: pick("mute"), muted: !(p && p.muted) });
      }} /></div>
      <${game.Rulings} view=${view} who=${who} pick=${pick} />
    </details>`;
  }

  /** A player calls the host: one short line (a dispute, a question). */
  function CallTools() {
    const submit = async (ev) => {
      ev.preventDefault();
      const reason = ui.callReason.trim();
      if (!reason) { showError("Say in one short line why you call the host."); return; }
      const answer = await go({ type: "call_host", reason });
      if (answer.type === "ack") { ui.callReason = ""; render(); }
    };
    return html`<form class="group call" onSubmit=${submit}><div class="row">
      <input data-testid="call-reason" maxlength="120" placeholder="Why (one short line)" aria-label="Why you call the host" value=${ui.callReason}
        onInput=${(ev) => { ui.callReason = ev.target.value; }} onChange=${(ev) => { ui.callReason = ev.target.value; }} />
      <button type="submit" data-testid="call-host"><${Megaphone} /> Call the host</button></div></form>`;
  }

  // ---------------------------------------------------------------- log, chat, seats

  function Tabs({ view, me }) {
    const lines = (map) => Array.from(map.entries()).sort((a, b) => a[0] - b[0]).slice(-400).reverse();
    if (ui.tab === "chat") ui.chatSeen = state.chat.size;
    const unread = Math.max(0, state.chat.size - ui.chatSeen);
    const tab = (key, label) => html`<button type="button" role="tab" id=${`tab-${key}`} data-testid=${`tab-${key}`} aria-selected=${String(ui.tab === key)}
      aria-controls="pane" onClick=${() => { ui.tab = key; render(); }}>${label}</button>`;
    const sendChat = async (ev) => {
      ev.preventDefault();
      const text = ui.chatText.trim();
      if (!text) return;
      const answer = await go({ type: "chat", text });
      if (answer.type === "ack") { ui.chatText = ""; render(); }
    };
    return html`<div class="tabbed">
      <div class="tabs" role="tablist" aria-label="Log, chat and seats">${tab("log", "Log")}${tab("chat", unread ? `Chat (${unread} new)` : "Chat")}${tab("seats", "Seats")}</div>
      <div class="pane" id="pane" role="tabpanel" aria-labelledby=${`tab-${ui.tab}`} tabindex="0">
        ${ui.tab === "log" ? html`<ol class="log" data-testid="log">${lines(state.log).map(([seq, text]) => html`<li key=${seq} data-seq=${seq}>${text}</li>`)}</ol>` : null}
        ${ui.tab === "chat" ? html`<div><ol class="chat-log" data-testid="chat-log">${lines(state.chat).map(([seq, text]) => html`<li key=${seq} data-seq=${seq}>${text}</li>`)}</ol>
          <form class="chat-form" onSubmit=${sendChat}><input data-testid="chat-input" maxlength="500" placeholder="Say something" aria-label="Chat"
            disabled=${!state.role} value=${ui.chatText} onInput=${(ev) => { ui.chatText = ev.target.value; }} onChange=${(ev) => { ui.chatText = ev.target.value; }} />
            <button type="submit" data-testid="chat-send">Send</button></form></div>` : null}
        ${ui.tab === "seats" ? html`<${gameOf(view.settings).Seats} view=${view} me=${me} />` : null}
      </div></div>`;
  }

  // ---------------------------------------------------------------- sitting down

  /** The "sit down / watch" panel for a visitor: one name and one tap. */
  function Entry() {
    const summary = state.summary;
    if (state.role === "player" || (state.role === "spectator" && !ui.visiting)) return null;
    if (summary === undefined) return html`<section class="entry"><p>Looking for the table…</p></section>`;
    if (!summary) {
      return html`<section class="entry"><p>This table is not open: it may have ended. <a href="/">Back to the tables</a></p></section>`;
    }
    // The table as it is now (the visitor watches it), else as the lobby listed it.
    const live = state.view;
    const seated = live ? live.players.length : summary.seated;
    const seats = live ? live.settings.seats : summary.seats;
    const stage = live ? live.stage : summary.stage;
    const full = seated >= seats || stage !== "lobby";
    const watch = () => { ui.visiting = false; state.wanted = "watch"; if (state.role === "spectator") render(); else enter("watch"); };
    const pw = summary.password ? html`<label><span>Table password</span><input type="password" data-testid="join-password" maxlength="64"
      autocomplete="off" value=${ui.password} onInput=${(ev) => { ui.password = ev.target.value; }} onChange=${(ev) => { ui.password = ev.target.value; }} /></label>` : null;
    const words = gameOf(summary);
    const meta = html`<p class="meta">${summary.league ? "A league game · " : ""}${words.stages[stage]} · ${seated}/${seats} seated · ${words.settingsWords(summary)}</p>`;
    if (summary.league) {
      const member = store.get(memberKey(summary.league));
      state.memberToken = member ? member.token : null;
      const leagueLink = html`<a href=${`/leagues/${summary.league}`} data-testid="league-link">the league's page</a>`;
      // A league's climb of today's mountain needs no registered deck: the day deals it.
      const climb = summary.game === "mountain_magic";
      if (!member) {
        return html`<section class="entry"><h2>${printable(summary.name)}</h2>${meta}
          <p data-testid="league-join-first">Only the league's members sit at this table. Join the league on ${leagueLink}${climb ? "" : ", register your deck"}, then come back.</p>
          <${Button} id="watch" label="Watch" onClick=${watch} /></section>`;
      }
      return html`<section class="entry"><h2>${printable(summary.name)}</h2>${meta}
        <p>You sit down as ${printable(member.name)}, ${climb ? "a member of the league" : "with your league deck"} (${leagueLink}).</p>
        <div class="row"><button type="button" class="primary" data-testid="join-submit" disabled=${full} onClick=${() => enter("join", member.name)}>${full ? "No free seat" : `Sit down as ${printable(member.name)}`}</button>
          <${Button} id="watch" label="Watch" onClick=${watch} /></div></section>`;
    }
    const submit = (ev) => {
      ev.preventDefault();
      const name = ui.name.trim();
      if (!name) { showError("Type your name first."); return; }
      store.set("gm.name", name);
      enter("join", name);
    };
    return html`<section class="entry" aria-label="Sit down">
      <h2>${printable(summary.name)}</h2>${meta}
      <form onSubmit=${submit}>
        <label for="join-name"><span>Your name</span></label>
        <div class="row"><input id="join-name" data-testid="join-name" maxlength="32" required autocomplete="nickname" value=${ui.name}
            onInput=${(ev) => { ui.name = ev.target.value; }} onChange=${(ev) => { ui.name = ev.target.value; }} />
          <button type="submit" class="primary" data-testid="join-submit" disabled=${full}>${full ? "No free seat" : "Sit down"}</button></div>
        ${pw}
        <div class="row"><${Button} id="watch" label=${state.role === "spectator" ? "Just watch" : "Watch"} onClick=${watch} /></div>
      </form></section>`;
  }

  // ---------------------------------------------------------------- the page

  function Head({ view, display }) {
    const legendButton = html`<button type="button" class="legend-button" data-testid="legend-button" aria-expanded=${String(ui.legend)}
      aria-controls="legend" aria-label="What the symbols mean" onClick=${() => { ui.legend = !ui.legend; render(); }}>?</button>`;
    const sharing = ui.share === null ? view.stage === "lobby" && state.role === "player" && !solo(view) : ui.share;
    const words = gameOf(view.settings);
    return html`<div class="table-head">
      <h2>${printable(view.name)}</h2>
      <span class="meta">${words.stages[view.stage]} · ${words.settingsWords(view.settings)} · ${view.spectators} watching${view.adjourned ? " · ☾ adjourned" : view.paused ? " · ⏸ paused" : ""}${state.role === "spectator" && !ui.visiting && !display ? " · you are watching" : ""}</span>
      ${view.settings.league && !display ? html`<a href=${`/leagues/${view.settings.league}`} class="meta" data-testid="table-league">League game ▸</a>` : null}
      ${display ? null : html`<span class="head-buttons">
        <button type="button" data-testid="share-button" aria-expanded=${String(sharing)} onClick=${() => { ui.share = !sharing; render(); }}>${solo(view) ? "Share" : "Invite"}</button>
        ${legendButton}</span>`}
    </div>`;
  }

  const holdError = (el) => { if (el && !el.contains(errorEl)) el.append(errorEl); };
  function ErrorSlot() {
    return html`<div class="error-slot" ref=${holdError}></div>`;
  }

  /** What shows instead of a game the page cannot show (yet: one being loaded). */
  const Unshown = ({ text }) => (/^Loading/.test(text) ? html`<p class="meta" data-testid="unshown-game" role="status">${text}</p>`
    : html`<p class="error" data-testid="unshown-game" role="alert">${text}</p>`);

  function TablePage() {
    const view = state.view;
    const me = state.me;
    // The same two columns before and after the table is known, so that the entry form (and
    // what is typed into it) stays in place when the table appears behind it.
    if (!view) {
      return html`
        <section class="main"><p class="meta">${state.summary ? "The table shows here in a moment." : ""}</p></section>
        <section class="side"><${ErrorSlot} /><${Entry} /></section>`;
    }
    const cannot = unshown(view.settings);
    if (cannot) return html`<section class="main"><${Unshown} text=${cannot} /></section>`;
    const sharing = ui.share === null ? view.stage === "lobby" && state.role === "player" && !solo(view) : ui.share;
    const game = gameOf(view.settings);
    return html`
      <section class="main">
        <${Head} view=${view} />
        ${ui.legend ? html`<${Legend} view=${view} />` : null}
        <${Pinned} view=${view} me=${me} /><${Calls} view=${view} me=${me} />
        <${Status} view=${view} me=${me} />
        <${CameraSlot} view=${view} me=${me} />
        <${game.Main} view=${view} me=${me} />
      </section>
      <section class="side">
        <${ErrorSlot} />
        <${Entry} />
        ${sharing ? html`<${Share} />` : null}
        <${game.Side} view=${view} me=${me} />
        <${MoreActions} view=${view} me=${me} />
        ${state.role === "spectator" && !ui.visiting ? html`<${Button} id="leave-watch" cls="leave-watch" label="Stop watching" onClick=${async () => { await go({ type: "leave" }); location.assign("/"); }} />` : null}
        <${Tabs} view=${view} me=${me} />
        <${game.Foot} view=${view} />
      </section>`;
  }

  function DisplayPage() {
    const view = state.view;
    if (!view) return html`<section class="display-main"><${ErrorSlot} /><${DisplayEntry} /></section>`;
    const cannot = unshown(view.settings);
    if (cannot) return html`<section class="display-main"><${Unshown} text=${cannot} /></section>`;
    const lines = Array.from(state.log.entries()).sort((a, b) => a[0] - b[0]).slice(-12).reverse();
    const game = gameOf(view.settings);
    // The game's picture on the left, as large as the screen's height; the words beside it.
    return html`
      <section class="display-main">
        <${game.Display} view=${view} />
      </section>
      <section class="display-side">
        <${Head} view=${view} display=${true} />
        <p class="status-line" data-testid="status-line" aria-live="polite">${sentence(view, null)}</p>
        <${CameraSlot} view=${view} me=${null} display=${true} />
        ${game.DisplaySide ? html`<${game.DisplaySide} view=${view} />` : null}
        ${view.stage === "lobby" || ui.share ? html`<${Share} big=${true} />` : null}
        <h3>Latest</h3>
        <ol class="log" data-testid="log">${lines.map(([seq, text]) => html`<li key=${seq} data-seq=${seq}>${text}</li>`)}</ol>
      </section>`;
  }

  /** A display at a table with a password asks for it once. */
  function DisplayEntry() {
    if (state.summary === undefined) return html`<p>Looking for the table…</p>`;
    if (!state.summary) return html`<p>This table is not open: it may have ended. <a href="/">Back to the tables</a></p>`;
    if (!state.summary.password) return html`<p>Connecting to the table…</p>`;
    return html`<form class="entry" onSubmit=${(ev) => { ev.preventDefault(); enter("watch"); }}>
      <p>This table has a password.</p>
      <label><span>Table password</span><input type="password" data-testid="join-password" value=${ui.password} onInput=${(ev) => { ui.password = ev.target.value; }} onChange=${(ev) => { ui.password = ev.target.value; }} /></label>
      <button type="submit" data-testid="watch">Show the table</button></form>`;
  }

  // ---------------------------------------------------------------- cameras

  /** The player's camera choices on this device (cameras.js keeps them; read here to know
   * whether to load it). */
  const CAMERA_PREF = "gm.camera";
  /** What the camera box says (here and in cameras.js): while it is off, while the game has not
   * started, when nobody is linked. A game of two says "your opponent" (`cameraWords`). */
  const CAMERA_WORDS = {
    off: "Your camera is off: nobody sees you. Turn it on to show your cards to the players within your range and see theirs.",
    waiting: "Your camera is on: the players within your range see you once the game starts.",
    nobody: "Nobody in range has a camera on.",
  };
  const cameraWords = (view) => Object.assign({}, CAMERA_WORDS, view ? gameOf(view.settings).cameraWords : null);
  let camerasLoading = false;
  /** Cameras link the players within range: a table of one seat (a solitaire climb) has nobody
   * to link, so it has no camera at all. */
  const withCameras = (view) => !!view && (view.settings.seats || 0) > 1;

  /** Whether this page needs cameras.js now: my camera is on at this table, or this is the
   * display with the host's seat on this device. */
  function camerasWanted() {
    const view = state.view;
    if (!withCameras(view)) return false;
    if (route.page === "display") {
      const seat = store.get(seatKey(route.table));
      return !!(seat && seat.token && seat.player === view.host);
    }
    return state.role === "player" && view.stage !== "finished" && !!(store.get(CAMERA_PREF) || {}).on;
  }

  /** Loads cameras.js (once): it is not part of the page's first load. */
  function loadCameras() {
    if (GM.cameras || camerasLoading) return;
    camerasLoading = true;
    const script = document.createElement("script");
    script.src = "/assets/cameras.js";
    script.addEventListener("error", () => { camerasLoading = false; showError("The cameras could not be loaded: reload the page."); });
    document.head.append(script);
  }

  /** The cameras' place on the page: cameras.js's panel once loaded; before, the camera switch
   * (off) for a seated player. */
  function CameraSlot({ view, me, display }) {
    if (!withCameras(view)) return null;
    if (GM.cameras) return html`<${GM.cameras.Panel} view=${view} me=${me} display=${display} />`;
    if (display || state.role !== "player" || view.stage === "finished") return null;
    const on = !!(store.get(CAMERA_PREF) || {}).on;
    const turnOn = () => { store.set(CAMERA_PREF, Object.assign({}, store.get(CAMERA_PREF), { on: true })); render(); };
    return html`<section class=${"cameras" + (on ? "" : " off")} data-testid="cameras" aria-label="Cameras"><div class="cam-head">
      <button type="button" data-testid="camera-toggle" aria-pressed=${String(on)} disabled=${on} onClick=${turnOn}>${on ? "● Camera on" : "○ Camera off"}</button></div>
      <p class="cam-who" data-testid="camera-who" aria-live="polite">${on ? "Starting your camera…" : cameraWords(view).off}</p></section>`;
  }

  /** Marks the page `status-away` while the status line is scrolled out of sight, so that my
   * moment's banner is pinned to the top of the screen then, and only then. */
  let statusWatch = null;
  let watched = null;
  function watchStatus() {
    const line = app.querySelector("[data-testid=\"status-line\"]");
    if (line === watched) return;
    if (statusWatch) statusWatch.disconnect();
    watched = line;
    document.body.classList.remove("status-away");
    if (!line || !window.IntersectionObserver) return;
    statusWatch = new IntersectionObserver((seen) => {
      for (const e of seen) document.body.classList.toggle("status-away", !e.isIntersecting);
    });
    statusWatch.observe(line);
  }

  function render() {
    if (route.page === "table" || route.page === "display") {
      if (GM.cameras) GM.cameras.sync();
      else if (camerasWanted()) loadCameras();
    }
    if (route.page === "table") {
      window.preact.render(html`<${TablePage} />`, app);
      const bar = !!app.querySelector("[data-testid=\"action-bar\"]");
      document.body.classList.toggle("has-bar", bar);
      document.documentElement.classList.toggle("has-bar", bar);
      if (state.view && !unshown(state.view.settings)) notify(state.view, state.me);
      watchStatus();
    } else if (route.page === "display") {
      window.preact.render(html`<${DisplayPage} />`, app);
      if (state.view) document.title = `${printable(state.view.name)} — ${TITLE}`;
    } else if (route.page === "replay" && replay.views) {
      // A game's control on the replay's step (the ring's zoom) redraws the step.
      replay.draw();
    }
  }

  const table = {
    init(display) {
      state.password = sessionStorage.getItem(`gm.password.${route.table}`);
      ui.password = state.password || "";
      state.summary = undefined;
      document.body.classList.add(display ? "display" : "table-page");
      askInvite();
      app.textContent = "";
      render();
    },

    /** A visitor: the table's summary for the entry panel, and the table itself (watched quietly). */
    async visit(refused) {
      const summary = await findTable(route.table);
      state.summary = summary;
      render();
      if (refused || route.page === "display") return;
      if (summary && state.role === null && (!summary.password || ui.password)) await enter("visit");
    },
  };

  // ---------------------------------------------------------------- the replay viewer

  /** Events that are not steps of the game: they are folded into the step before them. */
  const QUIET = new Set(["connection_changed", "spectators_changed", "player_absent"]);

  const replay = {
    views: null, lines: [], marks: [], at: 0, playing: false, speed: 1, timer: null, password: "",

    init() {
      document.title = `Replay — ${TITLE}`;
      app.textContent = "";
      this.draw();
      document.addEventListener("keydown", (ev) => {
        if (!this.views || ev.target.closest("input, select, textarea")) return;
        if (ev.key === "ArrowRight") this.go(this.at + 1);
        if (ev.key === "ArrowLeft") this.go(this.at - 1);
      });
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
          if (answer.code === "wrong_password") { this.asking = true; this.draw(); if (password) showError(REFUSALS.wrong_password); return; }
          showError(refusal(answer));
          return;
        }
        head = answer;
        events.push(...answer.events);
        if (answer.next_seq === null || answer.next_seq === undefined) break;
        from = answer.next_seq;
      }
      this.asking = false;
      const kind = head.settings.game || DEFAULT_GAME;
      if (LAZY[kind] && !GM.games[kind]) {
        try { await loadGame(kind, () => {}); } catch (_) { return; }
      }
      const first = F.emptyView(head.table, head.name, head.settings);
      this.views = [F.clone(first)];
      this.lines = ["Before the first event: the table is set up."];
      this.marks = [];
      state.names.clear();
      learnNames(first);
      const game = gameOf(head.settings);
      const view = first;
      try {
        events.forEach((e, i) => {
          if (e.kind === "player_joined") state.names.set(e.player, e.name);
          // In the live log's order: remembered, told with the table as it was before the
          // event, then folded (a card named by its place is looked up where it was).
          if (game.recall) game.recall(i + 1, e, head.table);
          const quiet = QUIET.has(e.kind) && this.views.length > 1;
          const line = quiet ? null : describe(e, view);
          F.applyEvent(view, i + 1, e);
          if (quiet) {
            this.views[this.views.length - 1] = F.clone(view);
            return;
          }
          if (game.chapter.starts(e)) this.marks.push(this.views.length);
          this.lines.push(line);
          this.views.push(F.clone(view));
        });
      } catch (err) {
        showError(`This replay could not be read past event ${this.views.length}: ${err.message}`);
      }
      this.at = 0;
      this.draw();
    },

    go(to) {
      if (!this.views) return;
      this.at = Math.max(0, Math.min(this.views.length - 1, to));
      if (this.at === this.views.length - 1) this.pause();
      this.draw();
    },

    /** To the next (or previous) chapter of the game: the step where one begins. */
    nextMark(dir) {
      const list = dir > 0 ? this.marks.filter((k) => k > this.at) : this.marks.filter((k) => k < this.at).reverse();
      this.go(list.length ? list[0] : dir > 0 ? this.views.length - 1 : 0);
    },

    play() {
      if (this.at >= this.views.length - 1) this.at = 0;
      this.playing = true;
      clearInterval(this.timer);
      this.timer = setInterval(() => this.go(this.at + 1), 1000 / this.speed);
      this.draw();
    },

    pause() {
      this.playing = false;
      clearInterval(this.timer);
      this.timer = null;
    },

    draw() {
      window.preact.render(html`<${ReplayPage} r=${this} />`, app);
    },
  };

  function ReplayPage({ r }) {
    if (r.asking) {
      return html`<section class="main"><${ErrorSlot} /><form onSubmit=${(ev) => { ev.preventDefault(); r.load(r.password); }}>
        <p>This game was played at a table with a password.</p>
        <label><span>Password</span><input type="password" data-testid="replay-password" value=${r.password} onInput=${(ev) => { r.password = ev.target.value; }} onChange=${(ev) => { r.password = ev.target.value; }} /></label>
        <button type="submit">Open</button></form></section>`;
    }
    if (!r.views) return html`<section class="main"><${ErrorSlot} /><p>Loading the game…</p></section>`;
    const view = r.views[r.at];
    learnNames(view);
    const last = r.views.length - 1;
    const b = (id, label, aria, to, disabled) => html`<button type="button" data-testid=${id} aria-label=${aria} disabled=${disabled} onClick=${to}>${label}</button>`;
    const leagueId = r.views[0].settings.league;
    const game = gameOf(r.views[0].settings);
    const chapter = game.chapter;
    return html`
      <section class="main">
        <${ErrorSlot} />
        <div class="table-head"><h2>${printable(r.views[0].name)}</h2><a href="/replays">◂ Finished games</a>
          ${leagueId ? html`<a href=${`/leagues/${leagueId}`} data-testid="replay-league">The league ▸</a>` : null}</div>
        <div class="replay-controls" role="group" aria-label="Replay controls">
          ${b("replay-first", "⇤", "To the start", () => r.go(0), r.at === 0)}
          ${b("replay-prev-turn", chapter.back, chapter.backAria, () => r.nextMark(-1), r.at === 0)}
          ${b("replay-prev", "◀", "Back one event", () => r.go(r.at - 1), r.at === 0)}
          ${r.playing ? b("replay-pause", "⏸ Pause", "Pause", () => { r.pause(); r.draw(); }, false)
            : b("replay-play", "▶ Play", "Play", () => r.play(), false)}
          ${b("replay-next", "▶", "On one event", () => r.go(r.at + 1), r.at === last)}
          ${b("replay-next-turn", chapter.on, chapter.onAria, () => r.nextMark(1), r.at === last)}
          ${b("replay-last", "⇥", "To the end", () => r.go(last), r.at === last)}
          <label class="inline"><span>Speed</span><select data-testid="replay-speed" value=${String(r.speed)}
            onChange=${(ev) => { r.speed = Number(ev.target.value); if (r.playing) r.play(); else r.draw(); }}>
            ${options([["0.5", "½ step/s"], ["1", "1 step/s"], ["2", "2 steps/s"], ["4", "4 steps/s"], ["10", "10 steps/s"]])}</select></label>
        </div>
        <p><span data-testid="replay-step">step ${r.at} of ${last}</span></p>
        <input type="range" min="0" max=${last} value=${r.at} aria-label="Step" onInput=${(ev) => { r.pause(); r.go(Number(ev.target.value)); }} onChange=${(ev) => { r.pause(); r.go(Number(ev.target.value)); }} />
        <p class="status-line" data-testid="replay-line" aria-live="polite">${r.lines[r.at]}</p>
        <${game.Replay} view=${view} />
      </section>
      <section class="side">
        <${game.Seats} view=${view} me=${null} replay=${true} />
      </section>`;
  }

  Object.assign(GM.pages, { table, replay, onMessage, onUp, render });
  // What a game's panel (games/<game>.js, loaded after this file) draws with.
  GM.frame = { html, render, go, Button, options, num, gameOf, cameraWords, withCameras, loadGame: (kind) => (LAZY[kind] && !GM.games[kind] ? loadGame(kind, () => {}) : Promise.resolve()) };
  GM.games = GM.games || {};
  // Hooks for the browser tests (see README.md in this folder).
  GM.testHooks = { alerts: () => ui.alerts.map((a) => a.text), ui };
})();

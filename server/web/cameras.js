// The cameras between the players within range (issue 32), for every game: the camera control
// and "who can see you", one RTCPeerConnection per link the server lists (`camera_peers`), the
// signals relayed through the server (`signal`, the page's JSON `{"description": …}` or
// `{"candidate": …}`), the tiles, and the display's sphere picker (the host's seat token on this
// device). Media goes from browser to browser; the server only says who is linked with whom.
//
// Not part of the page's first load: table.js loads this file when a camera is wanted (the
// player's camera is on, or the host's display) and draws its `Panel` where the frame puts it.
// Drawn from `cam` (what the cameras are doing) and `pref` (the player's choices, kept per
// device in localStorage under `gm.camera`) in the frame's one `render()`.
"use strict";

(function () {
  const GM = window.GM;
  const { route, state, store, seatKey, showError, refusal, printable } = GM;
  const { html, render, gameOf, cameraWords, withCameras } = GM.frame;

  const PREF = "gm.camera";
  /** The player's choices, remembered on this device: camera on, on the host's stream, stay on
   * once out, with sound. */
  const pref = Object.assign({ on: false, stream: false, stay: false, audio: false }, store.get(PREF) || {});
  const save = () => store.set(PREF, pref);

  /** What the cameras are doing now. */
  const cam = {
    local: null, // my camera's MediaStream while it runs
    sent: null, // the `camera` state the server has (as JSON text), null when unknown
    ice: [], // the ICE servers of the last `ice_servers`
    peers: new Map(), // peer key → link {key, peer, name, offer, pc, stream, queue, remote, chain}
    early: new Map(), // peer key → signals that came before the link was listed
    busy: false, dirty: false,
    restart: false, // sound was switched: start the camera again
    focused: null, // the enlarged tile whose Close button took the focus
    more: false, // the camera choices are unfolded
    collapsed: store.get("gm.camera.collapsed") === true,
    big: null, // the key of the enlarged tile ("me" for my own)
    center: null, // the display's sphere (a player id) or null
    sentCenter: undefined, // the centre the server has, undefined when unknown
    candidates: [], // the candidates this page sent (for the tests: addresses, not mDNS names)
  };

  const keyOf = (peer) => (peer === "display" ? "display" : `p${peer.player}`);
  const playerOf = (view, id) => (view ? view.players.find((p) => p.player === id) : null);
  const LINKING = new Set(["mulligan", "playing"]);

  /** The video the camera gives: small enough for a phone to send to a few players; a test may
   * ask for less (`gm.camera.video` in localStorage: getUserMedia's video constraints). */
  function videoConstraints() {
    return store.get("gm.camera.video") || { width: { ideal: 640 }, height: { ideal: 480 }, frameRate: { ideal: 15, max: 24 } };
  }

  /** Whether I am out of the game (my camera then stops, unless I chose to stay on). */
  function out(view, me) {
    const mine = playerOf(view, me);
    return !!mine && view.stage !== "lobby" && !gameOf(view.settings).stillIn(mine);
  }

  /** Whether my camera should run now: on, seated, the game not over, and in the game (or
   * staying on while my position is still in the ring). */
  function wanted() {
    const view = state.view;
    if (route.page !== "table" || !pref.on || state.role !== "player" || state.me === null || !view) return false;
    if (view.stage === "finished" || !withCameras(view) || !playerOf(view, state.me)) return false;
    if (out(view, state.me)) return pref.stay && (!view.ring || view.ring.includes(state.me));
    return true;
  }

  // ---------------------------------------------------------------- keeping the server told

  /** Brings the camera and what the server knows of it in line with `wanted()` (one at a time;
   * a call while one runs runs again after it). Called after every render. */
  function sync() {
    if (cam.busy) { cam.dirty = true; return; }
    cam.busy = true;
    const next = route.page === "display" ? syncDisplay() : syncPlayer();
    next.catch(() => {}).finally(() => {
      cam.busy = false;
      if (cam.dirty) { cam.dirty = false; sync(); }
    });
  }

  const OFF = { on: false, stream: false, stay: false };

  async function syncPlayer() {
    if (cam.restart) {
      // Sound turned on or off: the camera starts again, and its links with it.
      cam.restart = false;
      if (cam.local) stopLocal();
      if (cam.sent !== null && GM.link && GM.link.up) {
        cam.sent = JSON.stringify(OFF);
        await GM.link.request(Object.assign({ type: "camera" }, OFF));
      }
    }
    const want = wanted();
    if (want && !cam.local) {
      if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
        // Browsers give a page the camera only over https (or on localhost).
        pref.on = false;
        save();
        showError("Cameras need the table's page over https (or on this machine as localhost): ask the organiser to serve it with TLS.");
        render();
        return;
      }
      try {
        cam.local = await navigator.mediaDevices.getUserMedia({ video: videoConstraints(), audio: !!pref.audio });
      } catch (e) {
        pref.on = false;
        save();
        showError(`Your camera could not start (${printable(e.name || e.message || e)}): check the browser's permission for this page.`);
        render();
        return;
      }
      cam.dirty = true; // the table may have moved on while the browser asked
      render();
      return;
    }
    if (!want && cam.local) stopLocal();
    const message = want ? { on: true, stream: !!pref.stream, stay: !!pref.stay } : OFF;
    const key = JSON.stringify(message);
    if (!GM.link || !GM.link.up || state.role !== "player" || cam.sent === key || (!want && cam.sent === null)) return;
    cam.sent = key;
    const answer = await GM.link.request(Object.assign({ type: "camera" }, message));
    if (answer.type === "error") {
      cam.sent = null;
      if (answer.code !== "offline" && answer.code !== "not_in_table") showError(refusal(answer));
    }
  }

  /** The host's seat token, when the host's seat at this table is on this device. */
  function hostToken(view) {
    const seat = store.get(seatKey(route.table));
    return view && seat && seat.token && seat.player === view.host ? seat.token : null;
  }

  async function syncDisplay() {
    const token = withCameras(state.view) ? hostToken(state.view) : null;
    if (!token || state.role !== "spectator" || !GM.link || !GM.link.up) return;
    const center = cam.center;
    if (cam.sentCenter === center || (cam.sentCenter === undefined && center === null)) return;
    cam.sentCenter = center;
    const answer = await GM.link.request({ type: "camera_display", token, center });
    if (answer.type === "error") {
      cam.sentCenter = undefined;
      if (answer.code !== "offline" && answer.code !== "not_in_table") showError(refusal(answer));
    }
  }

  function stopLocal() {
    for (const t of cam.local.getTracks()) t.stop();
    cam.local = null;
    closeAll();
  }

  function closeAll() {
    for (const key of Array.from(cam.peers.keys())) drop(key);
    cam.early.clear();
    cam.list = [];
  }

  // ---------------------------------------------------------------- the links

  function drop(key) {
    const link = cam.peers.get(key);
    if (!link) return;
    cam.peers.delete(key);
    link.pc.close();
    if (cam.big === key) cam.big = null;
  }

  /** Sends one signal to a linked peer (a refusal — the link just went — is not news). */
  function signal(link, data) {
    if (cam.peers.get(link.key) !== link) return;
    GM.link.request({ type: "signal", to: link.peer, payload: JSON.stringify(data) });
  }

  function open(entry) {
    const key = keyOf(entry.peer);
    const pc = new RTCPeerConnection({ iceServers: cam.ice });
    const link = { key, peer: entry.peer, name: entry.name, offer: entry.offer, pc, stream: null, queue: [], remote: false,
      chain: Promise.resolve(), restarts: 0 };
    cam.peers.set(key, link);
    if (cam.local) for (const t of cam.local.getTracks()) pc.addTrack(t, cam.local);
    pc.ontrack = (ev) => { link.stream = ev.streams[0] || new MediaStream([ev.track]); render(); };
    pc.onicecandidate = (ev) => {
      if (!ev.candidate || !ev.candidate.candidate) return;
      cam.candidates = cam.candidates.concat([ev.candidate.candidate]).slice(-40);
      signal(link, { candidate: ev.candidate.toJSON() });
    };
    pc.onconnectionstatechange = () => {
      // A link that failed (a network change) tries again, from the side that offers.
      if (pc.connectionState === "failed" && link.offer && link.restarts < 3 && cam.peers.get(key) === link) {
        link.restarts += 1;
        link.chain = link.chain.then(() => offer(link, true));
      }
      render();
    };
    if (entry.offer) link.chain = link.chain.then(() => offer(link, false));
    const early = cam.early.get(key) || [];
    cam.early.delete(key);
    for (const payload of early) heard(link, payload);
  }

  async function offer(link, restart) {
    try {
      await link.pc.setLocalDescription(await link.pc.createOffer(restart ? { iceRestart: true } : undefined));
      signal(link, { description: link.pc.localDescription.toJSON() });
    } catch (_) { /* the link closed meanwhile */ }
  }

  /** A signal from a linked peer, handled after the ones before it. */
  function heard(link, payload) {
    link.chain = link.chain.then(() => answerSignal(link, payload));
  }

  async function answerSignal(link, payload) {
    let data;
    try { data = JSON.parse(payload); } catch (_) { return; }
    const pc = link.pc;
    try {
      if (data && data.description) {
        const d = data.description;
        // Exactly one side offers: the offering side takes answers only, the other offers only.
        if ((d.type === "offer") === link.offer) return;
        await pc.setRemoteDescription(d);
        link.remote = true;
        for (const c of link.queue.splice(0)) await pc.addIceCandidate(c).catch(() => {});
        if (d.type === "offer") {
          await pc.setLocalDescription(await pc.createAnswer());
          signal(link, { description: pc.localDescription.toJSON() });
        }
      } else if (data && data.candidate) {
        // Candidates wait for the remote description.
        if (link.remote) await pc.addIceCandidate(data.candidate).catch(() => {});
        else link.queue.push(data.candidate);
      }
    } catch (_) { /* a malformed or late signal changes nothing */ }
  }

  /** The whole list of links this page should have now: open the new ones, close the gone. */
  function listed(peers) {
    // A list that comes after my camera stopped is for links about to go.
    const list = route.page === "table" && !cam.local ? [] : peers;
    const keep = new Map(list.map((p) => [keyOf(p.peer), p]));
    for (const key of Array.from(cam.peers.keys())) if (!keep.has(key)) drop(key);
    for (const [key, p] of keep) {
      const link = cam.peers.get(key);
      if (link) link.name = p.name;
      else open(p);
    }
    cam.list = list;
  }

  /** The server's messages about cameras (table.js hands them over). */
  function onMessage(m) {
    switch (m.type) {
      case "ice_servers": cam.ice = Array.isArray(m.servers) ? m.servers : []; break;
      case "camera_peers": listed(Array.isArray(m.peers) ? m.peers : []); render(); break;
      case "signal": {
        const key = keyOf(m.from);
        const link = cam.peers.get(key);
        if (link) heard(link, m.payload);
        else cam.early.set(key, (cam.early.get(key) || []).concat([m.payload]).slice(-20));
        break;
      }
      default: break;
    }
  }

  /** A new connection (after a drop): the server holds no camera state for it; every link is gone. */
  function reset() {
    closeAll();
    cam.list = [];
    cam.sent = null;
    cam.sentCenter = undefined;
  }

  /** A snapshot this page did not ask for (the table moved to another node): tell it again. */
  function again() {
    cam.sent = null;
    cam.sentCenter = undefined;
  }

  // ---------------------------------------------------------------- drawing

  /** Puts a stream into a video element (once). */
  const attach = (stream) => (el) => { if (el && el.srcObject !== stream) el.srcObject = stream; };

  /** Where a linked player sits from me, in words and as an order on the strip (far left first). */
  function place(view, me, id) {
    const ring = view.ring || [];
    const at = ring.indexOf(me);
    const there = ring.indexOf(id);
    if (at < 0 || there < 0) return { words: "", order: 0 };
    const n = ring.length;
    const left = (there - at + n) % n;
    const right = (at - there + n) % n;
    return left <= right ? { words: `${left} to your left`, order: -left } : { words: `${right} to your right`, order: right };
  }

  function toggle(key, value) {
    pref[key] = value;
    if (key === "audio" && cam.local) cam.restart = true;
    save();
    render();
  }

  function enlarge(key) { cam.big = key; render(); }

  function Tile({ id, name, where, stream, connected, mine }) {
    return html`<button type="button" class=${"cam-tile" + (mine ? " me" : "")} data-testid="camera-tile" data-peer=${id} onClick=${() => enlarge(id)}>
      ${stream ? html`<video autoplay muted=${mine || route.page !== "table" || !pref.audio} playsinline ref=${attach(stream)}></video>`
        : html`<span class="cam-wait" aria-hidden="true">…</span>`}
      <span class="cam-name">${name}${where ? html` <small>${where}</small>` : null}${connected ? null : " · connecting"}<span class="sr-only">: ${mine ? "your camera" : "camera"}, tap to enlarge</span></span>
    </button>`;
  }

  /** The tiles: my own first among the players in range as they sit (the display: every camera). */
  function tiles(view, me) {
    const list = [];
    for (const link of cam.peers.values()) {
      if (link.peer === "display") continue;
      const id = link.peer.player;
      const p = route.page === "table" ? place(view, me, id) : { words: "", order: (view.ring || []).indexOf(id) };
      list.push({ order: p.order, tile: html`<${Tile} key=${link.key} id=${link.key} name=${printable(link.name)} where=${p.words}
        stream=${link.stream} connected=${link.pc.connectionState === "connected"} />` });
    }
    if (cam.local) list.push({ order: 0.5, tile: html`<${Tile} key="me" id="me" name="You" where="" stream=${cam.local} connected=${true} mine=${true} />` });
    return list.sort((a, b) => a.order - b.order).map((t) => t.tile);
  }

  /** One camera, large, over the page; Escape or Close puts it back. */
  function Big() {
    if (cam.big === null) { cam.focused = null; return null; }
    const link = cam.big === "me" ? null : cam.peers.get(cam.big);
    const stream = cam.big === "me" ? cam.local : link && link.stream;
    if (!stream) { cam.big = null; return null; }
    const name = link ? printable(link.name) : "You";
    const close = () => {
      const key = cam.big;
      cam.big = null;
      render();
      const tile = document.querySelector(`[data-testid="camera-tile"][data-peer="${key}"]`);
      if (tile) tile.focus();
    };
    return html`<div class="cam-big" role="dialog" aria-modal="true" aria-label=${`${name}'s camera, enlarged`} data-testid="camera-big"
        onKeyDown=${(ev) => { if (ev.key === "Escape") close(); }}>
      <video autoplay muted playsinline ref=${attach(stream)}></video>
      <div class="row"><strong>${name}</strong>
        <button type="button" data-testid="camera-big-close" ref=${(el) => { if (el && cam.focused !== cam.big) { cam.focused = cam.big; el.focus(); } }} onClick=${close}>Close</button></div>
    </div>`;
  }

  /** Who can see me, in words. */
  function whoSees(view, me) {
    if (!pref.on) return cameraWords(view).off;
    if (out(view, me) && !wanted()) return "You are out of the game: your camera stopped. Nobody sees you.";
    if (!cam.local) return "Starting your camera…";
    if (!LINKING.has(view.stage)) return cameraWords(view).waiting;
    const names = (cam.list || []).map((p) => (p.peer === "display" ? "the host's display" : printable(p.name)));
    return names.length ? `Who can see you: ${names.join(", ")}.` : cameraWords(view).nobody;
  }

  /** A player's cameras: the control, who can see him, the tiles (a strip he can fold on a phone). */
  function PlayerPanel({ view, me }) {
    const shown = tiles(view, me);
    const checkbox = (key, id, label) => html`<label class="inline"><input type="checkbox" data-testid=${id} checked=${!!pref[key]}
      onChange=${(ev) => toggle(key, ev.target.checked)} /> ${label}</label>`;
    const isOut = out(view, me);
    return html`<section class=${"cameras" + (pref.on || isOut ? "" : " off")} data-testid="cameras" aria-label="Cameras">
      <div class="cam-head">
        <button type="button" data-testid="camera-toggle" class=${pref.on ? "primary" : ""} aria-pressed=${String(!!pref.on)}
          onClick=${() => toggle("on", !pref.on)}>${!pref.on ? "○ Camera off" : isOut && !wanted() ? "◐ Camera on, stopped" : "● Camera on"}</button>
        ${shown.length ? html`<button type="button" data-testid="camera-collapse" aria-expanded=${String(!cam.collapsed)} aria-controls="cam-tiles"
          onClick=${() => { cam.collapsed = !cam.collapsed; store.set("gm.camera.collapsed", cam.collapsed); render(); }}>${cam.collapsed ? `Show cameras (${shown.length})` : "Hide cameras"}</button>` : null}
      </div>
      <p class="cam-who" data-testid="camera-who" aria-live="polite">${whoSees(view, me)}</p>
      ${isOut ? html`<div class="cam-choices">${checkbox("stay", "camera-stay", "Stay on for my sphere (while my position is in the ring)")}</div>` : null}
      ${pref.on ? html`<details class="cam-more" open=${cam.more} onToggle=${(ev) => { cam.more = ev.target.open; }}>
        <summary data-testid="camera-choices">Camera choices</summary>
        <div class="cam-choices">
          ${checkbox("stream", "camera-stream", "Also on the host's stream")}
          ${isOut ? null : checkbox("stay", "camera-stay", "Stay on for my sphere once I am out")}
          ${checkbox("audio", "camera-audio", "With sound")}
        </div></details>` : null}
      <div id="cam-tiles" class="cam-tiles" data-testid="camera-tiles" hidden=${cam.collapsed || !shown.length}>${shown}</div>
      <${Big} />
    </section>`;
  }

  /** The display's cameras: the sphere picker (the host's seat on this device) and the tiles. */
  function DisplayPanel({ view }) {
    if (!hostToken(view)) return null;
    const players = view.players.filter((p) => p.seat !== null && p.seat !== undefined).sort((a, b) => a.seat - b.seat);
    return html`<section class="cameras display-cams" data-testid="cameras" aria-label="Cameras">
      <label class="inline"><span>Cameras of the sphere of</span>
        <select data-testid="camera-center" value=${cam.center === null ? "" : String(cam.center)}
          onChange=${(ev) => { cam.center = ev.target.value === "" ? null : Number(ev.target.value); render(); }}>
          <option value="">nobody (no cameras)</option>
          ${players.map((p) => html`<option key=${p.player} value=${String(p.player)}>${printable(p.name)}</option>`)}
        </select></label>
      ${cam.center !== null && !cam.peers.size ? html`<p class="meta">Nobody there streams a camera (each player chooses "Also on the host's stream").</p>` : null}
      <div class="cam-tiles">${tiles(view, null)}</div>
      <${Big} />
    </section>`;
  }

  function Panel({ view, me, display }) {
    if (!withCameras(view)) return null;
    return display ? html`<${DisplayPanel} view=${view} />` : state.role === "player" && view.stage !== "finished" ? html`<${PlayerPanel} view=${view} me=${me} />` : null;
  }

  /** For the tests (`gm.cameras()`): whether my camera runs, the candidates sent, and per link its
   * connection state and the frames of video decoded from it. */
  async function report() {
    const links = [];
    for (const link of cam.peers.values()) {
      let frames = 0;
      try {
        const stats = await link.pc.getStats();
        stats.forEach((s) => { if (s.type === "inbound-rtp" && s.kind === "video") frames += s.framesDecoded || 0; });
      } catch (_) { /* closed meanwhile */ }
      links.push({ peer: link.key, name: link.name, offer: link.offer, state: link.pc.connectionState, frames });
    }
    return { on: !!pref.on, local: !!cam.local, links, candidates: cam.candidates.slice() };
  }

  window.addEventListener("pagehide", () => { if (cam.local) stopLocal(); else closeAll(); });

  GM.cameras = { Panel, onMessage, sync, reset, again, report };
  render();
})();

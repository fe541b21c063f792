// Starts the page the address names and gives the browser tests their hooks (`window.gm`).
"use strict";

(function () {
  const GM = window.GM;
  const { route, state, send } = GM;
  const P = GM.pages;

  if (route.page === "lobby") P.lobby.init();
  else if (route.page === "replays") P.replays.init();
  else if (route.page === "replay") P.replay.init();
  else if (route.page === "leagues") P.leagues.init();
  else if (route.page === "league") P.league.init();
  else if (route.page === "mountain") P.mountain.init();
  else P.table.init(route.page === "display");

  const link = GM.connect(P.onMessage, P.onUp);

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
    alerts: () => (GM.testHooks ? GM.testHooks.alerts() : []),
    replayLines: () => GM.pages.replay.lines.slice(),
    // The camera links: {on, local, links: [{peer, name, offer, state, frames}], candidates}, or null before cameras.js is loaded.
    cameras: () => (GM.cameras ? GM.cameras.report() : Promise.resolve(null)),
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

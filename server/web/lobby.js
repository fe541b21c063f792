// The lobby (the open tables and the create form) and the list of finished games.
"use strict";

(function () {
  const GM = window.GM;
  const { F, MP, PROTOCOL, PHASES, PHASE_NAMES, TITLE, h, s, append, clear, put, printable, shorten, store, REFUSALS, SEATINGS, refusal, route, state, seatKey, memberKey, organiserKey, app, errorEl, beep, showError, send, nameOf, learnNames, tn, entropy, RESULTS, CAUSES, describe, bonusWords, STAGES, rulesWords, fillSelect, findTable } = GM;

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
      setInterval(() => { if (GM.link.up) this.refresh(); }, 3000);
    },

    async refresh() {
      const tables = [];
      let from = 0;
      for (let pages = 0; pages < 20; pages++) {
        const answer = await GM.link.request({ type: "list_tables", from, limit: 500 });
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


  Object.assign(GM.pages, { lobby, replays });
})();

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
      // Each setting: its label tied to it, and one line of help in a casual player's words
      // under it (tied to it too, so a screen reader says it).
      const setting = (label, control, help) => {
        control.id = `setting-${control.name}`;
        const note = h("small", { class: "help", id: `${control.id}-help` }, help);
        control.setAttribute("aria-describedby", note.id);
        return control.type === "checkbox"
          ? h("div", { class: "field check" }, h("label", { class: "inline", for: control.id }, control, ` ${label}`), note)
          : h("div", { class: "field" }, h("label", { for: control.id }, label), control, note);
      };
      const input = (name, attrs) => h("input", Object.assign({ name, testid: `create-${name.replace(/_/g, "-")}` }, attrs));
      const select = (name, options) => h("select", { name, testid: `create-${name.replace(/_/g, "-")}` },
        options.map(([value, text]) => h("option", { value }, text)));
      // Grand Melee's own settings: hidden when the table plays another game.
      const gm = (el) => { el.classList.add("gm-only"); return el; };
      const game = select("game", [["grand_melee", "Grand Melee"], ["magic_tech", "Magic Tech (2)"], ["mountain_magic", "Mountain Magic (alone)"]]);
      game.id = "setting-game";
      const NAMES = { grand_melee: "Grand Melee", magic_tech: "Magic Tech", mountain_magic: "Mountain Magic" };
      const SEATS = { grand_melee: 16, magic_tech: 2, mountain_magic: 1 };
      let was = "grand_melee";
      game.addEventListener("change", () => {
        const other = game.value !== "grand_melee";
        form.classList.toggle("magic-tech", other);
        form.classList.toggle("mountain-magic", game.value === "mountain_magic");
        form.elements.seats.min = game.value === "mountain_magic" ? 1 : 2;
        form.elements.seats.value = SEATS[game.value];
        if (form.elements.name.value === NAMES[was]) form.elements.name.value = NAMES[game.value];
        was = game.value;
      });
      // Mountain Magic's own settings: which mountain (one of its own, or today's, the same deal
      // for everyone today, with standings; optionally a league's), and for one of its own the
      // climber's deck file (absent: the dice draw one).
      const deck = h("input", { type: "file", name: "mm_deck", testid: "create-mm-deck", accept: ".json,application/json" });
      const mm = (el) => { el.classList.add("mm-only"); return el; };
      const also = (el, cls) => { el.classList.add(cls); return el; };
      const day = select("mm_day", [["", "A mountain of its own"], ["today", "Today's mountain"]]);
      const league = select("mm_league", [["", "No league: the open standings"]]);
      let leaguesAsked = false;
      day.addEventListener("change", async () => {
        const today = day.value === "today";
        form.classList.toggle("mm-today", today);
        if (today && form.elements.name.value === "Mountain Magic") form.elements.name.value = "Today's mountain";
        if (!today && form.elements.name.value === "Today's mountain") form.elements.name.value = "Mountain Magic";
        if (!today || leaguesAsked) return;
        leaguesAsked = true;
        const answer = await send({ type: "list_leagues", from: 0, limit: 500 });
        if (answer.type === "leagues") for (const l of answer.leagues) league.append(h("option", { value: l.league }, printable(l.name)));
      });
      const form = h("form", { class: "create", id: "create", onsubmit: (ev) => { ev.preventDefault(); this.create(form); } },
        h("div", { class: "lobby-head" }, h("h2", {}, "Create a table"),
          h("label", { for: "setting-game", class: "inline" }, "Game ", game)),
        h("div", { class: "fields" },
          setting("Table name", input("name", { required: true, maxlength: 32, value: "Grand Melee", autocomplete: "off" }),
            "What everyone sees in the list of tables."),
          gm(setting("Seats", input("seats", { type: "number", min: 2, max: 40, value: 16, required: true, inputmode: "numeric" }),
            "How many players can sit down: 2 to 40 (Grand Melee is for 15 to 40).")),
          gm(setting("Rules", select("rules", [["seed", "Grand Melee (turns at once)"], ["cr807", "Rules 807 (turn markers)"]]),
            "Grand Melee: several turns run at once around the table. Rules 807: the official version, one turn per marker.")),
          gm(setting("Spell range", input("spell_range", { type: "number", min: 1, max: 4, placeholder: "the rules' own", inputmode: "numeric" }),
            "How many seats away your spells reach (the rules say 2; empty: the rules' own).")),
          gm(setting("Combat with dice", h("input", { type: "checkbox", name: "combat_dice", testid: "create-combat-dice" }),
            "The server rolls a d20 for each attack to see how hard it hits.")),
          mm(setting("Which mountain", day,
            "Today's mountain: everyone who climbs it today gets the same deal, and the day's standings rank the climbs (your first climb of the day counts).")),
          also(mm(setting("League (optional)", league,
            "A league's climb counts in the league's standings of the day; each member sits down with the member token the league gave him.")), "mm-day-only"),
          also(mm(setting("Your own deck (optional)", deck,
            "A deck file ({\"cards\":[{\"name\",\"count\"}…]}, 65 cards by the recipe). Empty: the table's dice draw a deck from the card pool.")), "mm-own-only"),
          setting("Password (optional)", input("password", { type: "password", maxlength: 64, autocomplete: "new-password" }),
            "Only people who know it can sit down or watch. Empty: open to all.")),
        h("details", {}, h("summary", {}, "More settings"),
          h("div", { class: "fields" },
            gm(setting("Starting life", input("starting_life", { type: "number", min: 1, max: 1000, value: 20, inputmode: "numeric" }),
              "Each player's life at the start (the rules say 20).")),
            gm(setting("Opening hands", select("mulligan", [["paris", "One player after another"], ["simultaneous", "Everyone at once"]]),
              "Whether players decide to keep or redraw their opening hands one after another, or all at once.")),
            gm(setting("Fewer turns as players go", select("reduction", [["eager", "As soon as there are fewer players"], ["forced", "Only when the turns no longer fit"]]),
              "As players are knocked out, the table runs fewer turns at once: this says how soon.")),
            setting("Turn time limit, seconds", input("turn_clock_secs", { type: "number", min: 0, value: 0, inputmode: "numeric" }),
              "A turn that lasts longer ends by itself. 0: no limit."),
            setting("Time to decide on a hand, seconds", input("mulligan_clock_secs", { type: "number", min: 0, value: 60, inputmode: "numeric" }),
              "Who has not decided by then keeps his hand. 0: no limit."),
            setting("Away limit, seconds", input("absence_limit_secs", { type: "number", min: 0, value: 600, inputmode: "numeric" }),
              "After how long away a player counts as gone: everyone is told, and the host may take him out (600: ten minutes)."),
            setting("Most spectators", input("max_spectators", { type: "number", min: 0, max: 1000, value: 100, inputmode: "numeric" }),
              "How many people may watch without playing (up to 1000)."))),
        h("button", { type: "submit", testid: "create-submit", class: "primary" }, "Create the table"));
      put(app, 
        h("section", { class: "lobby" },
          h("div", { class: "lobby-head" }, h("h2", {}, "Tables"),
            h("a", { href: "#create", class: "new-table", testid: "new-table" }, "New table ▾"),
            h("a", { href: "/leagues", testid: "leagues-link" }, "Leagues ▸"),
            h("a", { href: "/replays" }, "Finished games ▸"), h("a", { href: "/?mountain=today", testid: "mm-today-link" }, "Today's mountain ▸")),
          list),
        h("section", { class: "panel create-panel" }, form, errorEl));
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
          `${STAGES[t.stage] || t.stage} · ${t.seated}/${t.seats} seated · ${t.spectators} watching · ${t.game === "mountain_magic" ? "Mountain Magic · a solitaire climb" : ((GM.games || {})[t.game || "grand_melee"] || { settingsWords: rulesWords }).settingsWords(t)}` +
          (t.adjourned ? " · adjourned" : "") + (t.password ? " · password" : "") + (t.league ? " · league game" : ""))))));
    },

    async create(form) {
      const v = (name) => form.elements[name].value.trim();
      const n = (name) => Number(v(name));
      const message = {
        type: "create_table", name: v("name"), seats: n("seats"), game: v("game"),
        spell_range: v("spell_range") === "" ? 0 : n("spell_range"), rules: v("rules"),
        combat_dice: form.elements.combat_dice.checked, mulligan: v("mulligan"),
        reduction: v("reduction"), starting_life: n("starting_life"),
        password: v("password") || null,
        turn_clock_secs: n("turn_clock_secs"), absence_limit_secs: n("absence_limit_secs"),
        mulligan_clock_secs: n("mulligan_clock_secs"), max_spectators: n("max_spectators"),
      };
      if (message.game === "magic_tech") Object.assign(message, { seats: 2, combat_dice: false, mulligan: "paris" });
      if (message.game === "mountain_magic") {
        Object.assign(message, { seats: 1, combat_dice: false });
        const file = form.elements.mm_deck.files && form.elements.mm_deck.files[0];
        if (v("mm_day") === "today") {
          message.mountain_magic = { day: "today" };
          if (v("mm_league")) message.mountain_magic.league = v("mm_league");
        } else if (file) {
          try {
            message.mountain_magic = { deck: JSON.parse(await file.text()) };
          } catch (err) {
            showError(`The deck file is not JSON: ${err.message}`);
            return;
          }
        }
      }
      if (!message.name) { showError("Give the table a name."); return; }
      for (const k of ["seats", "spell_range", "starting_life", "turn_clock_secs", "absence_limit_secs", "mulligan_clock_secs", "max_spectators"]) {
        if (!Number.isInteger(message[k]) || message[k] < 0) { showError(`${k.replace(/_/g, " ")}: a whole number, please.`); return; }
      }
      const answer = await send(message);
      // A climb's refused settings (its deck file, its day): the server's own words, which say
      // what is wrong, rather than the code's general description.
      if (answer.type === "error" && answer.code === "bad_settings" && message.mountain_magic && answer.message) {
        showError(`${message.mountain_magic.deck ? "Your deck file was refused" : "The climb was not created"}: ${printable(answer.message)}`);
      }
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


  // ---------------------------------------------------------------- a day's mountain

  /** The standings of a day's mountain (`/?mountain=today|YYYY-MM-DD[&league=…]`), drawn by
   * Mountain Magic's part (games/mountain_magic.js, loaded for it). */
  const mountain = {
    init() {
      document.title = `Today's mountain — ${TITLE}`;
      this.root = h("div", { testid: "mm-standings-page" }, h("p", { class: "meta" }, "Loading the standings…"));
      put(app, h("section", { class: "lobby" }, errorEl, this.root));
      this.ready = GM.frame.loadGame("mountain_magic");
    },
    async load() {
      try { await this.ready; } catch (_) { return; }
      GM.games.mountain_magic.standings(this.root, route.day, route.league);
    },
  };

  Object.assign(GM.pages, { lobby, replays, mountain });
})();

// Ascension leagues: the list of leagues and one league's page (standings, ledgers, join, buy).
"use strict";

(function () {
  const GM = window.GM;
  const { F, MP, PROTOCOL, PHASES, PHASE_NAMES, TITLE, h, s, append, clear, put, printable, shorten, store, REFUSALS, SEATINGS, refusal, route, state, seatKey, memberKey, organiserKey, app, errorEl, beep, showError, send, nameOf, learnNames, tn, entropy, RESULTS, CAUSES, describe, bonusWords, STAGES, rulesWords, fillSelect, findTable } = GM;

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

  /** "1 game", "2 games". */
  const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

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
        h("span", { class: "meta" }, `${plural(l.members, "member")} · ${plural(l.games, "game")}` +
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
        h("span", { class: "meta" }, `${plural(view.standings.length, "member")} · ${plural(view.games.length, "game")}` + (view.password ? " · password" : "")),
        h("a", { href: "/leagues" }, "◂ Leagues"));
      const me = this.member();
      // A wide table scrolls inside its own box (focusable, so a keyboard scrolls it too); the
      // page does not.
      put(this.standings, h("h3", { id: "standings-title" }, "Standings"),
        h("p", { class: "meta" }, "Power: every mana point the deck has earned; unspent: what is left to buy with."),
        h("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-labelledby": "standings-title" }, h("table", { class: "standings", testid: "league-standings", "aria-labelledby": "standings-title" },
        h("thead", {}, h("tr", {}, ...["#", "Member", "Deck", "Colours", "Power", "Unspent", "Games", "Wins", "Avg place"].map((t) => h("th", {}, t)))),
        h("tbody", {}, view.standings.map((m, i) => h("tr", { testid: "league-row", "data-member": m.member, class: me && me.member === m.member ? "you" : "" },
          h("td", {}, String(i + 1)),
          h("td", {}, h("button", { type: "button", class: "link", testid: `ledger-${m.member}`, onclick: () => this.showDeck(m.member) }, printable(m.name))),
          h("td", {}, m.deck ? printable(m.deck) : "(no deck yet)"), h("td", {}, m.alliance ? allianceName(m.alliance) : "–"),
          h("td", { testid: "power" }, String(m.power)), h("td", { testid: "balance" }, String(m.balance)),
          h("td", {}, String(m.games)), h("td", {}, String(m.wins)), h("td", {}, average(m.places, m.games))))))));
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
          // append() skips the remedy form when there is none (the DOM's own would write "null").
          else append(this.mine, [this.buyForm(answer.deck), this.remedyForm(answer.deck)]);
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


  Object.assign(GM.pages, { leagues, league });
})();

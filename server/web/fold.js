// The table-view fold of the browser seat: PROTOCOL.md, "Applying events", field for field.
//
// A view starts from a `snapshot` (or, for a replay, from `emptyView`); every event is applied
// with `applyEvent`. The table-level events (seats' presence, host, spectators, chat, pause,
// adjournment, kicks, mutes, calls: what `SessionFacts::apply` folds in protocol/src/shell.rs)
// are folded here once for every game (`shell`); any other event goes to the fold of the game
// the view's `settings.game` names (`games`, "grand_melee" when absent), which also recomputes
// its derived fields. The result must equal the server's snapshot at the same `seq` exactly: the
// browser tests compare them throughout whole games (`gm.checkMirror()`), and tests/tests/fold.rs
// after every event of random games. Pure: no DOM, no network, no clock.
"use strict";

(function (global) {
  const I32_MIN = -2147483648;
  const I32_MAX = 2147483647;

  class FoldError extends Error {}

  /** The fold of the game a view's settings name. */
  function gameOf(view) {
    const kind = (view.settings && view.settings.game) || "grand_melee";
    const game = games[kind];
    if (!game) throw new FoldError(`unknown game ${kind}`);
    return game;
  }

  /** The view of a table before any event (a replay starts here): the shell's fields and the game's. */
  function emptyView(table, name, settings) {
    const view = {
      table, name, seq: 0, settings,
      stage: "lobby", host: null, players: [], standings: [],
      spectators: 0, paused: false, adjourned: false, resume_asks: [], spectators_muted: false, calls: null,
    };
    return Object.assign(view, gameOf(view).emptyView());
  }

  // A league table's lobby remembers who chose whom to play first (`first_player_chosen`): not a
  // view field (the view shows only whom, `first_choice`, and a choice is dropped once its author
  // is no longer the decider), so it is kept off the enumerable keys the mirror check compares.
  function choiceOf(view) {
    return view._choice || null;
  }

  function setChoice(view, choice) {
    Object.defineProperty(view, "_choice", { value: choice, writable: true, configurable: true, enumerable: false });
  }

  // Open calls for the host: the view leaves `calls` out when there are none (null here).
  function callsOf(view) {
    return view.calls || [];
  }

  function setCalls(view, calls) {
    view.calls = calls.length ? calls : null;
  }

  function clone(value) {
    return JSON.parse(JSON.stringify(value));
  }

  function playerOf(view, id) {
    const p = view.players.find((q) => q.player === id);
    if (!p) throw new FoldError(`unknown player ${id}`);
    return p;
  }

  function turnOf(view, id) {
    const t = view.turns.find((u) => u.turn === id);
    if (!t) throw new FoldError(`unknown turn ${id}`);
    return t;
  }

  function saturate(n) {
    return Math.max(I32_MIN, Math.min(I32_MAX, n));
  }

  /** Applies one event (number `seq`) to `view` in place; throws FoldError if it does not fit. */
  function applyEvent(view, seq, e) {
    if (seq !== view.seq + 1) throw new FoldError(`event ${seq} after ${view.seq}`);
    const game = gameOf(view);
    if (shell.kinds.has(e.kind)) shell.apply(view, e);
    else game.apply(view, e);
    view.seq = seq;
    game.recomputeDerived(view);
    return view;
  }

  /** Recomputes the derived fields of the view's game. */
  function recomputeDerived(view) {
    return gameOf(view).recomputeDerived(view);
  }

  // ---------------------------------------------------------------- the shell's events

  const shell = {
    /** The table-level events, folded the same for every game. */
    kinds: new Set(["connection_changed", "table_paused", "table_adjourned", "resume_requested", "player_absent",
      "player_kicked", "player_muted", "host_changed", "spectators_changed", "chat", "host_called", "host_answered"]),

    /** Folds one table-level event into `view`. */
    apply(view, e) {
      switch (e.kind) {
        case "connection_changed": {
          const p = playerOf(view, e.player);
          p.connected = e.connected;
          if (e.connected) p.absent = false;
          break;
        }
        case "table_paused":
          view.paused = e.paused;
          break;
        case "table_adjourned":
          view.adjourned = e.adjourned;
          view.resume_asks = [];
          // Adjourning ends a pause.
          if (e.adjourned) view.paused = false;
          break;
        case "resume_requested":
          playerOf(view, e.player);
          if (!view.resume_asks.includes(e.player)) view.resume_asks.push(e.player);
          break;
        case "player_absent":
          playerOf(view, e.player).absent = true;
          break;
        case "player_kicked":
          // His connection is closed with the kick.
          playerOf(view, e.player).connected = false;
          break;
        case "player_muted":
          if (e.player === null || e.player === undefined) view.spectators_muted = e.muted;
          else playerOf(view, e.player).muted = e.muted;
          break;
        case "host_changed":
          view.host = e.player === undefined ? null : e.player;
          break;
        case "spectators_changed":
          view.spectators = e.spectators;
          break;
        case "chat":
          break;
        case "host_called":
          playerOf(view, e.player);
          setCalls(view, callsOf(view).filter((c) => c.player !== e.player).concat([{ player: e.player, reason: e.reason }]));
          break;
        case "host_answered":
          if (e.player === null || e.player === undefined) setCalls(view, []);
          else setCalls(view, callsOf(view).filter((c) => c.player !== e.player));
          break;
        default:
          throw new FoldError(`not a table-level event: ${e.kind}`);
      }
    },

    /** A player leaves the table: his calls go with him (a game calls it on `player_left`). */
    unseat(view, player) {
      setCalls(view, callsOf(view).filter((c) => c.player !== player));
    },
  };

  // ---------------------------------------------------------------- Grand Melee

  /** Grand Melee's fields of a view before any event. */
  function gmEmptyView() {
    return {
      first_player: null, mulligan_decider: null, mulligan_deciders: [], ring: [], turns: [],
      dice_commitment: "", dice_secret: null, first_decider: null, first_choice: null, seating_mode: null,
    };
  }

  /** Applies one of Grand Melee's events to `view` in place. */
  function gmApply(view, e) {
    const s = view.settings;
    switch (e.kind) {
      case "player_joined":
        view.players.push({
          player: e.player, name: e.name, seat: null, life: s.starting_life, poison: 0,
          status: "alive", hand_size: s.hand_size, kept: false, connected: true,
          absent: false, muted: false, may_attack: [], may_target: [],
          extra_turns: 0, extra_next: 0, stacks: [], deck: e.deck ? clone(e.deck) : null, bonus: null,
        });
        break;
      case "first_player_chosen":
        if (view.stage !== "lobby") throw new FoldError("a first player chosen after the start");
        playerOf(view, e.by);
        playerOf(view, e.player);
        setChoice(view, { by: e.by, player: e.player });
        break;
      case "player_left":
        if (view.stage === "lobby") {
          view.players = view.players.filter((p) => p.player !== e.player);
          shell.unseat(view, e.player);
          const choice = choiceOf(view);
          if (choice && (choice.by === e.player || choice.player === e.player)) setChoice(view, null);
        }
        break;
      case "game_started": {
        const bonuses = e.bonuses || [];
        const players = e.seating.map((id, seat) => {
          const p = playerOf(view, id);
          const bonus = bonuses.find((b) => b.player === id) || null;
          return Object.assign(p, {
            seat, life: saturate(s.starting_life + (bonus ? bonus.life : 0)), poison: 0, status: "alive",
            hand_size: s.hand_size + (bonus ? bonus.cards : 0), kept: false, bonus: bonus ? clone(bonus) : null,
          });
        });
        setChoice(view, null);
        view.first_decider = e.first_decided_by === undefined ? null : e.first_decided_by;
        view.first_choice = null;
        view.players = players;
        view.ring = e.seating.slice();
        view.turns = e.turn_holders.map((holder, turn) => ({
          turn, player: holder, state: "waiting", phase: null, marked_for_removal: false,
          designations: 0, sphere: [],
        }));
        view.first_player = e.first_player;
        view.dice_commitment = e.commitment || "";
        view.seating_mode = e.seating_mode || "random";
        view.stage = "mulligan";
        break;
      }
      case "mulliganed":
        playerOf(view, e.player).hand_size = e.hand_size;
        break;
      case "kept": {
        const p = playerOf(view, e.player);
        p.hand_size = e.hand_size;
        p.kept = true;
        if (view.players.every((q) => q.kept)) view.stage = "playing";
        break;
      }
      case "turn_began": {
        const t = turnOf(view, e.turn);
        t.state = "running";
        t.phase = "beginning";
        break;
      }
      case "phase_changed": {
        const t = turnOf(view, e.turn);
        t.state = "running";
        t.phase = e.phase;
        break;
      }
      case "attacked": {
        const d = playerOf(view, e.defender);
        d.life = saturate(d.life - e.damage);
        d.poison = d.poison + e.poison;
        break;
      }
      case "damage_dealt": {
        const t = playerOf(view, e.target);
        t.life = saturate(t.life - e.amount);
        break;
      }
      case "life_changed":
        playerOf(view, e.player).life = e.life;
        break;
      case "poison_changed":
        playerOf(view, e.player).poison = e.poison;
        break;
      case "eliminated":
        for (const id of e.players) playerOf(view, id).status = "eliminated";
        break;
      case "turn_marked_for_removal": {
        const t = turnOf(view, e.turn);
        t.designations = (t.designations || 0) + 1;
        t.marked_for_removal = true;
        break;
      }
      case "turn_removal_cancelled": {
        const t = turnOf(view, e.turn);
        t.designations = Math.max(0, (t.designations || 0) - 1);
        t.marked_for_removal = t.designations > 0;
        break;
      }
      case "turn_ended": {
        const t = turnOf(view, e.turn);
        t.state = "ended";
        t.phase = null;
        break;
      }
      case "turn_passed": {
        const t = turnOf(view, e.turn);
        t.player = e.to;
        t.state = "waiting";
        t.phase = null;
        break;
      }
      case "turn_removed":
        turnOf(view, e.turn);
        view.turns = view.turns.filter((t) => t.turn !== e.turn);
        break;
      case "positions_removed":
        for (const id of e.players) playerOf(view, id).status = "removed";
        view.ring = view.ring.filter((id) => !e.players.includes(id));
        break;
      case "game_abandoned":
        // What ends the game is the `game_over` that follows.
        if (view.stage !== "mulligan" && view.stage !== "playing") throw new FoldError("game abandoned outside a game");
        break;
      case "game_over":
        view.stage = "finished";
        view.standings = clone(e.standings);
        view.turns = [];
        break;
      case "dice_revealed":
        view.dice_secret = e.secret;
        break;
      case "extra_turn_granted": {
        const p = playerOf(view, e.player);
        if (e.before_next) p.extra_next += 1;
        else p.extra_turns += 1;
        break;
      }
      case "extra_turn_deferred": {
        const p = playerOf(view, e.player);
        p.extra_turns = Math.max(0, p.extra_turns - 1);
        p.extra_next += 1;
        break;
      }
      case "turn_kept": {
        const t = turnOf(view, e.turn);
        t.state = "waiting";
        t.phase = null;
        const p = playerOf(view, e.player);
        if (p.extra_next > 0) p.extra_next -= 1;
        else p.extra_turns = Math.max(0, p.extra_turns - 1);
        break;
      }
      case "attack_rolled":
        // An `attacked` event follows when the roll changes a life total.
        break;
      default:
        throw new FoldError(`unknown event kind ${e.kind}`);
    }
  }

  /**
   * Recomputes `may_attack`, `may_target`, `stacks`, every turn's `sphere`, `mulligan_decider`
   * and `mulligan_deciders`, and in a league table's lobby `first_decider` and `first_choice`.
   */
  function gmRecomputeDerived(view) {
    if (view.stage === "lobby") {
      // The deck furthest behind the strongest seated deck, by 5 or more; the earliest to join
      // (lowest id) among equals.
      const decks = view.players.filter((p) => p.deck);
      const strongest = Math.max(0, ...decks.map((p) => p.deck.power));
      let decider = null;
      let furthest = 4;
      for (const p of decks.slice().sort((a, b) => a.player - b.player)) {
        const behind = strongest - p.deck.power;
        if (behind > furthest) { furthest = behind; decider = p.player; }
      }
      view.first_decider = decider;
      // A choice lasts only while its maker is the decider: dropped for good once he is not.
      let choice = choiceOf(view);
      if (choice && choice.by !== decider) {
        setChoice(view, null);
        choice = null;
      }
      view.first_choice = choice ? choice.player : null;
    }
    const R = view.settings.spell_range;
    const m = view.ring.length;
    const position = new Map(view.ring.map((id, i) => [id, i]));
    const byId = new Map(view.players.map((p) => [p.player, p]));
    const distance = (a, b) => {
      const d = (((position.get(b) - position.get(a)) % m) + m) % m;
      return Math.min(d, m - d);
    };
    const alive = (id) => byId.has(id) && byId.get(id).status === "alive";
    const inRange = (a, b) => position.has(a) && position.has(b) && alive(b) && distance(a, b) <= R;
    const runningPhase = (id) => {
      const t = view.turns.find((u) => u.player === id && u.state === "running");
      return t ? t.phase : null;
    };
    const cr807 = view.settings.rules === "cr807";
    for (const p of view.players) {
      p.may_target = [];
      p.may_attack = [];
      p.stacks = [];
      if (view.stage !== "lobby" && p.status === "alive" && position.has(p.player)) {
        p.stacks = view.turns
          .filter((t) => t.state === "running" && position.has(t.player))
          .filter((t) => distance(p.player, t.player) <= R)
          .map((t) => t.turn);
      }
      if (view.stage !== "playing" || p.status !== "alive") continue;
      for (const q of view.players) {
        if (inRange(p.player, q.player)) p.may_target.push(q.player);
      }
      if (runningPhase(p.player) === "combat") {
        if (cr807) {
          // CR 807.2b: attack only the player to your left, one position away.
          const left = view.ring[(position.get(p.player) + 1) % m];
          p.may_attack = p.may_target.filter((id) => id === left && id !== p.player);
        } else {
          p.may_attack = p.may_target.filter((id) => id !== p.player);
        }
      }
    }
    for (const t of view.turns) {
      t.sphere = t.state === "ended" ? [] : sphere(view, t.player, R, position);
    }
    view.mulligan_decider = null;
    view.mulligan_deciders = [];
    if (view.stage === "mulligan") {
      if (view.settings.mulligan === "simultaneous") {
        view.mulligan_deciders = view.players.filter((p) => !p.kept).map((p) => p.player);
      } else {
        const first = byId.get(view.first_player);
        const kept = view.players.filter((p) => p.kept).length;
        const n = view.players.length;
        const decider = first && n ? view.players[(first.seat + kept) % n] : null;
        view.mulligan_decider = decider ? decider.player : null;
        if (decider) view.mulligan_deciders = [decider.player];
      }
    }
    return view;
  }

  // ---------------------------------------------------------------- Magic Tech

  /** Magic Tech's fields of a view before any event: the shell's game fields and the board. */
  function mtEmptyView() {
    return {
      first_player: null, mulligan_decider: null, mulligan_deciders: [], ring: [], turns: [],
      dice_commitment: "", dice_secret: null,
      magic_tech: {
        sides: [], cards: [], active: null, phase: null, turn_number: 0, deployed: 0, lands: 0,
        mission: null, proposal: null, next_card: 0,
      },
    };
  }

  const U8 = 255;
  const U16 = 65535;

  /** Whether a Magic Tech `turn_began` / `turn_ended`'s `turn` names turn `number`: the number
   * (255 from then on), or 0 (journals written before the events carried it). */
  const mtLabels = (turn, number) => turn === 0 || turn === Math.min(number, 255);

  function mtSide(view, id) {
    const side = view.magic_tech.sides.find((s) => s.player === id);
    if (!side) throw new FoldError(`unknown player ${id}`);
    return side;
  }

  function mtCard(view, id) {
    const card = view.magic_tech.cards.find((c) => c.card === id);
    if (!card) throw new FoldError(`unknown card ${id}`);
    return card;
  }

  /** The count of one of a side's zones other than play (`stockpile`, `hand`, `scrapheap`). */
  function mtZone(zone) {
    if (zone !== "stockpile" && zone !== "hand" && zone !== "scrapheap") throw new FoldError(`cards in play are moved one by one`);
    return zone;
  }

  /** Moves `count` cards between two of a player's zones other than play. */
  function mtMove(view, player, from, to, count) {
    if (from === to) throw new FoldError("a move needs two zones");
    const side = mtSide(view, player);
    const a = mtZone(from);
    const b = mtZone(to);
    if (side[a] < count) throw new FoldError("not that many cards");
    if (side[b] + count > U8) throw new FoldError("too many cards");
    side[a] -= count;
    side[b] += count;
  }

  /** Takes a card out of play into its owner's zone `to`; its guards go on patrol. */
  function mtRemove(view, id, to) {
    if (to === "play") throw new FoldError("a card cannot leave play for play");
    const board = view.magic_tech;
    const card = mtCard(view, id);
    board.cards = board.cards.filter((c) => c.card !== id);
    for (const g of board.cards) {
      if (g.area.kind === "guard" && g.area.card === id) g.area = { kind: "patrol" };
    }
    const side = mtSide(view, card.owner);
    const zone = mtZone(to);
    if (side[zone] + 1 > U8) throw new FoldError("too many cards");
    side[zone] += 1;
  }

  /** A correction's effect on the board. */
  function mtCorrect(view, c) {
    switch (c.kind) {
      case "counters": mtCard(view, c.card).counters = c.counters; break;
      case "damage": mtCard(view, c.card).damage = c.damage; break;
      case "tapped": mtCard(view, c.card).tapped = c.tapped; break;
      case "mana": mtSide(view, c.player).mana = c.mana; break;
      case "move": mtMove(view, c.player, c.from, c.to, c.count); break;
      default: throw new FoldError(`unknown correction ${c.kind}`);
    }
  }

  function mtOut(view, id) {
    const p = playerOf(view, id);
    p.status = "eliminated";
  }

  /** Applies one of Magic Tech's events to `view` in place (protocol/src/magic_tech/, `fold`). */
  function mtApply(view, e) {
    const board = view.magic_tech;
    switch (e.kind) {
      case "player_joined":
        if (view.stage !== "lobby" || view.players.some((p) => p.player === e.player)) throw new FoldError("join outside the lobby");
        view.players.push({
          player: e.player, name: e.name, seat: null, life: 0, poison: 0, status: "alive", hand_size: 0, kept: false,
          connected: true, absent: false, muted: false, may_attack: [], may_target: [], extra_turns: 0, extra_next: 0,
          stacks: [], deck: null, bonus: null,
        });
        board.sides.push({ player: e.player, deck: null, stockpile: 0, hand: 0, scrapheap: 0, mana: 0 });
        break;
      case "player_left":
        if (view.stage !== "lobby") throw new FoldError("leave outside the lobby");
        playerOf(view, e.player);
        view.players = view.players.filter((p) => p.player !== e.player);
        board.sides = board.sides.filter((s) => s.player !== e.player);
        shell.unseat(view, e.player);
        break;
      case "magic_tech.deck_declared":
        if (view.stage !== "lobby") throw new FoldError("deck declared outside the lobby");
        mtSide(view, e.player).deck = e.size;
        break;
      case "game_started": {
        if (view.stage !== "lobby" || e.seating.length !== view.players.length || e.seating[0] !== e.first_player) {
          throw new FoldError("start does not fit the lobby");
        }
        const sides = e.seating.map((id) => {
          const side = mtSide(view, id);
          if (side.deck === null) throw new FoldError("deck size not declared");
          if (side.deck < 5) throw new FoldError("deck smaller than a hand");
          return Object.assign(side, { hand: 5, stockpile: side.deck - 5 });
        });
        view.players = e.seating.map((id) => playerOf(view, id));
        board.sides = sides;
        view.first_player = e.first_player;
        view.dice_commitment = e.commitment || "";
        view.stage = "mulligan";
        break;
      }
      case "mulliganed": {
        if (view.mulligan_decider !== e.player) throw new FoldError("mulligan out of turn");
        const side = mtSide(view, e.player);
        if (e.hand_size > side.hand) throw new FoldError("a mulligan does not grow a hand");
        if (side.stockpile + side.hand - e.hand_size > U8) throw new FoldError("too many cards");
        side.stockpile += side.hand - e.hand_size;
        side.hand = e.hand_size;
        break;
      }
      case "kept": {
        if (view.mulligan_decider !== e.player) throw new FoldError("keep out of turn");
        if (mtSide(view, e.player).hand !== e.hand_size) throw new FoldError("kept a hand of another size");
        playerOf(view, e.player).kept = true;
        if (view.players.every((p) => p.kept)) view.stage = "playing";
        break;
      }
      case "turn_began":
        if (view.stage !== "playing" || board.active !== null) throw new FoldError("turn began out of place");
        if (!mtLabels(e.turn, board.turn_number + 1)) throw new FoldError("turn began with another number");
        playerOf(view, e.player);
        Object.assign(board, { active: e.player, phase: null, turn_number: board.turn_number + 1, deployed: 0, lands: 0 });
        break;
      case "turn_ended":
        if (board.active !== e.player) throw new FoldError("ended a turn not running");
        if (!mtLabels(e.turn, board.turn_number)) throw new FoldError("ended a turn with another number");
        Object.assign(board, { active: null, phase: null, mission: null });
        for (const s of board.sides) s.mana = 0;
        break;
      case "magic_tech.phase_began":
        if (board.active !== e.player) throw new FoldError("phase of a turn not running");
        board.phase = e.phase;
        for (const s of board.sides) s.mana = 0;
        if (e.phase === "untap") {
          for (const c of board.cards) {
            c.fresh = false;
            if (c.owner === e.player) c.tapped = false;
          }
        } else if (e.phase === "end") {
          for (const c of board.cards) {
            if (c.owner === e.player && c.face && c.face.type === "creature" && c.area.kind === "deploy") c.area = { kind: "patrol" };
          }
        }
        break;
      case "magic_tech.drew":
        mtMove(view, e.player, "stockpile", "hand", e.count);
        break;
      case "magic_tech.deployed": {
        if (e.card !== board.next_card) throw new FoldError("cards are numbered in order");
        const side = mtSide(view, e.player);
        if (side.hand < 1) throw new FoldError("no card in hand");
        side.hand -= 1;
        const land = e.land === undefined || e.land === null ? null : clone(e.land);
        if (land) board.lands = Math.min(U8, board.lands + 1);
        else board.deployed = Math.min(U8, board.deployed + 1);
        board.cards.push({
          card: e.card, owner: e.player, face: land, counters: 0, damage: 0, tapped: false,
          area: { kind: "deploy" }, fresh: true,
        });
        if (e.card + 1 > U16) throw new FoldError("too many cards");
        board.next_card = e.card + 1;
        break;
      }
      case "magic_tech.tapped": {
        const c = mtCard(view, e.card);
        if (c.tapped) throw new FoldError("already tapped");
        c.tapped = true;
        const side = mtSide(view, c.owner);
        side.mana = Math.min(U16, side.mana + e.mana);
        break;
      }
      case "magic_tech.paid": {
        const side = mtSide(view, e.player);
        if (side.mana < e.amount) throw new FoldError("not enough mana");
        side.mana -= e.amount;
        if (e.card !== undefined && e.card !== null) {
          const c = mtCard(view, e.card);
          if (c.counters + e.amount > U8) throw new FoldError("too many counters");
          c.counters += e.amount;
        }
        break;
      }
      case "magic_tech.revealed": {
        const c = mtCard(view, e.card);
        if (c.face) throw new FoldError("already face up");
        // `shown` is on the wire only when true.
        Object.assign(c, { face: clone(e.face), counters: 0, fresh: true });
        delete c.shown;
        if (e.face.type === "sorcery" || e.face.type === "instant") mtRemove(view, e.card, "scrapheap");
        break;
      }
      case "magic_tech.relocated":
        mtCard(view, e.card).area = clone(e.area);
        break;
      case "magic_tech.mission_began":
        if (board.mission) throw new FoldError("a mission is under way");
        board.mission = { player: e.player, attackers: e.attackers.slice(), target: clone(e.target) };
        break;
      case "magic_tech.blocked":
        if (!board.mission) throw new FoldError("no mission to block");
        break;
      case "magic_tech.damaged":
        if (e.target.kind === "card") {
          const c = mtCard(view, e.target.card);
          if (c.face) c.damage = Math.min(U16, c.damage + e.effect);
          else {
            if (e.effect > c.counters) throw new FoldError("not that many counters");
            c.counters -= e.effect;
            if (e.effect > 0) c.shown = true;
          }
        } else {
          mtMove(view, e.target.player, "stockpile", "scrapheap", e.effect);
        }
        break;
      case "magic_tech.destroyed":
        mtRemove(view, e.card, "scrapheap");
        break;
      case "magic_tech.mission_ended":
        if (!board.mission) throw new FoldError("no mission to end");
        for (const id of e.tapped) mtCard(view, id).tapped = true;
        board.mission = null;
        break;
      case "magic_tech.scrapped":
        mtMove(view, e.player, "stockpile", "scrapheap", e.count);
        break;
      case "magic_tech.recovered":
        mtMove(view, e.player, "scrapheap", "stockpile", e.count);
        break;
      case "magic_tech.healed": {
        const c = mtCard(view, e.card);
        if (e.amount > c.damage) throw new FoldError("not that much damage");
        c.damage -= e.amount;
        break;
      }
      case "magic_tech.left_play":
        mtRemove(view, e.card, e.to);
        break;
      case "magic_tech.proposed":
        if (board.proposal) throw new FoldError("a proposal is open");
        board.proposal = { player: e.player, correction: clone(e.correction) };
        break;
      case "magic_tech.declined":
        if (!board.proposal) throw new FoldError("no proposal");
        board.proposal = null;
        break;
      case "magic_tech.corrected":
        if (e.by !== undefined && e.by !== null) {
          if (!board.proposal) throw new FoldError("no proposal");
          board.proposal = null;
        }
        mtCorrect(view, e.correction);
        break;
      case "magic_tech.ran_out":
        mtOut(view, e.player);
        break;
      case "eliminated":
        for (const id of e.players) mtOut(view, id);
        break;
      case "game_abandoned":
        break;
      case "game_over":
        view.stage = "finished";
        view.standings = clone(e.standings);
        Object.assign(board, { active: null, phase: null, mission: null, proposal: null });
        break;
      case "dice_revealed":
        view.dice_secret = e.secret;
        break;
      default:
        throw new FoldError(`unknown event kind ${e.kind}`);
    }
  }

  /** Recomputes what a Magic Tech view derives from its board: seats, hands, the turn, the mulligan's decider. */
  function mtRecomputeDerived(view) {
    const board = view.magic_tech;
    const started = view.stage !== "lobby";
    view.ring = started ? view.players.map((p) => p.player) : [];
    view.players.forEach((p, k) => {
      p.seat = started ? k : null;
      const side = board.sides.find((s) => s.player === p.player);
      p.hand_size = side ? side.hand : 0;
    });
    view.turns = board.active === null ? [] : [{
      turn: 0, player: board.active, state: "running", phase: null, marked_for_removal: false, designations: 0, sphere: [],
    }];
    const decider = view.stage === "mulligan" ? view.players.find((p) => !p.kept) : null;
    view.mulligan_decider = decider ? decider.player : null;
    view.mulligan_deciders = decider ? [decider.player] : [];
    return view;
  }

  // ---------------------------------------------------------------- Mountain Magic

  /** Mountain Magic's fields of a view before any event: the shell's game fields and the climb. */
  function mmEmptyView() {
    return {
      first_player: null, mulligan_decider: null, mulligan_deciders: [], ring: [], turns: [],
      dice_commitment: "", dice_secret: null,
      mountain_magic: {
        phase: "undealt", mountain: [], discard: [], flipped: null, may_recover: false, spells_left: 0, lands_left: 0,
        path: [], battle: null, outcome: null,
      },
    };
  }

  /** The card pool (protocol/data/mountain_magic/pool.json's `cards`): set by the page once
   * fetched (games/mountain_magic.js), read from the repository under Node. */
  function mmPool() {
    const fold = games.mountain_magic;
    if (!fold.pool && typeof require === "function" && typeof __dirname === "string") {
      fold.pool = require(`${__dirname}/../../protocol/data/mountain_magic/pool.json`).cards;
    }
    if (!fold.pool) throw new FoldError("the card pool is not loaded yet");
    return fold.pool;
  }

  function mmCard(no) {
    const card = Number.isInteger(no) ? mmPool()[no] : undefined;
    if (!card) throw new FoldError("a card not in the pool");
    return card;
  }

  const MM_ROWS = 7;
  const mmSides = ["player", "opponent"];
  const mmFresh = (card) => ({ card, mana: [], powered: false, uses: 0, gone: null });
  function mmUnpower(force) {
    force.powered = false;
    force.mana = [];
  }
  function mmBattle(climb) {
    if (!climb.battle) throw new FoldError("no battle");
    return climb.battle;
  }
  function mmForce(climb, ref) {
    const battle = mmBattle(climb);
    const forces = ref && ref.side === "player" ? battle.player : ref && ref.side === "opponent" ? battle.opponent : null;
    const force = forces ? forces[ref.force] : undefined;
    if (!force) throw new FoldError("no such card");
    return force;
  }
  /** The colours a card (or its ability) still needs (protocol's `Climb::needs`). */
  function mmNeeds(force, ability) {
    const face = mmCard(force.card);
    let cost;
    let paid;
    if (ability) {
      if (!face.ability) return [];
      cost = (face.ability.cost || []).slice();
      paid = force.ability_mana || [];
    } else {
      cost = ((face.cost && face.cost.coloured) || []).slice();
      paid = force.mana;
    }
    for (const colour of paid) {
      const k = cost.indexOf(colour);
      if (k >= 0) cost.splice(k, 1);
    }
    return cost;
  }
  /** Whether `card` may go on row `row`, place `pos` (protocol's `climb::may_place`). */
  function mmMayPlace(climb, no, row, pos) {
    if (!Number.isInteger(row) || !Number.isInteger(pos) || row < 1 || row >= MM_ROWS || pos < 0 || pos >= MM_ROWS - row) return false;
    if (climb.phase !== "climbing" || climb.mountain[row][pos] !== null) return false;
    const below = climb.mountain[row - 1];
    if (below[pos] === null || below[pos + 1] === null) return false;
    return mmMayPlaceOn(mmCard(no), mmCard(below[pos]), mmCard(below[pos + 1]));
  }
  const MM_ENEMIES = { white: ["black", "red"], blue: ["red", "green"], black: ["green", "white"], red: ["white", "blue"], green: ["blue", "black"] };
  const mmColours = (c) => [...new Set(c.type === "land" ? c.produces || [] : (c.cost && c.cost.coloured) || [])];
  const mmClass = (c) => ({ sorcery: "sorcery", enchantment: "enchantment", instant: "fast", interrupt: "fast" })[c.type] || (c.type === "creature" ? "creature" : null);
  /** Everything a card can share (protocol's `climb::traits`), as words. */
  function mmTraits(c) {
    const t = mmColours(c).map((x) => `colour:${x}`);
    if (mmClass(c)) t.push(`class:${mmClass(c)}`);
    if (c.flying) t.push("flying");
    if (c.landwalk) t.push(`landwalk:${c.landwalk}`);
    if (c.upkeep && c.upkeep.length) t.push("upkeep");
    if (c.ability) t.push("ability", `effect:${c.ability.effect.kind}`);
    if (c.effect) t.push(`effect:${c.effect.kind}`);
    return t;
  }
  const mmInCommon = (a, b) => { const theirs = mmTraits(b); return mmTraits(a).some((t) => theirs.includes(t)); };
  function mmCompletesSet(n, a, b) {
    const classes = [mmClass(n), mmClass(a), mmClass(b)].sort().join();
    if (classes === "enchantment,fast,sorcery") return true;
    const ca = mmColours(a);
    const cb = mmColours(b);
    return mmColours(n).some((colour) => {
      const [e1, e2] = MM_ENEMIES[colour];
      return (ca.includes(e1) && cb.includes(e2)) || (ca.includes(e2) && cb.includes(e1));
    });
  }
  function mmMayPlaceOn(n, a, b) {
    const wild = (c) => c.type === "artifact";
    if (wild(n) || (wild(a) && wild(b))) return true;
    if (wild(a)) return mmInCommon(n, b);
    if (wild(b)) return mmInCommon(n, a);
    return (mmInCommon(n, a) && mmInCommon(n, b)) || mmCompletesSet(n, a, b);
  }
  const mmComplete = (climb) => climb.mountain.length === MM_ROWS && climb.mountain.every((row) => row.every((c) => c !== null));
  /** The places still holding a card, top row first, left to right. */
  function mmMountainLeft(climb) {
    const out = [];
    for (let row = climb.mountain.length - 1; row >= 0; row--) {
      climb.mountain[row].forEach((c, pos) => { if (c !== null) out.push({ row, pos }); });
    }
    return out;
  }
  const mmIsPath = (path) => Array.isArray(path) && path.length === MM_ROWS && path[0] === 0 &&
    path.every((p, k) => k === 0 || p === path[k - 1] || p === path[k - 1] + 1);
  function mmTakeLand(climb, count) {
    if (climb.lands_left < count) throw new FoldError("the land deck is empty");
    climb.lands_left -= count;
  }

  // What the player may do now (protocol's `Climb::legal_moves` and the checks it is built
  // from, held equal to them by tests/tests/fold.rs): the page offers only these.

  /** A card in the battle, if it is still in it (protocol's `Climb::force`). */
  function mmLive(climb, ref) {
    const b = climb.battle;
    const forces = !b || !ref ? null : ref.side === "player" ? b.player : ref.side === "opponent" ? b.opponent : null;
    const force = forces ? forces[ref.force] : undefined;
    return force && !force.gone ? force : null;
  }
  const mmFace = (climb, ref) => { const f = mmLive(climb, ref); return f ? mmCard(f.card) : null; };
  const mmSame = (a, b) => a.side === b.side && a.force === b.force;
  /** A powered non-creature card not used this turn: its effect (protocol's `castable`). */
  function mmCastable(climb, ref) {
    const f = mmLive(climb, ref);
    if (!f) return null;
    const face = mmCard(f.card);
    return face.type === "creature" || !f.powered || f.used ? null : face.effect || null;
  }
  /** A powered creature's ability with a stored use: its effect (protocol's `activatable`). */
  function mmActivatable(climb, ref) {
    const f = mmLive(climb, ref);
    if (!f) return null;
    const face = mmCard(f.card);
    return face.ability && f.powered && f.uses > 0 ? face.ability.effect : null;
  }
  /** The effects that take a target: whether it is one's own card (protocol's `Effect::target`). */
  const MM_TARGETED = { damage: false, counter: false, tap: false, untap: true };
  /** Whether `target` (or none: null) fits `effect` used by `user` (protocol's `may_target`). */
  function mmMayTarget(climb, user, effect, target) {
    if (!(effect.kind in MM_TARGETED)) return target === null || target === undefined;
    if (!target) return false;
    const face = mmFace(climb, target);
    if (!face) return false;
    const enemy = target.side !== user.side;
    switch (effect.kind) {
      case "damage": return enemy && face.type === "creature";
      case "counter": return enemy && ["sorcery", "instant", "interrupt"].includes(face.type);
      case "tap": return enemy;
      default: return !enemy && !mmSame(target, user) && face.type !== "artifact" && !mmLive(climb, target).powered;
    }
  }
  /** Whether `attackers` may attack `target` (protocol's `may_attack`). */
  function mmMayAttack(climb, attackers, target) {
    const defender = mmFace(climb, target);
    if (!defender || !attackers.length || defender.type !== "creature") return false;
    const powered = mmLive(climb, target).powered;
    return attackers.every((a, k) => {
      const f = mmLive(climb, a);
      if (!f) return false;
      const face = mmCard(f.card);
      return f.powered && !f.used && a.side !== target.side && face.type === "creature" &&
        !attackers.slice(0, k).some((b) => mmSame(a, b)) &&
        (!powered || !defender.flying || !!face.flying) &&
        (!powered || !defender.landwalk || face.landwalk === defender.landwalk);
    });
  }
  /** Where the pending land's mana may go for `side` (protocol's `mana_places`). */
  function mmManaPlaces(climb, side) {
    const b = climb.battle;
    if (!b || b.pending_land === null || b.pending_land === undefined) return [];
    const produces = mmCard(b.pending_land).produces || [];
    const out = [];
    (side === "player" ? b.player : b.opponent).forEach((force, k) => {
      if (force.gone) return;
      for (const ability of [false, true]) {
        if (!ability && force.powered) continue;
        const needs = mmNeeds(force, ability);
        for (const colour of produces) if (needs.includes(colour)) out.push(ability ? { force: k, ability, colour } : { force: k, colour });
      }
    });
    return out;
  }
  /** Every request accepted now, as the page sends it (protocol's `Climb::legal_moves`, up to
   * eight ready creatures' attacks in every group; beyond, each alone and all together). */
  function mmLegalMoves(climb) {
    const moves = [];
    if (climb.phase === "climbing") {
      const no = climb.flipped !== null ? climb.flipped : climb.may_recover && climb.discard.length ? climb.discard[climb.discard.length - 1] : null;
      if (no !== null) {
        for (let row = 1; row < MM_ROWS; row++) {
          for (let pos = 0; pos < MM_ROWS - row; pos++) if (mmMayPlace(climb, no, row, pos)) moves.push({ type: "mountain_magic.place", row, pos });
        }
      }
      if (climb.flipped !== null) moves.push({ type: "mountain_magic.discard" });
      else if (climb.spells_left > 0) moves.push({ type: "mountain_magic.flip" });
    } else if (climb.phase === "path") {
      for (let bits = 0; bits < 1 << (MM_ROWS - 1); bits++) {
        const path = [0];
        for (let k = 0; k < MM_ROWS - 1; k++) path.push(path[k] + ((bits >> (MM_ROWS - 2 - k)) & 1));
        moves.push({ type: "mountain_magic.path", path });
      }
    } else if (climb.phase === "battle" && climb.battle && climb.battle.turn === "player") {
      const b = climb.battle;
      if (b.pending_land !== null && b.pending_land !== undefined) {
        // A land one of one's cards can use must go on one of them; only a land none can use
        // is let go (protocol/src/mountain_magic/moves.rs).
        const places = mmManaPlaces(climb, "player");
        if (!places.length) moves.push({ type: "mountain_magic.mana", place: null });
        for (const place of places) moves.push({ type: "mountain_magic.mana", place });
        return moves;
      }
      const mine = (k) => ({ side: "player", force: k });
      const theirs = (k) => ({ side: "opponent", force: k });
      const every = b.player.map((_, k) => mine(k)).concat(b.opponent.map((_, k) => theirs(k)));
      const ready = b.player.map((_, k) => k).filter((k) => {
        const f = mmLive(climb, mine(k));
        return f && f.powered && !f.used && mmCard(f.card).type === "creature";
      });
      let groups = [];
      if (ready.length <= 8) {
        for (let bits = 1; bits < 1 << ready.length; bits++) groups.push(ready.filter((_, k) => bits & (1 << k)));
      } else {
        groups = ready.map((a) => [a]).concat([ready.slice()]);
      }
      for (const attackers of groups) {
        for (let t = 0; t < b.opponent.length; t++) {
          if (mmMayAttack(climb, attackers.map(mine), theirs(t))) moves.push({ type: "mountain_magic.attack", attackers, target: t });
        }
      }
      b.player.forEach((_, k) => {
        for (const [effect, type] of [[mmCastable(climb, mine(k)), "mountain_magic.cast"], [mmActivatable(climb, mine(k)), "mountain_magic.activate"]]) {
          if (!effect) continue;
          for (const target of [null].concat(every)) if (mmMayTarget(climb, mine(k), effect, target)) moves.push({ type, force: k, target });
        }
      });
      moves.push({ type: "mountain_magic.end_turn" });
    }
    return moves;
  }

  /** Applies one of Mountain Magic's events (or a shell event of its table) to `view` in place
   * (protocol/src/mountain_magic/: the table's `fold`, the climb's `Climb::apply`). */
  function mmApply(view, e) {
    if (e.kind.startsWith("mountain_magic.")) {
      if (view.stage !== "playing" || view.players.some((p) => p.status !== "alive")) throw new FoldError("a climb's event outside the climb");
      // All or nothing, as the Rust fold: a refused event changes nothing.
      const climb = clone(view.mountain_magic);
      mmClimb(climb, e);
      view.mountain_magic = climb;
      return;
    }
    switch (e.kind) {
      case "player_joined":
        if (view.stage !== "lobby" || view.players.length) throw new FoldError("join outside the lobby or at a full table");
        view.players.push({
          player: e.player, name: e.name, seat: null, life: 0, poison: 0, status: "alive", hand_size: 0, kept: false,
          connected: true, absent: false, muted: false, may_attack: [], may_target: [], extra_turns: 0, extra_next: 0,
          stacks: [], deck: null, bonus: null,
        });
        break;
      case "player_left":
        if (view.stage !== "lobby" || !view.players.some((p) => p.player === e.player)) throw new FoldError("leave outside the lobby");
        view.players = [];
        shell.unseat(view, e.player);
        break;
      case "game_started":
        if (view.stage !== "lobby" || view.players.length !== 1 || e.seating.length !== 1 || e.seating[0] !== view.players[0].player ||
          e.first_player !== view.players[0].player) throw new FoldError("start does not fit the lobby");
        view.dice_commitment = e.commitment || "";
        view.stage = "playing";
        break;
      case "eliminated":
        if (view.stage !== "playing" || view.players.length !== 1 || e.players.length !== 1 || e.players[0] !== view.players[0].player) {
          throw new FoldError("eliminated someone not climbing");
        }
        view.players[0].status = "eliminated";
        break;
      case "game_abandoned":
        if (view.stage !== "playing") throw new FoldError("abandoned outside a game");
        break;
      case "game_over":
        view.stage = "finished";
        view.standings = clone(e.standings);
        break;
      case "dice_revealed":
        view.dice_secret = e.secret;
        break;
      default:
        throw new FoldError(`unknown event kind ${e.kind}`);
    }
  }

  /** The climb's own events (protocol's `Climb::fold`). */
  function mmClimb(c, e) {
    const phase = c.phase;
    switch (e.kind) {
      case "mountain_magic.dealt":
        if (phase !== "undealt" || e.bottom.length !== MM_ROWS) throw new FoldError("a deal out of place");
        e.bottom.forEach(mmCard);
        c.mountain = Array.from({ length: MM_ROWS }, (_, row) => Array(MM_ROWS - row).fill(null));
        c.mountain[0] = e.bottom.slice();
        c.spells_left = e.spells;
        c.lands_left = e.lands;
        c.phase = "climbing";
        break;
      case "mountain_magic.flipped":
        if (phase !== "climbing" || c.flipped !== null) throw new FoldError("a card turned over out of place");
        mmCard(e.card);
        if (c.spells_left < 1) throw new FoldError("the spell deck is empty");
        c.spells_left -= 1;
        c.flipped = e.card;
        c.may_recover = false;
        break;
      case "mountain_magic.placed": {
        const fromDiscard = !!e.from_discard;
        const placing = fromDiscard ? (c.may_recover && c.flipped === null && c.discard.length ? c.discard[c.discard.length - 1] : null) : c.flipped;
        if (placing !== e.card || !mmMayPlace(c, e.card, e.row, e.pos)) throw new FoldError("a placement the rules do not allow");
        if (fromDiscard) c.discard.pop();
        else c.flipped = null;
        c.mountain[e.row][e.pos] = e.card;
        c.may_recover = true;
        if (mmComplete(c)) {
          c.may_recover = false;
          c.phase = "path";
        }
        break;
      }
      case "mountain_magic.discarded":
        if (phase !== "climbing" || c.flipped !== e.card) throw new FoldError("discarded a card not turned over");
        c.flipped = null;
        c.discard.push(e.card);
        c.may_recover = false;
        break;
      case "mountain_magic.climb_failed":
        if (phase !== "climbing" || c.spells_left !== 0) throw new FoldError("the climb failed with cards left");
        c.phase = "over";
        c.outcome = { kind: "failed_climb" };
        break;
      case "mountain_magic.path_chosen": {
        if (phase !== "path" || !mmIsPath(e.path) || c.battle) throw new FoldError("not a path down the mountain");
        const forces = e.path.map((pos, k) => {
          const row = MM_ROWS - 1 - k;
          const card = c.mountain[row][pos];
          if (card === null || card === undefined) throw new FoldError("an empty place on the path");
          c.mountain[row][pos] = null;
          return mmFresh(card);
        });
        c.path = e.path.slice();
        c.battle = { player: forces, opponent: [], turn: null, pending_land: null, doomed: [0, 0], turns: [0, 0] };
        break;
      }
      case "mountain_magic.occupiers_revealed": {
        const battle = mmBattle(c);
        if (phase !== "path" || battle.opponent.length || !e.cards.length) throw new FoldError("occupiers revealed out of place");
        e.cards.forEach(mmCard);
        battle.opponent = e.cards.map(mmFresh);
        c.phase = "battle";
        break;
      }
      case "mountain_magic.mana_drawn": {
        if (phase !== "battle" || mmCard(e.land).type !== "land") throw new FoldError("a land drawn out of place");
        mmTakeLand(c, 1);
        const battle = mmBattle(c);
        if (battle.turn !== null || battle.pending_land !== null) throw new FoldError("a turn is under way");
        battle.turn = e.side;
        battle.pending_land = e.land;
        const k = mmSides.indexOf(e.side);
        if (k < 0) throw new FoldError("no such side");
        battle.turns[k] = Math.min(U16, battle.turns[k] + 1);
        break;
      }
      case "mountain_magic.land_destroyed": {
        const battle = mmBattle(c);
        const k = mmSides.indexOf(e.side);
        if (battle.turn !== e.side || battle.pending_land === null || !battle.doomed[k]) throw new FoldError("no land to destroy");
        battle.doomed[k] -= 1;
        battle.pending_land = null;
        break;
      }
      case "mountain_magic.mana_placed": {
        const battle = mmBattle(c);
        const land = battle.pending_land;
        if (land === null) throw new FoldError("no land drawn");
        if (battle.turn !== e.side || !(mmCard(land).produces || []).includes(e.place.colour)) throw new FoldError("mana placed out of turn");
        const ability = !!e.place.ability;
        const force = mmForce(c, { side: e.side, force: e.place.force });
        if (!mmNeeds(force, ability).includes(e.place.colour) || (!ability && force.powered)) throw new FoldError("that card cannot use that mana");
        const face = mmCard(force.card);
        if (ability) {
          force.ability_mana = (force.ability_mana || []).concat([e.place.colour]);
          if (face.ability && force.ability_mana.length === (face.ability.cost || []).length) {
            delete force.ability_mana;
            force.uses = Math.min(U8, force.uses + 1);
          }
        } else {
          force.mana.push(e.place.colour);
          if (!mmNeeds(force, false).length) force.powered = true;
        }
        battle.pending_land = null;
        break;
      }
      case "mountain_magic.mana_unused": {
        const battle = mmBattle(c);
        if (battle.turn !== e.side || battle.pending_land === null) throw new FoldError("no land to let go");
        battle.pending_land = null;
        break;
      }
      case "mountain_magic.upkeep_paid": {
        const face = mmCard(mmForce(c, e.card).card);
        if (!(face.upkeep && face.upkeep.length) || mmCard(e.land).type !== "land") throw new FoldError("no upkeep to pay");
        mmTakeLand(c, 1);
        break;
      }
      case "mountain_magic.used": {
        const force = mmForce(c, e.card);
        const face = mmCard(force.card);
        if (e.target !== null && e.target !== undefined) mmForce(c, e.target);
        if (e.ability) {
          if (!face.ability) throw new FoldError("no ability");
          if (!force.powered || force.uses === 0) throw new FoldError("no stored use");
          force.uses -= 1;
          if (face.ability.tap) mmUnpower(force);
        } else {
          if (!force.powered || force.used) throw new FoldError("an unpowered card used");
          mmUnpower(force);
          force.used = true;
        }
        break;
      }
      case "mountain_magic.attacked": {
        if (!e.attackers.length || mmCard(mmForce(c, e.target).card).type !== "creature") throw new FoldError("no attack");
        e.attackers.forEach((a) => mmForce(c, a));
        break;
      }
      case "mountain_magic.removed": {
        const force = mmForce(c, e.card);
        mmUnpower(force);
        delete force.ability_mana;
        force.uses = 0;
        force.gone = e.why;
        break;
      }
      case "mountain_magic.unpowered": {
        const force = mmForce(c, e.card);
        if (!force.powered) throw new FoldError("not powered");
        mmUnpower(force);
        break;
      }
      case "mountain_magic.untapped": {
        const force = mmForce(c, e.card);
        if (force.powered || mmCard(force.card).type === "artifact") throw new FoldError("cannot be untapped");
        force.powered = true;
        break;
      }
      case "mountain_magic.lands_discarded":
        if (!e.lands.length) throw new FoldError("no lands discarded");
        mmBattle(c);
        mmTakeLand(c, e.lands.length);
        break;
      case "mountain_magic.land_doomed": {
        const battle = mmBattle(c);
        const k = mmSides.indexOf(e.side);
        if (k < 0) throw new FoldError("no such side");
        battle.doomed[k] = Math.min(U8, battle.doomed[k] + 1);
        break;
      }
      case "mountain_magic.pool_emptied": {
        const battle = mmBattle(c);
        const forces = e.side === "player" ? battle.player : battle.opponent;
        for (const force of forces.filter((f) => f.gone === null)) {
          mmUnpower(force);
          delete force.ability_mana;
          force.uses = 0;
        }
        break;
      }
      case "mountain_magic.drew_from_mountain": {
        if (phase !== "battle" || !e.cards.length) throw new FoldError("no draw from the mountain");
        const left = mmMountainLeft(c).slice(0, e.cards.length);
        if (left.length !== e.cards.length || e.cards.some((s, k) => s.row !== left[k].row || s.pos !== left[k].pos)) {
          throw new FoldError("the mountain is drawn top row first, left to right");
        }
        const battle = mmBattle(c);
        for (const { row, pos } of e.cards) {
          battle.player.push(mmFresh(c.mountain[row][pos]));
          c.mountain[row][pos] = null;
        }
        break;
      }
      case "mountain_magic.turn_ended": {
        const battle = mmBattle(c);
        if (battle.turn !== e.side || battle.pending_land !== null) throw new FoldError("ended a turn not under way");
        battle.turn = null;
        for (const force of battle.player.concat(battle.opponent)) delete force.used;
        break;
      }
      case "mountain_magic.ended": {
        if (phase !== "battle") throw new FoldError("the battle ended outside the battle");
        c.phase = "over";
        c.outcome = { kind: "battle", ending: e.ending };
        const battle = mmBattle(c);
        battle.turn = null;
        battle.pending_land = null;
        break;
      }
      default:
        throw new FoldError(`unknown event kind ${e.kind}`);
    }
  }

  /** Recomputes what a Mountain Magic view derives: the one seat, the ring, the first player. */
  function mmRecomputeDerived(view) {
    const started = view.stage !== "lobby";
    const player = view.players.length ? view.players[0].player : null;
    view.first_player = started ? player : null;
    view.ring = started && player !== null ? [player] : [];
    for (const p of view.players) {
      p.seat = started ? 0 : null;
      p.kept = started;
    }
    return view;
  }

  function sphere(view, holder, R, position) {
    const m = view.ring.length;
    if (!position.has(holder) || m === 0) return [];
    const r = Math.min(R, Math.floor(m / 2));
    const c = position.get(holder);
    const out = [];
    for (let k = 0; k <= 2 * r; k++) {
      const id = view.ring[(c - r + k + m * 2) % m];
      if (out.length === 0 || out[out.length - 1] !== id) out.push(id);
    }
    if (out.length > 1 && out[0] === out[out.length - 1]) out.pop();
    return out;
  }

  /** Deep equality of two decoded views, ignoring key order; returns "" or the first difference. */
  function diff(a, b, path) {
    path = path || "view";
    if (a === b) return "";
    if (a === null || b === null || typeof a !== "object" || typeof b !== "object") {
      return `${path}: ${JSON.stringify(a)} ≠ ${JSON.stringify(b)}`;
    }
    if (Array.isArray(a) !== Array.isArray(b)) return `${path}: array vs object`;
    if (Array.isArray(a)) {
      if (a.length !== b.length) return `${path}: length ${a.length} ≠ ${b.length}`;
      for (let i = 0; i < a.length; i++) {
        const d = diff(a[i], b[i], `${path}[${i}]`);
        if (d) return d;
      }
      return "";
    }
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) {
      const d = diff(a[k] === undefined ? null : a[k], b[k] === undefined ? null : b[k], `${path}.${k}`);
      if (d) return d;
    }
    return "";
  }

  /**
   * Takes a `snapshot`'s view as the one to fold into: in a league table's lobby it remembers
   * the decider's choice the view shows, so that later events keep it.
   */
  function adopt(view) {
    const chosen = view.stage === "lobby" && view.first_choice !== undefined && view.first_choice !== null &&
      view.first_decider !== undefined && view.first_decider !== null;
    setChoice(view, chosen ? { by: view.first_decider, player: view.first_choice } : null);
    return view;
  }

  /** The fold of each game, by the name a table's settings give it (`settings.game`). */
  const games = {
    grand_melee: { emptyView: gmEmptyView, apply: gmApply, recomputeDerived: gmRecomputeDerived },
    magic_tech: { emptyView: mtEmptyView, apply: mtApply, recomputeDerived: mtRecomputeDerived },
    mountain_magic: { emptyView: mmEmptyView, apply: mmApply, recomputeDerived: mmRecomputeDerived, pool: null, mayPlace: mmMayPlaceOn, isPath: mmIsPath,
      legalMoves: mmLegalMoves, mayAttack: mmMayAttack, mayTarget: mmMayTarget, castable: mmCastable, activatable: mmActivatable, manaPlaces: mmManaPlaces },
  };

  global.GMFold = { emptyView, applyEvent, recomputeDerived, diff, clone, adopt, FoldError, shell, games };
})(typeof window !== "undefined" ? window : globalThis);

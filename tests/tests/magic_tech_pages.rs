//! A Magic Tech game played to its end in two real Chromium pages (issue 30): Ann on a laptop
//! creates the table from the lobby's form, Bob sits down on a 390×844 phone; they declare
//! their decks, keep, deploy a land and a card face down, tap, pay, reveal with the declaration
//! form, relocate, send a mission and block it, pass their turns with the action bar, until Ann
//! must draw from an empty stockpile. After every step both pages' folded views equal a fresh
//! snapshot (`gm.checkMirror()`) and every number the board shows is the view's.
//! The replay of the finished game reaches the same end.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

#[path = "browser/harness.rs"]
mod harness;

use grand_melee_e2e::TestServer;
use grand_melee_server::ServerConfig;
use harness::{Browser, Driver, screenshot_dir};
use serde_json::Value;

async fn server() -> TestServer {
    let config = ServerConfig {
        web_dir: Some(std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../server/web"
        ))),
        ..ServerConfig::default()
    };
    TestServer::start_with(config).await
}

/// Picks `value` in the select with `data-testid=id`, as a person does.
async fn choose(browser: &Browser, id: &str, value: &str) {
    browser
        .until(
            &format!("{id} offers {value}"),
            &format!(
                "Array.from(document.querySelector('[data-testid=\"{id}\"]').options).some(o => o.value === '{value}')"
            ),
        )
        .await;
    browser
        .js(&format!(
            "const s = document.querySelector('[data-testid=\"{id}\"]'); s.value = '{value}'; \
             s.dispatchEvent(new Event('change', {{bubbles: true}})); return 1;"
        ))
        .await;
}

/// Both pages have folded `seq` events, agree with a fresh snapshot, and every number their
/// board shows (`data-num` in a side or a card) is the view's.
async fn boards_match(pages: [&Browser; 2], when: &str) {
    let seq = pages[0].seq().await.max(pages[1].seq().await);
    for (k, page) in pages.iter().enumerate() {
        page.catch_up(seq).await;
        page.check_mirror(&format!("{when}, page {k}")).await;
        let wrong = page
            .js(
                "const b = gm.view().magic_tech; const out = []; \
                 for (const e of document.querySelectorAll('[data-testid^=\"mt-side-\"] [data-num]')) { \
                   const side = e.closest('[data-player]'); const card = e.closest('[data-card]'); \
                   let truth; \
                   if (card) { \
                     const c = b.cards.find(x => x.card === Number(card.dataset.card)); \
                     const f = c.face; const cc = f ? f.cost.generic + f.cost.coloured.length : 0; \
                     truth = { counters: c.counters, damage: c.damage, attack: f && f.type === 'creature' ? f.power : 0, \
                       armour: f ? (f.type === 'creature' ? f.toughness : f.type === 'land' ? 3 : cc) : null, \
                       structure: f ? (f.type === 'land' ? 3 : cc) : null }[e.dataset.num]; \
                   } else { \
                     truth = b.sides.find(s => s.player === Number(side.dataset.player))[e.dataset.num]; \
                   } \
                   if (String(truth) !== e.textContent.trim()) out.push([e.dataset.num, e.textContent.trim(), truth]); \
                 } \
                 return {wrong: out, count: document.querySelectorAll('[data-testid^=\"mt-side-\"] [data-num]').length};",
            )
            .await;
        assert_eq!(
            wrong["wrong"],
            serde_json::json!([]),
            "{when}, page {k}: {wrong}"
        );
        assert!(
            wrong["count"].as_u64().unwrap() >= 8,
            "{when}, page {k}: no board: {wrong}"
        );
        page.shows_no_missing_values(&format!("{when}, page {k}"))
            .await;
    }
}

/// Presses the action bar's Next phase (or End turn) and waits for the phase to move.
async fn next_phase(page: &Browser) {
    let seq = page.seq().await;
    page.click("mt-next-phase").await;
    page.until("the phase moved", &format!("gm.view().seq > {seq}"))
        .await;
}

/// Picks an action in the action bar.
async fn action(page: &Browser, name: &str) {
    choose(page, "mt-action", name).await;
}

/// Waits for the view to satisfy `condition` (`b` is the board).
async fn until_board(page: &Browser, what: &str, condition: &str) {
    page.until(
        what,
        &format!("(() => {{ const b = gm.view().magic_tech; return {condition}; }})()"),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_magic_tech_game_is_played_to_its_end_on_a_laptop_and_a_phone() {
    let server = server().await;
    let base = format!("http://{}", server.addr);
    let driver = Driver::start().await;
    let ann = driver.browser(1280, 900).await;
    let bob = driver.phone_sized(390, 844).await;

    // Ann creates the table from the lobby: Magic Tech, two seats.
    ann.goto(&format!("{base}/")).await;
    ann.until(
        "the create form",
        "document.querySelector('[data-testid=\"create-game\"]') !== null && GM.link && GM.link.up",
    )
    .await;
    choose(&ann, "create-game", "magic_tech").await;
    ann.click("create-submit").await;
    ann.until(
        "the table page",
        "location.pathname.startsWith('/t/') && document.querySelector('[data-testid=\"join-name\"]') !== null",
    )
    .await;
    let path = ann.js("return location.pathname;").await;
    ann.fill("join-name", "Ann").await;
    ann.click("join-submit").await;
    ann.until("Ann seated", "gm.role() === 'player' && gm.me() === 0")
        .await;
    let settings = ann.js("return gm.view().settings;").await;
    assert_eq!(settings["game"], Value::from("magic_tech"), "{settings}");
    assert_eq!(settings["seats"], Value::from(2), "{settings}");

    bob.goto(&format!("{base}{}", path.as_str().unwrap())).await;
    bob.until(
        "the join form",
        "document.querySelector('[data-testid=\"join-name\"]') !== null && GM.link && GM.link.up",
    )
    .await;
    bob.fill("join-name", "Bob").await;
    bob.click("join-submit").await;
    bob.until("Bob seated", "gm.role() === 'player' && gm.me() === 1")
        .await;

    // Decks: Ann 7 cards, Bob 8 (five in hand each, the rest in the stockpiles).
    for (page, size) in [(&ann, "7"), (&bob, "8")] {
        page.fill("mt-deck-size", size).await;
        page.click("mt-declare-deck").await;
    }
    until_board(
        &ann,
        "both decks declared",
        "b.sides.every(s => s.deck !== null)",
    )
    .await;
    choose(&ann, "start-first", "0").await;
    ann.click("start").await;
    ann.until("mulligans", "gm.view().stage === 'mulligan'")
        .await;
    ann.click("keep").await;
    bob.until("Bob decides", "gm.view().mulligan_decider === 1")
        .await;
    bob.click("keep").await;
    until_board(
        &ann,
        "Ann's first upkeep",
        "b.active === 0 && b.phase === 'upkeep'",
    )
    .await;
    boards_match([&ann, &bob], "the game begins").await;
    let sides = ann.js("return gm.view().magic_tech.sides;").await;
    assert_eq!(
        sides[0]["stockpile"],
        Value::from(1),
        "Ann drew one: {sides}"
    );
    assert_eq!(sides[0]["hand"], Value::from(6), "{sides}");

    // Ann's first turn: a Forest, a card face down paid with its mana and revealed as an Elf.
    next_phase(&ann).await;
    until_board(&ann, "Ann's deploy phase", "b.phase === 'deploy'").await;
    action(&ann, "deploy").await;
    choose(&ann, "mt-land-basic", "green").await;
    ann.click("mt-deploy-land").await;
    until_board(&ann, "the Forest", "b.cards.length === 1").await;
    ann.click("mt-deploy").await;
    until_board(&ann, "a card face down", "b.cards.length === 2").await;
    action(&ann, "tap").await;
    choose(&ann, "mt-tap-card", "0").await;
    ann.fill("mt-mana", "1").await;
    ann.click("mt-tap").await;
    until_board(&ann, "a mana", "b.sides[0].mana === 1").await;
    action(&ann, "pay").await;
    choose(&ann, "mt-pay-card", "1").await;
    ann.fill("mt-amount", "1").await;
    ann.click("mt-pay").await;
    until_board(&ann, "a counter", "b.cards[1].counters === 1").await;
    boards_match([&ann, &bob], "a counter on a face-down card").await;
    action(&ann, "reveal").await;
    choose(&ann, "mt-reveal-card", "1").await;
    ann.fill("mt-name", "Llanowar Elves").await;
    ann.fill("mt-coloured", "G").await;
    ann.fill("mt-power", "1").await;
    ann.fill("mt-toughness", "1").await;
    let cost = ann
        .js("return document.querySelector('[data-testid=\"mt-reveal-cost\"]').textContent;")
        .await;
    assert!(
        cost.as_str().unwrap().contains("Cost to reveal: 1"),
        "with a Forest in play {{G}} costs 1: {cost}"
    );
    ann.click("mt-reveal").await;
    until_board(&ann, "the Elves revealed", "b.cards[1].face !== null").await;
    boards_match([&ann, &bob], "the Elves revealed").await;
    next_phase(&ann).await;
    next_phase(&ann).await;
    until_board(
        &bob,
        "Bob's upkeep",
        "b.active === 1 && b.phase === 'upkeep'",
    )
    .await;
    until_board(
        &bob,
        "the Elves on patrol",
        "b.cards[1].area.kind === 'patrol'",
    )
    .await;
    boards_match([&ann, &bob], "Bob's turn").await;

    // Bob, on the phone: a Mountain pays for a Raging Goblin (immune to summoning sickness),
    // which goes on a mission against Ann's stockpile; Ann's Elves block it.
    let bar = bob
        .js(
            "const e = document.querySelector('[data-testid=\"mt-next-phase\"]'); const r = e.getBoundingClientRect(); \
             const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2); \
             return {inside: r.top >= 0 && r.bottom <= innerHeight, uncovered: !!hit && (hit === e || e.contains(hit))};",
        )
        .await;
    assert_eq!(
        bar,
        serde_json::json!({"inside": true, "uncovered": true}),
        "the phone's Next phase is on screen"
    );
    next_phase(&bob).await;
    action(&bob, "deploy").await;
    choose(&bob, "mt-land-basic", "red").await;
    bob.click("mt-deploy-land").await;
    until_board(&bob, "the Mountain", "b.cards.length === 3").await;
    bob.click("mt-deploy").await;
    until_board(&bob, "Bob's card face down", "b.cards.length === 4").await;
    action(&bob, "tap").await;
    choose(&bob, "mt-tap-card", "2").await;
    bob.fill("mt-mana", "1").await;
    bob.click("mt-tap").await;
    action(&bob, "pay").await;
    choose(&bob, "mt-pay-card", "3").await;
    bob.fill("mt-amount", "1").await;
    bob.click("mt-pay").await;
    until_board(&bob, "Bob's counter", "b.cards[3].counters === 1").await;
    action(&bob, "reveal").await;
    choose(&bob, "mt-reveal-card", "3").await;
    bob.fill("mt-name", "Raging Goblin").await;
    bob.fill("mt-coloured", "R").await;
    bob.fill("mt-power", "1").await;
    bob.fill("mt-toughness", "1").await;
    bob.js("const d = document.querySelector('[data-testid=\"mt-reveal-form\"] details'); d.open = true; return 1;")
        .await;
    bob.click("mt-kw-haste").await;
    bob.click("mt-reveal").await;
    until_board(
        &bob,
        "the Goblin revealed",
        "b.cards[3].face !== null && b.cards[3].face.keywords.haste === true",
    )
    .await;
    action(&bob, "relocate").await;
    choose(&bob, "mt-relocate-card", "3").await;
    choose(&bob, "mt-relocate-area", "patrol").await;
    bob.click("mt-relocate").await;
    until_board(
        &bob,
        "the Goblin on patrol",
        "b.cards[3].area.kind === 'patrol'",
    )
    .await;
    next_phase(&bob).await;
    until_board(&bob, "Bob's missions", "b.phase === 'missions'").await;
    action(&bob, "mission").await;
    bob.click("mt-attacker-3").await;
    choose(&bob, "mt-mission-target", "stockpile:0").await;
    bob.click("mt-mission").await;
    until_board(&ann, "the mission", "b.mission !== null").await;
    boards_match([&ann, &bob], "the mission under way").await;
    for (page, who) in [(&ann, "Ann blocking"), (&bob, "Bob's mission on a phone")] {
        page.assert_accessible(who).await;
        page.assert_fits(who).await;
    }
    let shown = ann
        .js("return document.querySelector('[data-testid=\"mt-mission\"]').textContent;")
        .await;
    assert!(
        shown.as_str().unwrap().contains("Raging Goblin"),
        "the mission names its attacker: {shown}"
    );
    choose(&ann, "mt-block-1", "3").await;
    ann.click("mt-block").await;
    until_board(&ann, "the mission over", "b.mission === null").await;
    until_board(
        &ann,
        "both tapped",
        "b.cards.find(c => c.card === 1).tapped && b.cards.find(c => c.card === 3).tapped",
    )
    .await;
    boards_match([&ann, &bob], "the mission blocked").await;
    next_phase(&bob).await;

    // Ann must draw two from a stockpile of one: she has run out, Bob wins.
    ann.until("the game is over", "gm.view().stage === 'finished'")
        .await;
    boards_match([&ann, &bob], "the end").await;
    for page in [&ann, &bob] {
        page.until(
            "the winner",
            "(document.querySelector('[data-testid=\"winner\"]') || {}).textContent === '♛ Bob wins!'",
        )
        .await;
    }
    // The replay folds the same game from its journal, to the same end.
    let table = path.as_str().unwrap().trim_start_matches("/t/").to_owned();
    ann.goto(&format!("{base}/replays/{table}")).await;
    let step = "(document.querySelector('[data-testid=\"replay-step\"]') || {}).textContent || ''";
    ann.until(
        "the replay loaded",
        &format!("{step}.startsWith('step 0 of ')"),
    )
    .await;
    ann.js(
        "const r = document.querySelector('input[type=range][aria-label=\"Step\"]'); r.value = r.max; \
         r.dispatchEvent(new Event('input', {bubbles: true})); return 1;",
    )
    .await;
    ann.until(
        "the replay's last step: Bob wins",
        "(document.querySelector('[data-testid=\"winner\"]') || {}).textContent === '♛ Bob wins!' && \
         document.querySelectorAll('[data-testid^=\"mt-card-\"]').length === 4",
    )
    .await;
    ann.shows_no_missing_values("the replay's last step").await;
    bob.screenshot(&screenshot_dir().join("magic-tech-phone-end.png"))
        .await;
    bob.assert_accessible("Magic Tech on a phone, at the end")
        .await;
    bob.assert_fits("Magic Tech on a phone, at the end").await;
}

/// Waits at most three seconds for `condition` (a JavaScript expression) in the page: what
/// the page must show at once, not after a timer of its own (an error's 12 s, an alert's
/// minute) has run out.
async fn soon(page: &Browser, what: &str, condition: &str) {
    let done = page
        .eval_async(&format!(
            "new Promise((resolve) => {{ const start = Date.now(); \
               const check = () => {{ try {{ return !!({condition}); }} catch (e) {{ return false; }} }}; \
               const tick = () => check() ? resolve(true) : Date.now() - start > 3000 ? resolve(false) : setTimeout(tick, 20); tick(); }})"
        ))
        .await;
    assert_eq!(done, Value::Bool(true), "{what} ({condition})");
}

/// The error line's text while it is shown, else null.
const ERROR_SHOWN: &str = "(() => { const e = document.querySelector('[data-testid=\"error\"]'); return e && !e.hidden ? e.textContent : null; })()";

/// A Magic Tech turn as a newcomer on a phone meets it (issue 45, item 6): the words fit a
/// table of two, the action menu offers what the phase allows first, Deploy in the upkeep is
/// refused with what to do and the refusal goes once the next action succeeds, the land chosen
/// is the land deployed, the Reveal form starts again after a reveal, the card's numbers are
/// explained on the board, the mission's alert goes once the mission is blocked, and the log
/// numbers the turns as the board does. A screenshot of the phone's turn goes to the tests'
/// screenshots (`magic-tech-phone-390x844.png`, copied to docs/src/screenshots/).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_magic_tech_turn_on_a_phone_says_what_it_means_and_does_what_was_chosen() {
    let server = server().await;
    let base = format!("http://{}", server.addr);
    let driver = Driver::start().await;
    let ann = driver.browser(1280, 900).await;
    let bob = driver.phone_sized(390, 844).await;

    ann.goto(&format!("{base}/")).await;
    ann.until(
        "the create form",
        "document.querySelector('[data-testid=\"create-game\"]') !== null && GM.link && GM.link.up",
    )
    .await;
    choose(&ann, "create-game", "magic_tech").await;
    ann.click("create-submit").await;
    ann.until(
        "the table page",
        "location.pathname.startsWith('/t/') && document.querySelector('[data-testid=\"join-name\"]') !== null",
    )
    .await;
    let path = ann.js("return location.pathname;").await;
    ann.fill("join-name", "Ann").await;
    ann.click("join-submit").await;
    ann.until("Ann seated", "gm.role() === 'player' && gm.me() === 0")
        .await;
    bob.goto(&format!("{base}{}", path.as_str().unwrap())).await;
    bob.until(
        "the join form",
        "document.querySelector('[data-testid=\"join-name\"]') !== null && GM.link && GM.link.up",
    )
    .await;
    bob.fill("join-name", "Bob").await;
    bob.click("join-submit").await;
    bob.until("Bob seated", "gm.role() === 'player' && gm.me() === 1")
        .await;

    // The camera box speaks of the opponent, not of a range of players.
    let camera = bob.text("camera-who").await;
    assert!(
        camera.contains("your opponent") && !camera.contains("range"),
        "the camera at a table of two: {camera}"
    );

    // Call the host draws its megaphone (an emoji is an empty box where the font lacks it).
    let call = bob
        .js("const b = document.querySelector('[data-testid=\"call-host\"]'); \
             return b ? {emoji: b.textContent.includes('\\u{1F4E3}'), drawn: !!b.querySelector('svg path')} : null;")
        .await;
    assert_eq!(
        call,
        serde_json::json!({"emoji": false, "drawn": true}),
        "Call the host"
    );

    for page in [&ann, &bob] {
        page.fill("mt-deck-size", "20").await;
        page.click("mt-declare-deck").await;
    }
    until_board(
        &ann,
        "both decks declared",
        "b.sides.every(s => s.deck !== null)",
    )
    .await;
    choose(&ann, "start-first", "0").await;
    ann.click("start").await;
    bob.until("Ann decides", "gm.view().mulligan_decider === 0")
        .await;
    let status = bob.text("status-line").await;
    assert!(
        status.contains("Ann") && !status.contains("his opening hand"),
        "Bob waits for Ann's keep: {status}"
    );
    ann.click("keep").await;
    bob.until("Bob decides", "gm.view().mulligan_decider === 1")
        .await;
    bob.click("keep").await;
    until_board(
        &ann,
        "Ann's first upkeep",
        "b.active === 0 && b.phase === 'upkeep'",
    )
    .await;
    let started = ann.log().await;
    let line = started
        .iter()
        .find(|l| l.starts_with("The game started"))
        .unwrap_or_else(|| panic!("no start in the log: {started:?}"));
    assert!(
        !line.contains("simultaneous") && line.contains("Ann plays first"),
        "{line}"
    );

    // The upkeep: the menu opens on what the upkeep allows; Deploy waits for its phase.
    let menu = ann
        .js("const s = document.querySelector('[data-testid=\"mt-action\"]'); return {value: s.value, options: Array.from(s.options).map(o => o.value)};")
        .await;
    assert_ne!(
        menu["value"],
        Value::from("deploy"),
        "in the upkeep: {menu}"
    );
    assert_ne!(
        menu["options"][0],
        Value::from("deploy"),
        "in the upkeep: {menu}"
    );
    action(&ann, "deploy").await;
    let seq = ann.seq().await;
    ann.click("mt-deploy").await;
    soon(
        &ann,
        "Deploy in the upkeep is refused with what to do",
        &format!("({ERROR_SHOWN} || '').includes('press Next phase')"),
    )
    .await;
    assert_eq!(ann.seq().await, seq, "a refusal changes nothing");
    next_phase(&ann).await;
    until_board(&ann, "Ann's deploy phase", "b.phase === 'deploy'").await;
    soon(
        &ann,
        "the refusal goes once Next phase has succeeded",
        &format!("{ERROR_SHOWN} === null"),
    )
    .await;

    // One choice, one land: Mountain is a Mountain, basic red.
    action(&ann, "deploy").await;
    choose(&ann, "mt-land-basic", "red").await;
    ann.click("mt-deploy-land").await;
    until_board(&ann, "a land", "b.cards.length === 1").await;
    let land = ann.js("return gm.view().magic_tech.cards[0].face;").await;
    assert_eq!(land["name"], Value::from("Mountain"), "{land}");
    assert_eq!(land["basic"], Value::from("red"), "{land}");

    // A Raging Goblin revealed: the form starts again; the board explains its numbers.
    ann.click("mt-deploy").await;
    until_board(&ann, "a card face down", "b.cards.length === 2").await;
    action(&ann, "tap").await;
    choose(&ann, "mt-tap-card", "0").await;
    ann.fill("mt-mana", "1").await;
    ann.click("mt-tap").await;
    until_board(&ann, "a mana", "b.sides[0].mana === 1").await;
    action(&ann, "pay").await;
    choose(&ann, "mt-pay-card", "1").await;
    ann.fill("mt-amount", "1").await;
    ann.click("mt-pay").await;
    until_board(&ann, "a counter", "b.cards[1].counters === 1").await;
    action(&ann, "reveal").await;
    choose(&ann, "mt-reveal-card", "1").await;
    ann.fill("mt-name", "Raging Goblin").await;
    ann.fill("mt-coloured", "R").await;
    ann.js("const d = document.querySelector('[data-testid=\"mt-reveal-form\"] details'); d.open = true; return 1;")
        .await;
    ann.click("mt-kw-haste").await;
    ann.click("mt-reveal").await;
    until_board(&ann, "the Goblin revealed", "b.cards[1].face !== null").await;
    soon(
        &ann,
        "the Reveal form starts again",
        "document.querySelector('[data-testid=\"mt-reveal-card\"]').value === '' && \
         document.querySelector('[data-testid=\"mt-name\"]').value === '' && \
         !document.querySelector('[data-testid=\"mt-reveal-cost\"]').textContent.includes('needed')",
    )
    .await;
    for page in [&ann, &bob] {
        page.until(
            "the Goblin on the board",
            "!!document.querySelector('[data-testid=\"mt-card-1\"] [data-num=\"attack\"]')",
        )
        .await;
        let key = page
            .js("const k = document.querySelector('[data-testid=\"mt-key\"]'); const r = k && k.getBoundingClientRect(); \
                 return {text: k ? k.textContent : '', shown: !!r && r.width > 0 && r.height > 0, \
                 titles: Array.from(document.querySelectorAll('[data-testid=\"mt-card-1\"] .mt-stats abbr')).map(a => a.textContent + '=' + a.title)};")
            .await;
        let text = key["text"].as_str().unwrap();
        for word in ["ATK attack", "ARM armour", "STR structure", "✸ damage"] {
            assert!(text.contains(word), "{word} explained: {key}");
        }
        assert_eq!(key["shown"], Value::Bool(true), "{key}");
        assert_eq!(
            key["titles"],
            serde_json::json!(["ATK=attack", "ARM=armour", "STR=structure", "✸=damage"]),
            "{key}"
        );
    }

    // A mission against Bob's stockpile: his alert goes once he has blocked.
    action(&ann, "relocate").await;
    choose(&ann, "mt-relocate-card", "1").await;
    choose(&ann, "mt-relocate-area", "patrol").await;
    ann.click("mt-relocate").await;
    until_board(
        &ann,
        "the Goblin on patrol",
        "b.cards[1].area.kind === 'patrol'",
    )
    .await;
    next_phase(&ann).await;
    until_board(&ann, "Ann's missions", "b.phase === 'missions'").await;
    let menu = ann
        .js("return document.querySelector('[data-testid=\"mt-action\"]').value;")
        .await;
    assert_eq!(
        menu,
        Value::from("mission"),
        "the missions phase opens on Mission"
    );
    ann.click("mt-attacker-1").await;
    choose(&ann, "mt-mission-target", "stockpile:1").await;
    ann.click("mt-mission").await;
    bob.until(
        "Bob's alert",
        "gm.alerts().some(a => a.includes('block now'))",
    )
    .await;
    bob.click("mt-block").await;
    until_board(&bob, "the mission over", "b.mission === null").await;
    soon(
        &bob,
        "the mission's alert goes once it is blocked",
        "!gm.alerts().some(a => a.includes('block now')) && \
         !Array.from(document.querySelectorAll('[data-testid=\"alert\"]')).some(e => e.textContent.includes('block now'))",
    )
    .await;

    // Bob's turn: the log numbers the turns as the board does.
    next_phase(&ann).await;
    until_board(
        &bob,
        "Bob's upkeep",
        "b.active === 1 && b.phase === 'upkeep'",
    )
    .await;
    let turn = bob.text("mt-turn").await;
    assert!(turn.starts_with("Turn 2"), "{turn}");
    let log = bob.log().await;
    for line in ["Ann began turn 1", "Ann ended turn 1", "Bob began turn 2"] {
        assert!(log.iter().any(|l| l == line), "{line} in {log:?}");
    }
    assert!(
        !log.iter().any(|l| l.contains("T0")),
        "no T0 in the log: {log:?}"
    );

    // Bob's turn on the phone, as the README and docs/src/organiser.md show it.
    next_phase(&bob).await;
    until_board(&bob, "Bob's deploy phase", "b.phase === 'deploy'").await;
    choose(&bob, "mt-land-basic", "green").await;
    bob.click("mt-deploy-land").await;
    until_board(&bob, "Bob's Forest", "b.cards.length === 3").await;
    let forest = bob.js("return gm.view().magic_tech.cards[2].face;").await;
    assert_eq!(forest["name"], Value::from("Forest"), "{forest}");
    bob.click("mt-deploy").await;
    until_board(&bob, "Bob's card face down", "b.cards.length === 4").await;
    boards_match([&ann, &bob], "Bob's turn").await;
    bob.js("window.scrollTo(0, 0); return 1;").await;
    bob.screenshot(&screenshot_dir().join("magic-tech-phone-390x844.png"))
        .await;
    bob.assert_accessible("Magic Tech on a phone, in its turn")
        .await;
    bob.assert_fits("Magic Tech on a phone, in its turn").await;
}

//! A Mountain Magic climb played to its end in a real Chromium page at phone size (issue 31):
//! the climber creates a one-seat table from the lobby's form, sits down, starts, climbs the
//! mountain with the page's buttons (turning cards over, placing them where the page offers,
//! discarding the rest), chooses a path down it, and fights the battle (putting each land on a
//! card, using powered cards, attacking, ending his turns) to one of the six endings, which the
//! page names. The page's folded view is checked against fresh snapshots along the way; axe and
//! the phone's width are checked on the climb, the battle and the end; screenshots at 390×844
//! and 1280×800. A deal whose spell deck runs out before the mountain is complete (a failed
//! climb, also named) is followed by a new table, until one reaches the battle. What the
//! occupying forces did, in words, survives a reload mid-battle and is told by the replay. The
//! one-seat table shows no camera, even with the climber's camera switched on.
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
        // A scripted climb asks faster than a person would.
        rate_limit: 1e6,
        rate_burst: 1e6,
        ..ServerConfig::default()
    };
    TestServer::start_with(config).await
}

/// The climb's phase in the page's view.
async fn phase(page: &Browser) -> String {
    page.js("return gm.view().mountain_magic.phase;")
        .await
        .as_str()
        .unwrap()
        .to_owned()
}

/// Clicks the page button `script` picks (a function body returning the element, or null) and
/// waits for the server's answer: an event folded, or a refusal shown. Returns the button's
/// test id, or None when `script` found none.
async fn press(page: &Browser, script: &str) -> Option<String> {
    let seq = page.seq().await;
    let clicked = page
        .js(&format!(
            "const q = (s) => Array.from(document.querySelectorAll(s)).filter(e => !e.disabled && e.offsetParent !== null); \
             const e = (() => {{ {script} }})(); if (!e) return null; GM.state.lastError = null; e.click(); return e.dataset.testid;"
        ))
        .await;
    let id = clicked.as_str()?.to_owned();
    page.until(
        &format!("the answer to {id}"),
        &format!("gm.view().seq > {seq} || GM.state.lastError"),
    )
    .await;
    Some(id)
}

/// Checks the page's mirror against a fresh snapshot, and that it shows no missing value.
async fn matches(page: &Browser, when: &str) {
    page.check_mirror(when).await;
    page.shows_no_missing_values(when).await;
}

/// Creates a Mountain Magic table from the lobby, sits down and starts the climb.
async fn new_climb(page: &Browser, base: &str) {
    page.goto(&format!("{base}/")).await;
    page.js("localStorage.setItem('gm.camera', JSON.stringify({on: true})); return 1;")
        .await;
    page.until(
        "the create form",
        "document.querySelector('[data-testid=\"create-game\"]') !== null && GM.link && GM.link.up",
    )
    .await;
    page.js(
        "const s = document.querySelector('[data-testid=\"create-game\"]'); s.value = 'mountain_magic'; \
         s.dispatchEvent(new Event('change', {bubbles: true})); return 1;",
    )
    .await;
    let form = page
        .js("return [document.querySelector('[name=seats]').value, getComputedStyle(document.querySelector('[data-testid=\"create-mm-deck\"]').closest('.field')).display];")
        .await;
    assert_eq!(form[0], Value::from("1"), "one seat: {form}");
    assert_ne!(
        form[1],
        Value::from("none"),
        "the deck file is offered: {form}"
    );
    page.click("create-submit").await;
    page.until(
        "the table page",
        "location.pathname.startsWith('/t/') && document.querySelector('[data-testid=\"join-name\"]') !== null",
    )
    .await;
    page.fill("join-name", "Cleo").await;
    page.click("join-submit").await;
    page.until("Cleo seated", "gm.role() === 'player' && gm.me() === 0")
        .await;
    let settings = page.js("return gm.view().settings;").await;
    assert_eq!(
        settings["game"],
        Value::from("mountain_magic"),
        "{settings}"
    );
    assert_eq!(settings["seats"], Value::from(1), "{settings}");
    no_cameras(page, "in the lobby").await;
    page.click("start").await;
    page.until(
        "the mountain dealt",
        "gm.view().mountain_magic.phase === 'climbing' && document.querySelector('[data-testid=\"mm-mountain\"]') !== null",
    )
    .await;
    no_cameras(page, "on the climb").await;
}

/// A one-seat table has nobody to link a camera with: no camera box or switch, and cameras.js
/// is not loaded even though the climber's camera is on (`gm.camera`, set by `new_climb`).
async fn no_cameras(page: &Browser, when: &str) {
    let shown = page
        .js("return [!!document.querySelector('[data-testid=\"cameras\"], [data-testid=\"camera-toggle\"], [data-testid=\"camera-who\"]'), \
             !!GM.cameras, !!document.querySelector('script[src=\"/assets/cameras.js\"]'), (JSON.parse(localStorage.getItem('gm.camera')) || {}).on === true];")
        .await;
    assert_eq!(
        shown,
        serde_json::json!([false, false, false, true]),
        "no camera box, no cameras.js, the camera switched on {when}"
    );
}

/// Climbs until the mountain is complete (true) or the climb has failed (false): a place the
/// page offers first, else the discard pile's top card stays, the next card is turned over, or
/// the card that fits nowhere is discarded.
async fn climb(page: &Browser) -> bool {
    let mut steps = 0;
    loop {
        match phase(page).await.as_str() {
            "path" => return true,
            "over" => return false,
            _ => {}
        }
        let id = press(
            page,
            "return q('[data-testid^=\"mm-place-\"]')[0] || q('[data-testid=\"mm-flip\"]')[0] || q('[data-testid=\"mm-discard\"]')[0];",
        )
        .await
        .expect("a climbing button");
        let refused = page.js("return GM.state.lastError;").await;
        assert_eq!(refused, Value::Null, "{id} was refused");
        steps += 1;
        if steps == 3 {
            let offered = page
                .js("return document.querySelector('[data-testid=\"mm-next\"]').textContent;")
                .await;
            assert!(!offered.as_str().unwrap().is_empty(), "{offered}");
            page.assert_accessible("the climb on a phone").await;
            page.assert_fits("the climb on a phone").await;
            page.js(
                "document.querySelector('[data-testid=\"mm-climb\"]').scrollIntoView(); return 1;",
            )
            .await;
            page.screenshot(&screenshot_dir().join("mountain-magic-phone-climb.png"))
                .await;
        }
        if steps % 25 == 0 {
            matches(page, &format!("climb step {steps}")).await;
        }
        assert!(
            steps < 200,
            "a climb is at most 65 cards and their placements"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mountain_magic_climb_and_battle_are_played_to_an_ending_on_a_phone() {
    let server = server().await;
    let base = format!("http://{}", server.addr);
    let driver = Driver::start().await;
    let page = driver.phone_sized(390, 844).await;

    let mut failed = 0;
    loop {
        new_climb(&page, &base).await;
        matches(&page, "the deal").await;
        if climb(&page).await {
            break;
        }
        matches(&page, "a failed climb").await;
        page.until(
            "the failed climb named",
            "(document.querySelector('[data-testid=\"mm-ending\"]') || {}).textContent.includes('the climb failed')",
        )
        .await;
        failed += 1;
        assert!(failed < 12, "twelve climbs in a row failed");
    }
    matches(&page, "the mountain complete").await;

    // The path: down the mountain with the page's ↙ and ↘ buttons, then taken.
    for k in 0..6 {
        page.click(if k % 2 == 0 {
            "mm-path-right"
        } else {
            "mm-path-left"
        })
        .await;
    }
    page.assert_accessible("the path on a phone").await;
    press(&page, "return q('[data-testid=\"mm-path-choose\"]')[0];")
        .await
        .expect("the path button");
    page.until(
        "the battle",
        "gm.view().mountain_magic.phase === 'battle' && document.querySelector('[data-testid=\"mm-side-opponent\"] [data-testid=\"mm-force-opponent-0\"]') !== null",
    )
    .await;
    let path = page.js("return gm.view().mountain_magic.path;").await;
    assert_eq!(
        path,
        serde_json::json!([0, 1, 1, 2, 2, 3, 3]),
        "the path taken"
    );
    matches(&page, "the battle begins").await;

    // The battle: each land on the first card the page offers it to (else let go), every
    // powered card used (its first target), one attack a turn, then the turn ended.
    let mut steps = 0;
    let mut shot = false;
    let mut attacked_turn = 0;
    while phase(&page).await == "battle" {
        let turn = page
            .js("return gm.view().mountain_magic.battle.turns[0];")
            .await
            .as_u64()
            .unwrap();
        let id = press(
            &page,
            "const pick = q('[data-testid^=\"mm-mana-\"]')[0] || q('[data-testid=\"mm-let-go\"]')[0]; if (pick) return pick; \
             for (const sel of q('[data-testid^=\"mm-aim-\"]')) { if (sel.value === '' && sel.options.length > 1) { sel.value = sel.options[1].value; sel.dispatchEvent(new Event('change', {bubbles: true})); } } \
             return null;",
        )
        .await;
        let id = match id {
            Some(id) => Some(id),
            None => {
                // Targets chosen above are drawn on the next frame.
                page.until("the page redrawn", "true").await;
                let used = press(
                    &page,
                    &format!(
                        "if (window.mmTried === undefined) window.mmTried = {{}}; \
                         const u = q('[data-testid^=\"mm-use-\"]').find(b => !window.mmTried[b.dataset.testid + ':' + {turn}]); \
                         if (u) {{ window.mmTried[u.dataset.testid + ':' + {turn}] = 1; return u; }} return null;"
                    ),
                )
                .await;
                if used.is_some() {
                    used
                } else if attacked_turn < turn
                    && page
                        .js("return !!document.querySelector('[data-testid=\"mm-attack\"]');")
                        .await
                        == Value::Bool(true)
                {
                    attacked_turn = turn;
                    page.js(
                        "const box = document.querySelector('[data-testid^=\"mm-attacker-\"]'); if (!box.checked) box.click(); return 1;",
                    )
                    .await;
                    page.js(
                        "const s = document.querySelector('[data-testid=\"mm-attack-target\"]'); s.value = s.options[1].value; \
                         s.dispatchEvent(new Event('change', {bubbles: true})); return 1;",
                    )
                    .await;
                    page.until(
                        "the attack ready",
                        "!document.querySelector('[data-testid=\"mm-attack-go\"]').disabled",
                    )
                    .await;
                    press(&page, "return q('[data-testid=\"mm-attack-go\"]')[0];").await
                } else {
                    press(&page, "return q('[data-testid=\"mm-end-turn\"]')[0];").await
                }
            }
        };
        // The page offers only what the rules allow: nothing it offers is refused.
        let refused = page.js("return GM.state.lastError;").await;
        assert_eq!(refused, Value::Null, "{id:?} was refused");
        // The occupying forces' turn runs at once on the server: nothing to press meanwhile.
        if id.is_none() {
            page.until(
                "the climber's turn or the end",
                "gm.view().mountain_magic.phase !== 'battle' || gm.view().mountain_magic.battle.turn === 'player'",
            )
            .await;
        }
        steps += 1;
        if !shot
            && page
                .js("return !!document.querySelector('[data-testid=\"mm-opponent-did\"]');")
                .await
                == Value::Bool(true)
        {
            shot = true;
            matches(&page, "after the occupying forces' turn").await;
            let said = page
                .js("return document.querySelector('[data-testid=\"mm-opponent-did\"]').textContent;")
                .await;
            assert!(
                said.as_str().unwrap().contains("They drew"),
                "what the occupying forces did, in words: {said}"
            );
            // A reload mid-battle: the words come back from the table's events (get_events).
            let here = page.js("return location.href;").await;
            page.goto(here.as_str().unwrap()).await;
            page.until(
                "the words again after a reload",
                &format!(
                    "gm.connected() && gm.role() === 'player' && (document.querySelector('[data-testid=\"mm-opponent-did\"]') || {{}}).textContent === {}",
                    serde_json::to_string(said.as_str().unwrap()).unwrap()
                ),
            )
            .await;
            page.assert_accessible("the battle on a phone").await;
            page.assert_fits("the battle on a phone").await;
            page.js(
                "document.querySelector('[data-testid=\"mm-battle\"]').scrollIntoView(); return 1;",
            )
            .await;
            page.screenshot(&screenshot_dir().join("mountain-magic-phone-battle.png"))
                .await;
        }
        if steps % 20 == 0 {
            matches(&page, &format!("battle step {steps}")).await;
        }
        assert!(steps < 600, "the battle ends with the land deck");
    }

    page.until("the game over", "gm.view().stage === 'finished'")
        .await;
    matches(&page, "the end").await;
    let ending = page.js("return gm.view().mountain_magic.outcome;").await;
    assert_eq!(ending["kind"], Value::from("battle"), "{ending}");
    // The ending by its name, and why (as the failed climb says why).
    let (named, why) = match ending["ending"].as_str().unwrap() {
        "total_victory" => ("Total victory", "destroyed every card"),
        "victory" => ("Victory", "the mana ran out"),
        "draw_no_creatures" => ("Draw (no creatures)", "no creatures left on either side"),
        "draw_both_creatures" => (
            "Draw (both sides' creatures",
            "creatures still on both sides",
        ),
        "defeat" => ("Defeat", "the mana ran out"),
        "humiliating_defeat" => (
            "The absolute, total, humiliating defeat",
            "destroyed all your cards",
        ),
        other => panic!("not one of the six endings: {other}"),
    };
    let shown = page
        .js("return document.querySelector('[data-testid=\"mm-ending\"]').textContent;")
        .await;
    assert!(
        shown.as_str().unwrap().starts_with(named) && shown.as_str().unwrap().contains(why),
        "the ending by its name and why: {shown} ({ending})"
    );
    assert!(shot, "the occupying forces took a turn");
    page.assert_accessible("the ending on a phone").await;
    page.assert_fits("the ending on a phone").await;
    page.screenshot(&screenshot_dir().join("mountain-magic-phone-end.png"))
        .await;

    // The replay folds the same climb from its journal (the page's part loaded for it) to the
    // same ending.
    let table = page.js("return location.pathname;").await;
    let id = table.as_str().unwrap().trim_start_matches("/t/").to_owned();
    let replay = driver.browser(1280, 800).await;
    replay.goto(&format!("{base}/replays/{id}")).await;
    let step = "(document.querySelector('[data-testid=\"replay-step\"]') || {}).textContent || ''";
    replay
        .until(
            "the replay loaded",
            &format!("{step}.startsWith('step 0 of ')"),
        )
        .await;
    replay
        .js(
            "const r = document.querySelector('input[type=range][aria-label=\"Step\"]'); r.value = r.max; \
             r.dispatchEvent(new Event('input', {bubbles: true})); return 1;",
        )
        .await;
    replay
        .until(
            "the replay's last step: the same ending",
            &format!(
                "(document.querySelector('[data-testid=\"mm-ending\"]') || {{}}).textContent === {}",
                serde_json::to_string(shown.as_str().unwrap()).unwrap()
            ),
        )
        .await;
    replay
        .shows_no_missing_values("the replay's last step")
        .await;
    // What the occupying forces did, told by the replay as the page told it: at the last step
    // the same words as the climber's page at the end, and from the start, turn by turn, their
    // first turn's words.
    let did =
        "(document.querySelector('[data-testid=\"mm-opponent-did\"]') || {}).textContent || null";
    let live = page.js(&format!("return {did};")).await;
    let told = replay.js(&format!("return {did};")).await;
    assert_eq!(
        told, live,
        "the replay's last step tells the last turn as the page did"
    );
    replay.click("replay-first").await;
    // Its log speaks of a climb from the first line: nobody "plays first" at a solitaire.
    let line = "document.querySelector('[data-testid=\"replay-line\"]').textContent";
    let mut steps = 0;
    while !replay
        .js(&format!("return {line};"))
        .await
        .as_str()
        .unwrap()
        .contains("began the climb")
    {
        let said = replay.js(&format!("return {line};")).await;
        assert!(
            !said.as_str().unwrap().contains("plays first"),
            "a climb's start in Grand Melee's words: {said}"
        );
        replay.click("replay-next").await;
        steps += 1;
        assert!(steps < 10, "the replay never says the climb began");
    }
    replay.click("replay-first").await;
    let mut turns = 0;
    while replay.js(&format!("return {did};")).await == Value::Null {
        replay.click("replay-next-turn").await;
        turns += 1;
        assert!(
            turns < 100,
            "the replay never tells what the occupying forces did"
        );
    }
    let first = replay.js(&format!("return {did};")).await;
    assert!(
        first
            .as_str()
            .unwrap()
            .starts_with("What the occupying forces did")
            && first.as_str().unwrap().contains("They drew"),
        "the replay tells the occupying forces' turn: {first}"
    );
    // Whatever the deal: a card of theirs untapped on their turn is named in the replay as on
    // the live page (a step added after the last one, their draw and the untapping of a card
    // of this battle; the replay had no live view and said "card 1", on the deals whose last
    // turn untapped a card).
    let name = replay
        .js(
            "const r = GM.pages.replay, v = r.views[r.at], b = v.mountain_magic.battle; \
             const k = b.opponent.findIndex((f) => f); if (k < 0) return null; \
             const last = r.views[r.views.length - 1], step = JSON.parse(JSON.stringify(v)); \
             step.seq = last.seq + 2; \
             const mm = GM.games.mountain_magic; \
             mm.recall(last.seq + 1, {kind: 'mountain_magic.mana_drawn', side: 'opponent', land: b.opponent[k].card}, step.table); \
             mm.recall(last.seq + 2, {kind: 'mountain_magic.untapped', card: {side: 'opponent', force: k}}, step.table); \
             r.views.push(step); r.lines.push('a step added by the test'); r.go(r.views.length - 1); \
             return GM.cardName(b.opponent[k].card);",
        )
        .await;
    let untapped = format!(
        "{} (the occupying forces') was untapped: powered.",
        name.as_str().expect("a card of theirs in the battle")
    );
    replay
        .until(
            "the untapped card named in the replay",
            &format!(
                "({did} || '').includes({})",
                serde_json::to_string(&untapped).unwrap()
            ),
        )
        .await;

    // The same table on a laptop, watched: the mountain, the battle and the ending.
    let laptop = driver.browser(1280, 800).await;
    laptop
        .goto(&format!("{base}{}", table.as_str().unwrap()))
        .await;
    laptop
        .until(
            "the join form",
            "document.querySelector('[data-testid=\"watch\"]') !== null && GM.link && GM.link.up",
        )
        .await;
    laptop.click("watch").await;
    laptop
        .until(
            "the ending shown",
            "(document.querySelector('[data-testid=\"mm-ending\"]') || {}).textContent !== undefined",
        )
        .await;
    laptop.check_mirror("the laptop").await;
    // The log names the battle's cards (no "card 3"), with whose they are.
    let log = page.js("return gm.log();").await;
    let lines: Vec<&str> = log
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("'s card ") || l.contains("' card ")),
        "a card by its place in the log: {lines:?}"
    );
    // Whose forces: the climber's own on his phone, "the climber's" to a spectator.
    let heading =
        "(document.querySelector('[data-testid=\"mm-side-player\"] h3') || {}).textContent || null";
    let watched = laptop.js(&format!("return {heading};")).await;
    let own = page.js(&format!("return {heading};")).await;
    match (watched.as_str(), own.as_str()) {
        (Some(watched), Some(own)) => {
            assert!(watched.starts_with("The climber's forces"), "{watched}");
            assert!(own.starts_with("Your forces"), "{own}");
        }
        // A climb that failed before the battle has no forces to name.
        (None, None) => {}
        other => panic!("the battle on one page only: {other:?}"),
    }
    laptop.assert_accessible("the ending on a laptop").await;
    laptop
        .screenshot(&screenshot_dir().join("mountain-magic-laptop-end.png"))
        .await;
}

/// The words of the mountain's cards that the page breaks over two lines (each word's text
/// range has client rectangles on more than one line) or that stick out of their card (hidden
/// under the next one), and how many words were looked at.
async fn broken_words(page: &Browser) -> Value {
    page.js(
        "const broken = []; let words = 0; \
         for (const el of document.querySelectorAll('[data-testid=\"mm-mountain\"] .mm-slot strong, [data-testid=\"mm-mountain\"] .mm-slot .meta')) { \
           const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT); \
           for (let n = walk.nextNode(); n; n = walk.nextNode()) { \
             for (const m of n.data.matchAll(/\\S+/g)) { \
               const r = document.createRange(); r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length); \
               const lines = new Set(Array.from(r.getClientRects()).filter(x => x.width > 0).map(x => Math.round(x.top))); \
               const card = el.closest('.mm-slot').getBoundingClientRect(); const w = r.getBoundingClientRect(); \
               words += 1; if (lines.size > 1) broken.push(m[0]); \
               if (w.left < card.left - 0.5 || w.right > card.right + 0.5) broken.push(`${m[0]} sticks out`); \
             } \
           } \
         } \
         return {broken, words};",
    )
    .await
}

/// On a 390 px phone no card name on the mountain breaks mid-word (the rows scroll sideways
/// in their own box instead), and the page draws its buttons with characters every font has:
/// "+ Here", not the full-width "＋" (issue 45, item 6).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mountain_on_a_phone_breaks_no_word_and_its_buttons_use_plain_characters() {
    let server = server().await;
    let base = format!("http://{}", server.addr);
    let driver = Driver::start().await;
    let page = driver.phone_sized(390, 844).await;
    new_climb(&page, &base).await;
    let mut placed = 0;
    for _ in 0..200 {
        if phase(&page).await != "climbing" {
            break;
        }
        let here = page
            .js("return Array.from(document.querySelectorAll('[data-testid^=\"mm-place-\"]')).map(e => e.textContent);")
            .await;
        if let Some(first) = here.as_array().and_then(|a| a.first()) {
            assert_eq!(first, &Value::from("+ Here"), "{here}");
            if placed == 0 {
                page.assert_accessible("the mountain's + Here on a phone")
                    .await;
            }
            placed += 1;
        }
        let words = broken_words(&page).await;
        assert_eq!(words["broken"], serde_json::json!([]), "{words}");
        assert!(
            words["words"].as_u64().unwrap() >= 14,
            "the bottom row's names and kinds: {words}"
        );
        if placed >= 3 {
            break;
        }
        press(
            &page,
            "return q('[data-testid^=\"mm-place-\"]')[0] || q('[data-testid=\"mm-flip\"]')[0] || q('[data-testid=\"mm-discard\"]')[0];",
        )
        .await
        .expect("a climbing button");
    }
    assert!(placed > 0, "a + Here button was offered");
    let glyphs = page
        .js("return [document.body.innerText.includes('\\uFF0B'), document.body.innerText.includes('\\u{1F4E3}')];")
        .await;
    assert_eq!(
        glyphs,
        serde_json::json!([false, false]),
        "no full-width plus, no megaphone emoji"
    );
    page.assert_fits("the mountain on a phone").await;
    page.js("document.querySelector('[data-testid=\"mm-mountain\"]').scrollIntoView(); return 1;")
        .await;
    page.screenshot(&screenshot_dir().join("mountain-magic-phone-words-390x844.png"))
        .await;
}

/// Picks `text` as the create form's deck file, as a person choosing a file would.
async fn pick_deck(page: &Browser, text: &str) {
    let picked = page
        .js(&format!(
            "const i = document.querySelector('[data-testid=\"create-mm-deck\"]'); const d = new DataTransfer(); \
             d.items.add(new File([{}], 'my-deck.json', {{type: 'application/json'}})); i.files = d.files; \
             i.dispatchEvent(new Event('change', {{bubbles: true}})); return i.files.length;",
            serde_json::to_string(text).unwrap()
        ))
        .await;
    assert_eq!(picked, Value::from(1), "the deck file picked");
}

/// The lobby's create form with Mountain Magic chosen.
async fn mountain_magic_form(page: &Browser, base: &str) {
    page.goto(&format!("{base}/")).await;
    page.until(
        "the create form",
        "document.querySelector('[data-testid=\"create-game\"]') !== null && GM.link && GM.link.up",
    )
    .await;
    page.js(
        "const s = document.querySelector('[data-testid=\"create-game\"]'); s.value = 'mountain_magic'; \
         s.dispatchEvent(new Event('change', {bubbles: true})); return 1;",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_climb_of_ones_own_deck_file_is_created_from_the_lobby_and_a_broken_file_is_refused() {
    use grand_melee_protocol::dice::{Dice, DiceSecret};
    use grand_melee_protocol::mountain_magic::pool::{Deck, Pool};

    let server = server().await;
    let base = format!("http://{}", server.addr);
    let driver = Driver::start().await;
    let page = driver.phone_sized(390, 844).await;
    let pool = Pool::builtin();
    let good =
        Deck::default_from_dice(pool, &Dice::new(DiceSecret::from_seed(7), [0; 32])).to_file(pool);
    let mut broken = good.clone();
    broken.cards.truncate(4);
    let broken = serde_json::to_string(&broken).unwrap();

    // A file that breaks the recipe: the server's words on the page, and no table.
    mountain_magic_form(&page, &base).await;
    pick_deck(&page, &broken).await;
    page.click("create-submit").await;
    page.until(
        "the refusal",
        "(GM.state.lastError || '').startsWith('Your deck file was refused: ')",
    )
    .await;
    let said = page
        .eval_async(&format!(
            "GM.link.request({{type: 'create_table', name: 'again', seats: 1, game: 'mountain_magic', mountain_magic: {{deck: {broken}}}}})"
        ))
        .await;
    assert_eq!(said["code"], Value::from("bad_settings"), "{said}");
    let shown = page
        .js("return document.querySelector('[data-testid=\"error\"]').textContent;")
        .await;
    assert!(
        shown
            .as_str()
            .unwrap()
            .contains(said["message"].as_str().unwrap()),
        "the server's own words are shown: {shown} ({said})"
    );
    page.assert_accessible("a refused deck file on a phone")
        .await;
    page.screenshot(&screenshot_dir().join("mountain-magic-phone-deck-refused.png"))
        .await;
    let tables = page
        .eval_async(
            "GM.link.request({type: 'list_tables', from: 0, limit: 50}).then(a => a.tables.length)",
        )
        .await;
    assert_eq!(tables, Value::from(0), "nothing was created");
    assert_eq!(page.js("return location.pathname;").await, Value::from("/"));

    // A good file: the table is created with it and the climb deals from it.
    mountain_magic_form(&page, &base).await;
    pick_deck(&page, &serde_json::to_string(&good).unwrap()).await;
    page.click("create-submit").await;
    page.until(
        "the table page",
        "location.pathname.startsWith('/t/') && document.querySelector('[data-testid=\"join-name\"]') !== null",
    )
    .await;
    page.fill("join-name", "Dora").await;
    page.click("join-submit").await;
    page.until("Dora seated", "gm.role() === 'player' && gm.me() === 0")
        .await;
    let settings = page.js("return gm.view().settings.mountain_magic;").await;
    assert_eq!(
        settings["deck"],
        serde_json::to_value(&good).unwrap(),
        "the table's deck is the file"
    );
    page.click("start").await;
    page.until(
        "the mountain dealt",
        "gm.view().mountain_magic.phase === 'climbing'",
    )
    .await;
    let names: Vec<String> = good.cards.iter().map(|l| l.name.clone()).collect();
    let mut seen = 0;
    for _ in 0..6 {
        let id = press(
            &page,
            "return q('[data-testid=\"mm-flip\"]')[0] || q('[data-testid=\"mm-discard\"]')[0];",
        )
        .await;
        if id.is_none() {
            break;
        }
    }
    let dealt = page
        .js("const c = gm.view().mountain_magic; const pool = GMFold.games.mountain_magic.pool; \
             return c.mountain.flat().concat(c.discard, c.flipped === null ? [] : [c.flipped]).filter(n => n !== null).map(n => pool[n].name);")
        .await;
    for name in dealt.as_array().unwrap() {
        seen += 1;
        assert!(
            names.iter().any(|n| n == name.as_str().unwrap()),
            "{name} is not in the deck file"
        );
    }
    assert!(
        seen >= 7,
        "the bottom row and the cards turned over: {dealt}"
    );
    page.check_mirror("a climb of one's own deck").await;
}

/// One request of the climb from the page's own legal moves (fold.js's `legalMoves`: a place
/// first, else the next card, a discard, the first path, mana, a use, an attack, the end of the
/// turn), sent with `gm.send`; waits until its events are folded. Returns the climb's outcome
/// once the table is finished, else null.
const STEP: &str = "(async () => { \
    const v = gm.view(); const c = v.mountain_magic; const seq = v.seq; \
    if (v.stage === 'finished') return {outcome: c.outcome}; \
    const moves = GMFold.games.mountain_magic.legalMoves(c); \
    const is = (t) => (m) => m.type === 'mountain_magic.' + t; \
    const pick = moves.find(is('place')) || moves.find(is('flip')) || moves.find(is('discard')) || moves.find(is('path')) \
      || moves.find((m) => is('mana')(m) && m.place) || moves.find(is('mana')) || moves.find(is('cast')) || moves.find(is('activate')) \
      || moves.find(is('attack')) || moves.find(is('end_turn')); \
    if (!pick) return {waiting: true}; \
    const answer = await gm.send(pick); \
    if (answer.type === 'error') return {refused: answer, pick}; \
    const start = Date.now(); \
    while (gm.view().seq === seq && Date.now() - start < 4000) await new Promise((r) => setTimeout(r, 10)); \
    return gm.view().seq === seq ? {stuck: pick} : {sent: pick}; })()";

/// Creates a climb of today's mountain from the lobby's form, sits down as `name` and starts;
/// returns the deal as the page shows it (the bottom row, the dice commitment) and the day.
async fn climb_today(page: &Browser, base: &str, name: &str) -> (Value, Value, String) {
    mountain_magic_form(page, base).await;
    page.js(
        "const s = document.querySelector('[data-testid=\"create-mm-day\"]'); s.value = 'today'; \
         s.dispatchEvent(new Event('change', {bubbles: true})); return 1;",
    )
    .await;
    let form = page
        .js("const shown = (id) => getComputedStyle(document.querySelector(`[data-testid=\"${id}\"]`).closest('.field')).display !== 'none'; \
             return [document.querySelector('[name=name]').value, shown('create-mm-deck'), shown('create-mm-league')];")
        .await;
    assert_eq!(
        form,
        serde_json::json!(["Today's mountain", false, true]),
        "today's mountain: no deck file, an optional league"
    );
    page.assert_accessible("the create form with today's mountain")
        .await;
    page.assert_fits("the create form with today's mountain")
        .await;
    page.js(
        "document.querySelector('[data-testid=\"create-mm-day\"]').scrollIntoView(); return 1;",
    )
    .await;
    page.screenshot(&screenshot_dir().join(format!("mountain-magic-today-form-{name}.png")))
        .await;
    page.click("create-submit").await;
    page.until(
        "the table page",
        "location.pathname.startsWith('/t/') && document.querySelector('[data-testid=\"join-name\"]') !== null",
    )
    .await;
    page.fill("join-name", name).await;
    page.click("join-submit").await;
    page.until(
        &format!("{name} seated"),
        "gm.role() === 'player' && gm.me() === 0",
    )
    .await;
    let today = page
        .js("return new Date().toISOString().slice(0, 10);")
        .await
        .as_str()
        .unwrap()
        .to_owned();
    let settings = page.js("return gm.view().settings.mountain_magic;").await;
    assert_eq!(settings["day"], Value::from(today.as_str()), "{settings}");
    page.click("start").await;
    page.until(
        "the mountain dealt",
        "gm.view().mountain_magic.phase === 'climbing'",
    )
    .await;
    let deal = page
        .js("return gm.view().mountain_magic.mountain[0];")
        .await;
    let commitment = page.js("return gm.view().dice_commitment;").await;
    (deal, commitment, today)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn todays_mountain_climbed_twice_under_two_names_shows_both_in_the_standings() {
    let server = server().await;
    let base = format!("http://{}", server.addr);
    let driver = Driver::start().await;
    let page = driver.phone_sized(390, 844).await;

    // Ann climbs today's mountain to its end through the page's own legal moves.
    let (deal, commitment, today) = climb_today(&page, &base, "Ann").await;
    page.assert_accessible("today's climb on a phone").await;
    let mut steps = 0;
    let outcome = loop {
        let step = page.eval_async(STEP).await;
        assert!(
            step.get("refused").is_none() && step.get("stuck").is_none(),
            "{step}"
        );
        if let Some(outcome) = step.get("outcome") {
            break outcome.clone();
        }
        steps += 1;
        assert!(steps < 1500, "the climb ends");
    };
    let ann_table = page.js("return location.pathname;").await;
    page.until(
        "the way to the day's standings",
        "document.querySelector('[data-testid=\"mm-day-standings\"]') !== null",
    )
    .await;
    page.check_mirror("Ann's climb over").await;

    // Bea climbs the same deal under another name, and gives up at once.
    let (deal_b, commitment_b, _) = climb_today(&page, &base, "Bea").await;
    assert_eq!(deal_b, deal, "the same bottom row for everyone today");
    assert_eq!(
        commitment_b, commitment,
        "the day's commitment at every table"
    );
    page.js("window.confirm = () => true; return 1;").await;
    page.click("concede").await;
    page.until("Bea's climb over", "gm.view().stage === 'finished'")
        .await;
    page.until(
        "the way to the day's standings",
        "document.querySelector('[data-testid=\"mm-day-standings\"]') !== null",
    )
    .await;
    page.assert_accessible("a day climb's end on a phone").await;
    // A climb given up is no victory: its banner is not the winner's green, and the climb's
    // turned-over card and discard pile are gone with it.
    let banner = page
        .js(
            "const e = document.querySelector('[data-testid=\"mm-ending\"]'); \
             return [e.className, e.textContent, getComputedStyle(e).backgroundColor, \
             document.querySelector('[data-testid=\"mm-next\"]') === null];",
        )
        .await;
    assert_eq!(banner[0], Value::from("winner mm-lost"), "{banner}");
    assert_eq!(banner[1], Value::from("the climber gave up"), "{banner}");
    assert_ne!(
        banner[2],
        Value::from("rgb(27, 127, 59)"),
        "not green: {banner}"
    );
    assert_eq!(
        banner[3],
        Value::from(true),
        "no turned-over card left: {banner}"
    );
    // A climb's link is for watching: "Share", not "Invite", and not opened by itself.
    let share = page
        .js(
            "return [document.querySelector('[data-testid=\"share-button\"]').textContent, \
             document.querySelector('[data-testid=\"share\"]') === null];",
        )
        .await;
    assert_eq!(share, serde_json::json!(["Share", true]));
    let log = page.js("return gm.log();").await;
    assert!(
        log.as_array()
            .unwrap()
            .iter()
            .any(|l| l == "Bea began the climb"),
        "a climb's start in the log's words: {log}"
    );
    let head = page
        .js("return document.querySelector('.table-head .meta').textContent;")
        .await;
    assert!(
        head.as_str()
            .unwrap()
            .contains(&format!("the mountain of {today}")),
        "the day climbed: {head}"
    );
    page.js("window.scrollTo(0, 0); return 1;").await;
    page.screenshot(&screenshot_dir().join("mountain-magic-phone-day-end.png"))
        .await;

    // From the finished climb to the standings: Ann (an ending) before Bea (gave up).
    page.click("mm-day-standings").await;
    let rows = "Array.from(document.querySelectorAll('[data-testid=\"mm-standing\"]')).map((r) => [r.dataset.place, r.dataset.climber, r.dataset.end, r.querySelector('a').getAttribute('href')])";
    page.until(
        "the standings",
        &format!("location.search.startsWith('?mountain=') && {rows}.length === 2"),
    )
    .await;
    let shown = page.js(&format!("return {rows};")).await;
    let picked = page
        .js("return document.querySelector('[data-testid=\"mm-day-pick\"]').value;")
        .await;
    assert_eq!(picked, Value::from(today.as_str()), "today by default");
    let ann_end = match outcome["kind"].as_str().unwrap() {
        "battle" => outcome["ending"].as_str().unwrap().to_owned(),
        other => {
            assert_eq!(other, "failed_climb", "{outcome}");
            "failed_climb".to_owned()
        }
    };
    let ann_id = ann_table.as_str().unwrap().trim_start_matches("/t/");
    assert_eq!(shown[0][0], Value::from("1"), "{shown}");
    assert_eq!(shown[0][1], Value::from("Ann"), "{shown}");
    assert_eq!(shown[0][2], Value::from(ann_end.as_str()), "{shown}");
    assert_eq!(
        shown[0][3],
        Value::from(format!("/replays/{ann_id}")),
        "{shown}"
    );
    assert_eq!(shown[1][0], Value::from("2"), "{shown}");
    assert_eq!(shown[1][1], Value::from("Bea"), "{shown}");
    assert_eq!(shown[1][2], Value::from("gave_up"), "{shown}");
    let dice = page
        .js("return [document.querySelector('[data-testid=\"mm-commitment\"]').textContent, !!document.querySelector('[data-testid=\"mm-secret-later\"]'), !!document.querySelector('[data-testid=\"mm-secret\"]')];")
        .await;
    assert_eq!(
        dice,
        serde_json::json!([commitment, true, false]),
        "the commitment, the secret not before the day is over"
    );
    page.assert_accessible("the standings on a phone").await;
    page.assert_fits("the standings on a phone").await;
    page.screenshot(&screenshot_dir().join("mountain-magic-phone-standings.png"))
        .await;

    // From the lobby too; on a laptop.
    let laptop = driver.browser(1280, 800).await;
    laptop.goto(&format!("{base}/")).await;
    laptop
        .until(
            "the lobby",
            "document.querySelector('[data-testid=\"mm-today-link\"]') !== null",
        )
        .await;
    laptop
        .js("const g = document.querySelector('[data-testid=\"create-game\"]'); g.value = 'mountain_magic'; g.dispatchEvent(new Event('change', {bubbles: true})); \
             const s = document.querySelector('[data-testid=\"create-mm-day\"]'); s.value = 'today'; s.dispatchEvent(new Event('change', {bubbles: true})); return 1;")
        .await;
    laptop
        .screenshot(&screenshot_dir().join("mountain-magic-laptop-today-form.png"))
        .await;
    laptop.click("mm-today-link").await;
    laptop
        .until("the standings", &format!("{rows}.length === 2"))
        .await;
    assert_eq!(laptop.js(&format!("return {rows};")).await, shown);
    let loading = laptop
        .js("return document.querySelector('[data-testid=\"mm-standings-page\"]').textContent.includes('Loading');")
        .await;
    assert_eq!(loading, Value::Bool(false), "nothing left loading");
    laptop.assert_accessible("the standings on a laptop").await;
    laptop
        .screenshot(&screenshot_dir().join("mountain-magic-laptop-standings.png"))
        .await;

    // Another day with the date picker: yesterday's mountain, over, shows its secret.
    page.js(
        "const d = document.querySelector('[data-testid=\"mm-day-pick\"]'); \
         const y = new Date(Date.now() - 86400000).toISOString().slice(0, 10); d.value = y; \
         d.dispatchEvent(new Event('change', {bubbles: true})); return 1;",
    )
    .await;
    page.until(
        "yesterday's standings",
        "location.search !== '?mountain=today' && document.querySelector('[data-testid=\"mm-secret\"]') !== null",
    )
    .await;
    let empty = page
        .js("return !!document.querySelector('[data-testid=\"mm-standings-empty\"]');")
        .await;
    assert_eq!(empty, Value::Bool(true), "nobody climbed yesterday here");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_league_climb_of_todays_mountain_is_taken_with_the_member_token() {
    let server = server().await;
    let base = format!("http://{}", server.addr);
    let driver = Driver::start().await;
    let page = driver.phone_sized(390, 844).await;
    page.goto(&format!("{base}/")).await;
    page.until("the lobby", "GM.link && GM.link.up").await;
    // A league, and Cleo a member of it on this browser (as the league's page keeps her token).
    let league = page
        .eval_async(
            "GM.link.request({type: 'create_league', name: 'Climbers'}).then((a) => a.league)",
        )
        .await;
    let league = league.as_str().expect("a league").to_owned();
    let joined = page
        .eval_async(&format!(
            "GM.link.request({{type: 'join_league', league: '{league}', name: 'Cleo'}}).then((a) => {{ \
               GM.store.set(GM.memberKey('{league}'), {{member: a.member, name: 'Cleo', token: a.token}}); return a.member; }})"
        ))
        .await;
    assert!(joined.is_u64(), "Cleo joined: {joined}");

    // The form: today's mountain for the league, chosen from the leagues.
    mountain_magic_form(&page, &base).await;
    page.js(
        "const s = document.querySelector('[data-testid=\"create-mm-day\"]'); s.value = 'today'; \
         s.dispatchEvent(new Event('change', {bubbles: true})); return 1;",
    )
    .await;
    page.until(
        "the league offered",
        &format!("Array.from(document.querySelector('[data-testid=\"create-mm-league\"]').options).some((o) => o.value === '{league}')"),
    )
    .await;
    page.js(&format!(
        "const s = document.querySelector('[data-testid=\"create-mm-league\"]'); s.value = '{league}'; \
         s.dispatchEvent(new Event('change', {{bubbles: true}})); return 1;"
    ))
    .await;
    page.click("create-submit").await;
    page.until("the table page", "location.pathname.startsWith('/t/') && document.querySelector('[data-testid=\"join-submit\"]') !== null")
        .await;
    let table = page.js("return location.href;").await;

    // Someone who is not a member is told to join the league first.
    let other = driver.phone_sized(390, 844).await;
    other.goto(table.as_str().unwrap()).await;
    other
        .until(
            "the league's members only",
            "gm.view() && GM.games.mountain_magic && document.querySelector('[data-testid=\"league-join-first\"]') !== null",
        )
        .await;
    let told = other
        .js("return document.querySelector('[data-testid=\"league-join-first\"]').textContent;")
        .await;
    assert!(
        !told.as_str().unwrap().contains("deck"),
        "a climb needs no registered deck: {told}"
    );

    // Cleo sits down with her member token, under her member name.
    let offered = page
        .js("return document.querySelector('[data-testid=\"join-submit\"]').textContent;")
        .await;
    assert_eq!(offered, Value::from("Sit down as Cleo"));
    page.assert_accessible("a league climb's entry on a phone")
        .await;
    page.click("join-submit").await;
    page.until("Cleo seated", "gm.role() === 'player' && gm.me() === 0")
        .await;
    let view = page.js("return gm.view();").await;
    assert_eq!(
        view["settings"]["mountain_magic"]["league"],
        Value::from(league.as_str()),
        "{}",
        view["settings"]
    );
    assert_eq!(view["players"][0]["name"], Value::from("Cleo"));
    page.click("start").await;
    page.until(
        "the mountain dealt",
        "gm.view().mountain_magic.phase === 'climbing'",
    )
    .await;
    page.js("window.confirm = () => true; return 1;").await;
    page.click("concede").await;
    page.until(
        "the way to the league's standings of the day",
        "document.querySelector('[data-testid=\"mm-day-standings\"]') !== null",
    )
    .await;
    page.click("mm-day-standings").await;
    page.until(
        "the league's standings",
        "document.querySelectorAll('[data-testid=\"mm-standing\"]').length === 1",
    )
    .await;
    assert!(
        page.js("return location.search;")
            .await
            .as_str()
            .unwrap()
            .contains(&format!("league={league}")),
        "the league's standings"
    );
    let row = page
        .js("const r = document.querySelector('[data-testid=\"mm-standing\"]'); return [r.dataset.place, r.dataset.climber, r.dataset.end];")
        .await;
    assert_eq!(row, serde_json::json!(["1", "Cleo", "gave_up"]));
    page.assert_accessible("a league's standings on a phone")
        .await;
    page.assert_fits("a league's standings on a phone").await;
    page.screenshot(&screenshot_dir().join("mountain-magic-phone-league-standings.png"))
        .await;
}

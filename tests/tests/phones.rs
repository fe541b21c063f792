//! Forty players on phones (issue 28), in real Chromium against the real server: a 40-seat table
//! with 39 scripted seats and one browser seat on a phone, a laptop and a display.
//!
//! What a person at the table must be able to rely on: on his turn he sees his neighbours' names
//! at a readable size and the End turn control without scrolling; an attack on him raises an
//! alert that names who and how much; every number the page shows is the server's; the page never
//! shows `null`, `undefined` or `NaN`; the network's drops and returns are not the game's log;
//! and the display shows how to join, then the winner.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

#[path = "browser/harness.rs"]
mod harness;

use grand_melee_e2e::{Client, TestServer};
use grand_melee_protocol::{
    ClientMessage, Phase, PlayerId, Ruling, SeatingMode, ServerMessage, TableView, TurnStateName,
};
use grand_melee_server::ServerConfig;
use harness::{Browser, Driver, screenshot_dir};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use serde_json::Value;

const SEATS: u8 = 40;

/// The browser's player id: the 39 scripted seats sat down first.
const BROWSER: PlayerId = 39;

/// A 40-seat table: 39 scripted seats (the first is the host), then the browser sits down on
/// the table's page like a newcomer (after seeing the ring as a visitor).
async fn forty(
    server: &TestServer,
    browser: &Browser,
) -> (grand_melee_protocol::TableId, Vec<Client>) {
    let mut bots = Vec::new();
    let mut host = server.client().await;
    let table = host.create_table("Forty", SEATS, 28).await;
    host.join(table, "Scripted 00").await.unwrap();
    bots.push(host);
    for i in 1..39 {
        let mut bot = server.client().await;
        bot.join(table, &format!("Scripted {i:02}")).await.unwrap();
        bots.push(bot);
    }
    browser
        .goto(&format!("http://{}/t/{table}", server.addr))
        .await;
    // A visitor sees the table before sitting down: the ring with every seat, and the stage.
    browser
        .until(
            "the visitor sees the ring",
            "document.querySelectorAll('[data-testid=\"seat\"]').length === 39",
        )
        .await;
    let status = browser
        .js("return document.querySelector('[data-testid=\"status-line\"]').textContent;")
        .await;
    assert!(
        status.as_str().unwrap().contains("39 of 40 seated"),
        "{status}"
    );
    // ... and nothing that only a seated player may do.
    let controls = browser
        .js("return ['leave', 'call-host', 'decider-box', 'start', 'action-bar'].filter(id => document.querySelector(`[data-testid=\"${id}\"]`));")
        .await;
    assert_eq!(
        controls,
        serde_json::json!([]),
        "a visitor's page offers seat controls"
    );
    browser.fill("join-name", "Browser").await;
    browser.click("join-submit").await;
    browser
        .until(
            "seated",
            "gm.role() === 'player' && gm.me() === 39 && gm.view().players.length === 40",
        )
        .await;
    (table, bots)
}

/// A fresh snapshot through the host.
async fn snapshot(bots: &mut [Client]) -> TableView {
    bots[0].fresh_snapshot().await
}

/// Everyone keeps: the scripted seats by the host's rulings, the browser by pressing Keep.
async fn keep_all(bots: &mut [Client], browser: &Browser) {
    let start = bots[0]
        .call(|id| ClientMessage::Start {
            id,
            first_player: None,
            seating: SeatingMode::Random,
            order: Vec::new(),
        })
        .await;
    assert!(start.is_ok(), "{start:?}");
    for _ in 0..(SEATS as usize * 2) {
        let view = snapshot(bots).await;
        let Some(decider) = view.mulligan_decider else {
            return;
        };
        if decider == BROWSER {
            browser.catch_up(view.seq).await;
            browser.click("keep").await;
            browser
                .until("kept", &format!("gm.view().seq > {}", view.seq))
                .await;
        } else {
            let kept = bots[0]
                .call(|id| ClientMessage::Ruling {
                    id,
                    ruling: Ruling::Keep { player: decider },
                })
                .await;
            assert!(kept.is_ok(), "{kept:?}");
        }
    }
    panic!("the mulligans never ended");
}

/// Ends running turns until `done` holds: the scripted seats' by the host's ruling, the
/// browser's (when it is the only one running) by the page's own request.
async fn advance(
    bots: &mut [Client],
    browser: &Browser,
    what: &str,
    done: impl Fn(&TableView) -> bool,
) -> TableView {
    for _ in 0..400 {
        let view = snapshot(bots).await;
        if done(&view) {
            return view;
        }
        let running: Vec<PlayerId> = view
            .turns
            .iter()
            .filter(|t| t.state == TurnStateName::Running && t.player != BROWSER)
            .map(|t| t.player)
            .collect();
        if running.is_empty() {
            let ended = browser.eval_async("gm.send({ type: 'end_turn' })").await;
            assert_eq!(ended["type"], "ack", "{what}: {ended}");
            continue;
        }
        for player in running {
            // A turn may have ended meanwhile; the next snapshot says.
            let _ = bots[0]
                .call(|id| ClientMessage::Ruling {
                    id,
                    ruling: Ruling::EndTurn { player },
                })
                .await;
        }
    }
    panic!("{what}: never reached");
}

fn player(view: &TableView, id: PlayerId) -> &grand_melee_protocol::PlayerView {
    view.players.iter().find(|p| p.player == id).unwrap()
}

/// Every number the page shows for a player (`data-num` elements) against the snapshot's.
async fn numbers_match(browser: &Browser, view: &TableView, when: &str) -> usize {
    browser.catch_up(view.seq).await;
    let shown = browser
        .js(
            "return Array.from(document.querySelectorAll('[data-num]')).map(e => \
             [e.dataset.num, Number(e.dataset.player), e.textContent.trim()]);",
        )
        .await;
    let shown = shown.as_array().unwrap();
    assert!(!shown.is_empty(), "{when}: no numbers on the page");
    for item in shown {
        let field = item[0].as_str().unwrap();
        let id = PlayerId::try_from(item[1].as_u64().unwrap()).unwrap();
        let text = item[2].as_str().unwrap();
        let p = player(view, id);
        let truth = match field {
            "life" => p.life.to_string(),
            "poison" => p.poison.to_string(),
            other => panic!("{when}: unknown number {other}"),
        };
        assert_eq!(
            text, truth,
            "{when}: the page shows {field} {text} for {} (player {id}) but the server has {truth}",
            p.name
        );
    }
    shown.len()
}

/// Whether the element with this selector is on screen, not covered, at scroll position 0.
async fn visible_without_scrolling(browser: &Browser, selector: &str) -> Value {
    browser.js("window.scrollTo(0, 0); return null;").await;
    visible_as_scrolled(browser, selector).await
}

/// Where each element matching `selector` is on the screen as the page is scrolled now: inside
/// the viewport (to within a pixel: a pinned element's edge may sit a fraction of a pixel off),
/// and not covered by anything (the fixed bar, another element).
async fn visible_as_scrolled(browser: &Browser, selector: &str) -> Value {
    browser
        .js(&format!(
            "const out = []; \
             for (const e of document.querySelectorAll('{selector}')) {{ \
               const r = e.getBoundingClientRect(); \
               const x = r.left + r.width / 2, y = r.top + r.height / 2; \
               const hit = document.elementFromPoint(x, y); \
               out.push({{ top: r.top, bottom: r.bottom, height: r.height, \
                 inside: r.top >= -1 && r.bottom <= innerHeight + 1 && r.left >= -1 && r.right <= innerWidth + 1, \
                 uncovered: !!hit && (e === hit || e.contains(hit) || hit.contains(e)), \
                 font: parseFloat(getComputedStyle(e).fontSize), text: e.textContent }}); \
             }} return out;"
        ))
        .await
}

/// The two screens a display is shown on, with the size its ring names must reach on each:
/// readable from across a room (24 px at 1080 lines, the same share of a 720-line screen).
const SCREENS: [(u32, u32, f64); 2] = [(1920, 1080, 24.0), (1280, 720, 16.0)];

/// The display at `stage` on each of [`SCREENS`]: one screen that is never scrolled (a
/// projector cannot scroll), every seat and the status line on it, and each of `also` too (the
/// invitation, the places), the ring's names at least the screen's minimum, and each running
/// turn's label inside its arc. A screenshot of each goes to the screenshots.
async fn the_display_fits(display: &Browser, stage: &str, also: &[&str]) {
    for (width, height, least) in SCREENS {
        // The window is sized with its frame: the page gets the screen's size once the frame's
        // own (the difference between outer and inner sizes) is added.
        display.client.set_window_size(width, height).await.unwrap();
        let frame = display
            .js("return [outerWidth - innerWidth, outerHeight - innerHeight];")
            .await;
        let frame = |i: usize| u32::try_from(frame[i].as_i64().unwrap_or(0)).unwrap_or(0);
        display
            .client
            .set_window_size(width + frame(0), height + frame(1))
            .await
            .unwrap();
        display
            .until(
                &format!("the display at {width}×{height}"),
                &format!("innerWidth === {width} && innerHeight === {height}"),
            )
            .await;
        // Laid out and painted at the new size.
        display
            .eval_async("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
            .await;
        let selectors = ["[data-testid=\"seat\"]", "[data-testid=\"status-line\"]"]
            .iter()
            .chain(also)
            .map(|s| s.replace('\'', "\\'"))
            .collect::<Vec<_>>()
            .join(", ");
        let found = display
            .js(&format!(
                "const de = document.documentElement; \
                 const svg = document.querySelector('svg.ring'); \
                 const scale = svg.getScreenCTM().a; \
                 const names = Array.from(svg.querySelectorAll('text.name')) \
                   .map(t => parseFloat(t.getAttribute('font-size')) * scale); \
                 const off = Array.from(document.querySelectorAll('{selectors}')).filter(e => {{ \
                   const r = e.getBoundingClientRect(); \
                   return !(r.width > 0 && r.top >= -1 && r.left >= -1 && r.bottom <= innerHeight + 1 && r.right <= innerWidth + 1); }}) \
                   .map(e => (e.getAttribute('data-testid') || e.tagName) + ': ' + (e.textContent || '').trim().slice(0, 40)); \
                 const across = Array.from(svg.querySelectorAll('text.turn-label')).filter(t => {{ \
                   const b = t.getBBox(), inner = parseFloat(t.dataset.inner); \
                   return [[b.x, b.y], [b.x + b.width, b.y], [b.x, b.y + b.height], [b.x + b.width, b.y + b.height]] \
                     .some(([x, y]) => Math.hypot(x - 500, y - 500) > inner - 8 + 1); }}).map(t => t.textContent); \
                 const boxes = Array.from(svg.querySelectorAll('text.turn-label')).map(t => [t.textContent, t.getBBox()]); \
                 const crossing = boxes.filter(([a, p], i) => boxes.some(([b, q], j) => i !== j && \
                   p.x < q.x + q.width && q.x < p.x + p.width && p.y < q.y + q.height && q.y < p.y + p.height)).map(([a]) => a); \
                 return {{ scrollHeight: de.scrollHeight, scrollWidth: de.scrollWidth, \
                   least: Math.min(...names), off, across, crossing, labels: svg.querySelectorAll('text.turn-label').length }};"
            ))
            .await;
        display
            .screenshot(
                &screenshot_dir().join(format!("forty-display-{stage}-{width}x{height}.png")),
            )
            .await;
        let what = format!("the display {stage} at {width}×{height}");
        eprintln!(
            "{what}: page {}×{} px, smallest ring name {} px, {} turn labels",
            found["scrollWidth"], found["scrollHeight"], found["least"], found["labels"]
        );
        assert!(
            found["scrollHeight"].as_u64() <= Some(u64::from(height))
                && found["scrollWidth"].as_u64() <= Some(u64::from(width)),
            "{what} scrolls: {found}"
        );
        assert_eq!(
            found["off"],
            serde_json::json!([]),
            "{what}: cut off the screen"
        );
        assert!(
            found["least"].as_f64().unwrap() >= least,
            "{what}: ring names of {} px, at least {least} wanted",
            found["least"]
        );
        assert_eq!(
            found["across"],
            serde_json::json!([]),
            "{what}: turn labels across their arcs"
        );
        assert_eq!(
            found["crossing"],
            serde_json::json!([]),
            "{what}: turn labels over each other"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forty_seats_played_from_a_phone() {
    // The scripted seats and the host's snapshots are many requests from one address.
    let server = TestServer::start_with(ServerConfig {
        rate_limit: 1e6,
        rate_burst: 1e6,
        max_connections_per_ip: 0,
        ..ServerConfig::default()
    })
    .await;
    let driver = Driver::start().await;
    let phone = driver.phone().await;
    let (table, mut bots) = forty(&server, &phone).await;
    phone
        .shows_no_missing_values("the phone in the lobby")
        .await;
    phone
        .screenshot(&screenshot_dir().join("forty-phone-lobby-390x844.png"))
        .await;
    // The display in the lobby says how to join: the QR code (an image the server made) and the link.
    let display = driver.browser(1920, 1080).await;
    display
        .goto(&format!("http://{}/t/{table}?display", server.addr))
        .await;
    display
        .until(
            "the display's QR code",
            "(e => e && e.complete && e.naturalWidth > 0)(document.querySelector('[data-testid=\"qr\"]'))",
        )
        .await;
    let join_at = display
        .js("return document.querySelector('[data-testid=\"join-at\"]').textContent;")
        .await;
    assert!(
        join_at.as_str().unwrap().ends_with(&format!("/t/{table}")),
        "{join_at}"
    );
    the_display_fits(
        &display,
        "lobby",
        &["[data-testid=\"qr\"]", "[data-testid=\"join-at\"]"],
    )
    .await;
    keep_all(&mut bots, &phone).await;

    // A scripted neighbour whose turn runs attacks the browser, scrolled to the bottom of his
    // page (the log, the chat): the alert names him and the amount, on screen where he is.
    let near = |v: &TableView| {
        v.turns
            .iter()
            .find(|t| {
                t.state == TurnStateName::Running
                    && t.player != BROWSER
                    && player(v, t.player).may_target.contains(&BROWSER)
            })
            .map(|t| t.player)
    };
    let view = advance(&mut bots, &phone, "a neighbour's turn", |v| {
        near(v).is_some()
    })
    .await;
    let attacker = near(&view).unwrap();
    let bot = &mut bots[usize::from(attacker)];
    let combat = bot
        .call(|id| ClientMessage::SetPhase {
            id,
            phase: Phase::Combat,
        })
        .await;
    assert!(combat.is_ok(), "{combat:?}");
    let attack = bot
        .call(|id| ClientMessage::Attack {
            id,
            target: BROWSER,
            damage: 3,
            poison: 1,
        })
        .await;
    assert!(
        matches!(attack, Ok(ServerMessage::Ack { .. })),
        "{attack:?}"
    );
    let name = format!("Scripted {attacker:02}");
    let scrolled = phone
        .js("window.scrollTo(0, document.documentElement.scrollHeight); return scrollY;")
        .await;
    assert!(
        scrolled.as_f64().unwrap_or(0.0) > 400.0,
        "the phone's page is long enough to scroll: {scrolled}"
    );
    phone
        .until(
            "the alert for the attack",
            &format!(
                "gm.alerts().some(a => a.includes('{name} attacked you: 3 damage and 1 poison'))"
            ),
        )
        .await;
    let alert = visible_as_scrolled(&phone, "[data-testid=\"alert\"]").await;
    assert!(
        alert[0]["inside"] == true && alert[0]["uncovered"] == true,
        "the alert is on screen, scrolled to the bottom: {alert}"
    );
    phone
        .screenshot(&screenshot_dir().join("forty-phone-scrolled-attacked-390x844.png"))
        .await;
    let alert = visible_without_scrolling(&phone, "[data-testid=\"alert\"]").await;
    assert!(
        alert[0]["inside"] == true && alert[0]["uncovered"] == true,
        "the alert is on screen: {alert}"
    );
    let life = phone
        .js("return document.querySelector('.nb-me [data-num=\"life\"]').textContent;")
        .await;
    assert_eq!(life, "17", "the browser's own card shows the damage");
    phone
        .screenshot(&screenshot_dir().join("forty-phone-attacked-390x844.png"))
        .await;

    // The browser's own turn begins while he reads the bottom of his page: "▶ Your turn" is
    // pinned where he is.
    phone
        .js(
            "document.querySelectorAll('[data-testid=\"alert\"] button').forEach(b => b.click()); \
             window.scrollTo(0, document.documentElement.scrollHeight); return null;",
        )
        .await;
    let view = advance(&mut bots, &phone, "the browser's turn", |v| {
        v.turns
            .iter()
            .any(|t| t.player == BROWSER && t.state == TurnStateName::Running)
    })
    .await;
    phone.catch_up(view.seq).await;
    phone
        .until(
            "the pinned Your turn",
            "(b => b && b.offsetParent !== null && b.textContent.includes('Your turn'))(document.querySelector('[data-testid=\"pinned-banner\"]'))",
        )
        .await;
    let scrolled = phone.js("return scrollY;").await;
    assert!(
        scrolled.as_f64().unwrap_or(0.0) > 400.0,
        "still scrolled down: {scrolled}"
    );
    let banner = visible_as_scrolled(&phone, "[data-testid=\"pinned-banner\"]").await;
    assert!(
        banner[0]["inside"] == true && banner[0]["uncovered"] == true,
        "Your turn is on screen, scrolled to the bottom: {banner}"
    );
    phone
        .screenshot(&screenshot_dir().join("forty-phone-scrolled-your-turn-390x844.png"))
        .await;
    // Back at the top, the status line says it: the pinned copy goes.
    phone.js("window.scrollTo(0, 0); return null;").await;
    phone
        .until(
            "the pinned Your turn gone at the top",
            "document.querySelector('[data-testid=\"pinned-banner\"]').offsetParent === null \
             && document.querySelector('[data-testid=\"banner\"]').offsetParent !== null",
        )
        .await;

    // Neighbours' names readable and End turn reachable, no scrolling.
    phone
        .until(
            "the end-turn control",
            "!!document.querySelector('[data-testid=\"end-turn\"]')",
        )
        .await;
    let range = usize::from(view.settings.spell_range);
    let names = visible_without_scrolling(&phone, "[data-testid=\"neighbour\"] .nb-name").await;
    let names = names.as_array().unwrap();
    assert_eq!(
        names.len(),
        2 * range + 1,
        "the browser and the {range} players on each side: {names:?}"
    );
    for n in names {
        assert!(n["font"].as_f64().unwrap() >= 12.0, "name too small: {n}");
        assert!(
            n["inside"] == true && n["uncovered"] == true,
            "a neighbour's name is off screen or covered: {n}"
        );
    }
    let cards = visible_without_scrolling(&phone, "[data-testid=\"neighbour\"]").await;
    for c in cards.as_array().unwrap() {
        assert!(c["height"].as_f64().unwrap() >= 44.0, "tap target: {c}");
    }
    for control in ["end-turn", "target", "amount", "phase-combat"] {
        let seen = visible_without_scrolling(&phone, &format!("[data-testid=\"{control}\"]")).await;
        assert!(
            seen[0]["inside"] == true && seen[0]["uncovered"] == true,
            "{control} is not within reach without scrolling: {seen}"
        );
    }
    // Tapping a neighbour picks him as the target; tapping a far seat says why not.
    let neighbour = player(&view, BROWSER)
        .may_target
        .iter()
        .copied()
        .find(|&p| p != BROWSER)
        .unwrap();
    phone
        .js(&format!(
            "document.querySelector('[data-testid=\"neighbour\"][data-player=\"{neighbour}\"]').click(); return true;"
        ))
        .await;
    phone
        .until(
            "the tapped neighbour is the target",
            &format!("document.querySelector('[data-testid=\"target\"]').value === '{neighbour}'"),
        )
        .await;
    let far = view
        .players
        .iter()
        .find(|p| !player(&view, BROWSER).may_target.contains(&p.player))
        .unwrap()
        .player;
    phone
        .js(&format!(
            "document.querySelector('[data-testid=\"seat\"][data-player=\"{far}\"]').dispatchEvent(new MouseEvent('click', {{bubbles: true}})); return true;"
        ))
        .await;
    phone
        .until(
            "the far seat explained",
            "document.querySelector('[data-testid=\"seat-detail\"]').textContent.includes('Out of your range')",
        )
        .await;
    phone.shows_no_missing_values("the phone on its turn").await;
    phone.check_mirror("the phone on its turn").await;
    phone
        .screenshot(&screenshot_dir().join("forty-phone-390x844.png"))
        .await;

    // The same seat on a 1280×800 laptop (its seat token carried over): the whole ring, the
    // neighbours and End turn on the first screen.
    let seat = phone
        .js(&format!("return localStorage.getItem('gm.seat.{table}');"))
        .await;
    phone.close().await;
    let laptop = driver.browser(1280, 800).await;
    laptop.goto(&format!("http://{}/", server.addr)).await;
    laptop
        .client
        .execute(
            &format!("localStorage.setItem('gm.seat.{table}', arguments[0]); return true;"),
            vec![seat],
        )
        .await
        .unwrap();
    laptop
        .goto(&format!("http://{}/t/{table}", server.addr))
        .await;
    laptop
        .until(
            "back in the seat",
            "gm.connected() && gm.role() === 'player' && gm.me() === 39",
        )
        .await;
    let view = snapshot(&mut bots).await;
    laptop.catch_up(view.seq).await;
    for selector in [
        "[data-testid=\"neighbour\"] .nb-name",
        "[data-testid=\"end-turn\"]",
    ] {
        let seen = visible_without_scrolling(&laptop, selector).await;
        for s in seen.as_array().unwrap() {
            assert!(
                s["inside"] == true
                    && s["uncovered"] == true
                    && s["font"].as_f64().unwrap() >= 12.0,
                "{selector} on the laptop: {s}"
            );
        }
    }
    let ring = laptop
        .js("const r = document.querySelector('svg.ring').getBoundingClientRect(); return [r.width, r.bottom, innerHeight];")
        .await;
    assert!(
        ring[0].as_f64().unwrap() >= 500.0,
        "the ring is sized to the screen: {ring}"
    );
    laptop
        .screenshot(&screenshot_dir().join("forty-laptop-1280x800.png"))
        .await;
    display.catch_up(view.seq).await;
    the_display_fits(&display, "playing", &[]).await;

    // Random play by the scripted seats: every number the page shows stays the server's.
    random_play(&mut bots, &laptop).await;

    // The end: the display names the winner and its standings fit the screen.
    let view = snapshot(&mut bots).await;
    if view.stage != grand_melee_protocol::StageName::Finished {
        let survivor = view
            .players
            .iter()
            .find(|p| p.status == grand_melee_protocol::PlayerStatus::Alive)
            .unwrap()
            .player;
        let out: Vec<PlayerId> = view
            .players
            .iter()
            .filter(|p| {
                p.status == grand_melee_protocol::PlayerStatus::Alive && p.player != survivor
            })
            .map(|p| p.player)
            .collect();
        // One at a time: each a place of its own, so the display has forty places to show.
        for player in out {
            let ruled = bots[0]
                .call(|id| ClientMessage::Ruling {
                    id,
                    ruling: Ruling::Eliminate {
                        players: vec![player],
                    },
                })
                .await;
            assert!(ruled.is_ok(), "{ruled:?}");
        }
    }
    let view = snapshot(&mut bots).await;
    assert_eq!(view.stage, grand_melee_protocol::StageName::Finished);
    let winner = view.standings.iter().find(|s| s.place == 1).unwrap().player;
    let name = player(&view, winner).name.clone();
    display.catch_up(view.seq).await;
    let shown = display
        .js("return document.querySelector('[data-testid=\"winner\"]').textContent;")
        .await;
    assert!(
        shown.as_str().unwrap().contains(&name),
        "{shown} names {name}"
    );
    the_display_fits(
        &display,
        "over",
        &["[data-testid=\"winner\"]", "[data-testid=\"places\"] li"],
    )
    .await;
    laptop.catch_up(view.seq).await;
    laptop
        .shows_no_missing_values("the laptop at game over")
        .await;
    laptop
        .screenshot(&screenshot_dir().join("forty-laptop-over-1280x800.png"))
        .await;
    laptop.close().await;
    display.close().await;

    // The game's replay on a phone: its ring zooms as the table's does, names readable once
    // zoomed in.
    let phone = driver.phone().await;
    phone
        .goto(&format!("http://{}/replays/{table}", server.addr))
        .await;
    phone
        .until(
            "the replay viewer",
            "((document.querySelector('[data-testid=\"replay-step\"]') || {}).textContent || '') !== '' \
             && document.querySelector('svg.ring') !== null",
        )
        .await;
    phone.click("replay-last").await;
    phone
        .until(
            "the replay at its end",
            "document.querySelectorAll('svg.ring [data-testid=\"seat\"]').length === 40",
        )
        .await;
    // Its ring zooms on a phone, as the table's does: names readable once zoomed in.
    let ring_names = "const svg = document.querySelector('svg.ring'); const s = svg.getScreenCTM().a; \
        return Math.min(...Array.from(svg.querySelectorAll('text.name')).map(t => parseFloat(t.getAttribute('font-size')) * s));";
    let unzoomed = phone.js(ring_names).await;
    phone.click("zoom-in").await;
    phone.click("zoom-in").await;
    phone
        .until(
            "the replay's ring zoomed",
            "document.querySelector('.ring-box.zoomed') !== null",
        )
        .await;
    let zoomed = phone.js(ring_names).await;
    eprintln!("the replay's ring names on a phone: {unzoomed} px, zoomed in twice {zoomed} px");
    assert!(
        zoomed.as_f64().unwrap() >= 12.0 && zoomed.as_f64() > unzoomed.as_f64(),
        "the replay's ring names zoomed: {unzoomed} px, then {zoomed} px"
    );
    phone
        .screenshot(&screenshot_dir().join("forty-replay-zoomed-390x844.png"))
        .await;
    phone.close().await;
}

/// One scripted action: who acts (a seat index), what, on whom (an index into his targets), how much.
#[derive(Clone, Debug)]
struct Action {
    actor: usize,
    kind: u8,
    target: usize,
    amount: u32,
}

/// Sequences of random actions by the scripted seats (changing life and poison, dealing
/// damage, ending turns), drawn by proptest's deterministic runner; after each sequence every
/// number the page shows equals the snapshot's.
async fn random_play(bots: &mut [Client], browser: &Browser) {
    let actions = proptest::collection::vec(
        (0usize..39, 0u8..5, 0usize..8, 1u32..6).prop_map(|(actor, kind, target, amount)| Action {
            actor,
            kind,
            target,
            amount,
        }),
        5..25,
    );
    let mut runner = TestRunner::deterministic();
    let mut checked = 0;
    for case in 0..6 {
        let sequence = actions.new_tree(&mut runner).unwrap().current();
        for a in &sequence {
            let view = bots[a.actor].view.clone().unwrap();
            let me = bots[a.actor].seat.unwrap().0;
            if player(&view, me).status != grand_melee_protocol::PlayerStatus::Alive {
                continue;
            }
            let targets: Vec<PlayerId> = player(&view, me)
                .may_target
                .iter()
                .copied()
                .filter(|&p| p != me)
                .collect();
            let bot = &mut bots[a.actor];
            let delta = i32::try_from(a.amount).unwrap();
            // Refusals (a target out of range meanwhile, a turn already ended) change nothing.
            let _ = match a.kind {
                0 => {
                    bot.call(|id| ClientMessage::ChangeLife { id, delta: -delta })
                        .await
                }
                1 => bot.call(|id| ClientMessage::ChangeLife { id, delta }).await,
                2 => {
                    bot.call(|id| ClientMessage::ChangePoison { id, delta: 1 })
                        .await
                }
                3 if !targets.is_empty() => {
                    let target = targets[a.target % targets.len()];
                    bot.call(|id| ClientMessage::DealDamage {
                        id,
                        target,
                        amount: a.amount,
                    })
                    .await
                }
                _ => bot.call(|id| ClientMessage::EndTurn { id }).await,
            };
        }
        let view = snapshot(bots).await;
        checked += numbers_match(browser, &view, &format!("case {case}: {sequence:?}")).await;
        browser
            .shows_no_missing_values(&format!("case {case}"))
            .await;
        if view.stage == grand_melee_protocol::StageName::Finished {
            break;
        }
    }
    eprintln!("{checked} numbers checked against the server's");
}

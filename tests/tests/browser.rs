//! The browser seat in a real headless Chromium against the real server over real sockets: six
//! browser seats play a whole game from the lobby page to the standings, one reloads mid-game,
//! a spectator follows along, a forged out-of-range request is refused on screen, a 28-seat
//! table is photographed on a laptop and a phone, and the page plays over `wss://`.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

#[path = "browser/harness.rs"]
mod harness;

use grand_melee_e2e::{SelfSigned, TestServer};
use grand_melee_protocol::{ClientMessage, Phase, ServerMessage};
use harness::{Browser, Driver, screenshot_dir};
use serde_json::Value;

const NAMES: [&str; 6] = ["Ann", "Bob", "Cid", "Dee", "Eve", "Fay"];

/// The seat (index into `seats`) of the player who holds a running turn, with its turn.
fn running(view: &Value, seats: &[(Option<u64>, &Browser)]) -> Option<(usize, Value)> {
    let turns = view["turns"].as_array()?;
    for turn in turns.iter().filter(|t| t["state"] == "running") {
        let holder = turn["player"].as_u64()?;
        if let Some(i) = seats.iter().position(|(me, _)| *me == Some(holder)) {
            return Some((i, turn.clone()));
        }
    }
    None
}

fn player(view: &Value, id: u64) -> &Value {
    view["players"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["player"].as_u64() == Some(id))
        .unwrap()
}

fn id_list(value: &Value) -> Vec<u64> {
    value
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default()
}

/// Waits until every browser has reached the newest event any of them has seen.
async fn settle(browsers: &[&Browser]) -> u64 {
    let mut newest = 0;
    for b in browsers {
        newest = newest.max(b.seq().await);
    }
    for b in browsers {
        b.catch_up(newest).await;
    }
    newest
}

/// The options the page's target picker offers, as player ids.
async fn offered_targets(browser: &Browser) -> Vec<u64> {
    let options = browser
        .js(
            "const s = document.querySelector('[data-testid=\"target\"]'); \
             return s ? Array.from(s.options).map(o => o.value).filter(v => v !== '') : [];",
        )
        .await;
    let mut ids: Vec<u64> = options
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str()?.parse().ok())
        .collect();
    ids.sort_unstable();
    ids
}

async fn choose_target(browser: &Browser, target: u64, amount: i64) {
    browser
        .js(&format!(
            "const s = document.querySelector('[data-testid=\"target\"]'); s.value = '{target}'; \
             s.dispatchEvent(new Event('change', {{bubbles: true}})); return s.value;"
        ))
        .await;
    browser.fill("amount", &amount.to_string()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn six_browser_seats_play_a_whole_game_with_a_reload_and_a_spectator() {
    let server = TestServer::start().await;
    let base = format!("http://{}", server.addr);
    let driver = Driver::start().await;

    // The organiser creates the table from the lobby page and sits down.
    let mut browsers = Vec::new();
    for _ in NAMES {
        browsers.push(driver.browser(1280, 800).await);
    }
    let host = &browsers[0];
    host.goto(&format!("{base}/")).await;
    host.fill("create-name", "Browser night").await;
    host.fill("create-seats", "6").await;
    host.fill("create-spell-range", "1").await;
    host.click("create-submit").await;
    host.until("the table page", "location.pathname.startsWith('/t/')")
        .await;
    let url = host.js("return location.href;").await;
    let table_url = url.as_str().unwrap().split('?').next().unwrap().to_owned();
    host.fill("join-name", NAMES[0]).await;
    host.click("join-submit").await;
    host.until("seated", "gm.role() === 'player' && gm.me() !== null")
        .await;

    // The others follow the link the organiser sends around; the lobby lists the table.
    let lobby = &browsers[1];
    lobby.goto(&format!("{base}/")).await;
    lobby
        .until(
            "the table in the lobby list",
            "Array.from(document.querySelectorAll('[data-testid=\"table-row\"]')).some(r => r.textContent.includes('Browser night'))",
        )
        .await;
    for (browser, name) in browsers.iter().zip(NAMES).skip(1) {
        browser.goto(&table_url).await;
        browser.fill("join-name", name).await;
        browser.click("join-submit").await;
        browser
            .until("seated", "gm.role() === 'player' && gm.me() !== null")
            .await;
    }
    let spectator = driver.browser(1280, 800).await;
    spectator.goto(&table_url).await;
    spectator.click("watch").await;
    spectator
        .until(
            "watching",
            "gm.role() === 'spectator' && gm.view() !== null",
        )
        .await;

    let mut ids = Vec::new();
    for b in &browsers {
        ids.push(b.me().await);
    }
    let all: Vec<&Browser> = browsers.iter().chain([&spectator]).collect();
    settle(&all).await;
    let view = host.view().await;
    assert_eq!(view["players"].as_array().unwrap().len(), 6, "{view}");

    // The host starts; each decides on his mulligan when the page says it is his decision.
    browsers[0].click("start").await;
    for _ in 0..6 {
        settle(&all).await;
        let view = host.view().await;
        if view["stage"] != "mulligan" {
            break;
        }
        let decider = view["mulligan_decider"].as_u64();
        let i = ids.iter().position(|id| *id == decider).unwrap();
        browsers[i]
            .until(
                "the mulligan notice",
                "document.querySelector('[data-testid=\"banner\"]') && document.querySelector('[data-testid=\"banner\"]').offsetParent !== null",
            )
            .await;
        browsers[i].click("keep").await;
        // Until the keep is folded: the next decider is read from the view after it.
        browsers[i].until("kept", KEPT).await;
    }
    settle(&all).await;
    assert_eq!(host.view().await["stage"], "playing");
    for (b, name) in all.iter().zip(NAMES.iter().chain(["spectator"].iter())) {
        b.check_mirror(name).await;
    }

    // Play: whoever holds a running turn goes to combat and attacks the first player he may
    // (for 20: a kill); the first turn also deals 3 damage; one player concedes after the first
    // elimination; one reloads mid-game; a forged attack on a player out of range is refused.
    let (mut conceded, mut reloaded, mut forged, mut damaged) = (false, false, false, false);
    for step in 0..200 {
        settle(&all).await;
        let view = host.view().await;
        if view["stage"] == "finished" {
            break;
        }
        let seats: Vec<(Option<u64>, &Browser)> =
            ids.iter().copied().zip(browsers.iter()).collect();
        let (i, turn) = running(&view, &seats)
            .unwrap_or_else(|| panic!("step {step}: no running turn held by a seat: {view}"));
        let actor = &browsers[i];
        let me = ids[i].unwrap();
        let eliminated = view["players"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["status"] != "alive")
            .count();

        if eliminated >= 1 && !reloaded {
            // A seat that is not acting reloads its page: back in its seat, with its log.
            let j = (0..6)
                .find(|&j| j != i && player(&view, ids[j].unwrap())["status"] == "alive")
                .unwrap();
            let before = browsers[j].log().await;
            assert!(!before.is_empty());
            browsers[j].client.refresh().await.unwrap();
            browsers[j]
                .until(
                    "back in the seat after a reload",
                    &format!(
                        "window.gm && gm.connected() && gm.role() === 'player' && gm.me() === {} && gm.log().length >= {}",
                        ids[j].unwrap(),
                        before.len()
                    ),
                )
                .await;
            let after = browsers[j].log().await;
            assert!(
                before.iter().all(|line| after.contains(line)),
                "the log survives a reload:\nbefore {before:?}\nafter {after:?}"
            );
            browsers[j].check_mirror("reloaded seat").await;
            // The reload dropped and returned a connection: the game's log does not say so.
            let seq = browsers[j].seq().await;
            actor.catch_up(seq).await;
            let log = actor.log().await;
            assert!(
                !log.iter()
                    .any(|l| l.contains("lost the connection") || l.contains("is back")),
                "the log tells the game, not the network: {log:?}"
            );
            reloaded = true;
            continue;
        }
        if eliminated >= 1 && !conceded {
            let j = (0..6)
                .find(|&j| j != i && player(&view, ids[j].unwrap())["status"] == "alive")
                .unwrap();
            browsers[j].click("concede").await;
            browsers[j].click("concede-confirm").await;
            browsers[j]
                .until(
                    "conceded",
                    &format!(
                        "gm.view().players.find(p => p.player === {}).status !== 'alive'",
                        ids[j].unwrap()
                    ),
                )
                .await;
            // Out of the game: his own card (and his "You are out") still readable, as are the
            // others' cards of him.
            browsers[j]
                .until(
                    "his own card marked out",
                    "!!document.querySelector('.card.me:not(.alive)')",
                )
                .await;
            browsers[j]
                .assert_accessible("a player who conceded, on his own page")
                .await;
            conceded = true;
            continue;
        }

        if turn["phase"] != "combat" {
            actor.click("phase-combat").await;
            actor
                .until(
                    "combat",
                    &format!(
                        "gm.view().turns.some(t => t.player === {me} && t.phase === 'combat')"
                    ),
                )
                .await;
            continue;
        }
        let mine = player(&view, me);
        let may_attack = {
            let mut v = id_list(&mine["may_attack"]);
            v.sort_unstable();
            v
        };
        // Only players in range are offered.
        let offered = offered_targets(actor).await;
        if offered != may_attack {
            let page = actor
                .js("const s = document.querySelector('[data-testid=\"target\"]'); return [s && s.outerHTML, JSON.stringify(gm.view().players.find(p => p.player === gm.me())), gm.view().seq];")
                .await;
            panic!("offered {offered:?}, may attack {may_attack:?}: {mine}\npage: {page}");
        }

        if !forged {
            let may_target = id_list(&mine["may_target"]);
            if let Some(far) = view["players"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| p["status"] == "alive")
                .filter_map(|p| p["player"].as_u64())
                .find(|p| !may_target.contains(p))
            {
                let before = actor.seq().await;
                let answer = actor
                    .eval_async(&format!(
                        "gm.send({{type: 'attack', target: {far}, damage: 1, poison: 0}})"
                    ))
                    .await;
                assert_eq!(answer["type"], "error", "{answer}");
                assert_eq!(answer["code"], "out_of_range", "{answer}");
                let shown = actor.text("error").await;
                assert!(!shown.trim().is_empty(), "the refusal is shown");
                assert!(actor.js("return gm.lastError();").await.is_string());
                assert_eq!(
                    actor.seq().await,
                    before,
                    "a refused request changes nothing"
                );
                forged = true;
            }
        }
        if let Some(&target) = may_attack.first() {
            if !damaged {
                choose_target(actor, target, 3).await;
                actor.click("damage").await;
                actor
                    .until(
                        "damage dealt",
                        &format!(
                            "gm.view().players.find(p => p.player === {target}).life === {}",
                            player(&view, target)["life"].as_i64().unwrap() - 3
                        ),
                    )
                    .await;
                damaged = true;
            }
            choose_target(actor, target, 20).await;
            actor.click("attack").await;
            actor
                .until(
                    "the attack",
                    &format!(
                        "gm.view().players.find(p => p.player === {target}).status !== 'alive'"
                    ),
                )
                .await;
        }
        let seq = actor.seq().await;
        if actor.view().await["stage"] == "finished" {
            continue;
        }
        actor.click("end-turn").await;
        actor
            .until("the turn ended", &format!("gm.view().seq > {seq}"))
            .await;
        if step % 4 == 0 {
            settle(&all).await;
            for (b, name) in all.iter().zip(NAMES.iter().chain(["spectator"].iter())) {
                b.check_mirror(name).await;
            }
        }
    }
    settle(&all).await;
    let view = host.view().await;
    assert_eq!(view["stage"], "finished", "{view}");
    assert!(reloaded && conceded && forged && damaged);
    assert_eq!(view["standings"].as_array().unwrap().len(), 6);
    // Every seat and the spectator see the standings, with places and mana points.
    for (b, name) in all.iter().zip(NAMES.iter().chain(["spectator"].iter())) {
        b.until(
            "the standings",
            "document.querySelectorAll('[data-testid=\"standing-row\"]').length === 6",
        )
        .await;
        let text = b.text("standings").await;
        let winner = view["standings"][0]["player"].as_u64().unwrap();
        let winner_name = player(&view, winner)["name"].as_str().unwrap();
        assert!(text.contains(winner_name), "{name}: {text}");
        b.check_mirror(name).await;
    }

    // The finished game is a replay, listed and stepped through in the page.
    let table_id = table_url.rsplit('/').next().unwrap().to_owned();
    let viewer = &spectator;
    viewer.goto(&format!("{base}/replays")).await;
    viewer
        .until(
            "the finished game in the list",
            &format!("document.querySelector('[data-testid=\"replay-row\"][data-table=\"{table_id}\"]') !== null"),
        )
        .await;
    viewer.goto(&format!("{base}/replays/{table_id}")).await;
    let step = "(document.querySelector('[data-testid=\"replay-step\"]') || {}).textContent || ''";
    viewer
        .until("the replay loaded", &format!("{step}.startsWith('step ')"))
        .await;
    // It opens at the start, before the first event; ▶ Play steps on by itself and ⏸ stops it;
    // "turn »" jumps to the next turn's beginning.
    viewer
        .until(
            "the first step",
            &format!("{step}.startsWith('step 0 of ')"),
        )
        .await;
    viewer.click("replay-next").await;
    viewer
        .until("one step on", &format!("{step}.startsWith('step 1 of ')"))
        .await;
    choose(viewer, "replay-speed", "10").await;
    viewer.click("replay-play").await;
    viewer
        .until("playing", &format!("{step}.startsWith('step 4 of ')"))
        .await;
    viewer.click("replay-pause").await;
    let paused = viewer.js(&format!("return {step};")).await;
    viewer
        .until(
            "paused: the step does not move",
            &format!(
                "!!document.querySelector('[data-testid=\"replay-play\"]') && {step} === {paused}"
            ),
        )
        .await;
    viewer.click("replay-next-turn").await;
    viewer
        .until(
            "the next turn's beginning",
            "document.querySelector('[data-testid=\"replay-line\"]').textContent.includes('began turn')",
        )
        .await;
    // The reload mid-game dropped and returned a connection: those events stay in the journal
    // but are no steps of the replay.
    let lines = viewer.js("return gm.replayLines();").await;
    let lines = lines.as_array().unwrap();
    let total = view["seq"].as_u64().unwrap();
    assert!(
        (lines.len() as u64) <= total,
        "{} steps for {total} events",
        lines.len() - 1
    );
    assert!(
        lines
            .iter()
            .all(|l| !l.as_str().unwrap().contains("lost the connection")),
        "the replay tells the game, not the network: {lines:?}"
    );
    viewer.click("replay-last").await;
    viewer
        .until(
            "the last step with the standings",
            "document.querySelectorAll('[data-testid=\"standing-row\"]').length === 6",
        )
        .await;
    for b in browsers.into_iter().chain([spectator]) {
        b.close().await;
    }
}

/// A server in this process on a port the test chooses, so that it can be restarted on it.
async fn start_server(
    config: grand_melee_server::ServerConfig,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    let server = grand_melee_server::Server::bind(config).await.unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));
    (stop, task)
}

/// The page shows it is offline while the server is down, and puts the player back in his seat
/// by itself when the server is back (the seat token kept in the browser).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_comes_back_by_itself_after_a_server_restart() {
    let data = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = grand_melee_server::ServerConfig {
        listen: format!("127.0.0.1:{port}").parse().unwrap(),
        data_dir: data.path().to_owned(),
        durability: grand_melee_server::journal::Durability::Normal,
        // Under an allow-list that names another site, the page opened at the address the
        // server listens on (http://127.0.0.1:PORT) is its own and connects.
        allowed_origins: vec!["https://elsewhere.example".to_owned()],
        ..grand_melee_server::ServerConfig::default()
    };
    let (stop, task) = start_server(config.clone()).await;
    let base = format!("http://127.0.0.1:{port}");
    let driver = Driver::start().await;
    let ann = driver.browser(390, 844).await;
    ann.goto(&format!("{base}/")).await;
    ann.fill("create-name", "Restart night").await;
    ann.fill("create-seats", "4").await;
    ann.click("create-submit").await;
    ann.until("the table page", "location.pathname.startsWith('/t/')")
        .await;
    ann.fill("join-name", "Ann").await;
    ann.click("join-submit").await;
    ann.until("seated", "gm.role() === 'player' && gm.me() !== null")
        .await;
    let me = ann.me().await.unwrap();
    ann.click("tab-chat").await;
    ann.fill("chat-input", "back soon").await;
    ann.click("chat-send").await;
    ann.until(
        "the chat line",
        "gm.chat().some(l => l.includes('back soon'))",
    )
    .await;

    stop.send(()).unwrap();
    task.await.unwrap();
    ann.until(
        "the offline notice",
        "!document.querySelector('[data-testid=\"offline\"]').hidden",
    )
    .await;
    let (stop, task) = start_server(config).await;
    ann.until(
        "back in the seat",
        &format!("gm.connected() && gm.role() === 'player' && gm.me() === {me} && document.querySelector('[data-testid=\"offline\"]').hidden"),
    )
    .await;
    ann.until(
        "the chat kept",
        "gm.chat().some(l => l.includes('back soon'))",
    )
    .await;
    ann.check_mirror("Ann after the restart").await;
    ann.close().await;
    stop.send(()).unwrap();
    task.await.unwrap();
}

/// Plays a few turns of a 28-seat game with terminal-less bots, one seat in the browser, and
/// photographs it at 1280×800 and 390×844 (and the big-screen display) for a person to look at.
/// Every neighbour's name on the player's cards is there in full: not cut short, not clipped.
async fn names_shown_whole(browser: &Browser, what: &str) {
    let names = browser
        .js("return Array.from(document.querySelectorAll('[data-testid=\"neighbour\"] .nb-name')).map(e => \
               ({ text: e.textContent, whole: e.scrollWidth <= e.clientWidth + 1 }));")
        .await;
    let names = names.as_array().unwrap();
    assert!(names.len() >= 3, "{what}: the neighbours' cards: {names:?}");
    for name in names {
        let text = name["text"].as_str().unwrap();
        assert!(
            name["whole"] == true && (text == "You" || text.ends_with("with a long name")),
            "{what}: a neighbour's name cut short: {name}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_28_seat_table_mid_game_on_a_laptop_and_a_phone() {
    let server = TestServer::start().await;
    let base = format!("http://{}", server.addr);
    let driver = Driver::start().await;
    let mut bots = Vec::new();
    let mut organiser = server.client().await;
    let table = organiser.create_table("Twenty-eight", 28, 7).await;
    for i in 0..27 {
        let mut bot = server.client().await;
        bot.join(table, &format!("Player {i:02} with a long name"))
            .await
            .unwrap();
        bots.push(bot);
    }
    let browser = driver.browser(1280, 800).await;
    browser.goto(&format!("{base}/t/{table}")).await;
    browser.fill("join-name", "Browser").await;
    browser.click("join-submit").await;
    browser
        .until("seated", "gm.role() === 'player' && gm.me() !== null")
        .await;
    let me = browser.me().await.unwrap();
    let start = bots[0]
        .call(|id| ClientMessage::Start {
            id,
            first_player: None,
            seating: grand_melee_protocol::SeatingMode::Random,
            order: Vec::new(),
        })
        .await;
    assert!(start.is_ok(), "{start:?}");

    // Everyone keeps in turn (the browser when the page says so).
    loop {
        let seq = bots[0].fresh_snapshot().await.seq;
        bots[0].catch_up(seq).await;
        let view = bots[0].view.clone().unwrap();
        let Some(decider) = view.mulligan_decider else {
            break;
        };
        if u64::from(decider) == me {
            browser.catch_up(seq).await;
            browser.click("keep").await;
            browser
                .until("kept", &format!("gm.view().seq > {seq}"))
                .await;
        } else {
            let bot = bots
                .iter_mut()
                .find(|b| b.seat.map(|s| s.0) == Some(decider))
                .unwrap();
            let kept = bot.call(|id| ClientMessage::Keep { id }).await;
            assert!(kept.is_ok(), "{kept:?}");
        }
    }
    // A few attacks by the bots holding running turns, so the ring shows damage and a loss.
    let snapshot = bots[0].fresh_snapshot().await;
    for turn in snapshot.turns.iter().filter(|t| t.player != me as u16) {
        let Some(bot) = bots
            .iter_mut()
            .find(|b| b.seat.map(|s| s.0) == Some(turn.player))
        else {
            continue;
        };
        let phase = bot
            .call(|id| ClientMessage::SetPhase {
                id,
                phase: Phase::Combat,
            })
            .await;
        if phase.is_err() {
            continue;
        }
        let view = bot.fresh_snapshot().await;
        let targets = view.player(turn.player).unwrap().may_attack.clone();
        for (k, target) in targets.iter().enumerate() {
            let damage = if k == 0 { 25 } else { 6 };
            let answer = bot
                .call(|id| ClientMessage::Attack {
                    id,
                    target: *target,
                    damage,
                    poison: 1,
                })
                .await;
            assert!(
                matches!(answer, Ok(ServerMessage::Ack { .. })),
                "{answer:?}"
            );
        }
    }
    let seq = bots[0].fresh_snapshot().await.seq;
    browser.catch_up(seq).await;
    browser.check_mirror("28-seat browser").await;
    let seats = browser
        .js("return document.querySelectorAll('[data-testid=\"seat\"]').length;")
        .await;
    assert_eq!(seats, 28);

    let dir = screenshot_dir();
    names_shown_whole(&browser, "on a laptop").await;
    browser.screenshot(&dir.join("table-28-1280x800.png")).await;
    browser.client.set_window_size(390, 844).await.unwrap();
    browser.catch_up(seq).await;
    names_shown_whole(&browser, "on a phone").await;
    browser.screenshot(&dir.join("table-28-390x844.png")).await;

    // The legend on a phone: over the page (the status line stays where it is), its Close
    // button on screen and uncovered, and only this table's symbols (no Rules 807 markers at
    // a table under the seed's rules).
    let status_top = "return document.querySelector('[data-testid=\"status-line\"]').getBoundingClientRect().top;";
    let before = browser.js(status_top).await;
    browser.click("legend-button").await;
    browser
        .until(
            "the legend",
            "document.querySelector('[data-testid=\"legend\"]') !== null",
        )
        .await;
    assert_eq!(
        browser.js(status_top).await,
        before,
        "the legend moved the status line"
    );
    let close = browser
        .js("const e = document.querySelector('[data-testid=\"legend-close\"]'); const r = e.getBoundingClientRect(); \
             const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2); \
             return { inside: r.top >= 0 && r.bottom <= innerHeight && r.left >= 0 && r.right <= innerWidth, \
               uncovered: !!hit && (hit === e || e.contains(hit)), \
               text: document.querySelector('[data-testid=\"legend\"]').textContent };")
        .await;
    assert!(
        close["inside"] == true && close["uncovered"] == true,
        "the legend's Close button: {close}"
    );
    let words = close["text"].as_str().unwrap();
    assert!(
        !words.contains("807") && !words.contains("marker") && words.contains("T0, T1"),
        "the legend at a seed table: {words}"
    );
    browser.click("legend-close").await;
    browser
        .until(
            "the legend closed",
            "document.querySelector('[data-testid=\"legend\"]') === null",
        )
        .await;
    let display = driver.browser(1280, 800).await;
    display.goto(&format!("{base}/t/{table}?display")).await;
    display
        .until("the display", "gm.view() !== null && gm.view().seq > 0")
        .await;
    display.catch_up(seq).await;
    display
        .screenshot(&dir.join("display-28-1280x800.png"))
        .await;
    for name in [
        "table-28-1280x800.png",
        "table-28-390x844.png",
        "display-28-1280x800.png",
    ] {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        assert!(bytes.starts_with(b"\x89PNG"), "{name}");
        assert!(bytes.len() > 10_000, "{name}: {} bytes", bytes.len());
    }
    eprintln!("screenshots in {}", dir.display());
    browser.close().await;
    display.close().await;
    drop(bots);
    drop(organiser);
}

/// The page served over `https://` with the organiser's self-signed certificate plays over
/// `wss://`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_browser_seats_play_over_wss() {
    let certificate = SelfSigned::new();
    // Under an allow-list that names another site, the server's own page still connects.
    let config = grand_melee_server::ServerConfig {
        allowed_origins: vec!["https://elsewhere.example".to_owned()],
        ..certificate.config()
    };
    let server = TestServer::start_with(config).await;
    let base = format!("https://localhost:{}", server.addr.port());
    let driver = Driver::start().await;
    let ann = driver.browser(390, 844).await;
    let bob = driver.browser(1280, 800).await;
    ann.goto(&format!("{base}/")).await;
    ann.fill("create-name", "Secure night").await;
    ann.fill("create-seats", "2").await;
    ann.click("create-submit").await;
    ann.until("the table page", "location.pathname.startsWith('/t/')")
        .await;
    assert!(
        ann.js("return location.protocol;").await == "https:",
        "served over TLS"
    );
    let table_url = ann.js("return location.href;").await;
    ann.fill("join-name", "Ann").await;
    ann.click("join-submit").await;
    ann.until("seated", "gm.role() === 'player'").await;
    bob.goto(table_url.as_str().unwrap()).await;
    bob.fill("join-name", "Bob").await;
    bob.click("join-submit").await;
    bob.until("seated", "gm.role() === 'player'").await;
    ann.click("start").await;
    keep_both(&ann, &bob).await;
    settle(&[&ann, &bob]).await;
    assert_eq!(ann.view().await["stage"], "playing");
    ann.check_mirror("Ann over wss").await;
    bob.check_mirror("Bob over wss").await;
    ann.close().await;
    bob.close().await;
}

/// The page's own player has kept his hand (the `kept` event is folded).
const KEPT: &str = "gm.view().players.find(p => p.player === gm.me()).kept";

/// Two seats keep their hands from their pages, each when his decision comes up, and the game
/// is in play on both pages.
async fn keep_both(ann: &Browser, bob: &Browser) {
    for _ in 0..2 {
        settle(&[ann, bob]).await;
        let decider = ann.view().await["mulligan_decider"].as_u64();
        let who = if decider == ann.me().await { ann } else { bob };
        who.click("keep").await;
        // Until the keep is folded: the next decider is read from the view after it (read
        // before it arrived, the same seat would keep twice and the other never).
        who.until("kept", KEPT).await;
    }
    for b in [ann, bob] {
        b.until("in play", "gm.view().stage === 'playing'").await;
    }
}

/// Sets the `<select>` with `data-testid=id` to `value` as a person choosing an option would.
async fn choose(browser: &Browser, id: &str, value: &str) {
    let chosen = browser
        .js(&format!(
            "const s = document.querySelector('[data-testid=\"{id}\"]'); s.value = '{value}'; \
             s.dispatchEvent(new Event('change', {{bubbles: true}})); return s.value;"
        ))
        .await;
    assert_eq!(chosen, value, "{id} offers {value}");
}

/// The values a `<select>` offers, as player ids.
async fn options_of(browser: &Browser, id: &str) -> Vec<u64> {
    let values = browser
        .js(&format!(
            "const s = document.querySelector('[data-testid=\"{id}\"]'); \
             return s ? Array.from(s.options).map(o => o.value) : [];"
        ))
        .await;
    values
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str()?.parse().ok())
        .collect()
}

async fn check_mirrors(seats: &[Browser], when: &str) {
    let all: Vec<&Browser> = seats.iter().collect();
    settle(&all).await;
    for (i, b) in seats.iter().enumerate() {
        b.check_mirror(&format!("seat {i} {when}")).await;
    }
}

/// A table under the Comprehensive Rules 807 with Combat with Dice and simultaneous mulligans,
/// created from the lobby page and played by four browser seats: everyone decides on mulligans at
/// once; the marker's holder may attack only the player on his left (the page offers no one else
/// and the server refuses a forged roll); attack rolls and a counter strike go through the page's
/// forms; an extra turn keeps the marker; at the end the page checks the revealed dice secret
/// against the commitment and the game's journal verifies. Every page's mirror equals the
/// server's snapshot throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cr807_table_with_combat_dice_and_simultaneous_mulligans_in_four_browsers() {
    let server = TestServer::start().await;
    let base = format!("http://{}", server.addr);
    let driver = Driver::start().await;
    let mut seats = Vec::new();
    for _ in 0..4 {
        seats.push(driver.browser(1024, 768).await);
    }
    let host = &seats[0];
    host.goto(&format!("{base}/")).await;
    host.fill("create-name", "Marker night").await;
    host.fill("create-seats", "4").await;
    choose(host, "create-rules", "cr807").await;
    host.click("create-combat-dice").await;
    choose(host, "create-mulligan", "simultaneous").await;
    host.click("create-submit").await;
    host.until("the table page", "location.pathname.startsWith('/t/')")
        .await;
    let url = host.js("return location.href;").await;
    let table_url = url.as_str().unwrap().split('?').next().unwrap().to_owned();
    let table: grand_melee_protocol::TableId =
        table_url.rsplit('/').next().unwrap().parse().unwrap();

    // The lobby lists the table with its rules.
    seats[1].goto(&format!("{base}/")).await;
    seats[1]
        .until(
            "the table's rules in the lobby list",
            "Array.from(document.querySelectorAll('[data-testid=\"table-row\"]')).some(r => \
             r.textContent.includes('Marker night') && r.textContent.includes('CR 807') && \
             r.textContent.includes('range 1') && r.textContent.includes('combat dice') && \
             r.textContent.includes('mulligans at once'))",
        )
        .await;
    for (i, seat) in seats.iter().enumerate() {
        if i > 0 {
            seat.goto(&table_url).await;
        }
        seat.fill("join-name", NAMES[i]).await;
        seat.click("join-submit").await;
        seat.until("seated", "gm.role() === 'player' && gm.me() !== null")
            .await;
    }
    let mut ids = Vec::new();
    for seat in &seats {
        ids.push(seat.me().await.unwrap());
    }
    // A spectator's connection reads the journal at the end.
    let mut watcher = server.client().await;
    watcher.watch(table).await;
    check_mirrors(&seats, "in the lobby").await;
    let lobby = host.view().await;
    let commitment = lobby["dice_commitment"].as_str().unwrap().to_owned();
    assert_eq!(commitment.len(), 64, "{lobby}");
    assert_eq!(
        lobby["settings"]["spell_range"], 1,
        "CR 807's range: {lobby}"
    );

    // Everyone decides at once: all four pages offer the decision together.
    host.click("start").await;
    check_mirrors(&seats, "at the mulligans").await;
    let view = host.view().await;
    assert_eq!(view["stage"], "mulligan");
    assert_eq!(view["mulligan_decider"], Value::Null);
    let mut deciders = id_list(&view["mulligan_deciders"]);
    deciders.sort_unstable();
    let mut everyone = ids.clone();
    everyone.sort_unstable();
    assert_eq!(deciders, everyone);
    for seat in &seats {
        seat.until(
            "the mulligan notice",
            "document.querySelector('[data-testid=\"banner\"]').offsetParent !== null && \
             document.querySelector('[data-testid=\"keep\"]').offsetParent !== null",
        )
        .await;
    }
    seats[2].click("mulligan").await;
    seats[2]
        .until(
            "mulliganed to 6",
            "gm.view().players.find(p => p.player === gm.me()).hand_size === 6",
        )
        .await;
    for seat in seats.iter().rev() {
        seat.click("keep").await;
        seat.until(
            "kept",
            "gm.view().players.find(p => p.player === gm.me()).kept",
        )
        .await;
    }
    check_mirrors(&seats, "after the mulligans").await;
    let view = host.view().await;
    assert_eq!(view["stage"], "playing", "{view}");
    assert_eq!(
        view["turns"].as_array().unwrap().len(),
        1,
        "4 seats: one marker"
    );

    // The marker's holder goes to combat: only his left neighbour may be attacked.
    let turn = &view["turns"][0];
    let holder = turn["player"].as_u64().unwrap();
    let ring = id_list(&view["ring"]);
    let pos = ring.iter().position(|&p| p == holder).unwrap();
    let left = ring[(pos + 1) % 4];
    let right = ring[(pos + 3) % 4];
    let at = |id: u64| &seats[ids.iter().position(|&p| p == id).unwrap()];
    let (h, l) = (at(holder), at(left));
    h.until(
        "the marker's label",
        "document.querySelector('.turn-label').textContent.includes('M1')",
    )
    .await;
    h.click("phase-combat").await;
    h.until("combat", "gm.view().turns[0].phase === 'combat'")
        .await;
    assert_eq!(options_of(h, "roll-defender").await, vec![left]);
    assert_eq!(
        id_list(&player(&h.view().await, holder)["may_attack"]),
        vec![left]
    );
    let before = h.seq().await;
    let forged = h
        .eval_async(&format!(
            "gm.send({{type: 'attack_roll', defender: {right}, attacker_power: 3, blocker_powers: []}})"
        ))
        .await;
    assert_eq!(forged["code"], "not_attack_left", "{forged}");
    assert!(
        h.js("return gm.lastError();")
            .await
            .as_str()
            .unwrap()
            .contains("left"),
        "the refusal is said in words"
    );
    assert_eq!(h.seq().await, before, "a refused roll changes nothing");

    // A blocked attack roll, then the defender strikes back from his page.
    choose(h, "roll-defender", &left.to_string()).await;
    h.fill("roll-power", "3").await;
    h.fill("roll-blockers", "1").await;
    h.click("attack-roll").await;
    h.until(
        "the roll in the log",
        "gm.log().some(l => l.startsWith('⚄') && l.includes('against 1'))",
    )
    .await;
    l.until(
        "the roll on the defender's page",
        "document.querySelector('[data-testid=\"roll-result\"]').textContent.includes('⚄')",
    )
    .await;
    assert_eq!(options_of(l, "counter-attacker").await, vec![holder]);
    l.fill("counter-mine", "1").await;
    l.fill("counter-theirs", "3").await;
    l.click("counter-roll").await;
    l.until(
        "the counter strike",
        "gm.log().some(l => l.includes('struck back'))",
    )
    .await;
    // An unblocked roll: its damage, if any, comes off the defender's life.
    let life = player(&h.view().await, left)["life"].as_i64().unwrap();
    h.fill("roll-power", "1").await;
    h.fill("roll-blockers", "").await;
    h.click("attack-roll").await;
    h.until(
        "the unblocked roll",
        "gm.log().filter(l => l.startsWith('⚄')).length === 3",
    )
    .await;
    check_mirrors(&seats, "after three rolls").await;
    // For a person to look at: the dice tools on a phone, the log on a laptop.
    let dir = screenshot_dir();
    l.screenshot(&dir.join("cr807-dice-1024x768.png")).await;
    h.client.set_window_size(390, 844).await.unwrap();
    h.js("document.querySelector('[data-testid=\"attack-roll\"]').scrollIntoView(); return 0;")
        .await;
    h.screenshot(&dir.join("cr807-dice-390x844.png")).await;
    for name in ["cr807-dice-1024x768.png", "cr807-dice-390x844.png"] {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        assert!(bytes.starts_with(b"\x89PNG"), "{name}");
    }
    let view = h.view().await;
    let damage: i64 = h
        .js("const l = gm.log().filter(l => l.startsWith('⚄'))[2]; return Number(l.match(/, (\\d+) damage/)[1]);")
        .await
        .as_i64()
        .unwrap();
    assert_eq!(
        player(&view, left)["life"].as_i64().unwrap(),
        life - damage,
        "{view}"
    );

    // An extra turn: the holder keeps the marker when his turn ends.
    h.click("extra-turn").await;
    h.click("extra-turn-confirm").await;
    h.until(
        "the extra turn",
        &format!("gm.view().players.find(p => p.player === {holder}).extra_turns === 1"),
    )
    .await;
    h.click("end-turn").await;
    h.until(
        "the marker kept",
        &format!(
            "gm.log().some(l => l.includes('keeps M1')) && gm.view().turns[0].player === {holder} && \
             gm.view().turns[0].state === 'running' && \
             gm.view().players.find(p => p.player === {holder}).extra_turns === 0"
        ),
    )
    .await;
    check_mirrors(&seats, "after the extra turn began").await;
    h.click("end-turn").await;
    h.until(
        "the marker passed left",
        &format!("gm.view().turns[0].player === {left}"),
    )
    .await;
    check_mirrors(&seats, "after the marker passed").await;

    // Three concede; the page shows the secret and checks it against the commitment.
    for seat in seats.iter().filter(|s| !std::ptr::eq(*s, l)) {
        seat.click("concede").await;
        seat.click("concede-confirm").await;
        seat.until(
            "conceded",
            "gm.view().players.find(p => p.player === gm.me()).status !== 'alive'",
        )
        .await;
    }
    check_mirrors(&seats, "at the end").await;
    for seat in &seats {
        seat.until(
            "the dice checked",
            "gm.view().stage === 'finished' && \
             (document.querySelector('[data-testid=\"dice-check\"]') || {}).textContent === '✓ matches the commitment'",
        )
        .await;
    }
    let end = host.view().await;
    let secret = end["dice_secret"].as_str().unwrap();
    let secret = grand_melee_protocol::dice::DiceSecret::from_hex(secret).unwrap();
    assert_eq!(secret.commitment(), commitment);
    let seq = end["seq"].as_u64().unwrap();
    watcher.catch_up(seq).await;
    let events = watcher.past_events(table).await;
    let verified = grand_melee_protocol::dice::verify((1u64..).zip(&events)).unwrap();
    assert_eq!((verified.players, verified.rolls), (4, 3));
    assert!(verified.first_player_drawn);
    for seat in seats {
        seat.close().await;
    }
}

/// The member token (and number) a browser keeps for `league`.
async fn member_token(
    browser: &Browser,
    league: &str,
) -> (u32, grand_melee_protocol::league::MemberToken) {
    let kept = browser
        .js(&format!(
            "return JSON.parse(localStorage.getItem('gm.league.{league}'));"
        ))
        .await;
    let member = u32::try_from(kept["member"].as_u64().unwrap()).unwrap();
    (member, kept["token"].as_str().unwrap().parse().unwrap())
}

/// The league page's standings: (member name, power, unspent) per row, in order.
async fn league_rows(browser: &Browser) -> Vec<(String, u64, u64)> {
    let rows = browser
        .js(
            "return Array.from(document.querySelectorAll('[data-testid=\"league-row\"]')).map(r => \
             [r.children[1].textContent, Number(r.querySelector('[data-testid=\"power\"]').textContent), \
              Number(r.querySelector('[data-testid=\"balance\"]').textContent)]);",
        )
        .await;
    serde_json::from_value(rows).unwrap()
}

/// Two seats of a league table in their browsers: the organiser's page creates the table, both
/// members sit down from theirs, and the host starts. Returns the table's address.
async fn league_game(org: &Browser, league_url: &str, seats: &[&Browser]) -> String {
    org.goto(league_url).await;
    org.fill("league-table-seats", &seats.len().to_string())
        .await;
    org.click("league-table-create").await;
    org.until("the league table", "location.pathname.startsWith('/t/')")
        .await;
    let table_url = org
        .js("return location.href;")
        .await
        .as_str()
        .unwrap()
        .to_owned();
    for b in seats {
        b.goto(&table_url).await;
        b.click("join-submit").await;
        b.until("seated", "gm.role() === 'player'").await;
    }
    settle(seats).await;
    table_url
}

/// An Ascension league run from the browser pages: the organiser starts a league and creates its
/// tables, two members join and register decks on the league page, play a league game at a
/// table that seats them under their league names, and read the standings and their ledgers; a
/// purchase is bought and one that costs too much is refused with its numbers, changing
/// nothing. After more league games (played by bots with the members' tokens) Bob's deck is 11
/// points behind: at the next table his page lets him choose who plays first and his starting
/// life shows the bonus. Every page's mirror equals the server's snapshot throughout, and the
/// replay of a league game links to the league.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_league_season_in_browsers_with_standings_ledgers_and_a_bonus() {
    use grand_melee_e2e::{Client, TestLeague, concede_in_order};
    let server = TestServer::start().await;
    let base = format!("http://{}", server.addr);
    let driver = Driver::start().await;
    let org = driver.browser(1280, 800).await;
    let ann = driver.browser(390, 844).await;
    let bob = driver.browser(1024, 768).await;

    org.goto(&format!("{base}/")).await;
    org.click("leagues-link").await;
    org.until("the leagues page", "location.pathname === '/leagues'")
        .await;
    org.fill("league-name", "Browser league").await;
    org.click("league-create").await;
    org.until(
        "the league page",
        "location.pathname.startsWith('/leagues/') && !!document.querySelector('[data-testid=\"league-title\"]')",
    )
    .await;
    let league_url = org
        .js("return location.href;")
        .await
        .as_str()
        .unwrap()
        .to_owned();
    let league_id = league_url.rsplit('/').next().unwrap().to_owned();

    for (b, name, deck, basic) in [
        (&ann, "Ann", "Crusade", "Mirage"),
        (&bob, "Bob", "Pirates", "Tempest"),
    ] {
        b.goto(&league_url).await;
        b.fill("member-name", name).await;
        b.click("member-join").await;
        b.until(
            "a member",
            "!!document.querySelector('[data-testid=\"member-me\"]')",
        )
        .await;
        b.fill("register-deck-name", deck).await;
        b.fill("register-basic-set", basic).await;
        b.fill("register-expansion-set", "Visions").await;
        b.click("register-submit").await;
        b.until(
            "registered",
            "!!document.querySelector('[data-testid=\"buy-submit\"]')",
        )
        .await;
    }

    // Week 1 in the browsers: Bob concedes, Ann wins 1 point.
    let table_url = league_game(&org, &league_url, &[&ann, &bob]).await;
    let view = ann.view().await;
    let names: Vec<&str> = view["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Ann", "Bob"], "seated under their league names");
    assert_eq!(view["players"][0]["deck"]["deck"], "Crusade");
    ann.click("start").await;
    keep_both(&ann, &bob).await;
    settle(&[&ann, &bob]).await;
    ann.check_mirror("Ann, league game").await;
    bob.check_mirror("Bob, league game").await;
    bob.click("concede").await;
    bob.click("concede-confirm").await;
    ann.until("game over", "gm.view().stage === 'finished'")
        .await;
    settle(&[&ann, &bob]).await;
    ann.check_mirror("Ann, game over").await;
    let first_table = table_url.rsplit('/').next().unwrap().to_owned();

    org.goto(&league_url).await;
    org.until(
        "the standings",
        "document.querySelectorAll('[data-testid=\"league-row\"]').length === 2",
    )
    .await;
    assert_eq!(
        league_rows(&org).await,
        [("Ann".to_owned(), 1, 1), ("Bob".to_owned(), 0, 0)]
    );
    org.click("ledger-0").await;
    org.until(
        "Ann's ledger",
        "document.querySelectorAll('[data-testid=\"ledger-line\"]').length === 2",
    )
    .await;
    let ledger = org
        .js("return document.querySelector('[data-testid=\"ledger-lines\"]').textContent;")
        .await;
    assert!(
        ledger
            .as_str()
            .unwrap()
            .contains("+1 mana points: place 1 of 2"),
        "{ledger}"
    );

    // Ann spends: two lands for 1; then a set for 10 is refused, and nothing changes.
    ann.goto(&league_url).await;
    ann.until(
        "the buy form",
        "!!document.querySelector('[data-testid=\"buy-option\"]')",
    )
    .await;
    choose(&ann, "buy-option", "basic_lands").await;
    ann.fill("buy-count", "2").await;
    ann.click("buy-submit").await;
    ann.until(
        "bought",
        "document.querySelector('[data-testid=\"buy-result\"]').textContent.includes('Bought 2 basic lands for 1')",
    )
    .await;
    ann.until("the new balance", "document.querySelector('[data-testid=\"buy-balance\"]').textContent.startsWith('0 unspent')")
        .await;
    let lines_before = ann
        .js("return document.querySelectorAll('[data-testid=\"ledger-line\"]').length;")
        .await;
    choose(&ann, "buy-option", "expansion_set").await;
    ann.fill("buy-set", "Weatherlight").await;
    ann.click("buy-submit").await;
    ann.until(
        "the refusal",
        "document.querySelector('[data-testid=\"error\"]').textContent.includes('this costs 10 mana points')",
    )
    .await;
    // A card names its set, one of the deck's (the form offers them): the refusal is the price,
    // not a missing set.
    choose(&ann, "buy-option", "common").await;
    ann.fill("buy-card", "Shock").await;
    choose(&ann, "buy-card-set", "Visions").await;
    ann.click("buy-submit").await;
    ann.until(
        "the card's refusal",
        "document.querySelector('[data-testid=\"error\"]').textContent.includes('this costs 1 mana points and the deck has 0 unspent')",
    )
    .await;
    let mut reader = Client::connected(server.addr).await;
    let league = TestLeague {
        id: league_id.parse().unwrap(),
        organiser: org
            .js(&format!(
                "return JSON.parse(localStorage.getItem('gm.organiser.{league_id}'));"
            ))
            .await
            .as_str()
            .unwrap()
            .parse()
            .unwrap(),
        members: vec![],
    };
    let (deck, ledger) = league.deck(&mut reader, 0).await;
    assert_eq!((deck.power, deck.spent, deck.cards), (1, 1, 47));
    assert_eq!(
        Value::from(ledger.len()),
        lines_before,
        "the refusal left no line"
    );

    // Five three-player games by bots with the members' tokens (Cy joins by protocol): Ann
    // wins each (+2), Bob is out first (0). Bob ends 11 behind Ann.
    let (ann_member, ann_token) = member_token(&ann, &league_id).await;
    let (bob_member, bob_token) = member_token(&bob, &league_id).await;
    let joined = reader
        .call(|id| ClientMessage::JoinLeague {
            id,
            league: league.id,
            name: "Cy".into(),
            password: None,
        })
        .await
        .unwrap();
    let ServerMessage::LeagueJoined {
        member: cy_member,
        token: cy_token,
        ..
    } = joined
    else {
        panic!("{joined:?}");
    };
    let registered = reader
        .call(|id| ClientMessage::RegisterDeck {
            id,
            league: league.id,
            token: cy_token,
            deck: grand_melee_protocol::league::DeckSpec {
                name: "Elves".into(),
                alliance: grand_melee_protocol::league::Alliance::RedGreen,
                basic_set: "Urza's Saga".into(),
                expansion_set: "Urza's Legacy".into(),
            },
        })
        .await;
    assert!(matches!(registered, Ok(ServerMessage::Deck { .. })));
    let league = TestLeague {
        members: vec![
            (ann_member, "Ann".into(), ann_token),
            (bob_member, "Bob".into(), bob_token),
            (cy_member, "Cy".into(), cy_token),
        ],
        ..league
    };
    for week in 2..7 {
        let (_, mut bots) = league
            .started(server.addr, &format!("Week {week}"), &[0, 1, 2])
            .await;
        let view = bots[0].view.clone().unwrap();
        let id_of = |name: &str| view.players.iter().find(|p| p.name == name).unwrap().player;
        concede_in_order(&mut bots, &[id_of("Bob"), id_of("Cy")]).await;
    }

    // Week 7 in the browsers: Bob is 11 behind (first choice, +2 life); he chooses Ann.
    league_game(&org, &league_url, &[&ann, &bob]).await;
    bob.until(
        "Bob decides",
        "!!(document.querySelector('[data-testid=\"decider-box\"]') || {}).offsetParent",
    )
    .await;
    let ann_id = ann.me().await.unwrap();
    choose(&bob, "choose-first", &ann_id.to_string()).await;
    bob.click("choose-first-submit").await;
    ann.until(
        "Bob's choice",
        &format!("gm.view().first_choice === {ann_id}"),
    )
    .await;
    ann.check_mirror("Ann, the choice").await;
    bob.check_mirror("Bob, the choice").await;
    ann.click("start").await;
    settle(&[&ann, &bob]).await;
    let view = bob.view().await;
    let bob_id = bob.me().await.unwrap();
    assert_eq!(view["first_player"].as_u64(), Some(ann_id));
    assert_eq!(view["first_decider"].as_u64(), Some(bob_id));
    assert_eq!(player(&view, bob_id)["life"], 22, "Bob's +2 life");
    assert_eq!(player(&view, bob_id)["bonus"]["behind"], 11);
    assert_eq!(player(&view, ann_id)["life"], 20);
    ann.check_mirror("Ann, bonuses").await;
    bob.check_mirror("Bob, bonuses").await;
    let log = bob.log().await;
    assert!(
        log.iter().any(|l| l.contains("decided by Bob")
            && l.contains("Bob is 11 behind: decides who plays first, +2 life")),
        "{log:?}"
    );
    bob.screenshot(&screenshot_dir().join("league-table.png"))
        .await;

    // The replay of week 1 links to the league.
    org.goto(&format!("{base}/replays/{first_table}")).await;
    org.until(
        "the league link",
        "!!document.querySelector('[data-testid=\"replay-league\"]')",
    )
    .await;
    org.goto(&league_url).await;
    org.until(
        "the standings",
        "document.querySelectorAll('[data-testid=\"league-row\"]').length === 3",
    )
    .await;
    org.screenshot(&screenshot_dir().join("league-page.png"))
        .await;
    org.close().await;
    ann.close().await;
    bob.close().await;
}

/// A league too big for one page of `get_league` (the server's pages are small here): the
/// league page asks for every page and shows every member and game.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_league_page_shows_every_member_of_a_league_in_many_pages() {
    use grand_melee_e2e::{Client, TestLeague};
    // Pages of at most 4 KiB of items: about 40 members each.
    let server = TestServer::start_with(grand_melee_server::ServerConfig {
        outgoing_queue_bytes: 16 * 1024,
        ..grand_melee_server::ServerConfig::default()
    })
    .await;
    let mut organiser = Client::connected(server.addr).await;
    let league = TestLeague::create(&mut organiser, "Big league", &["Ann", "Bob"]).await;
    for week in 1..=2 {
        league
            .table(&mut organiser, &format!("Week {week}"), 2)
            .await;
    }
    league.join_many(server.addr, 148).await;
    let (_, pages) = league.view_in_pages(&mut organiser, 500).await;
    assert!(pages >= 3, "{pages} pages");

    let driver = Driver::start().await;
    let browser = driver.browser(1280, 800).await;
    browser
        .goto(&format!("http://{}/leagues/{}", server.addr, league.id))
        .await;
    browser
        .until(
            "the standings",
            "!!document.querySelector('[data-testid=\"league-standings\"]')",
        )
        .await;
    let rows = league_rows(&browser).await;
    assert_eq!(rows.len(), 150);
    let mut names: Vec<&str> = rows.iter().map(|(name, _, _)| name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), 150, "every member once");
    assert!(names.contains(&"Ann") && names.contains(&"Member 147"));
    let games = browser
        .js("return document.querySelectorAll('[data-testid=\"league-game\"]').length;")
        .await;
    assert_eq!(games, Value::from(2));
    let meta = browser
        .js("return document.querySelector('.lobby-head .meta').textContent;")
        .await;
    assert_eq!(meta, Value::from("150 members · 2 games"));
    browser.close().await;
}

/// The page's arranged seating, as player ids (the lobby's `seating-order` list).
async fn arranged_order(browser: &Browser) -> Vec<u64> {
    let ids = browser
        .js("return Array.from(document.querySelectorAll('[data-testid=\"seating-order\"] li')).map(li => Number(li.dataset.player));")
        .await;
    id_list(&ids)
}

/// The host arranges the seating in the lobby (move buttons and drag-and-drop) and the game
/// starts seated so; a player calls the host from his page, the host's page alerts him with who
/// and why, and answering clears it. Every page's mirror equals the server's snapshot throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_arranges_the_seating_and_is_alerted_when_a_player_calls() {
    let server = TestServer::start().await;
    let base = format!("http://{}", server.addr);
    let driver = Driver::start().await;
    let mut seats = Vec::new();
    for _ in 0..3 {
        seats.push(driver.browser(1024, 768).await);
    }
    let host = &seats[0];
    host.goto(&format!("{base}/")).await;
    host.fill("create-name", "Convention table 4").await;
    host.fill("create-seats", "3").await;
    host.click("create-submit").await;
    host.until("the table page", "location.pathname.startsWith('/t/')")
        .await;
    let url = host.js("return location.href;").await;
    let table_url = url.as_str().unwrap().split('?').next().unwrap().to_owned();
    for (i, seat) in seats.iter().enumerate() {
        if i > 0 {
            seat.goto(&table_url).await;
        }
        seat.fill("join-name", NAMES[i]).await;
        seat.click("join-submit").await;
        seat.until("seated", "gm.role() === 'player' && gm.me() !== null")
            .await;
    }
    let mut ids = Vec::new();
    for seat in &seats {
        ids.push(seat.me().await.unwrap());
    }
    let all: Vec<&Browser> = seats.iter().collect();
    settle(&all).await;
    // Arranged: the list starts in join order; the host moves Cid to the top with the buttons,
    // then drags Ann onto the second seat.
    choose(host, "seating-mode", "arranged").await;
    host.until(
        "every seat in the list",
        "document.querySelectorAll('[data-testid=\"seating-order\"] li').length === 3",
    )
    .await;
    assert_eq!(arranged_order(host).await, ids);
    host.click(&format!("seat-up-{}", ids[2])).await;
    host.click(&format!("seat-up-{}", ids[2])).await;
    assert_eq!(arranged_order(host).await, [ids[2], ids[0], ids[1]]);
    let dropped = host
        .js(&format!(
            "const from = document.querySelector('[data-testid=\"seat-{a}\"]'); \
             const to = document.querySelector('[data-testid=\"seat-{b}\"]'); \
             const dt = new DataTransfer(); \
             from.dispatchEvent(new DragEvent('dragstart', {{bubbles: true, dataTransfer: dt}})); \
             to.dispatchEvent(new DragEvent('drop', {{bubbles: true, cancelable: true, dataTransfer: dt}})); \
             return true;",
            a = ids[0],
            b = ids[1]
        ))
        .await;
    assert_eq!(dropped, Value::Bool(true));
    let arranged = vec![ids[2], ids[1], ids[0]];
    assert_eq!(arranged_order(host).await, arranged);
    check_mirrors(&seats, "in the lobby").await;
    host.click("start").await;
    check_mirrors(&seats, "seated as arranged").await;
    let view = host.view().await;
    assert_eq!(id_list(&view["ring"]), arranged, "{view}");
    assert_eq!(view["seating_mode"], "arranged");
    assert!(
        seats[1]
            .log()
            .await
            .iter()
            .any(|l| l.contains("seated as the host arranged")),
        "the log says how the table was seated"
    );

    // Bob calls the host; the host's page shows who and why.
    let bob = &seats[1];
    bob.fill("call-reason", "Is a Regrowth in response legal?")
        .await;
    bob.click("call-host").await;
    host.until(
        "the host's alert",
        &format!(
            "(() => {{ const e = document.querySelector('[data-testid=\"host-call\"]'); \
             return e && e.offsetParent !== null && \
             e.textContent.includes('Bob calls the host: Is a Regrowth in response legal?') && \
             document.querySelector('[data-testid=\"answer-call-{}\"]') !== null; }})()",
            ids[1]
        ),
    )
    .await;
    host.shows_no_missing_values("the host, alerted").await;
    // Nobody else gets the alert, and the caller cannot call again at once.
    let others_alerted = seats[2]
        .js("return !!(document.querySelector('[data-testid=\"host-call\"]') || {}).offsetParent;")
        .await;
    assert_eq!(others_alerted, Value::Bool(false));
    check_mirrors(&seats, "with an open call").await;
    assert_eq!(host.view().await["calls"][0]["player"], ids[1]);
    bob.fill("call-reason", "hello?").await;
    bob.click("call-host").await;
    bob.until(
        "the rate limit on screen",
        "document.querySelector('[data-testid=\"error\"]').offsetParent !== null",
    )
    .await;
    host.click(&format!("answer-call-{}", ids[1])).await;
    host.until(
        "the alert cleared",
        "!(document.querySelector('[data-testid=\"host-call\"]') || {}).offsetParent",
    )
    .await;
    check_mirrors(&seats, "after the answer").await;
    assert_eq!(host.view().await["calls"], Value::Null);
    for seat in seats {
        seat.close().await;
    }
}

/// Issue 34 (adjourning) on the page: the host adjourns from his tools, both pages show the
/// game adjourned (the host a "Resume" button, the other player "Ask to resume" with the count
/// of asks against the quorum), the lobby lists the table as adjourned, the other player's ask
/// is counted once, and the host resumes the game. The pages' mirrors equal the server's
/// snapshot throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_adjourns_and_resumes_a_game_from_the_page() {
    let server = TestServer::start().await;
    let base = format!("http://127.0.0.1:{}", server.addr.port());
    let driver = Driver::start().await;
    let ann = driver.browser(1280, 800).await;
    let bob = driver.browser(390, 844).await;
    ann.goto(&format!("{base}/")).await;
    ann.fill("create-name", "Late night").await;
    ann.fill("create-seats", "2").await;
    ann.click("create-submit").await;
    ann.until("the table page", "location.pathname.startsWith('/t/')")
        .await;
    let table_url = ann.js("return location.href;").await;
    ann.fill("join-name", "Ann").await;
    ann.click("join-submit").await;
    ann.until("seated", "gm.role() === 'player'").await;
    bob.goto(table_url.as_str().unwrap()).await;
    bob.fill("join-name", "Bob").await;
    bob.click("join-submit").await;
    bob.until("seated", "gm.role() === 'player'").await;
    ann.click("start").await;
    keep_both(&ann, &bob).await;
    settle(&[&ann, &bob]).await;
    assert_eq!(ann.view().await["stage"], "playing");

    // The host opens his tools and adjourns (confirming the dialog).
    ann.js("document.querySelector('details.host').open = true; window.confirm = () => true; return null;")
        .await;
    ann.click("adjourn").await;
    for (b, who) in [(&ann, "Ann"), (&bob, "Bob")] {
        b.until("adjourned", "gm.view().adjourned === true").await;
        b.until(
            "the adjourned banner",
            "document.querySelector('[data-testid=\"adjourned-box\"]').offsetParent !== null && \
             document.querySelector('[data-testid=\"status-line\"]').textContent.includes('adjourned')",
        )
        .await;
        b.check_mirror(&format!("{who} adjourned")).await;
    }
    ann.until(
        "the host's resume button, no game buttons",
        "document.querySelector('[data-testid=\"resume-game\"]').offsetParent !== null && \
         !(document.querySelector('[data-testid=\"ask-resume\"]') || {}).offsetParent && \
         !(document.querySelector('[data-testid=\"end-turn\"]') || {}).offsetParent",
    )
    .await;
    bob.until(
        "the ask button, 0 of 2",
        "!(document.querySelector('[data-testid=\"resume-game\"]') || {}).offsetParent && \
         document.querySelector('[data-testid=\"adjourned-text\"]').textContent.includes('0 of 2')",
    )
    .await;

    // The lobby lists it as adjourned.
    let lobby = driver.browser(1280, 800).await;
    ann.shows_no_missing_values("Ann, adjourned").await;
    bob.shows_no_missing_values("Bob, adjourned").await;
    lobby.goto(&format!("{base}/")).await;
    lobby
        .until(
            "the adjourned table in the list",
            "Array.from(document.querySelectorAll('[data-testid=\"table-row\"]')).some(r => \
             r.textContent.includes('Late night') && r.textContent.includes('adjourned'))",
        )
        .await;
    lobby.close().await;

    // Bob asks once: 1 of 2, and the button says so.
    bob.click("ask-resume").await;
    let bob_id = bob.me().await.unwrap();
    for b in [&ann, &bob] {
        b.until(
            "Bob's ask",
            &format!("JSON.stringify(gm.view().resume_asks) === '[{bob_id}]'"),
        )
        .await;
    }
    bob.until(
        "asked",
        "document.querySelector('[data-testid=\"ask-resume\"]').disabled && \
         document.querySelector('[data-testid=\"adjourned-text\"]').textContent.includes('1 of 2')",
    )
    .await;
    assert_eq!(ann.view().await["adjourned"], true, "one ask of two");
    settle(&[&ann, &bob]).await;
    ann.check_mirror("Ann after Bob's ask").await;
    bob.check_mirror("Bob after Bob's ask").await;

    // The host resumes: play goes on, the game buttons are back.
    ann.click("resume-game").await;
    for (b, who) in [(&ann, "Ann"), (&bob, "Bob")] {
        b.until(
            "resumed",
            "gm.view().adjourned === false && gm.view().resume_asks.length === 0 && \
             !(document.querySelector('[data-testid=\"adjourned-box\"]') || {}).offsetParent",
        )
        .await;
        b.check_mirror(&format!("{who} resumed")).await;
    }
    let holder = ann.view().await["turns"][0]["player"].as_u64();
    let (mover, other) = if holder == ann.me().await {
        (&ann, &bob)
    } else {
        (&bob, &ann)
    };
    mover.click("end-turn").await;
    let seq = settle(&[&ann, &bob]).await;
    assert!(seq > 0);
    other
        .until(
            "the turn passed",
            "gm.view().turns.some(t => t.player === gm.me() && t.state === 'running')",
        )
        .await;
    ann.close().await;
    bob.close().await;
}

/// A `data:` URL of the page `html`.
fn data_page(html: &str) -> String {
    let mut url = String::from("data:text/html;charset=utf-8,");
    for b in html.bytes() {
        if b.is_ascii_alphanumeric() {
            url.push(char::from(b));
        } else {
            url.push_str(&format!("%{b:02X}"));
        }
    }
    url
}

/// The harness types into the input the page shows even when the page replaces it under the
/// typing (a re-render on the first change, as Preact's does when the snapshot arrives): the
/// input it found is stale, so it finds the new one and types again (issue 43: a clean clone's
/// `cargo test` failed on a `StaleElementReference` in `fill`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_harness_types_again_into_an_input_the_page_replaced_while_typing() {
    let driver = Driver::start().await;
    let page = driver.browser(800, 600).await;
    page.goto(&data_page(
        "<!doctype html><title>fill</title><label>Name <input data-testid=\"name\" value=\"old\"></label>\
         <script>window.replaced = 0; \
         const again = (ev) => { if (window.replaced || ev.target.dataset.testid !== 'name') return; \
           window.replaced = 1; const n = document.createElement('input'); n.dataset.testid = 'name'; \
           ev.target.replaceWith(n); }; \
         document.addEventListener('input', again, true); document.addEventListener('change', again, true);</script>",
    ))
    .await;
    page.fill("name", "Ann").await;
    assert_eq!(
        page.js(
            "return [window.replaced, document.querySelector('[data-testid=\"name\"]').value];"
        )
        .await,
        serde_json::json!([1, "Ann"]),
        "the page replaced the input once, and the one it shows holds the name"
    );
    page.close().await;
}

/// The harness clicks a button a toast covers once the toast is gone, and clicks it once: a
/// click the covering element would take is refused by WebDriver before it happens, and the
/// harness finds the button and tries again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_harness_clicks_a_covered_button_once_it_is_uncovered() {
    let driver = Driver::start().await;
    let page = driver.browser(800, 600).await;
    page.goto(&data_page(
        "<!doctype html><title>click</title>\
         <button data-testid=\"go\" onclick=\"window.clicks = (window.clicks || 0) + 1\">Go</button>\
         <div id=\"toast\" style=\"position: fixed; inset: 0; background: #000a; color: #fff\">Saved</div>\
         <script>setTimeout(() => document.getElementById('toast').remove(), 3000);</script>",
    ))
    .await;
    assert_eq!(
        page.js("return document.getElementById('toast') !== null;")
            .await,
        Value::Bool(true),
        "the toast still covers the button when the click starts"
    );
    page.click("go").await;
    assert_eq!(
        page.js("return [window.clicks, document.getElementById('toast')];")
            .await,
        serde_json::json!([1, null]),
        "one click, after the toast went"
    );
    page.close().await;
}

/// Cluster mode: a player who opened the table's page on a node that does not own the table is
/// told where the owner is (`served_at`); the page opens a connection there, resumes the seat on
/// it and closes the first one. The player keeps playing, his requests no longer carried by the
/// other node, and nothing he saw is lost. Then the owner goes away: the page comes back
/// through the node it was opened on and has its seat again once that node has taken the table
/// over, without an error on screen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_opened_on_another_node_moves_to_the_tables_owner() {
    let nats = grand_melee_e2e::nats::NatsCluster::start(1).await;
    let node = |name: &str| grand_melee_server::ServerConfig {
        cluster: Some(nats.urls()),
        node_id: Some(name.to_owned()),
        cluster_replicas: 1,
        lease_ms: 1500,
        ..grand_melee_server::ServerConfig::default()
    };
    let a = TestServer::start_with(node("a")).await;
    let b = TestServer::start_with(node("b")).await;
    let mut ann = grand_melee_e2e::Client::connected(a.addr).await;
    let table = ann.create_table("Two nodes", 4, 3).await;
    ann.join(table, "Ann").await.unwrap();
    let mut lobby_b = grand_melee_e2e::Client::connected(b.addr).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !lobby_b.list_tables().await.iter().any(|t| t.table == table) {
        assert!(
            std::time::Instant::now() < deadline,
            "node b lists the table"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }

    let driver = Driver::start().await;
    let bob = driver.phone().await;
    bob.goto(&format!("http://{}/t/{}", b.addr, table.as_uuid()))
        .await;
    bob.fill("join-name", "Bob").await;
    bob.click("join-submit").await;
    let owner = format!("ws://{}/ws", a.addr);
    bob.until(
        "the page's link at the table's owner, the seat resumed there",
        &format!(
            "GM.link.ws && GM.link.ws.url === '{owner}' && gm.connected() && gm.role() === 'player' && gm.me() !== null"
        ),
    )
    .await;
    assert_eq!(
        grand_melee_e2e::metric(b.addr, "gm_cluster_clients_sent_to_owner_total").await,
        1.0
    );

    // Both ways at once: Ann's line reaches the page, the page's line reaches Ann, and node b
    // carries none of it.
    let routed = grand_melee_e2e::metric(b.addr, "gm_cluster_routed_requests_total").await;
    let said = ann
        .call(|id| ClientMessage::Chat {
            id,
            text: "welcome Bob".into(),
        })
        .await;
    assert!(matches!(said, Ok(ServerMessage::Ack { .. })), "{said:?}");
    bob.until(
        "Ann's line",
        "gm.chat().some(l => l.includes('welcome Bob'))",
    )
    .await;
    bob.click("tab-chat").await;
    bob.fill("chat-input", "thanks Ann").await;
    bob.click("chat-send").await;
    ann.until_batch(
        |e| matches!(e, grand_melee_protocol::Event::Chat { text, .. } if text == "thanks Ann"),
    )
    .await;
    assert_eq!(
        grand_melee_e2e::metric(b.addr, "gm_cluster_routed_requests_total").await,
        routed
    );
    assert!(
        bob.log()
            .await
            .iter()
            .all(|line| !line.contains("lost the connection")),
        "the move shows no disconnection: {:?}",
        bob.log().await
    );
    bob.check_mirror("Bob at the owner").await;

    // The owner goes away. The page comes back through the address it was opened at (node b),
    // which answers "busy" until it has taken the table over (about one lease): the page tries
    // again quietly and is back in its seat, no error on screen.
    let me = bob.me().await.unwrap();
    drop(ann);
    a.shutdown().await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while grand_melee_e2e::metric(b.addr, "gm_tables").await < 1.0 {
        assert!(
            std::time::Instant::now() < deadline,
            "node b takes the table over"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // Seated at b: what the page says reaches b's own spectator as Bob's.
    bob.until(
        "events from node b",
        &format!(
            "GM.link.ws && GM.link.ws.url === 'ws://{}/ws' && gm.connected() && gm.me() === {me} \
             && gm.view().players.some(p => p.player !== {me} && p.connected === false)",
            b.addr
        ),
    )
    .await;
    let mut watcher = grand_melee_e2e::Client::connected(b.addr).await;
    watcher.watch(table).await;
    bob.fill("chat-input", "back again").await;
    bob.click("chat-send").await;
    let from = watcher
        .until(|r| match r {
            grand_melee_e2e::Received::Message(m, _) => match &**m {
                ServerMessage::Events { events, .. } => events.iter().find_map(|e| match e {
                    grand_melee_protocol::Event::Chat { from, text, .. }
                        if text == "back again" =>
                    {
                        Some(*from)
                    }
                    _ => None,
                }),
                _ => None,
            },
            grand_melee_e2e::Received::Closed(_) => None,
        })
        .await;
    assert_eq!(
        from,
        Some(u16::try_from(me).unwrap()),
        "Bob speaks from his seat"
    );
    assert_eq!(
        bob.js("return gm.lastError();").await,
        Value::Null,
        "no error on screen while the table moved"
    );
    bob.check_mirror("Bob after the owner went away").await;
    bob.close().await;
}

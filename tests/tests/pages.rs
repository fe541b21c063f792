//! Every page in a real headless Chromium on a 360-px-wide phone: axe-core finds no serious or
//! critical accessibility violation, nothing scrolls sideways, and no missing value (`null`,
//! `undefined`, `NaN`) shows. Plus the lobby's create form: plain words, labels tied to their
//! inputs, sensible defaults, and the Create button on the first screen of a 1280×800 laptop.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

#[path = "browser/harness.rs"]
mod harness;

use grand_melee_e2e::{Client, TestLeague, TestServer, concede_in_order, started_game};
use grand_melee_protocol::ClientMessage;
use grand_melee_server::ServerConfig;
use harness::{Browser, Driver, Scheme, screenshot_dir};
use serde_json::Value;

/// A server whose page files come from the tree (`server/web`, the files built into the binary).
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

/// What is wrong with the page as `what` shows it: axe-core's serious and critical violations,
/// sideways scrolling, missing values. Collected (not panicking at the first) so one run
/// reports every page. A screenshot of each goes to `target/tmp/browser-screenshots/`.
async fn problems(browser: &Browser, what: &str, found: &mut Vec<String>) {
    let slug: String = what
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    browser
        .screenshot(&screenshot_dir().join(format!("page-{slug}.png")))
        .await;
    if let Some(report) = browser.accessibility_report().await {
        found.push(format!("{what}: {report}"));
    }
    if let Some(report) = browser.overflow().await {
        found.push(format!("{what}: {report}"));
    }
    if let Some(text) = browser.missing_value().await {
        found.push(format!("{what}: the page shows a missing value: {text:?}"));
    }
}

fn verdict(found: &[String]) {
    assert!(
        found.is_empty(),
        "{} page(s) with problems:\n\n{}",
        found.len(),
        found.join("\n\n")
    );
}

/// A finished three-seat game (not a league's).
async fn finished_game(server: &TestServer) {
    let (_, mut clients) = started_game(server, 3, 11).await;
    concede_in_order(&mut clients, &[1, 2]).await;
}

/// A league with four members (one with a long name), decks registered, and one game
/// played to the end.
async fn played_league(server: &TestServer) -> TestLeague {
    let mut client = Client::connected(server.addr).await;
    let league = TestLeague::create(
        &mut client,
        "Thursday night league",
        &["Ann", "Bob", "Cid", "Bartholomew Magnificent"],
    )
    .await;
    let (_, mut clients) = league.started(server.addr, "Week 1", &[0, 1, 2, 3]).await;
    let players: Vec<u16> = clients.iter().map(|c| c.seat.unwrap().0).collect();
    concede_in_order(&mut clients, &players[1..]).await;
    league
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_passes_axe_and_fits_in_360_px() {
    let server = server().await;
    let base = format!("http://{}", server.addr);
    finished_game(&server).await;
    let league = played_league(&server).await;
    let mut organiser = Client::connected(server.addr).await;
    organiser
        .create_table("An open table with a long name!!", 16, 3)
        .await;
    let driver = Driver::start().await;
    let mut found = Vec::new();
    for (scheme, how) in [(Scheme::Light, ""), (Scheme::Dark, ", dark")] {
        let phone = driver.phone_with(360, 780, scheme).await;
        every_page(&phone, &base, &league, how, &mut found).await;
        phone.close().await;
    }
    verdict(&found);
}

/// Visits every page but the table's on `phone`, noting the problems of each (`how` is added to
/// each page's name).
async fn every_page(
    phone: &Browser,
    base: &str,
    league: &TestLeague,
    how: &str,
    found: &mut Vec<String>,
) {
    phone.goto(&format!("{base}/")).await;
    phone
        .until(
            "the lobby's table list",
            "document.querySelector('[data-testid=\"table-row\"]') !== null",
        )
        .await;
    problems(phone, &format!("the lobby{how}"), found).await;
    // The less common settings unfolded too.
    phone
        .js("document.querySelectorAll('form.create details').forEach(d => d.open = true);")
        .await;
    problems(
        phone,
        &format!("the lobby, every setting shown{how}"),
        found,
    )
    .await;

    phone.goto(&format!("{base}/replays")).await;
    phone
        .until(
            "the finished games",
            "document.querySelector('[data-testid=\"replay-row\"]') !== null",
        )
        .await;
    problems(phone, &format!("the finished games{how}"), found).await;

    phone.goto(&format!("{base}/leagues")).await;
    phone
        .until(
            "the leagues",
            "document.querySelector('[data-testid=\"league-row\"]') !== null",
        )
        .await;
    problems(phone, &format!("the leagues{how}"), found).await;

    // A league's page, first as a visitor (the join form) and then as a member with a deck who
    // is also the organiser (the buy form, the ledger, the league-table form).
    let league_url = format!("{base}/leagues/{}", league.id);
    phone.goto(&league_url).await;
    phone
        .until(
            "the league's standings and join form",
            "document.querySelector('[data-testid=\"league-standings\"]') !== null && \
             document.querySelector('[data-testid=\"member-join\"]') !== null",
        )
        .await;
    problems(phone, &format!("a league's page to a visitor{how}"), found).await;
    let (member, name, token) = &league.members[3];
    phone
        .js(&format!(
            "localStorage.setItem('gm.league.{id}', JSON.stringify({{member: {member}, name: {name:?}, token: '{token}'}})); \
             localStorage.setItem('gm.organiser.{id}', JSON.stringify('{organiser}'));",
            id = league.id,
            organiser = league.organiser,
        ))
        .await;
    phone.goto(&league_url).await;
    phone
        .until(
            "the member's buy form, ledger and the organiser's form",
            "document.querySelector('[data-testid=\"buy-submit\"]') !== null && \
             document.querySelector('[data-testid=\"ledger-line\"]') !== null && \
             document.querySelector('[data-testid=\"league-table-create\"]') !== null",
        )
        .await;
    problems(phone, &format!("a league's page to a member{how}"), found).await;
}

/// The create form's settings, by testid.
const SETTINGS: [&str; 13] = [
    "create-name",
    "create-password",
    "create-seats",
    "create-rules",
    "create-spell-range",
    "create-combat-dice",
    "create-mulligan",
    "create-reduction",
    "create-starting-life",
    "create-turn-clock-secs",
    "create-absence-limit-secs",
    "create-mulligan-clock-secs",
    "create-max-spectators",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_create_form_is_in_plain_words_and_create_shows_without_scrolling() {
    let server = server().await;
    let base = format!("http://{}", server.addr);
    let driver = Driver::start().await;

    // A 1280×800 laptop: the Create button is on the first screen.
    let laptop = driver.browser(1280, 800).await;
    laptop.goto(&format!("{base}/")).await;
    laptop
        .until(
            "the create form",
            "document.querySelector('[data-testid=\"create-submit\"]') !== null && GM.link && GM.link.up",
        )
        .await;
    let place = laptop
        .js(
            "const r = document.querySelector('[data-testid=\"create-submit\"]').getBoundingClientRect(); \
             return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, width: innerWidth, height: innerHeight};",
        )
        .await;
    let (bottom, height) = (
        place["bottom"].as_f64().unwrap(),
        place["height"].as_f64().unwrap(),
    );
    assert!(
        place["top"].as_f64().unwrap() >= 0.0 && bottom <= height && bottom > 0.0,
        "the Create button is outside the first screen at 1280×800: {place}"
    );
    assert!(
        place["right"].as_f64().unwrap() <= place["width"].as_f64().unwrap(),
        "the Create button is cut off on the right: {place}"
    );
    laptop.assert_accessible("the lobby at 1280×800").await;
    laptop.assert_fits("the lobby at 1280×800").await;

    // On a phone: "New table" at the top leads to the form, and its Create button is then on
    // screen and uncovered together with the table's name (no scrolling to reach it).
    let phone = driver.phone().await;
    phone.goto(&format!("{base}/")).await;
    phone
        .until(
            "the lobby on a phone",
            "document.querySelector('[data-testid=\"new-table\"]') !== null && GM.link && GM.link.up",
        )
        .await;
    phone.click("new-table").await;
    let seen = phone
        .js("return ['create-name', 'create-submit'].map(id => { \
               const e = document.querySelector(`[data-testid=\"${id}\"]`); const r = e.getBoundingClientRect(); \
               const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2); \
               return { id, top: r.top, bottom: r.bottom, height: innerHeight, \
                 inside: r.top >= 0 && r.bottom <= innerHeight, uncovered: !!hit && (hit === e || e.contains(hit)) }; });")
        .await;
    for s in seen.as_array().unwrap() {
        assert!(
            s["inside"] == true && s["uncovered"] == true,
            "on a phone after New table: {s}"
        );
    }
    phone.close().await;

    // Every setting has a label tied to it and a one-line help in plain words under it.
    let settings = laptop
        .js(&format!(
            "return {SETTINGS:?}.map(id => {{ \
               const e = document.querySelector(`[data-testid=\"${{id}}\"]`); \
               if (!e) return {{id, missing: true}}; \
               const label = e.labels && e.labels.length ? e.labels[0].textContent.trim() : ''; \
               const help = (e.getAttribute('aria-describedby') || '').split(' ').filter(Boolean) \
                 .map(h => (document.getElementById(h) || {{}}).textContent || '').join(' ').trim(); \
               return {{id, label, help, value: e.type === 'checkbox' ? e.checked : e.value}}; }});"
        ))
        .await;
    let mut help = std::collections::BTreeMap::new();
    for s in settings.as_array().unwrap() {
        let id = s["id"].as_str().unwrap();
        assert!(s["missing"].is_null(), "no {id} in the create form");
        assert!(
            !s["label"].as_str().unwrap().is_empty(),
            "{id} has no label tied to it: {s}"
        );
        let text = s["help"].as_str().unwrap();
        assert!(
            text.len() >= 15,
            "{id} has no help text under it (aria-describedby): {s}"
        );
        help.insert(id.to_owned(), (text.to_lowercase(), s["value"].clone()));
    }
    assert_eq!(
        help["create-seats"].1,
        Value::from("16"),
        "the seats default to 16"
    );
    let (range_help, _) = &help["create-spell-range"];
    assert!(
        range_help.contains("seats away") && range_help.contains('2'),
        "the spell range is explained as how many seats away spells reach: {range_help}"
    );
    let (absence_help, _) = &help["create-absence-limit-secs"];
    assert!(
        absence_help.contains("away") && absence_help.contains("gone"),
        "the absence limit is explained: {absence_help}"
    );
    for (id, (text, _)) in &help {
        for jargon in ["eager", "forced", "cr 807", "807"] {
            if id != "create-rules" {
                assert!(
                    !text.contains(jargon),
                    "{id}'s help speaks jargon ({jargon}): {text}"
                );
            }
        }
    }
    let words = laptop
        .js(
            "return Array.from(document.querySelectorAll('form.create select option')).map(o => o.textContent);",
        )
        .await;
    for w in words.as_array().unwrap() {
        let w = w.as_str().unwrap();
        assert!(
            !w.starts_with("eager:") && !w.starts_with("forced:"),
            "an option in jargon: {w}"
        );
    }
    // Magic Tech: two seats, and Grand Melee's own settings out of sight.
    let shown = "return ['create-seats', 'create-rules', 'create-spell-range', 'create-combat-dice', \
                 'create-starting-life', 'create-reduction', 'create-name'].map(id => { \
                 const e = document.querySelector(`[data-testid=\"${id}\"]`); \
                 return [id, e.closest('.field').getClientRects().length > 0, e.value]; });";
    let before = laptop.js(shown).await;
    assert!(
        before
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f[1] == Value::Bool(true)),
        "Grand Melee's settings are shown for Grand Melee: {before}"
    );
    laptop
        .js("const g = document.querySelector('[data-testid=\"create-game\"]'); g.value = 'magic_tech'; \
             g.dispatchEvent(new Event('change', {bubbles: true})); return 1;")
        .await;
    let after = laptop.js(shown).await;
    for f in after.as_array().unwrap() {
        let visible = f[0] == "create-name";
        assert_eq!(f[1], Value::Bool(visible), "with Magic Tech: {after}");
    }
    assert_eq!(
        after[0][2],
        Value::from("2"),
        "Magic Tech seats two: {after}"
    );
    laptop.close().await;

    // A 390-px phone: every choice of every select fits in it (its text is not cut off).
    let phone = driver.phone().await;
    phone.goto(&format!("{base}/")).await;
    phone
        .until(
            "the create form",
            "document.querySelector('[data-testid=\"create-submit\"]') !== null",
        )
        .await;
    phone
        .js("document.querySelectorAll('form.create details').forEach(d => d.open = true);")
        .await;
    // Each game's own settings in turn (a hidden select has no room to measure).
    let cut = phone
        .js(
            "const c = document.createElement('canvas').getContext('2d'); \
             const cut = []; \
             const g = document.querySelector('[data-testid=\"create-game\"]'); \
             const day = document.querySelector('[data-testid=\"create-mm-day\"]'); \
             for (const [game, mountain] of [['grand_melee', ''], ['magic_tech', ''], ['mountain_magic', ''], ['mountain_magic', 'today']]) { \
             g.value = game; g.dispatchEvent(new Event('change', {bubbles: true})); \
             day.value = mountain; day.dispatchEvent(new Event('change', {bubbles: true})); \
             for (const s of document.querySelectorAll('form.create select')) { \
               if (!s.getClientRects().length) continue; \
               const st = getComputedStyle(s); c.font = `${st.fontWeight} ${st.fontSize} ${st.fontFamily}`; \
               const room = s.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight) - 20; \
               for (const o of s.options) { const w = c.measureText(o.textContent).width; \
                 if (w > room) cut.push({game, select: s.dataset.testid, option: o.textContent, text: Math.round(w), room: Math.round(room)}); } } } \
             return cut;",
        )
        .await;
    assert_eq!(cut, Value::Array(Vec::new()), "choices cut off at 390 px");
    phone.assert_fits("the lobby on a 390-px phone").await;
    phone.close().await;
}

/// The table page in its lobby stage, in play and at game over (a seat on a 360-px phone), the
/// display, and the replay viewer of the game (the table page's code too).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_table_pages_pass_axe_and_fit_in_360_px() {
    let server = server().await;
    let base = format!("http://{}", server.addr);
    let mut bots = Vec::new();
    let mut organiser = server.client().await;
    let table = organiser.create_table("Eight at the table", 8, 5).await;
    for i in 0..7 {
        let mut bot = server.client().await;
        bot.join(table, &format!("Player {i} with a long name"))
            .await
            .unwrap();
        bots.push(bot);
    }
    let driver = Driver::start().await;
    let phone = driver.phone_sized(360, 780).await;
    let mut found = Vec::new();

    phone.goto(&format!("{base}/t/{table}")).await;
    phone
        .until(
            "the join form",
            "document.querySelector('[data-testid=\"join-name\"]') !== null && GM.link && GM.link.up",
        )
        .await;
    problems(&phone, "the table page to a visitor", &mut found).await;
    phone.fill("join-name", "Browser").await;
    phone.click("join-submit").await;
    phone
        .until("seated", "gm.role() === 'player' && gm.me() !== null")
        .await;
    problems(&phone, "the table page in its lobby stage", &mut found).await;

    let display = driver.browser(1920, 1080).await;
    display.goto(&format!("{base}/t/{table}?display")).await;
    display
        .until(
            "the display",
            "gm.view() !== null && gm.view().stage === 'lobby'",
        )
        .await;
    problems(&display, "the display in the lobby stage", &mut found).await;
    let narrow_display = driver.phone_with(360, 780, Scheme::Dark).await;
    narrow_display
        .goto(&format!("{base}/t/{table}?display"))
        .await;
    narrow_display
        .until("the display", "gm.view() !== null")
        .await;
    problems(&narrow_display, "the display at 360 px, dark", &mut found).await;

    let me = phone.me().await.unwrap();
    let started = bots[0]
        .call(|id| ClientMessage::Start {
            id,
            first_player: None,
            seating: grand_melee_protocol::SeatingMode::Random,
            order: Vec::new(),
        })
        .await;
    assert!(started.is_ok(), "{started:?}");
    loop {
        let seq = bots[0].fresh_snapshot().await.seq;
        bots[0].catch_up(seq).await;
        let Some(decider) = bots[0].view.clone().unwrap().mulligan_decider else {
            break;
        };
        if u64::from(decider) == me {
            phone.catch_up(seq).await;
            phone.click("keep").await;
            phone.until("kept", &format!("gm.view().seq > {seq}")).await;
        } else {
            let bot = bots
                .iter_mut()
                .find(|b| b.seat.map(|s| s.0) == Some(decider))
                .unwrap();
            let kept = bot.call(|id| ClientMessage::Keep { id }).await;
            assert!(kept.is_ok(), "{kept:?}");
        }
    }
    let seq = bots[0].fresh_snapshot().await.seq;
    phone.catch_up(seq).await;
    phone
        .until("in play", "gm.view().stage === 'playing'")
        .await;
    problems(&phone, "the table page in play", &mut found).await;
    display.catch_up(seq).await;
    problems(&display, "the display in play", &mut found).await;

    // Every bot concedes: the browser wins.
    let mut order = Vec::new();
    for bot in &bots {
        order.push(bot.seat.unwrap().0);
    }
    for player in order {
        let bot = bots
            .iter_mut()
            .find(|b| b.seat.map(|s| s.0) == Some(player))
            .unwrap();
        let conceded = bot.call(|id| ClientMessage::Concede { id }).await;
        assert!(conceded.is_ok(), "{conceded:?}");
    }
    phone
        .until("the game over", "gm.view().stage === 'finished'")
        .await;
    problems(&phone, "the table page at game over", &mut found).await;
    display
        .until("the game over", "gm.view().stage === 'finished'")
        .await;
    problems(&display, "the display at game over", &mut found).await;
    narrow_display
        .until("the game over", "gm.view().stage === 'finished'")
        .await;
    problems(
        &narrow_display,
        "the display at 360 px at game over, dark",
        &mut found,
    )
    .await;

    // The replay viewer (the table page's code) of this game.
    phone.goto(&format!("{base}/replays/{table}")).await;
    phone
        .until(
            "the replay viewer",
            "((document.querySelector('[data-testid=\"replay-step\"]') || {}).textContent || '') !== ''",
        )
        .await;
    problems(&phone, "the replay viewer", &mut found).await;
    verdict(&found);
}

/// What the display's invitation says once the page has asked the server where others reach
/// it: the link (its "Join at"), the QR code's text, and the warning if there is one.
async fn invitation(display: &Browser, url: &str) -> (String, String, Option<String>) {
    display.goto(url).await;
    display
        .until(
            "the invitation, once the server said where others reach it",
            "(q => q && q.complete && q.naturalWidth > 0)(document.querySelector('[data-testid=\"qr\"]')) \
             && performance.getEntriesByName(location.origin + '/invite.json').length > 0 \
             && document.querySelector('[data-testid=\"join-at\"]') !== null",
        )
        .await;
    // The answer is rendered in the frame after it arrived.
    display
        .eval_async("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        .await;
    let found = display
        .js("const q = document.querySelector('[data-testid=\"qr\"]'); \
             const w = document.querySelector('[data-testid=\"link-warning\"]'); \
             return { link: document.querySelector('[data-testid=\"join-at\"]').textContent, \
               qr: new URL(q.src).searchParams.get('text'), warning: w ? w.textContent : null };")
        .await;
    (
        found["link"].as_str().unwrap().to_owned(),
        found["qr"].as_str().unwrap().to_owned(),
        found["warning"].as_str().map(str::to_owned),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_invitation_names_an_address_others_reach_or_warns() {
    let driver = Driver::start().await;
    let display = driver.browser(1280, 800).await;
    let web = || {
        Some(std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../server/web"
        )))
    };

    // The server on loopback only (the default), the page opened as `localhost`: its link works
    // on this machine only, and the page and the display say so and how to fix it.
    let alone = server().await;
    let table = alone.client().await.create_table("Here", 8, 1).await;
    let port = alone.addr.port();
    let (link, qr, warning) = invitation(
        &display,
        &format!("http://localhost:{port}/t/{table}?display"),
    )
    .await;
    assert_eq!(link, format!("http://localhost:{port}/t/{table}"));
    assert_eq!(qr, link);
    let warning = warning.expect("a warning that the link works on this computer only");
    assert!(
        warning.contains("this computer only")
            && warning.contains(&format!("--listen 0.0.0.0:{port}")),
        "{warning}"
    );
    // The table page's own invitation says the same.
    display
        .goto(&format!("http://127.0.0.1:{port}/t/{table}"))
        .await;
    display
        .until(
            "the invite button",
            "document.querySelector('[data-testid=\"share-button\"]') !== null",
        )
        .await;
    display.click("share-button").await;
    display
        .until(
            "the invitation's warning on the table page",
            "(w => w && w.textContent.includes('this computer only'))(document.querySelector('[data-testid=\"link-warning\"]'))",
        )
        .await;
    alone.shutdown().await;

    // With --public-url: that address, whatever the page was opened as, and no warning.
    let public = TestServer::start_with(ServerConfig {
        web_dir: web(),
        public_url: Some("http://melee.example:8080".to_owned()),
        ..ServerConfig::default()
    })
    .await;
    let table = public.client().await.create_table("Public", 8, 1).await;
    let (link, qr, warning) = invitation(
        &display,
        &format!("http://127.0.0.1:{}/t/{table}?display", public.addr.port()),
    )
    .await;
    assert_eq!(link, format!("http://melee.example:8080/t/{table}"));
    assert_eq!(qr, link);
    assert_eq!(warning, None);
    public.shutdown().await;

    // On every interface, the page opened on loopback: this machine's address on its network
    // (the page is still read over loopback: nothing leaves the machine).
    let everywhere = TestServer::start_on(
        ServerConfig {
            web_dir: web(),
            ..ServerConfig::default()
        },
        "0.0.0.0:0".parse().unwrap(),
    )
    .await;
    let port = everywhere.addr.port();
    let table = Client::connected(std::net::SocketAddr::from(([127, 0, 0, 1], port)))
        .await
        .create_table("LAN", 8, 1)
        .await;
    let (link, qr, warning) = invitation(
        &display,
        &format!("http://127.0.0.1:{port}/t/{table}?display"),
    )
    .await;
    assert_eq!(qr, link);
    assert_eq!(warning, None, "{link}");
    let url = url::Url::parse(&link).unwrap();
    let host: std::net::IpAddr = url
        .host_str()
        .unwrap()
        .trim_matches(|c| c == '[' || c == ']')
        .parse()
        .unwrap_or_else(|e| panic!("{link}: {e}"));
    assert!(!host.is_loopback() && !host.is_unspecified(), "{link}");
    assert_eq!(url.port(), Some(port), "{link}");
    assert_eq!(url.path(), format!("/t/{table}"));
    // One of this machine's own addresses, as the system lists them.
    let mine: Vec<std::net::IpAddr> = if_addrs::get_if_addrs()
        .unwrap()
        .iter()
        .map(|i| i.ip())
        .collect();
    assert!(
        mine.contains(&host),
        "{host} is not among this machine's addresses: {mine:?}"
    );
    everywhere.shutdown().await;
    display.close().await;
}

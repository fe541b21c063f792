//! Cameras between the players within range (issue 32) in real headless Chromium with fake
//! media devices, over loopback: at a six-seat table with spell range 1 every page receives live
//! video (connection `connected`, frames decoded) exactly from its two neighbours and from
//! nobody else; an elimination stops the eliminated player's camera (until she chooses to stay
//! on for her sphere) and, once her position is removed, links the two players it separated; a
//! camera turned off closes its links; the host's display shows the streaming cameras of the
//! sphere she picks. The ICE
//! candidates the pages exchange carry IP addresses (Chromium's mDNS names switched off). The
//! cameras are photographed on a phone (390×844) and a laptop (1280×800).
#![allow(clippy::unwrap_used, clippy::print_stderr)]

#[path = "browser/harness.rs"]
mod harness;

use std::net::IpAddr;

use grand_melee_e2e::{CreateTable, TestServer};
use harness::{Browser, Driver, PATIENCE, screenshot_dir};
use serde_json::Value;

/// Chromium's switches for the camera tests: a fake camera and microphone that need no
/// permission prompt, host candidates with their IP address (not an mDNS `.local` name, which
/// Chromium gives a page without camera permission — the display — by default; the Chromium
/// these tests were written with gave addresses even without the switch, and
/// `candidates_carry_addresses` checks it either way), and links over loopback.
const MEDIA: [&str; 4] = [
    "--use-fake-device-for-media-stream",
    "--use-fake-ui-for-media-stream",
    "--disable-features=WebRtcHideLocalIpsWithMdns",
    "--allow-loopback-in-peer-connection",
];

const NAMES: [&str; 6] = ["Ann", "Bob", "Cid", "Dee", "Eve", "Fay"];

/// The peer keys of player `p`'s neighbours at a ring of `n` with range 1, sorted.
fn neighbours(p: usize, n: usize) -> Vec<String> {
    let mut out = vec![format!("p{}", (p + 1) % n), format!("p{}", (p + n - 1) % n)];
    out.sort();
    out
}

/// Waits until the page's camera links are exactly `expected` (peer keys, sorted), each
/// `connected` with video frames decoded, and its own camera runs (`local`) or not. Polled in
/// the page (`gm.cameras()`), as the harness's `until` does; fails with the last report.
async fn until_links(browser: &Browser, who: &str, expected: &[String], local: bool) {
    let want = serde_json::to_string(expected).unwrap();
    let poll = format!(
        "new Promise((done) => {{ const start = Date.now(); \
           const ok = (r) => !!r && r.local === {local} && \
             JSON.stringify(r.links.map((l) => l.peer).sort()) === '{want}' && \
             r.links.every((l) => l.state === 'connected' && l.frames > 0); \
           const tick = () => gm.cameras().then((r) => {{ \
             if (ok(r) || Date.now() - start > 2000) done({{ok: ok(r), report: r}}); else setTimeout(tick, 50); }}); \
           tick(); }})"
    );
    let deadline = tokio::time::Instant::now() + PATIENCE;
    let mut last = Value::Null;
    while tokio::time::Instant::now() < deadline {
        let answer = browser.eval_async(&poll).await;
        if answer["ok"] == Value::Bool(true) {
            return;
        }
        last = answer;
    }
    panic!(
        "{who}: waiting for live video from exactly {want} (own camera running: {local}); last report: {last}"
    );
}

/// Fails unless the page sent ICE candidates and each names an IP address (not an mDNS
/// `.local` name, which Chromium uses by default where the page has no camera of its own).
async fn candidates_carry_addresses(browser: &Browser, who: &str) {
    let report = browser.eval_async("gm.cameras()").await;
    let candidates: Vec<String> = serde_json::from_value(report["candidates"].clone()).unwrap();
    assert!(!candidates.is_empty(), "{who}: {report}");
    for c in &candidates {
        let address = c.split_whitespace().nth(4).unwrap_or("");
        assert!(
            address.parse::<IpAddr>().is_ok(),
            "{who}: a candidate names an IP address, not {address:?}: {c}"
        );
    }
}

/// Waits until `browser`'s mirror has reached the newest event `host` has seen.
async fn settle(host: &Browser, browsers: &[Browser]) {
    let seq = host.seq().await;
    for b in browsers {
        b.catch_up(seq).await;
    }
}

/// Sends `request` (JSON) from the page and returns its answer.
async fn send(browser: &Browser, request: &str) -> Value {
    browser.eval_async(&format!("gm.send({request})")).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_page_sees_exactly_the_cameras_in_its_range_as_the_ring_changes() {
    let server = TestServer::start().await;
    let base = format!("http://{}", server.addr);
    let mut organiser = server.client().await;
    let table = organiser
        .create(CreateTable::new("Cameras night", 6).spell_range(1))
        .await
        .unwrap();
    let url = format!("{base}/t/{table}");
    let driver = Driver::start().await;

    // Six seats: a phone (seat 1) and five laptops, each sitting down from the table's page and
    // turning its camera on (small video: two cores run six browsers).
    let mut browsers = Vec::new();
    for (i, name) in NAMES.iter().enumerate() {
        let browser = if i == 1 {
            driver.phone_with_args(&MEDIA).await
        } else {
            driver.browser_with_args(1280, 800, &MEDIA).await
        };
        browser.goto(&url).await;
        browser.fill("join-name", name).await;
        browser.click("join-submit").await;
        browser
            .until("seated", "gm.role() === 'player' && gm.me() !== null")
            .await;
        assert_eq!(browser.me().await, Some(i as u64), "{name} is player {i}");
        browser
            .js("localStorage.setItem('gm.camera.video', JSON.stringify({width: 160, height: 120, frameRate: 10})); return true;")
            .await;
        browser
            .until(
                "the camera switch, off by default",
                "document.querySelector('[data-testid=\"camera-toggle\"]').getAttribute('aria-pressed') === 'false'",
            )
            .await;
        browser.click("camera-toggle").await;
        browser
            .until(
                "the camera running, nobody linked in the lobby",
                "document.querySelector('[data-testid=\"camera-toggle\"]').getAttribute('aria-pressed') === 'true' && \
                 document.querySelector('[data-testid=\"camera-tile\"][data-peer=\"me\"] video') !== null && \
                 document.querySelector('[data-testid=\"camera-who\"]').textContent.includes('once the game starts')",
            )
            .await;
        browsers.push(browser);
    }

    // The host (Ann) starts with the seats in join order, and everyone keeps: the ring is 0..5.
    let started = send(
        &browsers[0],
        r#"{type: "start", first_player: 0, seating: "arranged", order: [0, 1, 2, 3, 4, 5]}"#,
    )
    .await;
    assert_eq!(started["type"], "ack", "{started}");
    for _ in 0..20 {
        settle(&browsers[0], &browsers).await;
        let view = browsers[0].view().await;
        let Some(decider) = view["mulligan_deciders"]
            .as_array()
            .and_then(|d| d.first())
            .and_then(Value::as_u64)
        else {
            break;
        };
        let kept = send(&browsers[decider as usize], r#"{type: "keep"}"#).await;
        assert_eq!(kept["type"], "ack", "{kept}");
    }
    settle(&browsers[0], &browsers).await;
    assert_eq!(browsers[0].view().await["stage"], "playing");

    // Every page gets live video from its two neighbours, and no link to anybody else.
    for (i, b) in browsers.iter().enumerate() {
        until_links(b, NAMES[i], &neighbours(i, 6), true).await;
    }
    // The candidates the pages sent carry IP addresses, not mDNS names.
    candidates_carry_addresses(&browsers[0], NAMES[0]).await;
    // Who can see you, in words; a tap enlarges a camera.
    let who = browsers[2]
        .js("return document.querySelector('[data-testid=\"camera-who\"]').textContent;")
        .await;
    assert!(
        who.as_str().unwrap().contains("Bob") && who.as_str().unwrap().contains("Dee"),
        "{who}"
    );
    // Every tile plays its video (the page's own and its neighbours').
    for (i, b) in browsers.iter().enumerate().take(2) {
        b.until(
            &format!("{}'s three tiles playing", NAMES[i]),
            "(() => { const v = Array.from(document.querySelectorAll('[data-testid=\"camera-tile\"] video')); \
               return v.length === 3 && v.every((e) => e.videoWidth > 0 && !e.paused); })()",
        )
        .await;
    }
    let dir = screenshot_dir();
    browsers[1]
        .screenshot(&dir.join("cameras-phone-390x844.png"))
        .await;
    browsers[0]
        .screenshot(&dir.join("cameras-laptop-1280x800.png"))
        .await;
    browsers[1]
        .assert_accessible("the phone's table page with the cameras on")
        .await;
    browsers[0]
        .assert_accessible("the laptop's table page with the cameras on")
        .await;
    // The phone's strip folds away and comes back.
    browsers[1].click("camera-collapse").await;
    browsers[1]
        .until(
            "the strip folded",
            "document.querySelector('[data-testid=\"camera-tiles\"]').hidden && \
             document.querySelector('[data-testid=\"camera-collapse\"]').getAttribute('aria-expanded') === 'false'",
        )
        .await;
    browsers[1].click("camera-collapse").await;
    browsers[1]
        .until(
            "the strip shown again",
            "!document.querySelector('[data-testid=\"camera-tiles\"]').hidden",
        )
        .await;
    browsers[0]
        .js("document.querySelector('[data-testid=\"camera-tile\"][data-peer=\"p1\"]').click(); return true;")
        .await;
    browsers[0]
        .until(
            "Bob's camera enlarged, its Close button focused",
            "document.querySelector('[data-testid=\"camera-big\"] video').videoWidth > 0 && \
             document.activeElement === document.querySelector('[data-testid=\"camera-big-close\"]')",
        )
        .await;
    browsers[0]
        .screenshot(&dir.join("cameras-laptop-enlarged.png"))
        .await;
    browsers[0].click("camera-big-close").await;
    browsers[0]
        .until(
            "the enlarged camera closed",
            "document.querySelector('[data-testid=\"camera-big\"]') === null",
        )
        .await;

    // Dee (3) is eliminated: her camera stops and her links go; Cid (2) and Eve (4) are still
    // two positions apart.
    let ruled = send(
        &browsers[0],
        r#"{type: "ruling", ruling: {kind: "eliminate", players: [3]}}"#,
    )
    .await;
    assert_eq!(ruled["type"], "ack", "{ruled}");
    until_links(&browsers[3], NAMES[3], &[], false).await;
    until_links(&browsers[2], NAMES[2], &["p1".to_owned()], true).await;
    until_links(&browsers[4], NAMES[4], &["p5".to_owned()], true).await;
    browsers[3]
        .until(
            "Dee told her camera stopped",
            "document.querySelector('[data-testid=\"camera-who\"]').textContent.includes('your camera stopped') && \
             document.querySelector('[data-testid=\"camera-stay\"]') !== null",
        )
        .await;
    browsers[3]
        .screenshot(&dir.join("cameras-out-laptop-1280x800.png"))
        .await;
    // She chooses to stay on for her sphere while her position is in the ring: her camera
    // starts again and her neighbours see her.
    browsers[3].click("camera-stay").await;
    until_links(&browsers[3], NAMES[3], &neighbours(3, 6), true).await;
    until_links(&browsers[2], NAMES[2], &neighbours(2, 6), true).await;
    until_links(&browsers[4], NAMES[4], &neighbours(4, 6), true).await;

    // Turns end until her position is removed: her camera stops for good, and Cid and Eve come
    // into range and see each other.
    for _ in 0..100 {
        settle(&browsers[0], &browsers).await;
        let view = browsers[0].view().await;
        if !view["ring"].as_array().unwrap().contains(&Value::from(3)) {
            break;
        }
        let holder = view["turns"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["state"] == "running")
            .and_then(|t| t["player"].as_u64())
            .expect("a running turn");
        let ended = send(&browsers[holder as usize], r#"{type: "end_turn"}"#).await;
        assert_eq!(ended["type"], "ack", "{ended}");
    }
    assert!(
        !browsers[0].view().await["ring"]
            .as_array()
            .unwrap()
            .contains(&Value::from(3)),
        "Dee's position was removed"
    );
    until_links(
        &browsers[2],
        NAMES[2],
        &["p1".to_owned(), "p4".to_owned()],
        true,
    )
    .await;
    until_links(
        &browsers[4],
        NAMES[4],
        &["p2".to_owned(), "p5".to_owned()],
        true,
    )
    .await;
    until_links(&browsers[3], NAMES[3], &[], false).await;

    // Bob turns his camera off: his links close on both sides, and Ann and Cid keep the others.
    browsers[1].click("camera-toggle").await;
    until_links(&browsers[1], NAMES[1], &[], false).await;
    until_links(&browsers[0], NAMES[0], &["p5".to_owned()], true).await;
    until_links(&browsers[2], NAMES[2], &["p4".to_owned()], true).await;
    browsers[1]
        .until(
            "Bob told nobody sees him",
            "document.querySelector('[data-testid=\"camera-who\"]').textContent.includes('nobody sees you') && \
             localStorage.getItem('gm.camera').includes('\"on\":false')",
        )
        .await;

    // Eve reloads her page: her seat, her camera (remembered on the device) and her links come
    // back by themselves.
    browsers[4].goto(&url).await;
    browsers[4]
        .until("seated again", "gm.role() === 'player' && gm.me() === 4")
        .await;
    until_links(
        &browsers[4],
        NAMES[4],
        &["p2".to_owned(), "p5".to_owned()],
        true,
    )
    .await;
    until_links(&browsers[2], NAMES[2], &["p4".to_owned()], true).await;
    until_links(&browsers[5], NAMES[5], &neighbours(5, 6), true).await;

    // The host's display, opened on the host's laptop (her seat token is there), shows the
    // sphere she picks: Cid's, where Cid and Eve chose to be on the stream (Ann too, but she
    // is out of Cid's range).
    for i in [0, 2, 4] {
        browsers[i].click("camera-choices").await;
        browsers[i].click("camera-stream").await;
        browsers[i]
            .until(
                "on the stream",
                "localStorage.getItem('gm.camera').includes('\"stream\":true')",
            )
            .await;
    }
    let display = &browsers[0];
    let window = display.client.new_window(false).await.unwrap();
    display
        .client
        .switch_to_window(window.handle)
        .await
        .unwrap();
    display.goto(&format!("{url}?display")).await;
    display
        .until(
            "the display's sphere picker",
            "gm.role() === 'spectator' && document.querySelector('[data-testid=\"camera-center\"]') !== null",
        )
        .await;
    display
        .js(
            "const s = document.querySelector('[data-testid=\"camera-center\"]'); s.value = '2'; \
             s.dispatchEvent(new Event('change', {bubbles: true})); return s.value;",
        )
        .await;
    until_links(
        display,
        "the display",
        &["p2".to_owned(), "p4".to_owned()],
        false,
    )
    .await;
    candidates_carry_addresses(display, "the display").await;
    display
        .until(
            "the display's two tiles playing",
            "(() => { const v = Array.from(document.querySelectorAll('[data-testid=\"camera-tile\"] video')); \
               return v.length === 2 && v.every((e) => e.videoWidth > 0); })()",
        )
        .await;
    display
        .screenshot(&dir.join("cameras-display-1280x800.png"))
        .await;
    display
        .assert_accessible("the display with the cameras of a sphere")
        .await;
    for b in browsers {
        b.close().await;
    }
}

//! Headless Chromium driven over WebDriver (chromedriver + fantoccini) against the real server.
//!
//! The browser is installed when missing (Debian's `chromium` and `chromium-driver`, as root or
//! with password-less sudo); otherwise the tests fail with the exact command to run. They never
//! skip.

#![allow(clippy::unwrap_used, clippy::print_stderr)]
// Shared by several test files, each using a part.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

/// How long a browser step may take before the test fails. A bound on a failure: every wait
/// ends as soon as its condition holds.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// The Chromium and ChromeDriver binaries (`GM_CHROMIUM` / `GM_CHROMEDRIVER`, or Debian's).
fn binaries() -> (PathBuf, PathBuf) {
    let pick = |var: &str, default: &str| {
        std::env::var_os(var).map_or_else(|| PathBuf::from(default), PathBuf::from)
    };
    (
        pick("GM_CHROMIUM", "/usr/bin/chromium"),
        pick("GM_CHROMEDRIVER", "/usr/bin/chromedriver"),
    )
}

const INSTALL: &str = "apt-get install -y chromium chromium-driver";

/// Makes sure Chromium and ChromeDriver are there, installing them with apt when they are not.
/// Panics with the command to run if they cannot be installed.
pub fn ensure_browser() -> (PathBuf, PathBuf) {
    static READY: OnceLock<Result<(PathBuf, PathBuf), String>> = OnceLock::new();
    static LOCK: Mutex<()> = Mutex::new(());
    let _one_at_a_time = LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    READY
        .get_or_init(|| {
            let (chromium, driver) = binaries();
            if chromium.exists() && driver.exists() {
                return Ok((chromium, driver));
            }
            install()
                .map(|()| (chromium.clone(), driver.clone()))
                .and_then(|found| {
                    if found.0.exists() && found.1.exists() {
                        Ok(found)
                    } else {
                        Err(format!(
                            "{} or {} is still missing after installing",
                            found.0.display(),
                            found.1.display()
                        ))
                    }
                })
        })
        .clone()
        .unwrap_or_else(|why| {
            panic!(
                "the browser tests need headless Chromium and ChromeDriver and could not install \
                 them ({why}). Install them with `sudo {INSTALL}` (Debian/Ubuntu), or point \
                 GM_CHROMIUM and GM_CHROMEDRIVER at a Chromium and its matching ChromeDriver"
            )
        })
}

/// `apt-get install` as root, or through password-less sudo; serialised across test processes
/// with a lock file.
fn install() -> Result<(), String> {
    let lock_path = std::env::temp_dir().join("grand-melee-browser-install.lock");
    let lock = std::fs::File::create(&lock_path).map_err(|e| e.to_string())?;
    lock.lock().map_err(|e| e.to_string())?;
    let (chromium, driver) = binaries();
    if chromium.exists() && driver.exists() {
        return Ok(());
    }
    eprintln!("installing Chromium for the browser tests: {INSTALL}");
    grand_melee_e2e::apt_install(&["chromium", "chromium-driver"])
}

/// The axe-core release the accessibility checks use: npm's `axe-core`, pinned.
pub const AXE_VERSION: &str = "4.14.1";

/// Where axe-core is installed for the tests: a cache under the workspace's `target/tmp`.
fn axe_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("axe-core-{AXE_VERSION}"))
}

/// The command that installs axe-core by hand.
fn axe_command() -> String {
    format!(
        "npm install --prefix {} axe-core@{AXE_VERSION}",
        axe_dir().display()
    )
}

/// Makes sure axe-core is installed (with npm, into `target/tmp/axe-core-<version>`; Node.js and
/// npm with apt when npm is missing) and returns the text of its `axe.min.js`. Panics with the
/// commands to run if it cannot be installed.
pub fn ensure_axe() -> &'static str {
    static SOURCE: OnceLock<Result<String, String>> = OnceLock::new();
    SOURCE
        .get_or_init(|| {
            let file = axe_dir().join("node_modules/axe-core/axe.min.js");
            if !file.exists() {
                install_axe()?;
            }
            std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))
        })
        .as_deref()
        .unwrap_or_else(|why| {
            panic!(
                "the accessibility checks need npm's axe-core {AXE_VERSION} and could not \
                 install it ({why}). Install it with `{}` (and Node.js and npm first with `sudo \
                 apt-get install -y nodejs npm` if npm is missing)",
                axe_command()
            )
        })
}

/// `npm install` of axe-core into a fresh directory renamed into place when complete, so an
/// interrupted install is never taken for one; serialised across test processes with a lock file.
fn install_axe() -> Result<(), String> {
    let dir = axe_dir();
    let parent = dir.parent().unwrap().to_owned();
    std::fs::create_dir_all(&parent).map_err(|e| e.to_string())?;
    let lock = std::fs::File::create(parent.join(format!("axe-core-{AXE_VERSION}.lock")))
        .map_err(|e| e.to_string())?;
    lock.lock().map_err(|e| e.to_string())?;
    if dir.join("node_modules/axe-core/axe.min.js").exists() {
        return Ok(());
    }
    let npm_works = || {
        std::process::Command::new("npm")
            .arg("--version")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !npm_works() {
        eprintln!(
            "installing Node.js and npm for the accessibility checks: apt-get install -y nodejs npm"
        );
        grand_melee_e2e::apt_install(&["nodejs", "npm"])?;
        if !npm_works() {
            return Err("npm is still missing after installing nodejs and npm".into());
        }
    }
    let partial = parent.join(format!("axe-core-{AXE_VERSION}.partial"));
    if partial.exists() {
        std::fs::remove_dir_all(&partial).map_err(|e| format!("{}: {e}", partial.display()))?;
    }
    eprintln!(
        "installing axe-core for the accessibility checks: {}",
        axe_command()
    );
    let status = std::process::Command::new("npm")
        .arg("install")
        .arg("--prefix")
        .arg(&partial)
        .args([
            "--no-save",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            &format!("axe-core@{AXE_VERSION}"),
        ])
        .status()
        .map_err(|e| format!("npm install: {e}"))?;
    if !status.success() {
        return Err(format!(
            "npm install axe-core@{AXE_VERSION} failed ({status})"
        ));
    }
    std::fs::rename(&partial, &dir).map_err(|e| format!("{}: {e}", dir.display()))
}

/// The colour scheme a browser's owner prefers (`prefers-color-scheme`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Light,
    Dark,
}

/// A ChromeDriver process (and every browser it starts), stopped when dropped.
#[derive(Debug)]
pub struct Driver {
    child: tokio::process::Child,
    url: String,
    /// Whether its browsers accept any certificate (the default: the tests' servers over TLS
    /// have self-made ones), or only those their roots vouch for.
    accept_insecure_certs: bool,
}

impl Driver {
    /// Starts ChromeDriver on a free port and waits until it says it is ready.
    pub async fn start() -> Self {
        Self::start_in(None).await
    }

    /// A ChromeDriver whose browsers check certificates as a person's would: they trust the
    /// system's roots and those in the NSS database under `home` (`home/.pki/nssdb`, where
    /// Chromium on Linux keeps the roots its user added), and accept nothing else.
    pub async fn start_trusting(home: &std::path::Path) -> Self {
        Self::start_in(Some(home)).await
    }

    async fn start_in(home: Option<&std::path::Path>) -> Self {
        let (_, driver) = ensure_browser();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut command = tokio::process::Command::new(driver);
        if let Some(home) = home {
            command.env("HOME", home);
        }
        let mut child = command
            .arg(format!("--port={port}"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            // Its own process group: dropping the driver stops the browsers it started too.
            .process_group(0)
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        tokio::time::timeout(PATIENCE, async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if line.contains("started successfully") {
                    return;
                }
            }
            panic!("chromedriver exited before it was ready");
        })
        .await
        .expect("chromedriver started in time");
        // Keep draining its output so it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
            accept_insecure_certs: home.is_none(),
        }
    }

    /// A new browser (its own profile: its own localStorage) with a window of `width`×`height`.
    pub async fn browser(&self, width: u32, height: u32) -> Browser {
        self.session(width, height, None, Scheme::Light, &[]).await
    }

    /// A new browser of `width`×`height` started with more Chromium switches (`extra`, e.g. the
    /// fake camera of the camera tests).
    pub async fn browser_with_args(&self, width: u32, height: u32, extra: &[&str]) -> Browser {
        self.session(width, height, None, Scheme::Light, extra)
            .await
    }

    /// A phone (390×844, as `phone`) started with more Chromium switches (`extra`).
    pub async fn phone_with_args(&self, extra: &[&str]) -> Browser {
        self.session(
            390,
            844,
            Some(phone_emulation(390, 844)),
            Scheme::Light,
            extra,
        )
        .await
    }

    /// A phone: a 390×844 touch screen (pixel ratio 3) with a mobile user agent.
    pub async fn phone(&self) -> Browser {
        self.phone_sized(390, 844).await
    }

    /// A phone with a screen of `width`×`height` CSS pixels (360 wide: the narrowest common one).
    pub async fn phone_sized(&self, width: u32, height: u32) -> Browser {
        self.phone_with(width, height, Scheme::Light).await
    }

    /// A phone with a screen of `width`×`height` CSS pixels whose owner prefers `scheme`.
    pub async fn phone_with(&self, width: u32, height: u32, scheme: Scheme) -> Browser {
        self.session(
            width,
            height,
            Some(phone_emulation(width, height)),
            scheme,
            &[],
        )
        .await
    }

    /// A Chromium session; `mobile` is chromedriver's `mobileEmulation` when emulating a phone.
    async fn session(
        &self,
        width: u32,
        height: u32,
        mobile: Option<Value>,
        scheme: Scheme,
        extra: &[&str],
    ) -> Browser {
        let (chromium, _) = ensure_browser();
        let mut capabilities = json!({
            "browserName": "chrome",
            "acceptInsecureCerts": self.accept_insecure_certs,
            // A script killed by a navigation is reported after 5 s (not the default 30 s), and
            // `until` tries again.
            "timeouts": {"script": 5000},
            "goog:chromeOptions": {
                "binary": chromium,
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu",
                    "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update",
                    "--disable-sync", "--mute-audio", "--hide-scrollbars",
                    "--disable-crash-reporter", "--disable-breakpad",
                    format!("--window-size={width},{height}"),
                ],
            },
        });
        let args = capabilities["goog:chromeOptions"]["args"]
            .as_array_mut()
            .unwrap();
        if scheme == Scheme::Dark {
            args.push("--force-dark-mode".into());
        }
        args.extend(extra.iter().map(|a| Value::from(*a)));
        if let Some(emulation) = &mobile {
            capabilities["goog:chromeOptions"]["mobileEmulation"] = emulation.clone();
        }
        let Value::Object(capabilities) = capabilities else {
            unreachable!()
        };
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(capabilities)
            .connect(&self.url)
            .await
            .unwrap_or_else(|e| panic!("starting Chromium through chromedriver: {e}"));
        if mobile.is_none() {
            client.set_window_size(width, height).await.unwrap();
        }
        Browser { client, width }
    }
}

/// ChromeDriver's `mobileEmulation` for a phone with a screen of `width`×`height` CSS pixels.
fn phone_emulation(width: u32, height: u32) -> Value {
    json!({
        "deviceMetrics": {"width": width, "height": height, "pixelRatio": 3.0, "touch": true},
        "userAgent": "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 \
                      (KHTML, like Gecko) Chrome/130.0.0.0 Mobile Safari/537.36",
    })
}

impl Drop for Driver {
    fn drop(&mut self) {
        if let Some(pid) = self.child.id() {
            // The whole group: chromedriver and its browsers. (`--` matters: without it procps
            // `kill` takes `-PID` for an option and signals every process, -1.)
            let _ = std::process::Command::new("kill")
                .args(["-s", "KILL", "--", &format!("-{pid}")])
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// One browser window: a seat, a spectator or a display.
#[derive(Debug)]
pub struct Browser {
    pub client: Client,
    /// The window's or the phone's screen width in CSS pixels (a phone's page may lay out wider
    /// than its screen, and `innerWidth` then grows with it: this does not).
    pub width: u32,
}

impl Browser {
    pub async fn goto(&self, url: &str) {
        self.client.goto(url).await.unwrap();
    }

    /// Runs `body` (a function body that may use `arguments`) in the page and returns its value.
    pub async fn js(&self, body: &str) -> Value {
        self.client
            .execute(body, vec![])
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{body}"))
    }

    /// Runs `expression` (which may evaluate to a promise) in the page and returns what it
    /// resolves to.
    pub async fn eval_async(&self, expression: &str) -> Value {
        let script = format!(
            "const done = arguments[arguments.length - 1];\
             Promise.resolve().then(() => ({expression})).then(done, e => done({{error: String(e)}}));"
        );
        self.client
            .execute_async(&script, vec![])
            .await
            .unwrap_or_else(|e| panic!("async script failed: {e}\n{expression}"))
    }

    /// Waits until the JavaScript `condition` (an expression) is true in the page, checking every
    /// 20 ms; fails with `what` and the page's state after `PATIENCE`.
    ///
    /// Each attempt runs in the page for at most two seconds and answers false when it gives up,
    /// so a navigation that destroys the page under a running attempt (the lobby's create button
    /// opens the table page) costs one attempt, not a WebDriver script timeout.
    pub async fn until(&self, what: &str, condition: &str) {
        let script = format!(
            "const done = arguments[arguments.length - 1];\
             const check = () => {{ try {{ return !!({condition}); }} catch (e) {{ return false; }} }};\
             const start = Date.now();\
             const tick = () => check() ? done(true) : (Date.now() - start > 2000 ? done(false) : setTimeout(tick, 20));\
             tick();"
        );
        let deadline = tokio::time::Instant::now() + PATIENCE;
        let mut last = None;
        while tokio::time::Instant::now() < deadline {
            let attempt = tokio::time::timeout(
                Duration::from_secs(10),
                self.client.execute_async(&script, vec![]),
            )
            .await;
            match attempt {
                Ok(Ok(Value::Bool(true))) => return,
                other => last = Some(format!("{other:?}")),
            }
        }
        let state = self
            .js("return JSON.stringify({me: window.gm && gm.me(), role: window.gm && gm.role(), connected: window.gm && gm.connected(), error: window.gm && gm.lastError(), seq: window.gm && gm.view() && gm.view().seq, stage: window.gm && gm.view() && gm.view().stage, url: location.href});")
            .await;
        panic!("waiting for {what} ({condition}): {last:?}; page: {state}");
    }

    /// The text (`innerText`, as WebDriver's element text) of the element with `data-testid=id`,
    /// once there is one. Found and read in one script: no element is held between round trips,
    /// so a re-render in between cannot leave a stale one.
    pub async fn text(&self, id: &str) -> String {
        let selector = serde_json::to_string(&format!("[data-testid=\"{id}\"]")).unwrap();
        self.until(
            &format!("{id} shown"),
            &format!("document.querySelector({selector}) !== null"),
        )
        .await;
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            // Gone again (re-rendered away between the two round trips): wait for it again.
            let text = self
                .js(&format!(
                    "const e = document.querySelector({selector}); return e ? e.innerText : null;"
                ))
                .await;
            if let Value::String(text) = text {
                return text;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no element {selector} to read"
            );
            self.until(
                &format!("{id} shown"),
                &format!("document.querySelector({selector}) !== null"),
            )
            .await;
        }
    }

    /// Finds the element with `data-testid=id` and does `act` with it, finding it again and
    /// acting again while the page re-renders under it (the element went stale, is not there,
    /// or cannot be reached yet: see [`transient`]), until `PATIENCE` runs out. Before each try
    /// it waits until the JavaScript `ready` (an expression; `e` is the element) holds.
    ///
    /// A WebDriver command on an element is refused before it does anything when the element is
    /// stale, missing, hidden or covered, so trying again never does an action twice.
    async fn act<T, F, Fut>(&self, id: &str, what: &str, ready: &str, act: F) -> T
    where
        F: Fn(fantoccini::elements::Element) -> Fut,
        Fut: std::future::Future<Output = Result<Option<T>, fantoccini::error::CmdError>>,
    {
        let selector = format!("[data-testid=\"{id}\"]");
        let quoted = serde_json::to_string(&selector).unwrap();
        let condition = format!(
            "(() => {{ const e = document.querySelector({quoted}); return !!e && ({ready}); }})()"
        );
        let deadline = tokio::time::Instant::now() + PATIENCE;
        let mut tries = 0;
        loop {
            tries += 1;
            self.until(&format!("{id} ready for {what}"), &condition)
                .await;
            let outcome = match self.client.find(Locator::Css(&selector)).await {
                Ok(element) => act(element).await,
                Err(e) => Err(e),
            };
            let why = match outcome {
                Ok(Some(done)) => return done,
                Ok(None) => "the page took it back".to_owned(),
                Err(e) if transient(&e) => format!("{e}"),
                Err(e) => panic!("{what} {id}: {e}"),
            };
            assert!(
                tokio::time::Instant::now() < deadline,
                "{what} {id}: still failing after {tries} tries: {why}"
            );
        }
    }

    /// Clicks the element with `data-testid=id` once it is there, shown and enabled, as a person
    /// would (WebDriver's click: the element must be the one under the pointer). Scrolls it to
    /// the middle of the screen first, as a person would to see it clear of the phone's action
    /// bar (fixed at the bottom). A re-render between finding it and clicking it finds it again.
    pub async fn click(&self, id: &str) {
        self.act(
            id,
            "clicking",
            "(() => { const ok = !e.disabled && e.offsetParent !== null; \
             if (ok && !e.closest('[data-testid=\"action-bar\"]')) e.scrollIntoView({block: 'center'}); \
             return ok; })()",
            |element| async move { element.click().await.map(Some) },
        )
        .await;
    }

    /// Replaces the text of the input with `data-testid=id` by typing `text` into it, as a person
    /// would, and waits until the input holds exactly `text`. A re-render that replaces the input
    /// before or while typing makes it find the input again and type again.
    pub async fn fill(&self, id: &str, text: &str) {
        let quoted = serde_json::to_string(&format!("[data-testid=\"{id}\"]")).unwrap();
        let check =
            format!("const e = document.querySelector({quoted}); return e ? e.value : null;");
        self.act(id, "typing into", "!e.disabled", |element| {
            let check = check.clone();
            async move {
                element.clear().await?;
                element.send_keys(text).await?;
                // Typed into the input the page shows now (not one it replaced while typing)?
                let shown = self.client.execute(&check, vec![]).await?;
                Ok((shown.as_str() == Some(text)).then_some(()))
            }
        })
        .await;
    }

    /// The mirrored view, or `Null` before there is one.
    pub async fn view(&self) -> Value {
        self.js("return window.gm ? gm.view() : null;").await
    }

    pub async fn me(&self) -> Option<u64> {
        self.js("return window.gm ? gm.me() : null;").await.as_u64()
    }

    pub async fn seq(&self) -> u64 {
        self.view().await["seq"].as_u64().unwrap_or(0)
    }

    /// Waits until the page's mirror has reached event `seq`.
    pub async fn catch_up(&self, seq: u64) {
        self.until(
            &format!("event {seq}"),
            &format!("gm.view() && gm.view().seq >= {seq}"),
        )
        .await;
    }

    /// Asks the page to compare its mirror with a fresh snapshot; fails on any difference.
    pub async fn check_mirror(&self, who: &str) {
        let result = self.eval_async("gm.checkMirror()").await;
        assert_eq!(
            result["ok"],
            Value::Bool(true),
            "{who}: the page's mirror differs from the server's snapshot: {result}"
        );
    }

    /// Fails if the page shows the words `null`, `undefined` or `NaN` anywhere (a value that
    /// was missing, rendered as text).
    pub async fn shows_no_missing_values(&self, who: &str) {
        let found = self.missing_value().await;
        assert_eq!(found, None, "{who}: the page shows a missing value");
    }

    /// The text around the first `null`, `undefined` or `NaN` the page shows, if any.
    pub async fn missing_value(&self) -> Option<String> {
        self.js(
            "const m = document.body.innerText.match(/.{0,40}\\b(null|undefined|NaN)\\b.{0,40}/); \
             return m ? m[0] : null;",
        )
        .await
        .as_str()
        .map(str::to_owned)
    }

    /// Runs axe-core (injected through WebDriver, which the page's CSP does not govern) on the
    /// part of the page `context` selects (a CSS selector; `document` or empty for the whole
    /// page) and returns its serious and critical violations, and a page without a level-one
    /// heading (moderate, but every page has one): `{id, impact, help, helpUrl,
    /// count, nodes: [{target, html, summary}]}` with the first few nodes.
    pub async fn axe(&self, context: &str) -> Vec<Value> {
        let source = ensure_axe();
        if self.js("return typeof window.axe;").await != "object" {
            let loaded = self
                .js(&format!("{source}\n;return typeof window.axe;"))
                .await;
            assert_eq!(loaded, "object", "axe-core did not load into the page");
        }
        let context = if context.is_empty() || context == "document" {
            "document".to_owned()
        } else {
            serde_json::to_string(context).unwrap()
        };
        // Started in the page and polled: a check of a big page may take longer than one script
        // may run.
        self.js(&format!(
            "window.__gmAxe = null; \
             axe.run({context}, {{resultTypes: ['violations']}}).then(r => {{ window.__gmAxe = {{violations: \
               r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical' || v.id === 'page-has-heading-one').map(v => ({{ \
                 id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl, count: v.nodes.length, \
                 nodes: v.nodes.slice(0, 4).map(n => ({{target: n.target.map(String), html: n.html.slice(0, 200), \
                   summary: (n.failureSummary || '').slice(0, 300)}})) }})) }}; }}, \
               e => {{ window.__gmAxe = {{error: String(e)}}; }}); \
             return true;"
        ))
        .await;
        self.until("axe-core's findings", "window.__gmAxe !== null")
            .await;
        let result = self.js("return window.__gmAxe;").await;
        assert!(
            result["error"].is_null(),
            "axe-core failed: {}",
            result["error"]
        );
        result["violations"].as_array().cloned().unwrap_or_default()
    }

    /// Fails, with a readable list, if axe-core finds any serious or critical violation on the
    /// page, or no level-one heading.
    pub async fn assert_accessible(&self, what: &str) {
        if let Some(report) = self.accessibility_report().await {
            panic!("{what}: {report}");
        }
    }

    /// axe-core's serious and critical violations on the whole page as a readable list, or
    /// `None` when there is none.
    pub async fn accessibility_report(&self) -> Option<String> {
        let violations = self.axe("document").await;
        if violations.is_empty() {
            return None;
        }
        let mut list = String::new();
        for v in &violations {
            list.push_str(&format!(
                "\n- {} ({}, {} element(s)): {} <{}>",
                v["id"].as_str().unwrap_or("?"),
                v["impact"].as_str().unwrap_or("?"),
                v["count"],
                v["help"].as_str().unwrap_or(""),
                v["helpUrl"].as_str().unwrap_or("")
            ));
            for node in v["nodes"].as_array().into_iter().flatten() {
                list.push_str(&format!(
                    "\n    {} {}\n      {}",
                    node["target"],
                    node["html"].as_str().unwrap_or(""),
                    node["summary"].as_str().unwrap_or("").replace('\n', " ")
                ));
            }
        }
        Some(format!(
            "axe-core {AXE_VERSION} finds {} serious or critical violation(s):{list}",
            violations.len()
        ))
    }

    /// Fails if the page scrolls sideways (`document.documentElement.scrollWidth` wider than
    /// `innerWidth`), naming the widest elements that stick out (those inside a box that
    /// scrolls or clips on its own are left out: they do not widen the page).
    pub async fn assert_fits(&self, what: &str) {
        if let Some(report) = self.overflow().await {
            panic!("{what}: {report}");
        }
    }

    /// How the page scrolls sideways (its width, the window's, the elements sticking out), or
    /// `None` when it fits.
    pub async fn overflow(&self) -> Option<String> {
        let found = self
            .js(&format!(
                "const w = Math.min(window.innerWidth, {}), sw = document.documentElement.scrollWidth; \
                 if (sw <= w) return null; \
                 const clipped = (e) => {{ for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {{ \
                   const o = getComputedStyle(a).overflowX; \
                   if (o !== 'visible' && a.getBoundingClientRect().right + scrollX <= w + 1) return true; }} return false; }}; \
                 const out = Array.from(document.body.querySelectorAll('*')) \
                   .map(e => [e, e.getBoundingClientRect()]) \
                   .filter(([e, r]) => r.width > 0 && r.right + scrollX > w + 1 && !clipped(e)); \
                 const describe = ([e, r]) => ({{tag: e.tagName.toLowerCase(), class: String(e.getAttribute('class') || ''), \
                   testid: e.getAttribute('data-testid') || '', width: Math.round(r.width), right: Math.round(r.right + scrollX), \
                   text: (e.textContent || '').trim().slice(0, 40)}}); \
                 const innermost = out.filter(([e]) => !out.some(([o]) => o !== e && e.contains(o))); \
                 return {{width: w, scrollWidth: sw, \
                   widest: out.slice().sort((a, b) => b[1].width - a[1].width).slice(0, 6).map(describe), \
                   innermost: innermost.sort((a, b) => b[1].right - a[1].right).slice(0, 8).map(describe)}}",
                self.width
            ))
            .await;
        if found.is_null() {
            return None;
        }
        let line = |e: &Value| {
            format!(
                "\n    <{} class=\"{}\" data-testid=\"{}\"> {} px wide, right edge at {} px: {:?}",
                e["tag"].as_str().unwrap_or("?"),
                e["class"].as_str().unwrap_or(""),
                e["testid"].as_str().unwrap_or(""),
                e["width"],
                e["right"],
                e["text"].as_str().unwrap_or("")
            )
        };
        let widest: String = found["widest"]
            .as_array()
            .into_iter()
            .flatten()
            .map(line)
            .collect();
        let innermost: String = found["innermost"]
            .as_array()
            .into_iter()
            .flatten()
            .map(line)
            .collect();
        Some(format!(
            "the page scrolls sideways, {} px wide in a {} px window.\n  the widest elements \
             sticking out:{widest}\n  the innermost ones:{innermost}",
            found["scrollWidth"], found["width"]
        ))
    }

    pub async fn log(&self) -> Vec<String> {
        serde_json::from_value(self.js("return gm.log();").await).unwrap_or_default()
    }

    /// Writes a PNG screenshot to `path`.
    pub async fn screenshot(&self, path: &std::path::Path) {
        let png = self.client.screenshot().await.unwrap();
        std::fs::write(path, &png).unwrap();
    }

    pub async fn close(self) {
        let _ = self.client.close().await;
    }
}

/// An error of a WebDriver command on an element that the page moving under it explains, and
/// that finding the element again and trying again can cure: the element was replaced by a
/// re-render (stale), is not there (yet or again), is not interactable yet (hidden, disabled,
/// off-screen while laid out), or another element covers it (a toast, a scroll not finished).
fn transient(e: &fantoccini::error::CmdError) -> bool {
    use fantoccini::error::{CmdError, ErrorStatus};
    matches!(
        e,
        CmdError::Standard(w) if matches!(
            w.error,
            ErrorStatus::StaleElementReference
                | ErrorStatus::NoSuchElement
                | ErrorStatus::ElementNotInteractable
                | ErrorStatus::ElementClickIntercepted
                | ErrorStatus::InvalidElementState
        )
    )
}

/// Where the tests write their screenshots (test output, not committed).
pub fn screenshot_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("browser-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

//! Headless Chromium driven over WebDriver (chromedriver + fantoccini) against the real server.
//!
//! The browser is installed when missing (Debian's `chromium` and `chromium-driver`, as root or
//! with password-less sudo); otherwise the tests fail with the exact command to run. They never
//! skip.

#![allow(clippy::unwrap_used, clippy::print_stderr)]

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
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let prefix: &[&str] = if root {
        &[]
    } else if std::process::Command::new("sudo")
        .args(["-n", "true"])
        .status()
        .is_ok_and(|s| s.success())
    {
        &["sudo", "-n"]
    } else {
        return Err("not root and no password-less sudo".into());
    };
    eprintln!("installing Chromium for the browser tests: {INSTALL}");
    for args in [
        &["apt-get", "update", "-qq"][..],
        &[
            "apt-get",
            "install",
            "-y",
            "-qq",
            "--no-install-recommends",
            "chromium",
            "chromium-driver",
        ][..],
    ] {
        let all: Vec<&str> = prefix.iter().chain(args).copied().collect();
        let status = std::process::Command::new(all[0])
            .args(&all[1..])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .map_err(|e| format!("{}: {e}", all.join(" ")))?;
        if !status.success() {
            return Err(format!("{} failed ({status})", all.join(" ")));
        }
    }
    Ok(())
}

/// A ChromeDriver process (and every browser it starts), stopped when dropped.
#[derive(Debug)]
pub struct Driver {
    child: tokio::process::Child,
    url: String,
}

impl Driver {
    /// Starts ChromeDriver on a free port and waits until it says it is ready.
    pub async fn start() -> Self {
        let (_, driver) = ensure_browser();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = tokio::process::Command::new(driver)
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
        }
    }

    /// A new browser (its own profile: its own localStorage) with a window of `width`×`height`.
    pub async fn browser(&self, width: u32, height: u32) -> Browser {
        let (chromium, _) = ensure_browser();
        let capabilities = json!({
            "browserName": "chrome",
            "acceptInsecureCerts": true,
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
        let Value::Object(capabilities) = capabilities else {
            unreachable!()
        };
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(capabilities)
            .connect(&self.url)
            .await
            .unwrap_or_else(|e| panic!("starting Chromium through chromedriver: {e}"));
        client.set_window_size(width, height).await.unwrap();
        Browser { client }
    }
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

    pub async fn testid(&self, id: &str) -> fantoccini::elements::Element {
        let selector = format!("[data-testid=\"{id}\"]");
        self.client
            .wait()
            .at_most(PATIENCE)
            .for_element(Locator::Css(&selector))
            .await
            .unwrap_or_else(|e| panic!("no element {selector}: {e}"))
    }

    /// Clicks the element with `data-testid=id` once it is there and enabled.
    pub async fn click(&self, id: &str) {
        self.until(
            &format!("{id} enabled and shown"),
            &format!(
                "(() => {{ const e = document.querySelector('[data-testid=\"{id}\"]'); \
                 return e && !e.disabled && e.offsetParent !== null; }})()"
            ),
        )
        .await;
        self.testid(id)
            .await
            .click()
            .await
            .unwrap_or_else(|e| panic!("clicking {id}: {e}"));
    }

    /// Replaces the text of the input with `data-testid=id`.
    pub async fn fill(&self, id: &str, text: &str) {
        let element = self.testid(id).await;
        element.clear().await.unwrap();
        element
            .send_keys(text)
            .await
            .unwrap_or_else(|e| panic!("typing into {id}: {e}"));
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
        let found = self
            .js(
                "const m = document.body.innerText.match(/.{0,40}\\b(null|undefined|NaN)\\b.{0,40}/); \
                 return m ? m[0] : null;",
            )
            .await;
        assert_eq!(found, Value::Null, "{who}: the page shows a missing value");
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

/// Where the tests write their screenshots (test output, not committed).
pub fn screenshot_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("browser-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

//! Automatic HTTPS against a real ACME server: Debian's `pebble` (Let's Encrypt's own test
//! server) with `pebble-challtestsrv` answering its DNS questions (`melee.test` is 127.0.0.1).
//!
//! One server with `--acme-domain melee.test` gets a certificate by TLS-ALPN-01 on its own
//! port, serves it (checked by a TLS client trusting only pebble's root, and by a real Chromium
//! that trusts pebble's root through its NSS database and accepts nothing else), redirects plain
//! http, renews the certificate before its end (pebble issues them for 30 s here), and after a
//! restart serves the one kept in the data directory without asking the directory again.
//!
//! pebble, its DNS server and `certutil` are installed when missing (`apt-get install pebble
//! libnss3-tools`, as root or with password-less sudo); otherwise the test fails with the
//! command to run. It never skips.

#![allow(clippy::unwrap_used, clippy::print_stderr)]

#[path = "browser/harness.rs"]
mod harness;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use grand_melee_server::config::Redirect;
use grand_melee_server::{Server, ServerConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::rustls::{self, pki_types};

/// The server's name (challtestsrv answers every name with 127.0.0.1).
const DOMAIN: &str = "melee.test";
/// How long pebble's certificates last here: the renewal comes after two thirds of it.
const VALIDITY_SECS: u64 = 30;
/// A bound on a failure: every wait ends as soon as its condition holds.
const PATIENCE: Duration = Duration::from_secs(60);
const INSTALL: &str = "apt-get install -y pebble libnss3-tools";

/// Makes sure pebble, pebble-challtestsrv and certutil are there, installing them when not.
fn ensure_tools() {
    let have = |tool: &str| {
        std::process::Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let all = || {
        ["pebble", "pebble-challtestsrv", "certutil"]
            .iter()
            .all(|t| have(t))
    };
    if all() {
        return;
    }
    eprintln!("installing the ACME test server and NSS tools: {INSTALL}");
    let installed = grand_melee_e2e::apt_install(&["pebble", "libnss3-tools"]);
    assert!(
        installed.is_ok() && all(),
        "the automatic-HTTPS test needs Debian's pebble and libnss3-tools and could not install \
         them ({installed:?}); install them with `sudo {INSTALL}`"
    );
}

/// A free loopback port (taken by the kernel, then released for the program that needs it).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until something listens on `port`.
async fn until_listening(port: u16, what: &str) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what} did not listen on {port}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// pebble and its DNS server, stopped when dropped.
struct Pebble {
    _dns: tokio::process::Child,
    _pebble: tokio::process::Child,
    /// Its ACME directory's URL.
    directory: String,
    /// The certificate pebble's own https is served with (trusted by the server under test
    /// through `--acme-directory-ca`).
    https_cert: PathBuf,
    /// pebble's root, which signs what it issues (through an intermediate).
    root: pki_types::CertificateDer<'static>,
    _https: grand_melee_e2e::SelfSigned,
    _dir: tempfile::TempDir,
}

impl Pebble {
    /// Starts pebble: its validation connects to `tls_port` (the server's own port).
    async fn start(tls_port: u16) -> Self {
        let https = grand_melee_e2e::SelfSigned::new();
        let dir = tempfile::tempdir().unwrap();
        let (listen, management, dns, dns_management, http) = (
            free_port(),
            free_port(),
            free_port(),
            free_port(),
            free_port(),
        );
        let config = serde_json::json!({"pebble": {
            "listenAddress": format!("127.0.0.1:{listen}"),
            "managementListenAddress": format!("127.0.0.1:{management}"),
            "certificate": https.cert,
            "privateKey": https.key,
            "httpPort": http,
            "tlsPort": tls_port,
            "ocspResponderURL": "",
            "externalAccountBindingRequired": false,
            "certificateValidityPeriod": VALIDITY_SECS,
        }});
        let config_path = dir.path().join("pebble.json");
        std::fs::write(&config_path, config.to_string()).unwrap();
        let spawn = |command: &mut tokio::process::Command| {
            command
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .kill_on_drop(true)
                .spawn()
                .unwrap()
        };
        let dns_child = spawn(
            tokio::process::Command::new("pebble-challtestsrv")
                .args(["-dns01", &format!("127.0.0.1:{dns}")])
                .args(["-http01", "", "-https01", "", "-tlsalpn01", ""])
                .args(["-management", &format!("127.0.0.1:{dns_management}")])
                .args(["-defaultIPv4", "127.0.0.1", "-defaultIPv6", ""]),
        );
        until_listening(dns, "pebble-challtestsrv").await;
        let pebble_child = spawn(
            tokio::process::Command::new("pebble")
                .arg("-config")
                .arg(&config_path)
                .args(["-dnsserver", &format!("127.0.0.1:{dns}")])
                // No random waits before a validation, no refused nonces, and every
                // authorization validated anew (a renewal proves the name again).
                .env("PEBBLE_VA_NOSLEEP", "1")
                .env("PEBBLE_WFE_NONCEREJECT", "0")
                .env("PEBBLE_AUTHZREUSE", "0"),
        );
        until_listening(listen, "pebble").await;
        until_listening(management, "pebble's management interface").await;
        let trust = client_config(&[pem_certificate(&https.cert)]);
        let (code, body) = get(&trust, "localhost", ("127.0.0.1", management), "/roots/0").await;
        assert_eq!(code, 200, "pebble's root: {body}");
        let root = pki_types::CertificateDer::from_pem_slice(body.as_bytes())
            .map(|c| c.into_owned())
            .unwrap();
        Self {
            _dns: dns_child,
            _pebble: pebble_child,
            directory: format!("https://127.0.0.1:{listen}/dir"),
            https_cert: https.cert.clone(),
            root,
            _https: https,
            _dir: dir,
        }
    }
}

use pki_types::pem::PemObject;

/// The first certificate of a PEM file.
fn pem_certificate(path: &Path) -> pki_types::CertificateDer<'static> {
    pki_types::CertificateDer::from_pem_file(path).unwrap()
}

/// A TLS client that trusts `roots` and nothing else.
fn client_config(roots: &[pki_types::CertificateDer<'static>]) -> Arc<rustls::ClientConfig> {
    let mut store = rustls::RootCertStore::empty();
    for root in roots {
        store.add(root.clone()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Arc::new(
        rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(store)
            .with_no_client_auth(),
    )
}

/// A TLS handshake with `name` at `address`: the certificate served, if the handshake passed.
async fn served(
    config: &Arc<rustls::ClientConfig>,
    name: &str,
    address: (&str, u16),
) -> Result<pki_types::CertificateDer<'static>, String> {
    let tcp = TcpStream::connect(address)
        .await
        .map_err(|e| e.to_string())?;
    let name = pki_types::ServerName::try_from(name.to_owned()).unwrap();
    let tls = tokio_rustls::TlsConnector::from(Arc::clone(config))
        .connect(name, tcp)
        .await
        .map_err(|e| e.to_string())?;
    let chain = tls.get_ref().1.peer_certificates().unwrap_or_default();
    chain
        .first()
        .map(|c| c.clone().into_owned())
        .ok_or_else(|| "no certificate".to_owned())
}

/// `GET path` over TLS to `name` at `address`: the status and the body.
async fn get(
    config: &Arc<rustls::ClientConfig>,
    name: &str,
    address: (&str, u16),
    path: &str,
) -> (u16, String) {
    let tcp = TcpStream::connect(address).await.unwrap();
    let server_name = pki_types::ServerName::try_from(name.to_owned()).unwrap();
    let mut tls = tokio_rustls::TlsConnector::from(Arc::clone(config))
        .connect(server_name, tcp)
        .await
        .unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: {name}\r\nConnection: close\r\n\r\n");
    tls.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    // A peer that closes without close_notify still said everything it had to say here.
    let _ = tokio::time::timeout(PATIENCE, tls.read_to_end(&mut answer))
        .await
        .unwrap();
    split_answer(&String::from_utf8_lossy(&answer))
}

/// An HTTP/1.1 answer's status and body (chunked bodies joined).
fn split_answer(answer: &str) -> (u16, String) {
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((answer, ""));
    let code = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    if !chunked {
        return (code, body.to_owned());
    }
    let mut joined = String::new();
    let mut rest = body;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 || after.len() < size {
            break;
        }
        joined.push_str(&after[..size]);
        rest = after[size..].trim_start_matches("\r\n");
    }
    (code, joined)
}

/// A certificate's names, issuer and validity.
struct Certificate {
    names: Vec<String>,
    issuer: String,
    not_before: SystemTime,
    not_after: SystemTime,
}

fn read(certificate: &pki_types::CertificateDer<'_>) -> Certificate {
    let (_, parsed) = x509_parser::parse_x509_certificate(certificate).unwrap();
    let time = |t: x509_parser::time::ASN1Time| {
        SystemTime::UNIX_EPOCH + Duration::from_secs(u64::try_from(t.timestamp()).unwrap())
    };
    let names = parsed
        .subject_alternative_name()
        .unwrap()
        .map(|san| {
            san.value
                .general_names
                .iter()
                .map(|name| match name {
                    x509_parser::extensions::GeneralName::DNSName(dns) => (*dns).to_owned(),
                    other => format!("{other:?}"),
                })
                .collect()
        })
        .unwrap_or_default();
    Certificate {
        names,
        issuer: parsed.issuer().to_string(),
        not_before: time(parsed.validity().not_before),
        not_after: time(parsed.validity().not_after),
    }
}

/// The certificate `config`'s client is served once the handshake passes.
async fn until_served(
    config: &Arc<rustls::ClientConfig>,
    port: u16,
    what: &str,
    done: impl Fn(&pki_types::CertificateDer<'static>) -> bool,
) -> pki_types::CertificateDer<'static> {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let attempt = served(config, DOMAIN, ("127.0.0.1", port)).await;
        if let Ok(certificate) = &attempt
            && done(certificate)
        {
            return certificate.clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: still {:?}",
            attempt.map(|c| read(&c).not_after)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A server with automatic HTTPS for [`DOMAIN`] from `directory`, on `port`, its journal and
/// certificate in `data`; and the handle that stops it.
async fn start_server(
    directory: &str,
    directory_ca: &Path,
    port: u16,
    data: &Path,
) -> (
    Option<SocketAddr>,
    Arc<grand_melee_server::metrics::Metrics>,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    let config = ServerConfig {
        listen: SocketAddr::from(([127, 0, 0, 1], port)),
        data_dir: data.to_owned(),
        durability: grand_melee_server::journal::Durability::Normal,
        acme_domains: vec![DOMAIN.to_owned()],
        acme_email: Some("organiser@example.org".to_owned()),
        acme_directory: directory.to_owned(),
        acme_directory_ca: Some(directory_ca.to_owned()),
        redirect_listen: Redirect::At(SocketAddr::from(([127, 0, 0, 1], 0))),
        ..ServerConfig::default()
    };
    let server = Server::bind(config).await.unwrap();
    let redirect = server.redirect_addr();
    let metrics = server.metrics();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));
    (redirect, metrics, stop, task)
}

/// A Prometheus counter's value in `/metrics`.
fn counter(metrics: &str, name: &str) -> u64 {
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("{name} not in /metrics"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_is_issued_served_to_a_browser_renewed_and_kept() {
    ensure_tools();
    let port = free_port();
    let pebble = Pebble::start(port).await;
    let data = tempfile::tempdir().unwrap();
    let (redirect, _metrics, stop, task) =
        start_server(&pebble.directory, &pebble.https_cert, port, data.path()).await;
    let trusting_pebble = client_config(std::slice::from_ref(&pebble.root));

    // Issued by pebble for the domain, and served.
    let first = until_served(&trusting_pebble, port, "the first certificate", |_| true).await;
    let first_seen = SystemTime::now();
    let issued = read(&first);
    // The certificate's private key is kept where only the server's user may read it.
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(data.path().join("acme"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700, "{mode:o}");
    }
    assert_eq!(issued.names, [DOMAIN]);
    assert!(issued.issuer.contains("Pebble"), "{}", issued.issuer);
    assert!(first_seen < issued.not_after);
    let (code, body) = get(&trusting_pebble, DOMAIN, ("127.0.0.1", port), "/healthz").await;
    assert_eq!((code, body.as_str()), (200, "ok\n"));
    // --public-url follows from the domain: the invitation names it.
    let (code, invite) = get(
        &trusting_pebble,
        DOMAIN,
        ("127.0.0.1", port),
        "/invite.json",
    )
    .await;
    assert_eq!(code, 200, "{invite}");
    let invite: serde_json::Value = serde_json::from_str(&invite).unwrap();
    assert_eq!(
        invite["public_url"].as_str(),
        Some(format!("https://{DOMAIN}:{port}").as_str()),
        "{invite}"
    );

    // Plain http is redirected to the same page on https, on the server's own name.
    let redirect = redirect.expect("a redirect listener");
    let mut plain = TcpStream::connect(redirect).await.unwrap();
    plain
        .write_all(format!("GET /t/abc?x=1 HTTP/1.1\r\nHost: {DOMAIN}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut answer = String::new();
    plain.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 308"), "{answer}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains(&format!("location: https://{DOMAIN}:{port}/t/abc?x=1\r\n")),
        "{answer}"
    );

    // A real Chromium that trusts pebble's root (and accepts no other certificate) opens the
    // lobby over https and its WebSocket over wss.
    let home = tempfile::tempdir().unwrap();
    let nssdb = home.path().join(".pki/nssdb");
    std::fs::create_dir_all(&nssdb).unwrap();
    let root_pem = home.path().join("pebble-root.pem");
    std::fs::write(&root_pem, pem_encode(&pebble.root)).unwrap();
    let db = format!("sql:{}", nssdb.display());
    for args in [
        vec!["-N", "-d", &db, "--empty-password"],
        vec![
            "-A",
            "-d",
            &db,
            "-t",
            "C,,",
            "-n",
            "pebble",
            "-i",
            root_pem.to_str().unwrap(),
        ],
    ] {
        let status = std::process::Command::new("certutil")
            .args(&args)
            .status()
            .unwrap();
        assert!(status.success(), "certutil {args:?}: {status}");
    }
    let driver = harness::Driver::start_trusting(home.path()).await;
    let rules = format!("--host-resolver-rules=MAP {DOMAIN} 127.0.0.1, MAP other.test 127.0.0.1");
    let browser = driver.browser_with_args(1280, 800, &[&rules]).await;
    // The control: the same server and certificate under a name the certificate does not
    // carry is refused by this browser (it checks certificates; it does not accept them all).
    // (ChromeDriver completes the navigation: the page is Chromium's warning.)
    let _ = browser
        .client
        .goto(&format!("https://other.test:{port}/"))
        .await;
    let shown = browser
        .js("return {gm: !!window.gm, text: document.body ? document.body.innerText : ''};")
        .await;
    assert_eq!(shown["gm"], false, "{shown}");
    assert!(
        shown["text"]
            .as_str()
            .unwrap_or_default()
            .contains("ERR_CERT_COMMON_NAME_INVALID"),
        "the browser accepted a certificate for another name: it does not check them ({shown})"
    );
    browser.goto(&format!("https://{DOMAIN}:{port}/")).await;
    browser
        .until(
            "the lobby over https",
            "location.protocol === 'https:' && window.isSecureContext && !!window.gm",
        )
        .await;
    let socket = browser
        .eval_async(
            "new Promise(done => { const ws = new WebSocket('wss://' + location.host + '/ws'); \
             ws.onopen = () => { ws.close(); done('open'); }; ws.onerror = () => done('error'); })",
        )
        .await;
    assert_eq!(socket, "open", "the page's WebSocket over wss");
    drop(browser);
    drop(driver);

    // Renewed before its end: a new certificate is served while the first is still valid.
    let renewed = until_served(&trusting_pebble, port, "the renewed certificate", |c| {
        *c != first
    })
    .await;
    assert!(
        SystemTime::now() < issued.not_after,
        "the certificate was renewed only after it ended ({:?} past)",
        SystemTime::now().duration_since(issued.not_after)
    );
    let renewal = read(&renewed);
    assert_eq!(renewal.names, [DOMAIN]);
    assert!(renewal.not_after > issued.not_after);
    assert!(renewal.not_before >= issued.not_before);
    let (_, metrics) = get(&trusting_pebble, DOMAIN, ("127.0.0.1", port), "/metrics").await;
    assert!(
        counter(&metrics, "gm_acme_certificates_total") >= 2,
        "{metrics}"
    );
    assert_eq!(counter(&metrics, "gm_acme_failures_total"), 0, "{metrics}");

    // Kept in the data directory: restarted while the directory does not answer, the server
    // serves the certificate it had. (First, until the renewed one is written there.)
    let kept_text: String = pem_encode(&renewed).split_whitespace().collect();
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !cached_certificates(data.path()).contains(&kept_text) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the renewed certificate never reached {}",
            data.path().join("acme").display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let _ = stop.send(());
    tokio::time::timeout(PATIENCE, task).await.unwrap().unwrap();
    let kept = served(&trusting_pebble, DOMAIN, ("127.0.0.1", port)).await;
    assert!(kept.is_err(), "still served after the stop");
    // pebble stops: the directory no longer answers (its address stays the certificate's key
    // in the cache).
    let (directory, https_cert) = (pebble.directory.clone(), pebble.https_cert.clone());
    let https_keep = tempfile::tempdir().unwrap();
    let https_cert_copy = https_keep.path().join("cert.pem");
    std::fs::copy(&https_cert, &https_cert_copy).unwrap();
    drop(pebble);
    let (_, _, stop, task) = start_server(&directory, &https_cert_copy, port, data.path()).await;
    let mut last = renewed;
    let after_restart =
        until_served(&trusting_pebble, port, "the kept certificate", |_| true).await;
    // Between the last look and the stop, one more renewal may have come in: the kept one is
    // then newer still, but from pebble all the same.
    if after_restart != last {
        assert!(read(&after_restart).not_after > read(&last).not_after);
        last = after_restart.clone();
    }
    assert_eq!(after_restart, last);
    let _ = stop.send(());
    tokio::time::timeout(PATIENCE, task).await.unwrap().unwrap();
}

/// Every certificate file kept in the data directory's `acme/`, joined, without white space.
fn cached_certificates(data: &Path) -> String {
    let Ok(entries) = std::fs::read_dir(data.join("acme")) else {
        return String::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .starts_with("cached_cert_")
        })
        .filter_map(|entry| std::fs::read_to_string(entry.path()).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// A certificate as PEM.
fn pem_encode(certificate: &pki_types::CertificateDer<'_>) -> String {
    use base64::Engine as _;
    let body = base64::engine::general_purpose::STANDARD.encode(certificate.as_ref());
    let lines: Vec<&str> = body
        .as_bytes()
        .chunks(64)
        .map(|chunk| std::str::from_utf8(chunk).unwrap())
        .collect();
    format!(
        "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
        lines.join("\n")
    )
}

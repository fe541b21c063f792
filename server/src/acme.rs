//! Automatic HTTPS (`--acme-domain`): the server gets its certificate from an ACME directory
//! (Let's Encrypt by default) with `rustls-acme`, answering the directory's TLS-ALPN-01 check
//! on its own port, keeps it in the data directory (`acme/`), renews it when two thirds of its
//! life have passed, and answers plain http on port 80 with a redirect to https.
//!
//! The TLS side is one rustls configuration whose certificate resolver is `rustls-acme`'s: a
//! browser gets the current certificate; the directory's validation connection (ALPN
//! `acme-tls/1`) gets the challenge certificate and is closed after its handshake
//! ([`is_challenge`]).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use rustls_acme::caches::DirCache;
use rustls_acme::{AcmeConfig, AcmeState, EventOk};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tracing::{debug, error, info, warn};

use crate::config::{LETS_ENCRYPT_STAGING, ServerConfig};
use crate::metrics::Metrics;

/// Where the certificate, its key and the ACME account are kept, in the data directory.
pub const CACHE_DIR: &str = "acme";
/// The ALPN protocol of the TLS-ALPN-01 validation (RFC 8737).
const ACME_TLS_ALPN: &[u8] = b"acme-tls/1";

/// The directory `config` asks (its `--acme-staging` or `--acme-directory`).
fn directory(config: &ServerConfig) -> &str {
    if config.acme_staging {
        LETS_ENCRYPT_STAGING
    } else {
        &config.acme_directory
    }
}

/// `--public-url` when `--acme-domain` names the domains and no URL is given: the first domain,
/// with the port when it is not 443 (none for port 0).
pub(crate) fn public_url(config: &ServerConfig) -> Option<String> {
    let domain = config.acme_domains.first()?;
    Some(match config.listen.port() {
        443 => format!("https://{domain}"),
        // A port the kernel picks is known only once bound: no public URL then.
        0 => return None,
        port => format!("https://{domain}:{port}"),
    })
}

/// Automatic HTTPS, ready to run: the TLS acceptor that serves its certificates, and the state
/// that obtains and renews them ([`drive`]).
pub(crate) struct Acme {
    pub acceptor: tokio_rustls::TlsAcceptor,
    state: AcmeState<io::Error>,
    domains: Vec<String>,
    directory: String,
    cache: PathBuf,
}

impl std::fmt::Debug for Acme {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Acme")
            .field("domains", &self.domains)
            .field("directory", &self.directory)
            .finish_non_exhaustive()
    }
}

/// Sets automatic HTTPS up for `config` (nothing is asked of the directory yet).
pub(crate) fn new(config: &ServerConfig) -> io::Result<Acme> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    if let Some(file) = &config.acme_directory_ca {
        let extra = read_roots(file)?;
        let (added, _) = roots.add_parsable_certificates(extra);
        if added == 0 {
            return Err(io::Error::other(format!(
                "--acme-directory-ca {}: no usable certificate in the file",
                file.display()
            )));
        }
    }
    let client = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(io::Error::other)?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let directory = directory(config).to_owned();
    let cache = config.data_dir.join(CACHE_DIR);
    private_dir(&cache)?;
    let mut acme = AcmeConfig::new_with_client_config(&config.acme_domains, Arc::new(client))
        .directory(&directory);
    if let Some(email) = &config.acme_email {
        acme = acme.contact_push(format!("mailto:{email}"));
    }
    let state = acme.cache(DirCache::new(cache.clone())).state();
    let mut tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(io::Error::other)?
        .with_no_client_auth()
        .with_cert_resolver(state.resolver());
    // Browsers offer http/1.1 (and h2); the directory's check offers acme-tls/1 alone.
    tls.alpn_protocols = vec![b"http/1.1".to_vec(), ACME_TLS_ALPN.to_vec()];
    Ok(Acme {
        acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(tls)),
        state,
        domains: config.acme_domains.clone(),
        directory,
        cache,
    })
}

/// Makes `dir` (the certificate's private key goes there) readable by this user only.
fn private_dir(dir: &Path) -> io::Result<()> {
    let failed = |error: io::Error| {
        io::Error::new(
            error.kind(),
            format!("the certificate's directory {}: {error}", dir.display()),
        )
    };
    std::fs::create_dir_all(dir).map_err(failed)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(failed)?;
    }
    Ok(())
}

/// The PEM certificates in `file`.
fn read_roots(file: &Path) -> io::Result<Vec<CertificateDer<'static>>> {
    CertificateDer::pem_file_iter(file)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|error| {
            io::Error::other(format!("--acme-directory-ca {}: {error}", file.display()))
        })
}

/// Whether a finished TLS handshake was the directory's TLS-ALPN-01 check (nothing more is said
/// on such a connection: it is closed).
pub(crate) fn is_challenge(alpn: Option<&[u8]>) -> bool {
    alpn == Some(ACME_TLS_ALPN)
}

/// Obtains the certificate (or loads the one kept in the data directory) and renews it, until
/// `stop`: logs each step, and for a failure what to check.
pub(crate) async fn drive(acme: Acme, metrics: Arc<Metrics>, stop: CancellationToken) {
    let Acme {
        mut state,
        domains,
        directory,
        cache,
        ..
    } = acme;
    let domains = domains.join(", ");
    info!(%domains, %directory, cache = %cache.display(), "automatic HTTPS: getting the certificate");
    loop {
        let event = tokio::select! {
            () = stop.cancelled() => return,
            event = state.next() => event,
        };
        match event {
            None => return,
            Some(Ok(EventOk::DeployedCachedCert)) => info!(
                %domains,
                cache = %cache.display(),
                "automatic HTTPS: serving the certificate kept in the data directory"
            ),
            Some(Ok(EventOk::DeployedNewCert)) => {
                Metrics::add(&metrics.acme_certificates, 1);
                info!(%domains, %directory, "automatic HTTPS: new certificate issued and served");
            }
            Some(Ok(EventOk::CertCacheStore)) => debug!(
                cache = %cache.display(),
                "automatic HTTPS: certificate kept in the data directory"
            ),
            Some(Ok(EventOk::AccountCacheStore)) => debug!(
                cache = %cache.display(),
                "automatic HTTPS: ACME account kept in the data directory"
            ),
            Some(Err(rustls_acme::EventError::Order(failure))) => {
                Metrics::add(&metrics.acme_failures, 1);
                error!(
                    %domains,
                    %directory,
                    error = %failure,
                    "automatic HTTPS: could not get a certificate (trying again, waiting longer \
                     each time): {}",
                    what_to_check(&failure)
                );
            }
            Some(Err(failure)) => {
                Metrics::add(&metrics.acme_failures, 1);
                error!(
                    %domains,
                    cache = %cache.display(),
                    error = %failure,
                    "automatic HTTPS: the certificate kept in the data directory could not be \
                     read or written (check the directory's owner and free space)"
                );
            }
        }
    }
}

/// What to check after a failed order, by where it failed.
fn what_to_check(failure: &rustls_acme::OrderError) -> &'static str {
    use rustls_acme::OrderError;
    use rustls_acme::acme::AcmeError;
    match failure {
        OrderError::BadAuth(_) | OrderError::TooManyAttemptsAuth(_) => {
            "the directory could not check the name. Check that each domain's DNS record \
             points at this machine's public address and that port 443 of this machine is \
             reachable from the internet (the directory connects to it)"
        }
        OrderError::Acme(AcmeError::HttpRequest(error))
            if error.to_string().starts_with("non 2xx") =>
        {
            "the directory refused the request (its answer is in the error: a rate limit, a \
             name it will not issue for). While trying a set-up, use --acme-staging"
        }
        OrderError::Acme(AcmeError::HttpRequest(_) | AcmeError::Io(_)) => {
            "could not reach the ACME directory. Check the --acme-directory URL, that this \
             machine can open https connections out, and (for a private directory) the \
             certificate given to --acme-directory-ca"
        }
        _ => "see the error; the directory's answers are logged at debug level",
    }
}

/// Answers plain http on `listener` with `308 Permanent Redirect` to the same path on
/// `https://` (the first domain unless the request named another of them), until `stop`.
pub(crate) async fn redirect(
    listener: TcpListener,
    domains: Vec<String>,
    https_port: u16,
    tasks: tokio_util::task::TaskTracker,
    stop: CancellationToken,
) {
    let domains = Arc::new(domains);
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(error) => {
                warn!(%error, "http redirect: accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let domains = Arc::clone(&domains);
        let stop = stop.clone();
        tasks.spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let answer = redirect_answer(&request, &domains, https_port);
                async move { Ok::<_, std::convert::Infallible>(answer) }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .keep_alive(false)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            tokio::select! {
                () = stop.cancelled() => {}
                _ = tokio::time::timeout(Duration::from_secs(10), connection) => {}
            }
        });
    }
}

/// The redirect for one plain-http request.
fn redirect_answer<B>(
    request: &hyper::Request<B>,
    domains: &[String],
    https_port: u16,
) -> hyper::Response<http_body_util::Full<bytes::Bytes>> {
    let asked = request
        .headers()
        .get(hyper::header::HOST)
        .and_then(|host| host.to_str().ok())
        .map(|host| {
            host.rsplit_once(':')
                .filter(|(_, port)| port.bytes().all(|b| b.is_ascii_digit()))
                .map_or(host, |(name, _)| name)
                .to_ascii_lowercase()
        });
    // Only to one of the server's own names: never an open redirect to whatever Host says.
    let host = asked
        .filter(|host| domains.iter().any(|domain| domain == host))
        .or_else(|| domains.first().cloned())
        .unwrap_or_default();
    let path = request
        .uri()
        .path_and_query()
        .map_or("/", hyper::http::uri::PathAndQuery::as_str);
    let location = match https_port {
        443 => format!("https://{host}{path}"),
        port => format!("https://{host}:{port}{path}"),
    };
    let body = format!("This server is at {location}\n");
    hyper::Response::builder()
        .status(hyper::StatusCode::PERMANENT_REDIRECT)
        .header(hyper::header::LOCATION, location)
        .header(hyper::header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .header(hyper::header::CONNECTION, "close")
        .body(http_body_util::Full::new(bytes::Bytes::from(body)))
        .unwrap_or_else(|_| hyper::Response::new(http_body_util::Full::default()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_says_what_to_check() {
        use rustls_acme::OrderError;
        use rustls_acme::acme::AcmeError;
        let unreachable = OrderError::Acme(AcmeError::Io(io::Error::other("refused")));
        assert!(what_to_check(&unreachable).contains("--acme-directory URL"));
        let unchecked = OrderError::TooManyAttemptsAuth("melee.example.org".into());
        assert!(what_to_check(&unchecked).contains("DNS record"));
    }

    #[test]
    fn a_redirect_goes_to_the_same_path_on_one_of_the_servers_names() {
        let domains = ["melee.example.org".to_owned(), "b.example.org".to_owned()];
        let ask = |host: &str, path: &str, port: u16| {
            let request = hyper::Request::builder()
                .uri(path)
                .header("host", host)
                .body(())
                .unwrap();
            let answer = redirect_answer(&request, &domains, port);
            assert_eq!(answer.status(), hyper::StatusCode::PERMANENT_REDIRECT);
            answer.headers()["location"].to_str().unwrap().to_owned()
        };
        assert_eq!(
            ask("B.example.org:80", "/t/abc?x=1", 443),
            "https://b.example.org/t/abc?x=1"
        );
        assert_eq!(
            ask("evil.example", "/", 8443),
            "https://melee.example.org:8443/"
        );
    }
}

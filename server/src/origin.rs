//! Which browser pages may open a WebSocket here: the `Origin` check of the handshake.
//!
//! A browser names the page that opens a WebSocket in the handshake's `Origin` header. When
//! `--allowed-origins` lists origins, only those and the server's **own** origins are accepted
//! (any origin is accepted when it is empty; a request without `Origin`, from a program that is
//! not a browser, always is). The own origins come from the server's configuration and from the
//! socket, never from the request (a `Host` header is whatever the page's DNS name was, so a
//! DNS-rebinding page would pass a check based on it):
//!
//! - the origin of `--public-url`, the address people use (behind a reverse proxy: the proxy's);
//!   on a connection whose scheme a `--trusted-proxy` named (`X-Forwarded-Proto`), also its host
//!   and port with that scheme (the default port of that scheme when the URL names none);
//! - with `--tls-cert`: `https://<each DNS name of the certificate>[:port]` (a `*.` name covers
//!   one label), the port being the one the connection came in on;
//! - the address the client connected to, as the accepted socket reports it:
//!   `scheme://<IP literal>:<port>` (IPv6 in brackets), and `scheme://localhost:<port>` when
//!   that address is a loopback one.
//!
//! Origins compare as the browser serialises them (WHATWG URL: lowercase scheme and host,
//! punycode, the scheme's default port left out).

use std::net::SocketAddr;

use url::{Host, Origin, Url};

/// The origins a configuration names, checked once at start.
#[derive(Debug, Clone, Default)]
pub(crate) struct OriginPolicy {
    /// `--allowed-origins`; empty: any origin.
    allowed: Vec<Origin>,
    /// The origin of `--public-url`.
    public: Option<Origin>,
    /// With TLS: the certificate's DNS names, lowercase (a wildcard one starts with `*.`).
    certificate_names: Vec<String>,
}

/// How a connection reached the server, as its socket (not its request) says; only the scheme
/// may come from a `--trusted-proxy`'s header ([`crate::forwarded::via`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Arrival {
    /// The local address the client connected to (`local_addr()` of the accepted stream).
    pub local: Option<SocketAddr>,
    /// Whether the connection is TLS (the page's origin is then `https://…`), or the client's
    /// connection to a trusted proxy was.
    pub secure: bool,
    /// Whether `secure` is what a trusted proxy's `X-Forwarded-Proto` (or `Forwarded: proto=`)
    /// said: the host the proxy was reached at is not known from the socket, so `--public-url`'s
    /// host then counts with that scheme.
    pub forwarded: bool,
}

impl OriginPolicy {
    /// The policy of `--allowed-origins`, `--public-url` and the certificate's DNS names.
    pub(crate) fn new(
        allowed: &[String],
        public_url: Option<&str>,
        certificate_names: &[String],
    ) -> Result<Self, OriginOptionError> {
        let parse = |option, text: &str| {
            parse_origin(text).map_err(|error| OriginOptionError {
                option,
                text: text.to_owned(),
                error,
            })
        };
        let allowed = allowed
            .iter()
            .map(|entry| parse("--allowed-origins", entry))
            .collect::<Result<Vec<_>, _>>()?;
        let public = public_url
            .map(|url| parse("--public-url", url))
            .transpose()?;
        Ok(Self {
            allowed,
            public,
            certificate_names: certificate_names
                .iter()
                .map(|name| name.to_ascii_lowercase())
                .collect(),
        })
    }

    /// Whether a page from `origin` (an `Origin` header's value) may open a WebSocket on a
    /// connection that arrived as `arrival`.
    pub(crate) fn allows(&self, origin: &str, arrival: Arrival) -> bool {
        if self.allowed.is_empty() {
            return true;
        }
        let Ok(origin) = Url::parse(origin.trim()).map(|url| url.origin()) else {
            return false;
        };
        self.allowed.contains(&origin) || self.is_own(&origin, arrival)
    }

    /// Whether `origin` is one of the server's own (see the module's documentation).
    fn is_own(&self, origin: &Origin, arrival: Arrival) -> bool {
        if self.public.as_ref() == Some(origin) {
            return true;
        }
        let Origin::Tuple(scheme, host, port) = origin else {
            return false;
        };
        let own_scheme = if arrival.secure { "https" } else { "http" };
        if arrival.forwarded
            && let Some(Origin::Tuple(public_scheme, public_host, public_port)) = &self.public
        {
            let default_port = |scheme: &str| if scheme == "https" { 443 } else { 80 };
            let own_port = if *public_port == default_port(public_scheme) {
                default_port(own_scheme)
            } else {
                *public_port
            };
            if scheme == own_scheme && host == public_host && *port == own_port {
                return true;
            }
        }
        let Some(local) = arrival.local else {
            return false;
        };
        if scheme != own_scheme || *port != local.port() {
            return false;
        }
        let ip = local.ip().to_canonical();
        match host {
            Host::Ipv4(v4) => ip == std::net::IpAddr::V4(*v4),
            Host::Ipv6(v6) => ip == std::net::IpAddr::V6(*v6),
            Host::Domain(name) => {
                (name == "localhost" && ip.is_loopback())
                    || (arrival.secure
                        && self
                            .certificate_names
                            .iter()
                            .any(|pattern| name_matches(pattern, name)))
            }
        }
    }
}

/// Whether a certificate's DNS name (`melee.example`, or `*.melee.example` for one label)
/// covers the host `name` (both lowercase).
fn name_matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_prefix("*.") {
        Some(parent) => name
            .strip_suffix(parent)
            .and_then(|label| label.strip_suffix('.'))
            .is_some_and(|label| !label.is_empty() && !label.contains('.')),
        None => pattern == name,
    }
}

/// The origin of a page address given in the configuration (`--public-url`, an entry of
/// `--allowed-origins`): `http://` or `https://`, a host, an optional port, and nothing after
/// it but an optional `/`.
pub(crate) fn parse_origin(text: &str) -> Result<Origin, OriginError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(OriginError::Empty);
    }
    if !text.contains("://") {
        return Err(OriginError::NoScheme);
    }
    let url = Url::parse(text)?;
    if url.scheme() != "http" && url.scheme() != "https" {
        return Err(OriginError::Scheme(url.scheme().to_owned()));
    }
    if url.host().is_none() {
        return Err(OriginError::NoHost);
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(OriginError::Credentials);
    }
    if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
        return Err(OriginError::Path);
    }
    if url.port() == Some(0) {
        return Err(OriginError::PortZero);
    }
    Ok(url.origin())
}

/// How a page address in the configuration is written.
const FORM: &str = "write it as http://HOST[:PORT] or https://HOST[:PORT]";

/// Why a page address given in the configuration is refused ([`parse_origin`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum OriginError {
    #[error("empty; {FORM}")]
    Empty,
    #[error("no scheme; {FORM}")]
    NoScheme,
    #[error("not a URL ({0}); {FORM}")]
    NotAUrl(#[from] url::ParseError),
    #[error("the scheme must be http or https, not {0} (a page's address, not the WebSocket's)")]
    Scheme(String),
    #[error("no host name")]
    NoHost,
    #[error("a user name or password has no place in it")]
    Credentials,
    #[error(
        "a path, query or fragment has no place in it: the page is served at / (write only \
         scheme://host[:port])"
    )]
    Path,
    #[error("port 0 cannot be reached")]
    PortZero,
}

/// A configured page address refused, with the option that gave it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{option} {text:?}: {error}")]
pub(crate) struct OriginOptionError {
    /// `--allowed-origins` or `--public-url`.
    option: &'static str,
    text: String,
    error: OriginError,
}

/// `--public-url` and `--allowed-origins` as clap checks them: the origin, as browsers write it.
pub(crate) fn origin_arg(text: &str) -> Result<String, OriginError> {
    parse_origin(text).map(|origin| origin.ascii_serialization())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn arrival(local: &str, secure: bool) -> Arrival {
        Arrival {
            local: Some(local.parse().unwrap()),
            secure,
            forwarded: false,
        }
    }

    fn policy(public: Option<&str>, names: &[&str]) -> OriginPolicy {
        let names: Vec<String> = names.iter().map(|&n| n.to_owned()).collect();
        OriginPolicy::new(&["https://melee.example".to_owned()], public, &names).unwrap()
    }

    #[test]
    fn own_origins_come_from_the_socket_and_the_configuration() {
        let plain = policy(None, &[]);
        let lan = arrival("192.168.1.5:7878", false);
        assert!(plain.allows("http://192.168.1.5:7878", lan));
        assert!(plain.allows("https://melee.example", lan));
        // A DNS-rebinding page: its name resolves to the server, but it is not the server's.
        assert!(!plain.allows("http://evil.example:7878", lan));
        assert!(!plain.allows("http://localhost:7878", lan), "not loopback");
        assert!(
            !plain.allows("http://192.168.1.5:7879", lan),
            "another port"
        );
        assert!(
            !plain.allows("https://192.168.1.5:7878", lan),
            "another scheme"
        );
        assert!(!plain.allows("null", lan));
        let local = arrival("127.0.0.1:7878", false);
        assert!(plain.allows("http://localhost:7878", local));
        assert!(plain.allows("http://127.0.0.1:7878", local));
        let v6 = arrival("[::1]:80", false);
        assert!(plain.allows("http://[::1]", v6), "default port left out");
        assert!(plain.allows("http://localhost", v6));
        let mapped = arrival("[::ffff:10.0.0.5]:7878", false);
        assert!(plain.allows("http://10.0.0.5:7878", mapped));
        let unknown = Arrival {
            local: None,
            secure: false,
            forwarded: false,
        };
        assert!(!plain.allows("http://127.0.0.1:7878", unknown));
    }

    #[test]
    fn the_public_url_and_the_certificate_name_the_server() {
        let proxied = policy(Some("https://Play.Example/"), &[]);
        let behind = arrival("127.0.0.1:7878", false);
        assert!(proxied.allows("https://play.example", behind));
        assert!(proxied.allows("https://play.example:443", behind));
        assert!(!proxied.allows("http://play.example", behind));
        let tls = policy(None, &["Melee.Test", "*.tables.test"]);
        let at = arrival("203.0.113.7:443", true);
        assert!(tls.allows("https://melee.test", at));
        assert!(tls.allows("https://east.tables.test", at));
        assert!(!tls.allows("https://tables.test", at));
        assert!(!tls.allows("https://a.b.tables.test", at));
        assert!(!tls.allows("https://melee.test:8443", at));
        assert!(!tls.allows("http://melee.test:443", at));
        let plain = arrival("203.0.113.7:443", false);
        assert!(!tls.allows("https://melee.test", plain));
    }

    #[test]
    fn a_trusted_proxy_names_the_scheme_of_the_public_host() {
        let proxied = policy(Some("http://play.example"), &[]);
        let https = Arrival {
            local: Some("127.0.0.1:7878".parse().unwrap()),
            secure: true,
            forwarded: true,
        };
        assert!(proxied.allows("https://play.example", https));
        assert!(
            proxied.allows("http://play.example", https),
            "--public-url itself"
        );
        assert!(!proxied.allows("https://play.example:8443", https));
        assert!(!proxied.allows("https://evil.example", https));
        let not_said = Arrival {
            forwarded: false,
            ..https
        };
        assert!(!proxied.allows("https://play.example", not_said));
        let with_port = policy(Some("http://play.example:8080"), &[]);
        assert!(with_port.allows("https://play.example:8080", https));
        assert!(!with_port.allows("https://play.example", https));
        let plain = Arrival {
            secure: false,
            ..https
        };
        let secure_url = policy(Some("https://play.example"), &[]);
        assert!(secure_url.allows("http://play.example", plain));
        assert!(!secure_url.allows("http://play.example:443", plain));
        let none = policy(None, &[]);
        assert!(!none.allows("https://play.example", https));
    }

    #[test]
    fn an_empty_list_allows_any_origin() {
        let any = OriginPolicy::new(&[], None, &[]).unwrap();
        assert!(any.allows("http://evil.example", arrival("127.0.0.1:1", false)));
    }

    #[test]
    fn configured_addresses_are_checked() {
        assert_eq!(
            origin_arg("HTTPS://Melee.Example:443/").unwrap(),
            "https://melee.example"
        );
        assert_eq!(
            origin_arg("http://[::1]:8080").unwrap(),
            "http://[::1]:8080"
        );
        for bad in [
            "melee.example",
            "wss://melee.example",
            "https://melee.example/play",
            "https://melee.example/?x=1",
            "https://user@melee.example",
            "https://melee.example:0",
            "https://melee.example:99999",
            "",
        ] {
            assert!(origin_arg(bad).is_err(), "{bad}");
        }
        let error = OriginPolicy::new(&[], Some("https://melee.example/play"), &[]).unwrap_err();
        assert_eq!(error.error, OriginError::Path);
        let error = error.to_string();
        assert!(
            error.starts_with("--public-url \"https://melee.example/play\": a path"),
            "{error}"
        );
    }
}

//! The STUN/TURN servers handed to the pages for their camera links (issue 32): checked once
//! at startup from `--ice-server`, `--turn-secret` and `--turn-ttl-secs`, and, for each
//! `ice_servers` answer, TURN credentials minted in the TURN REST API's shared-secret scheme
//! (what coturn's `use-auth-secret` / `static-auth-secret` accepts):
//!
//! - username = `<expiry, Unix seconds>:<user>`,
//! - credential = base64(HMAC-SHA1(secret, username)).
//!
//! `stun:`/`stuns:` entries carry no credentials. The media never touch this server.

use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use sha1::Sha1;

use grand_melee_protocol::IceServer;

/// Why the ICE settings were refused at startup.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IceError {
    /// An `--ice-server` that is not a STUN or TURN URL.
    #[error(
        "--ice-server {0:?}: not a STUN or TURN URL (stun:HOST[:PORT], stuns:…, turn:HOST[:PORT][?transport=udp|tcp], turns:…)"
    )]
    BadUrl(String),
    /// `--turn-secret` without a `turn:`/`turns:` server to use it with.
    #[error("--turn-secret needs at least one --ice-server turn:… or turns:… URL")]
    SecretWithoutTurn,
    /// An empty `--turn-secret`.
    #[error("--turn-secret is empty")]
    EmptySecret,
    /// `--turn-ttl-secs 0`.
    #[error("--turn-ttl-secs must be at least 1")]
    ZeroTtl,
}

/// The checked ICE settings.
#[derive(Clone, Default)]
pub struct Ice {
    /// The URLs, as given.
    urls: Vec<String>,
    /// The shared secret, if the server mints TURN credentials.
    secret: Option<String>,
    /// How long minted credentials last, in seconds.
    ttl_secs: u64,
}

impl std::fmt::Debug for Ice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret.
        f.debug_struct("Ice")
            .field("urls", &self.urls)
            .field("secret", &self.secret.as_ref().map(|_| "…"))
            .field("ttl_secs", &self.ttl_secs)
            .finish()
    }
}

/// Whether `url` is a TURN URL (it takes credentials).
fn is_turn(url: &str) -> bool {
    url.starts_with("turn:") || url.starts_with("turns:")
}

/// Checks one URL: a known scheme, then a host (letters, digits, `.`, `-`, or an IPv6 address
/// in brackets), an optional port, and for TURN an optional `?transport=udp|tcp`.
fn check_url(url: &str) -> Result<(), IceError> {
    let bad = || IceError::BadUrl(url.to_owned());
    let (scheme, rest) = url.split_once(':').ok_or_else(bad)?;
    if !matches!(scheme, "stun" | "stuns" | "turn" | "turns") {
        return Err(bad());
    }
    let (address, query) = match rest.split_once('?') {
        Some((address, query)) => (address, Some(query)),
        None => (rest, None),
    };
    match query {
        None => {}
        Some("transport=udp" | "transport=tcp") if is_turn(url) => {}
        Some(_) => return Err(bad()),
    }
    let (host, port) = if let Some(v6) = address.strip_prefix('[') {
        let (host, after) = v6.split_once(']').ok_or_else(bad)?;
        host.parse::<std::net::Ipv6Addr>().map_err(|_| bad())?;
        (host, after.strip_prefix(':'))
    } else {
        match address.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (address, None),
        }
    };
    let host_ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == ':');
    let port_ok = port.is_none_or(|p| p.parse::<u16>().is_ok_and(|p| p != 0));
    if host_ok && port_ok {
        Ok(())
    } else {
        Err(bad())
    }
}

impl Ice {
    /// Checks the settings: every URL a STUN or TURN URL, a secret only with a TURN URL to use
    /// it with, a TTL of at least a second.
    pub fn new(urls: &[String], secret: Option<&str>, ttl_secs: u64) -> Result<Self, IceError> {
        let urls: Vec<String> = urls.iter().map(|u| u.trim().to_owned()).collect();
        for url in &urls {
            check_url(url)?;
        }
        if let Some(secret) = secret {
            if secret.is_empty() {
                return Err(IceError::EmptySecret);
            }
            if !urls.iter().any(|u| is_turn(u)) {
                return Err(IceError::SecretWithoutTurn);
            }
        }
        if ttl_secs == 0 {
            return Err(IceError::ZeroTtl);
        }
        Ok(Self {
            urls,
            secret: secret.map(str::to_owned),
            ttl_secs,
        })
    }

    /// Whether this server mints TURN credentials (a secret and a TURN URL to use it with).
    pub fn mints(&self) -> bool {
        self.secret.is_some() && self.urls.iter().any(|u| is_turn(u))
    }

    /// How long minted credentials last, in seconds.
    pub fn ttl_secs(&self) -> u64 {
        self.ttl_secs
    }

    /// The servers for one answer, with credentials minted for `user` (`gm-<table>-<player>`
    /// or `gm-<table>-display`) at `now_secs` (Unix seconds): the STUN URLs in one entry, the
    /// TURN URLs in another with credentials when the server has a secret (without one, TURN
    /// URLs go as given: a TURN server of the operator's that needs none). With a secret and no
    /// `user` (a connection with no camera link, or past its address's budget), the TURN URLs
    /// are left out: nobody gets the operator's relay without a link to use it for.
    pub fn servers(&self, user: Option<&str>, now_secs: u64) -> Vec<IceServer> {
        let (turn, stun): (Vec<String>, Vec<String>) =
            self.urls.iter().cloned().partition(|u| is_turn(u));
        let mut out = Vec::new();
        if !stun.is_empty() {
            out.push(IceServer {
                urls: stun,
                username: None,
                credential: None,
            });
        }
        if !turn.is_empty() {
            let (username, credential) = match (&self.secret, user) {
                (Some(secret), Some(user)) => {
                    let (username, credential) =
                        turn_credential(secret, now_secs.saturating_add(self.ttl_secs), user);
                    (Some(username), Some(credential))
                }
                (Some(_), None) => return out,
                (None, _) => (None, None),
            };
            out.push(IceServer {
                urls: turn,
                username,
                credential,
            });
        }
        out
    }
}

/// The TURN REST API's credential for `user` until `expiry` (Unix seconds) under `secret`:
/// (`"<expiry>:<user>"`, base64(HMAC-SHA1(secret, that username))).
pub fn turn_credential(secret: &str, expiry: u64, user: &str) -> (String, String) {
    let username = format!("{expiry}:{user}");
    let credential = base64::engine::general_purpose::STANDARD
        .encode(hmac_sha1(secret.as_bytes(), username.as_bytes()));
    (username, credential)
}

/// HMAC-SHA1 (RFC 2104) of `message` under `key`.
fn hmac_sha1(key: &[u8], message: &[u8]) -> Vec<u8> {
    // HMAC takes a key of any length: this cannot fail.
    let Ok(mut mac) = <Hmac<Sha1> as KeyInit>::new_from_slice(key) else {
        return Vec::new();
    };
    mac.update(message);
    mac.finalize().into_bytes().to_vec()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// RFC 2202's HMAC-SHA1 test cases 1–7.
    #[test]
    fn hmac_sha1_is_rfc_2202s() {
        let cases: [(Vec<u8>, Vec<u8>, &str); 7] = [
            (
                vec![0x0b; 20],
                b"Hi There".to_vec(),
                "b617318655057264e28bc0b6fb378c8ef146be00",
            ),
            (
                b"Jefe".to_vec(),
                b"what do ya want for nothing?".to_vec(),
                "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79",
            ),
            (
                vec![0xaa; 20],
                vec![0xdd; 50],
                "125d7342b9ac11cd91a39af48aa17b4f63f175d3",
            ),
            (
                (1..=25).collect(),
                vec![0xcd; 50],
                "4c9007f4026250c6bc8414f9bf50c86c2d7235da",
            ),
            (
                vec![0x0c; 20],
                b"Test With Truncation".to_vec(),
                "4c1a03424b55e07fe7f27be1d58bb9324a9a5a04",
            ),
            (
                vec![0xaa; 80],
                b"Test Using Larger Than Block-Size Key - Hash Key First".to_vec(),
                "aa4ae5e15272d00e95705637ce8a3b55ed402112",
            ),
            (
                vec![0xaa; 80],
                b"Test Using Larger Than Block-Size Key and Larger Than One Block-Size Data"
                    .to_vec(),
                "e8e99d0f45237d786d6bbaa7965c7808bbff1a91",
            ),
        ];
        for (key, data, digest) in cases {
            assert_eq!(hex::encode(hmac_sha1(&key, &data)), digest);
        }
    }

    /// The credential for fixed inputs, against a value computed apart from this code, with
    /// Python's standard library:
    #[test]
    fn turn_credentials_are_the_shared_secret_schemes() {
        let table = "5f3c1a2e-8d4b-4c6e-9a7f-0b1c2d3e4f50";
        let (username, credential) =
            turn_credential("north-hall-secret", 1_795_086_400, &format!("gm-{table}-0"));
        assert_eq!(username, format!("1795086400:gm-{table}-0"));
        // python3 -c "import hmac,hashlib,base64; u='1795086400:gm-5f3c1a2e-8d4b-4c6e-9a7f-0b1c2d3e4f50-0'; print(base64.b64encode(hmac.new(b'north-hall-secret', u.encode(), hashlib.sha1).digest()).decode())"
        assert_eq!(credential, "BHLnDyvLIRdVkAMtLU5N7UQ6ccU=");
        // python3 -c "import hmac,hashlib,base64; print(base64.b64encode(hmac.new(b's3cret', b'86400:gm-t-display', hashlib.sha1).digest()).decode())"
        let (username, credential) = turn_credential("s3cret", 86_400, "gm-t-display");
        assert_eq!(username, "86400:gm-t-display");
        assert_eq!(credential, "Qb1jm6hNORkX7pNypULC9u6vgxc=");
    }

    #[test]
    fn stun_entries_carry_nothing_turn_entries_carry_fresh_credentials() {
        let urls = [
            "stun:stun.example.org:3478".to_owned(),
            "turn:turn.example.org:3478?transport=udp".to_owned(),
            "turns:turn.example.org:5349".to_owned(),
        ];
        let ice = Ice::new(&urls, Some("north-hall-secret"), 3600).unwrap();
        assert!(ice.mints());
        let servers = ice.servers(Some("gm-t-3"), 1_000);
        assert_eq!(servers.len(), 2);
        assert_eq!(servers[0].urls, ["stun:stun.example.org:3478"]);
        assert_eq!(servers[0].username, None);
        assert_eq!(servers[0].credential, None);
        assert_eq!(servers[1].urls, urls[1..]);
        let (username, credential) = turn_credential("north-hall-secret", 4_600, "gm-t-3");
        assert_eq!(servers[1].username.as_deref(), Some(username.as_str()));
        assert_eq!(servers[1].credential.as_deref(), Some(credential.as_str()));
        // Nobody to mint for: the STUN entry only.
        let unlinked = ice.servers(None, 1_000);
        assert_eq!(unlinked, servers[..1]);
        // Without a secret TURN URLs go as given; without URLs there is nothing.
        let plain = Ice::new(&urls[1..2], None, 3600).unwrap();
        assert!(!plain.mints());
        assert_eq!(plain.servers(None, 0)[0].username, None);
        assert_eq!(plain.servers(Some("u"), 0)[0].username, None);
        assert!(Ice::default().servers(Some("u"), 0).is_empty());
    }

    #[test]
    fn bad_settings_are_refused_with_a_clear_error() {
        for url in [
            "http://turn.example.org",
            "turn:",
            "stun:host:99999",
            "stun:host?transport=udp",
            "turn:host?transport=sctp",
            "turn:bad host",
            "turn:[::1",
        ] {
            assert_eq!(
                Ice::new(&[url.to_owned()], None, 60).unwrap_err(),
                IceError::BadUrl(url.to_owned()),
                "{url}"
            );
        }
        for url in [
            "stun:10.0.0.1",
            "stuns:h.example:5349",
            "turn:[::1]:3478?transport=tcp",
        ] {
            assert!(Ice::new(&[url.to_owned()], None, 60).is_ok(), "{url}");
        }
        let stun = ["stun:h.example".to_owned()];
        assert_eq!(
            Ice::new(&stun, Some("s"), 60).unwrap_err(),
            IceError::SecretWithoutTurn
        );
        assert_eq!(
            Ice::new(&["turn:h".to_owned()], Some(""), 60).unwrap_err(),
            IceError::EmptySecret
        );
        assert_eq!(
            Ice::new(&["turn:h".to_owned()], None, 0).unwrap_err(),
            IceError::ZeroTtl
        );
        assert!(
            IceError::SecretWithoutTurn
                .to_string()
                .contains("--turn-secret")
        );
    }
}

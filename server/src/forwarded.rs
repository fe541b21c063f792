//! Behind a reverse proxy (`--trusted-proxy`): which client a connection from a trusted proxy
//! speaks for, and which scheme the client used.
//!
//! Only for a connection whose socket address is in a `--trusted-proxy` range are the
//! forwarding headers read; from any other address they are ignored, whatever they say. From a
//! trusted proxy:
//!
//! - `Forwarded` (RFC 7239) wins when present: its elements (several headers are one list) are
//!   walked from the right, past every `for=` that is itself a trusted proxy; the first other
//!   address is the client, and that element's `proto=` its scheme. An `unknown` or obfuscated
//!   (`_…`) node met on the way means the client cannot be named: the socket's address is used.
//! - Otherwise `X-Forwarded-For` (a comma list; several headers are one list) is walked the same
//!   way, and `X-Forwarded-Proto` (one value, `http` or `https`) is the scheme.
//! - When every address in the list is a trusted proxy, the left-most one is the client.
//! - Anything the walk cannot read (a header that does not parse, an entry that is no address)
//!   falls back to the socket's address and scheme: garbage is never trusted.
//!
//! Ports in either header are accepted and ignored.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::str::FromStr;

use tracing::debug;

/// An address range of `--trusted-proxy`: `ADDRESS/BITS`, or one address (all its bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cidr {
    network: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// Whether `ip` is in the range (an IPv4 address mapped into IPv6 counts as IPv4).
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.network, ip.to_canonical()) {
            (IpAddr::V4(network), IpAddr::V4(ip)) => {
                (u32::from(network) ^ u32::from(ip)) & v4_mask(self.prefix) == 0
            }
            (IpAddr::V6(network), IpAddr::V6(ip)) => {
                (u128::from(network) ^ u128::from(ip)) & v6_mask(self.prefix) == 0
            }
            _ => false,
        }
    }
}

fn v4_mask(prefix: u8) -> u32 {
    u32::MAX
        .checked_shl(32 - u32::from(prefix.min(32)))
        .unwrap_or(0)
}

fn v6_mask(prefix: u8) -> u128 {
    u128::MAX
        .checked_shl(128 - u32::from(prefix.min(128)))
        .unwrap_or(0)
}

/// How an address range is written.
const FORM: &str = "write an address range as ADDRESS/BITS (e.g. 10.0.0.0/8, fd00::/8) or one \
                    address (e.g. 127.0.0.1)";

/// Why an address range (`--trusted-proxy`) is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CidrError {
    #[error("{0:?} is not an IP address; {FORM}")]
    NotAnAddress(String),
    #[error("{bits:?} is not a prefix length from 0 to {width}")]
    Prefix { bits: String, width: u8 },
    /// Bits set past the prefix: most likely a typo for `meant`.
    #[error("{text:?} has bits set past its /{prefix}: did you mean {meant}?")]
    BitsPastPrefix {
        text: String,
        prefix: u8,
        meant: Cidr,
    },
}

impl FromStr for Cidr {
    type Err = CidrError;

    /// `10.0.0.0/8`, `2001:db8::/32`, or one address (`127.0.0.1`: a /32, `::1`: a /128). An
    /// address with bits set past the prefix is refused (it is most likely a typo).
    fn from_str(text: &str) -> Result<Self, CidrError> {
        let text = text.trim();
        let (address, bits) = match text.split_once('/') {
            Some((address, bits)) => (address, Some(bits)),
            None => (text, None),
        };
        let address: IpAddr = address
            .parse()
            .map_err(|_| CidrError::NotAnAddress(address.to_owned()))?;
        let width: u8 = if address.is_ipv4() { 32 } else { 128 };
        let prefix = match bits {
            None => width,
            Some(bits) => bits
                .parse::<u8>()
                .ok()
                .filter(|&bits| bits <= width)
                .ok_or_else(|| CidrError::Prefix {
                    bits: bits.to_owned(),
                    width,
                })?,
        };
        let cidr = match address {
            // An IPv4 range written as mapped IPv6 (`::ffff:10.0.0.0/104`) is that IPv4 range.
            IpAddr::V6(v6) if prefix >= 96 && v6.to_ipv4_mapped().is_some() => Self {
                network: IpAddr::V6(v6).to_canonical(),
                prefix: prefix - 96,
            },
            network => Self { network, prefix },
        };
        let network = match cidr.network {
            IpAddr::V4(v4) => IpAddr::V4(Ipv4Addr::from(u32::from(v4) & v4_mask(cidr.prefix))),
            IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & v6_mask(cidr.prefix))),
        };
        if network != cidr.network {
            return Err(CidrError::BitsPastPrefix {
                text: text.to_owned(),
                prefix,
                meant: Self {
                    network,
                    prefix: cidr.prefix,
                },
            });
        }
        Ok(cidr)
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

/// Whether `ip` is in one of the `--trusted-proxy` ranges.
pub(crate) fn trusts(proxies: &[Cidr], ip: IpAddr) -> bool {
    proxies.iter().any(|range| range.contains(ip))
}

/// Who a request is from, as far as the server can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Via {
    /// The client's address: the socket's, or the one a trusted proxy forwarded.
    pub client: IpAddr,
    /// The scheme a trusted proxy says the client used (`Some(true)`: https); `None`: the
    /// socket's own (no trusted proxy, or it did not say).
    pub secure: Option<bool>,
}

/// What a header list says of one forwarded hop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Node {
    Ip(IpAddr),
    /// `unknown` or an obfuscated identifier: an address that is not given.
    Hidden,
}

/// Who the request with these headers (`(name, value)`, in order, duplicates included) is from,
/// on a connection from `peer`. The one function for every path that reads a request head.
pub(crate) fn via<'a, H>(peer: SocketAddr, proxies: &[Cidr], headers: H) -> Via
where
    H: Iterator<Item = (&'a str, &'a [u8])> + Clone,
{
    let socket = Via {
        client: peer.ip().to_canonical(),
        secure: None,
    };
    if !trusts(proxies, peer.ip()) {
        return socket;
    }
    let values = |name: &'static str| {
        headers
            .clone()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| std::str::from_utf8(v).map(str::trim))
    };
    let forwarded: Result<Vec<&str>, _> = values("forwarded").collect();
    let result = match forwarded {
        Ok(lines) if !lines.is_empty() => from_forwarded(&lines, proxies),
        Err(_) => Err("a Forwarded header that is not UTF-8"),
        Ok(_) => match values("x-forwarded-for").collect::<Result<Vec<&str>, _>>() {
            Err(_) => Err("an X-Forwarded-For header that is not UTF-8"),
            Ok(lines) => from_forwarded_for(&lines, proxies).map(|client| {
                // No X-Forwarded-For: the proxy speaks for itself, but may still name the scheme.
                let client = client.unwrap_or(Node::Ip(socket.client));
                Some((client, forwarded_proto(values("x-forwarded-proto"))))
            }),
        },
    };
    match result {
        Ok(Some((Node::Ip(client), secure))) => Via {
            client: client.to_canonical(),
            secure,
        },
        Ok(Some((Node::Hidden, secure))) => Via {
            client: socket.client,
            secure,
        },
        Ok(None) => socket,
        Err(reason) => {
            debug!(%peer, reason, "forwarding headers from a trusted proxy ignored");
            socket
        }
    }
}

/// The client's node in `X-Forwarded-For` lines: `Ok(None)` for an empty list.
fn from_forwarded_for(lines: &[&str], proxies: &[Cidr]) -> Result<Option<Node>, &'static str> {
    let entries: Vec<&str> = lines
        .iter()
        .flat_map(|line| line.split(','))
        .map(str::trim)
        .collect();
    if entries.iter().all(|entry| entry.is_empty()) {
        return Ok(None);
    }
    walk(entries.iter().rev().map(|entry| node(entry)), proxies)
        .map(Some)
        .ok_or("an X-Forwarded-For entry that is not an address")
}

/// Walks hops from the nearest: past every trusted proxy, to the first other node; the
/// furthest one if all are trusted. `None`: a node that cannot be read on the way.
fn walk(nearest_first: impl Iterator<Item = Option<Node>>, proxies: &[Cidr]) -> Option<Node> {
    let mut furthest = None;
    for hop in nearest_first {
        match hop? {
            Node::Ip(ip) if trusts(proxies, ip) => furthest = Some(Node::Ip(ip)),
            other => return Some(other),
        }
    }
    furthest
}

/// The client's node and scheme in `Forwarded` lines; `Ok(None)` when no element has `for=`.
fn from_forwarded(
    lines: &[&str],
    proxies: &[Cidr],
) -> Result<Option<(Node, Option<bool>)>, &'static str> {
    let mut elements = Vec::new();
    for line in lines {
        elements.extend(forwarded_elements(line).ok_or("a Forwarded header that does not parse")?);
    }
    // Elements without `for=` say nothing of who sent them.
    let hops: Vec<(Option<Node>, Option<bool>)> = elements
        .iter()
        .filter_map(|pairs| {
            let value = |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v.as_str())
            };
            let secure = value("proto").and_then(scheme);
            value("for").map(|node_text| (node(node_text), secure))
        })
        .collect();
    if hops.is_empty() {
        return Ok(None);
    }
    let client = walk(hops.iter().rev().map(|(node, _)| *node), proxies)
        .ok_or("a Forwarded for= that is not an address")?;
    // The element that names the client also says how that client came in.
    let secure = hops
        .iter()
        .rev()
        .find(|(node, _)| *node == Some(client))
        .and_then(|(_, secure)| *secure);
    Ok(Some((client, secure)))
}

/// One `Forwarded` line's elements, each a list of `(name, value)` pairs with quoted strings
/// unquoted; `None` if it does not parse (RFC 7239 §4).
fn forwarded_elements(line: &str) -> Option<Vec<Vec<(String, String)>>> {
    let mut elements = vec![Vec::new()];
    let mut rest = line.trim_start();
    loop {
        if rest.is_empty() {
            break;
        }
        let (name, after) = rest.split_once('=')?;
        let name = name.trim();
        if name.is_empty() || !name.bytes().all(is_tchar) {
            return None;
        }
        let after = after.trim_start();
        let (value, after) = if let Some(quoted) = after.strip_prefix('"') {
            let mut value = String::new();
            let mut chars = quoted.char_indices();
            let end = loop {
                match chars.next()? {
                    (_, '\\') => value.push(chars.next()?.1),
                    (i, '"') => break i + 1,
                    (_, c) => value.push(c),
                }
            };
            (value, &quoted[end..])
        } else {
            let end = after
                .find(|c: char| c == ';' || c == ',' || c.is_whitespace())
                .unwrap_or(after.len());
            let value = &after[..end];
            if value.is_empty() || value.contains('"') {
                return None;
            }
            (value.to_owned(), &after[end..])
        };
        elements.last_mut()?.push((name.to_owned(), value));
        let after = after.trim_start();
        rest = match after.chars().next() {
            None => "",
            Some(';') => after[1..].trim_start(),
            Some(',') => {
                elements.push(Vec::new());
                after[1..].trim_start()
            }
            Some(_) => return None,
        };
    }
    Some(elements.into_iter().filter(|e| !e.is_empty()).collect())
}

/// RFC 9110's token characters.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// A forwarded node: an address with or without a port (`192.0.2.1`, `192.0.2.1:80`,
/// `[2001:db8::1]`, `[2001:db8::1]:443`, a bare `2001:db8::1`), or `unknown` / `_obfuscated`.
/// `None`: none of these.
fn node(text: &str) -> Option<Node> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("unknown") || text.starts_with('_') {
        return Some(Node::Hidden);
    }
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Some(Node::Ip(ip));
    }
    if let Some(v6) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        return v6.parse::<Ipv6Addr>().ok().map(|v6| Node::Ip(v6.into()));
    }
    // With a port; an obfuscated port (`_…`) is allowed too.
    let (host, port) = text.rsplit_once(':')?;
    let port_ok = port.parse::<u16>().is_ok()
        || (port.starts_with('_') && port.len() > 1 && port.bytes().all(is_tchar));
    if !port_ok {
        return None;
    }
    if let Some(v6) = host.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        return v6.parse::<Ipv6Addr>().ok().map(|v6| Node::Ip(v6.into()));
    }
    if host.eq_ignore_ascii_case("unknown") || host.starts_with('_') {
        return Some(Node::Hidden);
    }
    host.parse::<Ipv4Addr>().ok().map(|v4| Node::Ip(v4.into()))
}

/// `http` or `https` (any case): whether it is https.
fn scheme(text: &str) -> Option<bool> {
    match text.trim() {
        s if s.eq_ignore_ascii_case("https") => Some(true),
        s if s.eq_ignore_ascii_case("http") => Some(false),
        _ => None,
    }
}

/// The scheme `X-Forwarded-Proto` names: one header with one value, `http` or `https`;
/// anything else says nothing.
fn forwarded_proto<'a>(
    mut values: impl Iterator<Item = Result<&'a str, std::str::Utf8Error>>,
) -> Option<bool> {
    match (values.next(), values.next()) {
        (Some(Ok(value)), None) => scheme(value),
        (None, _) => None,
        _ => {
            debug!("an X-Forwarded-Proto that is not one value: ignored");
            None
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn ranges(list: &[&str]) -> Vec<Cidr> {
        list.iter().map(|r| r.parse().unwrap()).collect()
    }

    fn via_from(peer: &str, proxies: &[&str], headers: &[(&str, &str)]) -> Via {
        let proxies = ranges(proxies);
        via(
            peer.parse().unwrap(),
            &proxies,
            headers.iter().map(|(n, v)| (*n, v.as_bytes())),
        )
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn ranges_parse_and_match() {
        let lan: Cidr = "10.0.0.0/8".parse().unwrap();
        assert!(lan.contains(ip("10.200.3.4")));
        assert!(!lan.contains(ip("11.0.0.1")));
        assert!(lan.contains(ip("::ffff:10.1.2.3")), "mapped IPv4");
        assert!(!lan.contains(ip("::1")));
        let one: Cidr = "127.0.0.1".parse().unwrap();
        assert_eq!(one.to_string(), "127.0.0.1/32");
        assert!(one.contains(ip("127.0.0.1")));
        assert!(!one.contains(ip("127.0.0.2")));
        let v6: Cidr = "fd00:1::/32".parse().unwrap();
        assert!(v6.contains(ip("fd00:1:ffff::9")));
        assert!(!v6.contains(ip("fd00:2::1")));
        assert!(!v6.contains(ip("10.0.0.1")));
        let all: Cidr = "0.0.0.0/0".parse().unwrap();
        assert!(all.contains(ip("203.0.113.9")));
        assert!("::/0".parse::<Cidr>().unwrap().contains(ip("2001:db8::1")));
        assert!("::1".parse::<Cidr>().unwrap().contains(ip("::1")));
        let mapped: Cidr = "::ffff:10.0.0.0/104".parse().unwrap();
        assert_eq!(mapped.to_string(), "10.0.0.0/8");
        for bad in [
            "",
            "10.0.0.0/",
            "10.0.0.0/33",
            "fd00::/129",
            "10.0.0.0/-1",
            "localhost",
            "10.0.0/8",
            "10.0.0.0/8/8",
        ] {
            assert!(bad.parse::<Cidr>().is_err(), "{bad}");
        }
        let typo = "10.0.0.1/8".parse::<Cidr>().unwrap_err();
        assert_eq!(
            typo,
            CidrError::BitsPastPrefix {
                text: "10.0.0.1/8".to_owned(),
                prefix: 8,
                meant: "10.0.0.0/8".parse().unwrap(),
            }
        );
        assert!(
            typo.to_string().contains("did you mean 10.0.0.0/8"),
            "{typo}"
        );
    }

    #[test]
    fn an_untrusted_peer_is_its_own_client_whatever_it_says() {
        let said = [
            ("X-Forwarded-For", "198.51.100.7"),
            ("Forwarded", "for=198.51.100.7;proto=https"),
            ("X-Forwarded-Proto", "https"),
        ];
        let v = via_from("127.0.0.3:5000", &["127.0.0.2/32"], &said);
        assert_eq!(v.client, ip("127.0.0.3"));
        assert_eq!(v.secure, None);
        let v = via_from("127.0.0.3:5000", &[], &said);
        assert_eq!(v.client, ip("127.0.0.3"));
    }

    #[test]
    fn x_forwarded_for_takes_the_rightmost_untrusted_address() {
        let proxies = ["127.0.0.2/32", "10.0.0.0/8"];
        let from = |headers: &[(&str, &str)]| via_from("127.0.0.2:1", &proxies, headers);
        assert_eq!(
            from(&[("X-Forwarded-For", "198.51.100.7")]).client,
            ip("198.51.100.7")
        );
        // The client's own claim on the left is not believed.
        assert_eq!(
            from(&[("X-Forwarded-For", "6.6.6.6, 198.51.100.7, 10.1.1.1")]).client,
            ip("198.51.100.7")
        );
        // Several headers are one list.
        assert_eq!(
            from(&[
                ("X-Forwarded-For", "6.6.6.6"),
                ("x-forwarded-for", "198.51.100.7,10.1.1.1")
            ])
            .client,
            ip("198.51.100.7")
        );
        // Every address trusted: the furthest.
        assert_eq!(
            from(&[("X-Forwarded-For", "10.0.0.9, 10.0.0.8")]).client,
            ip("10.0.0.9")
        );
        // Ports and brackets.
        assert_eq!(
            from(&[("X-Forwarded-For", "198.51.100.7:4711")]).client,
            ip("198.51.100.7")
        );
        assert_eq!(
            from(&[("X-Forwarded-For", "[2001:db8::1]:4711")]).client,
            ip("2001:db8::1")
        );
        assert_eq!(
            from(&[("X-Forwarded-For", "2001:db8::1")]).client,
            ip("2001:db8::1")
        );
        // Mapped IPv4 is IPv4.
        assert_eq!(
            from(&[("X-Forwarded-For", "::ffff:198.51.100.7")]).client,
            ip("198.51.100.7")
        );
        // No header, or an empty one: the proxy itself.
        assert_eq!(from(&[]).client, ip("127.0.0.2"));
        assert_eq!(from(&[("X-Forwarded-For", " ")]).client, ip("127.0.0.2"));
    }

    #[test]
    fn garbage_falls_back_to_the_socket() {
        let proxies = ["127.0.0.2/32", "10.0.0.0/8"];
        let from = |headers: &[(&str, &str)]| via_from("127.0.0.2:1", &proxies, headers);
        for garbage in [
            "not-an-address",
            "198.51.100.7, nonsense",
            "198.51.100.7,,",
            "198.51.100.7:99999",
            "999.1.1.1",
            "[198.51.100.7]",
            "198.51.100.7, 10.0.0.1 x",
        ] {
            assert_eq!(
                from(&[("X-Forwarded-For", garbage)]).client,
                ip("127.0.0.2"),
                "{garbage}"
            );
        }
        // Garbage the client wrote left of what the proxies appended does not matter.
        assert_eq!(
            from(&[("X-Forwarded-For", "nonsense, 198.51.100.7")]).client,
            ip("198.51.100.7")
        );
        for garbage in [
            "for=",
            "for=\"198.51.100.7",
            "for=198.51.100.7 proto=https",
            "=198.51.100.7",
            "for=nonsense",
            "f(o)r=198.51.100.7",
        ] {
            assert_eq!(
                from(&[("Forwarded", garbage), ("X-Forwarded-For", "198.51.100.9")]).client,
                ip("127.0.0.2"),
                "{garbage}"
            );
        }
        let bytes = [("Forwarded", &b"for=\xff"[..])];
        let v = via(
            "127.0.0.2:1".parse().unwrap(),
            &ranges(&proxies),
            bytes.iter().map(|(n, v)| (*n, *v)),
        );
        assert_eq!(v.client, ip("127.0.0.2"));
    }

    #[test]
    fn forwarded_is_read_as_rfc_7239_writes_it() {
        let proxies = ["127.0.0.2/32", "10.0.0.0/8"];
        let from = |headers: &[(&str, &str)]| via_from("127.0.0.2:1", &proxies, headers);
        let v = from(&[("Forwarded", "for=198.51.100.7;proto=https;by=10.0.0.1")]);
        assert_eq!((v.client, v.secure), (ip("198.51.100.7"), Some(true)));
        let v = from(&[("Forwarded", r#"For="[2001:db8:cafe::17]:4711";Proto=http"#)]);
        assert_eq!((v.client, v.secure), (ip("2001:db8:cafe::17"), Some(false)));
        let v = from(&[(
            "Forwarded",
            r#"for=6.6.6.6;proto=http, for="198.51.100.7:80";proto=https, for=10.0.0.3"#,
        )]);
        assert_eq!((v.client, v.secure), (ip("198.51.100.7"), Some(true)));
        // Forwarded wins over X-Forwarded-For.
        let v = from(&[
            ("X-Forwarded-For", "203.0.113.1"),
            ("Forwarded", "for=198.51.100.7"),
        ]);
        assert_eq!(v.client, ip("198.51.100.7"));
        // Several headers are one list.
        let v = from(&[
            ("Forwarded", "for=6.6.6.6"),
            ("Forwarded", "for=198.51.100.7;proto=https"),
        ]);
        assert_eq!(v.client, ip("198.51.100.7"));
        // Unknown and obfuscated nodes: the client cannot be named.
        for hidden in ["for=unknown", "for=_hidden", r#"for="_x:_y""#] {
            let v = from(&[("Forwarded", hidden), ("X-Forwarded-For", "198.51.100.9")]);
            assert_eq!(v.client, ip("127.0.0.2"), "{hidden}");
        }
        // A quoted string with an escape.
        let v = from(&[("Forwarded", r#"for="198.51.100.7";host="a\"b""#)]);
        assert_eq!(v.client, ip("198.51.100.7"));
        // Elements without for= say nothing: X-Forwarded-Proto is not read then either, and the
        // proxy speaks for itself.
        let v = from(&[("Forwarded", "proto=https")]);
        assert_eq!(v.client, ip("127.0.0.2"));
    }

    #[test]
    fn x_forwarded_proto_names_the_scheme_from_a_trusted_proxy_only() {
        let proxies = ["127.0.0.2/32"];
        let v = via_from("127.0.0.2:1", &proxies, &[("X-Forwarded-Proto", "HTTPS")]);
        assert_eq!((v.client, v.secure), (ip("127.0.0.2"), Some(true)));
        let v = via_from(
            "127.0.0.2:1",
            &proxies,
            &[
                ("X-Forwarded-For", "198.51.100.7"),
                ("X-Forwarded-Proto", "http"),
            ],
        );
        assert_eq!((v.client, v.secure), (ip("198.51.100.7"), Some(false)));
        for unclear in [&["https, http"][..], &["https", "https"][..], &["ftp"][..]] {
            let headers: Vec<(&str, &str)> =
                unclear.iter().map(|v| ("X-Forwarded-Proto", *v)).collect();
            assert_eq!(via_from("127.0.0.2:1", &proxies, &headers).secure, None);
        }
        let v = via_from("127.0.0.9:1", &proxies, &[("X-Forwarded-Proto", "https")]);
        assert_eq!(v.secure, None);
    }
}

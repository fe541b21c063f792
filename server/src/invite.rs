//! The address a table's invitation names: what `GET /invite.json` tells the page.
//!
//! A page opened as `http://127.0.0.1:7878/` on the server's own laptop would otherwise hand the
//! room a link and a QR code that no phone can open. The page asks the server once: its
//! `--public-url` if set, else an address of this machine that others can reach (when the
//! server listens on every interface), else nothing, and then the page warns that its link
//! works on this machine only (and says how to fix it). The decision which link to show, from
//! these and the page's own address, is the page's (`table.js`, `inviteBase`).

use std::net::{IpAddr, SocketAddr};

/// What the server knows about how others reach it: fixed at start.
#[derive(Clone, Debug)]
pub(crate) struct Invite {
    /// `--public-url`, as given (already checked to be an origin).
    public_url: Option<String>,
    /// The address the server listens on (its real port, even when started with port 0).
    listen: SocketAddr,
    /// Whether the server speaks TLS itself (the link is then `https://`).
    tls: bool,
}

impl Invite {
    pub(crate) fn new(public_url: Option<String>, listen: SocketAddr, tls: bool) -> Self {
        Self {
            public_url: public_url.map(|url| url.trim_end_matches('/').to_owned()),
            listen,
            tls,
        }
    }

    /// The answer to `GET /invite.json`: `public_url` (or null), `lan_url`, an address of this
    /// machine on the network the server listens on (or null), and `listen`. The machine's
    /// addresses are read at each request: a laptop may join a network after the server
    /// started.
    pub(crate) fn answer(&self) -> String {
        let lan = if self.public_url.is_some() {
            None
        } else {
            reachable(self.listen.ip(), &interfaces())
        };
        let lan_url = lan.map(|ip| {
            let scheme = if self.tls { "https" } else { "http" };
            format!("{scheme}://{}", SocketAddr::new(ip, self.listen.port()))
        });
        // Every value is an origin checked at start or an address we wrote: no character of
        // them needs escaping in a JSON string, and `quoted` makes sure of it.
        format!(
            "{{\"public_url\":{},\"lan_url\":{},\"listen\":{}}}\n",
            quoted(self.public_url.as_deref()),
            quoted(lan_url.as_deref()),
            quoted(Some(&self.listen.to_string())),
        )
    }
}

/// A JSON string (or `null`), dropping any character that would need escaping.
fn quoted(value: Option<&str>) -> String {
    match value {
        None => "null".to_owned(),
        Some(text) => {
            let clean: String = text
                .chars()
                .filter(|c| *c != '"' && *c != '\\' && !c.is_control())
                .collect();
            format!("\"{clean}\"")
        }
    }
}

/// This machine's interface addresses with their interfaces' names (none if they cannot be
/// read).
fn interfaces() -> Vec<(String, IpAddr)> {
    match if_addrs::get_if_addrs() {
        Ok(found) => found
            .into_iter()
            .map(|i| {
                let ip = i.ip();
                (i.name, ip)
            })
            .collect(),
        Err(error) => {
            tracing::debug!(%error, "cannot list the network interfaces");
            Vec::new()
        }
    }
}

/// The address to invite others with, for a server listening on `listen` in a machine with
/// these interface addresses: `listen` itself when it names one address others can reach;
/// none when it is a loopback address (nobody else can connect); for every interface
/// (`0.0.0.0`, `::`), the best of the machine's addresses: on a home network first
/// (192.168/16, then 10/8, then 172.16/12), then any other IPv4 address, then IPv6 (unique
/// local first). Loopback, link-local, multicast and unspecified addresses, and the bridges of
/// containers and virtual machines (`docker*`, `br-*`, `veth*`, `virbr*`), are never picked.
/// A server listening on `0.0.0.0` is reached over IPv4 only.
pub(crate) fn reachable(listen: IpAddr, interfaces: &[(String, IpAddr)]) -> Option<IpAddr> {
    if listen.is_loopback() {
        return None;
    }
    if !listen.is_unspecified() {
        return Some(listen);
    }
    let bridge = |name: &str| {
        ["docker", "br-", "veth", "virbr"]
            .iter()
            .any(|prefix| name.starts_with(prefix))
    };
    interfaces
        .iter()
        .filter(|(name, ip)| !bridge(name) && usable(*ip) && (listen.is_ipv6() || ip.is_ipv4()))
        .min_by_key(|(_, ip)| rank(*ip))
        .map(|(_, ip)| *ip)
}

/// Whether another machine could reach this address at all.
fn usable(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            !(v4.is_loopback() || v4.is_link_local() || v4.is_unspecified() || v4.is_multicast())
        }
        IpAddr::V6(v6) => {
            // fe80::/10, link-local: needs a zone that a link cannot carry.
            let link_local = (v6.segments()[0] & 0xffc0) == 0xfe80;
            !(v6.is_loopback() || link_local || v6.is_unspecified() || v6.is_multicast())
        }
    }
}

/// Lower is better (see [`reachable`]); `min_by_key` keeps the first of equals, the order the
/// system lists its interfaces in.
fn rank(ip: IpAddr) -> u8 {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            match (a, b) {
                (192, 168) => 0,
                (10, _) => 1,
                (172, 16..=31) => 2,
                _ => 3,
            }
        }
        IpAddr::V6(v6) if (v6.segments()[0] & 0xfe00) == 0xfc00 => 4,
        IpAddr::V6(_) => 5,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    const ANY4: IpAddr = IpAddr::V4(Ipv4Addr::UNSPECIFIED);
    const ANY6: IpAddr = IpAddr::V6(Ipv6Addr::UNSPECIFIED);

    fn at(list: &[(&str, &str)]) -> Vec<(String, IpAddr)> {
        list.iter()
            .map(|(name, ip)| ((*name).to_owned(), ip.parse().unwrap()))
            .collect()
    }

    #[test]
    fn a_loopback_server_has_no_address_for_others() {
        let machine = at(&[("lo", "127.0.0.1"), ("wlan0", "192.168.1.20")]);
        assert_eq!(reachable("127.0.0.1".parse().unwrap(), &machine), None);
        assert_eq!(reachable("::1".parse().unwrap(), &machine), None);
    }

    #[test]
    fn a_server_on_one_address_is_reached_there() {
        let machine = at(&[("wlan0", "192.168.1.20"), ("eth0", "10.0.0.5")]);
        assert_eq!(
            reachable("10.0.0.5".parse().unwrap(), &machine),
            Some("10.0.0.5".parse().unwrap())
        );
    }

    #[test]
    fn every_interface_picks_the_home_network_over_bridges_and_link_local() {
        let machine = at(&[
            ("lo", "127.0.0.1"),
            ("docker0", "172.17.0.1"),
            ("eth1", "169.254.3.4"),
            ("eth0", "203.0.113.9"),
            ("wlan0", "fd00::7"),
            ("wlan0", "fe80::1"),
            ("wlan0", "192.168.1.20"),
        ]);
        assert_eq!(
            reachable(ANY4, &machine),
            Some("192.168.1.20".parse().unwrap())
        );
        // Without the home network: the other IPv4 address, never the bridge.
        let public = at(&[("docker0", "172.17.0.1"), ("eth0", "203.0.113.9")]);
        assert_eq!(
            reachable(ANY4, &public),
            Some("203.0.113.9".parse().unwrap())
        );
    }

    #[test]
    fn an_ipv6_address_only_where_the_server_listens_on_ipv6() {
        let machine = at(&[("lo", "::1"), ("eth0", "fe80::1"), ("eth0", "fd00::2")]);
        assert_eq!(reachable(ANY4, &machine), None);
        assert_eq!(reachable(ANY6, &machine), Some("fd00::2".parse().unwrap()));
    }

    #[test]
    fn the_answer_names_the_public_url_or_the_lan_address() {
        let public = Invite::new(
            Some("https://melee.example/".to_owned()),
            "0.0.0.0:7878".parse().unwrap(),
            false,
        );
        assert_eq!(
            public.answer(),
            "{\"public_url\":\"https://melee.example\",\"lan_url\":null,\"listen\":\"0.0.0.0:7878\"}\n"
        );
        let alone = Invite::new(None, "127.0.0.1:7878".parse().unwrap(), true);
        assert_eq!(
            alone.answer(),
            "{\"public_url\":null,\"lan_url\":null,\"listen\":\"127.0.0.1:7878\"}\n"
        );
        let one = Invite::new(None, "10.1.2.3:443".parse().unwrap(), true);
        assert!(
            one.answer()
                .contains("\"lan_url\":\"https://10.1.2.3:443\""),
            "{}",
            one.answer()
        );
        assert_eq!(quoted(Some("a\"b\\c\n")), "\"abc\"");
    }
}

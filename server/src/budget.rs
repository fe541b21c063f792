//! Every per-address budget in one place: what one client address may hold at once (a
//! [`Cap`]: connections, open tables, spectators, adjourned tables, league members) and what it
//! may do per minute (a [`Rate`]: table creations, password checks, wrong guesses, watches,
//! league joins, QR codes drawn, TURN credentials minted, camera signal bytes).
//!
//! [`Budgets`] has one line per budget, each built from its one configuration field, and one
//! sweeper ([`Budgets::sweep`]) that forgets what holds no state worth keeping. Every budget
//! counts a *client address* ([`client_key`]: an IPv4 address, or an IPv6 address's first
//! `--ipv6-prefix` bits), so callers hand in the address the socket (or a trusted proxy) gave.
//! [`BUDGETS`] describes them all for the manual's table (`docs/src/public-server.md`; a test
//! holds the two equal).

use std::hash::Hash;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

use dashmap::DashMap;
use grand_melee_protocol::TableId;
use grand_melee_protocol::league::LeagueId;
use grand_melee_protocol::limit::TokenBucket;
use grand_melee_protocol::server_limits as limits;

use crate::config::ServerConfig;

/// What one address may do per minute: a token bucket per key, made on first use and
/// forgotten once it has refilled (then it holds nothing a fresh bucket would not).
#[derive(Debug)]
pub(crate) struct Rate<K: Eq + Hash> {
    buckets: DashMap<K, TokenBucket>,
    burst: f64,
    /// Tokens per second; 0: no limit.
    per_second: f64,
}

impl<K: Eq + Hash> Rate<K> {
    /// `per_minute` tokens a minute (0 or less: no limit), at most `burst` at once.
    pub fn per_minute(per_minute: f64, burst: f64) -> Self {
        Self {
            buckets: DashMap::new(),
            burst,
            per_second: (per_minute / 60.0).max(0.0),
        }
    }

    /// `per_second` tokens a second (0: no limit), at most `burst` at once.
    pub fn per_second(per_second: f64, burst: f64) -> Self {
        Self::per_minute(per_second * 60.0, burst)
    }

    fn unlimited(&self) -> bool {
        self.per_second <= 0.0
    }

    /// Takes one token for `key` if it has one.
    pub fn take(&self, key: K, now: Instant) -> bool {
        self.take_n(key, 1.0, now)
    }

    /// Takes `n` tokens for `key` if it has them all (a byte budget takes a message's size);
    /// takes nothing otherwise.
    pub fn take_n(&self, key: K, n: f64, now: Instant) -> bool {
        if self.unlimited() {
            return true;
        }
        self.buckets
            .entry(key)
            .or_insert_with(|| TokenBucket::new(self.burst, self.per_second, now))
            .take_n(n, now)
    }

    /// Whether `key` has a token now, without taking it (and without remembering `key`).
    pub fn allows(&self, key: &K, now: Instant) -> bool {
        self.unlimited() || self.buckets.get(key).is_none_or(|b| b.peek(now))
    }

    /// Takes a token for `key` whether there is one or not (a wrong guess always counts).
    pub fn charge(&self, key: K, now: Instant) {
        if !self.unlimited() {
            let _ = self.take(key, now);
        }
    }

    fn sweep(&self, now: Instant) {
        self.buckets.retain(|_, bucket| !bucket.is_full(now));
    }

    /// How many keys have state (for the tests of the sweeper).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.buckets.len()
    }
}

/// What one address may hold at once: a count per key, a place taken by [`Cap::hold`] and
/// given back when its [`Held`] is dropped. Keys at zero are removed at once.
#[derive(Debug)]
pub(crate) struct Cap<K: Eq + Hash> {
    counts: Arc<DashMap<K, usize>>,
    /// 0: no limit.
    cap: usize,
}

impl<K: Eq + Hash + Clone> Cap<K> {
    pub fn new(cap: usize) -> Self {
        Self {
            counts: Arc::new(DashMap::new()),
            cap,
        }
    }

    /// Takes one of `key`'s places, or `None` if it holds them all.
    pub fn hold(&self, key: K) -> Option<Held<K>> {
        let mut count = self.counts.entry(key.clone()).or_insert(0);
        if self.cap != 0 && *count >= self.cap {
            return None;
        }
        *count += 1;
        Some(Held {
            counts: Arc::clone(&self.counts),
            key,
        })
    }

    /// Whether `key` holds every place.
    pub fn is_full(&self, key: &K) -> bool {
        self.cap != 0 && self.counts.get(key).is_some_and(|n| *n >= self.cap)
    }

    /// Counts a place for good (never given back: counted since the server started).
    pub fn add(&self, key: K) {
        *self.counts.entry(key).or_insert(0) += 1;
    }

    /// How many places `key` holds.
    #[cfg(test)]
    fn count(&self, key: &K) -> usize {
        self.counts.get(key).map_or(0, |n| *n)
    }
}

/// A place under a [`Cap`], given back when dropped.
#[derive(Debug)]
pub(crate) struct Held<K: Eq + Hash> {
    counts: Arc<DashMap<K, usize>>,
    key: K,
}

impl<K: Eq + Hash> Drop for Held<K> {
    fn drop(&mut self) {
        self.counts.remove_if_mut(&self.key, |_, count| {
            *count = count.saturating_sub(1);
            *count == 0
        });
    }
}

/// What wrong guesses are counted against: a table (its password), or a league (its password,
/// member tokens and organiser secret).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Guarded {
    Table(TableId),
    League(LeagueId),
}

impl From<TableId> for Guarded {
    fn from(table: TableId) -> Self {
        Self::Table(table)
    }
}

impl From<LeagueId> for Guarded {
    fn from(league: LeagueId) -> Self {
        Self::League(league)
    }
}

#[cfg(test)]
/// One budget as the manual's "A public server" table lists it: the flag that sets it, its
/// default, and what it bounds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Described {
    pub flag: &'static str,
    pub what: &'static str,
}

#[cfg(test)]
/// Every per-address budget, in [`Budgets`]'s order (`docs/src/public-server.md` lists each of these flags).
pub(crate) const BUDGETS: &[Described] = &[
    Described {
        flag: "--max-connections-per-ip",
        what: "connections open at once",
    },
    Described {
        flag: "--max-tables-per-ip",
        what: "open tables created",
    },
    Described {
        flag: "--max-spectators-per-ip",
        what: "connections watching a table",
    },
    Described {
        flag: "--max-adjourned-per-ip",
        what: "adjourned games (counted for the host who adjourned them)",
    },
    Described {
        flag: "--max-league-members-per-ip",
        what: "members added to one league (since the server started)",
    },
    Described {
        flag: "--table-creations-per-minute",
        what: "tables and leagues created",
    },
    Described {
        flag: "--wrong-passwords-per-minute",
        what: "wrong passwords, member tokens and organiser secrets per table or league",
    },
    Described {
        flag: "--password-checks-per-minute",
        what: "password checks (each an Argon2id hash), right or wrong",
    },
    Described {
        flag: "--watches-per-minute",
        what: "starts of watching a table",
    },
    Described {
        flag: "--league-joins-per-minute",
        what: "league joins",
    },
    Described {
        flag: "--qr-codes-per-minute",
        what: "QR codes drawn (`/qr.svg` answers not already cached)",
    },
    Described {
        flag: "--turn-credentials-per-minute",
        what: "TURN credentials minted for camera links",
    },
    Described {
        flag: "--signal-bytes-per-second",
        what: "camera signal bytes sent",
    },
];

/// Every per-address budget of the server, one line each.
#[derive(Debug)]
pub(crate) struct Budgets {
    v4_prefix: u8,
    v6_prefix: u8,
    /// `--max-connections-per-ip`.
    pub connections: Cap<IpAddr>,
    /// `--max-tables-per-ip`: open tables by their creator's address.
    pub tables: Cap<IpAddr>,
    /// `--max-spectators-per-ip`.
    pub spectators: Cap<IpAddr>,
    /// `--max-adjourned-per-ip`: adjourned games by the address of the host who adjourned.
    pub adjourned: Cap<IpAddr>,
    /// `--max-league-members-per-ip`: members added per address and league.
    pub league_members: Cap<(IpAddr, LeagueId)>,
    /// `--table-creations-per-minute` (bursts of as many): tables and leagues.
    pub creations: Rate<IpAddr>,
    /// `--wrong-passwords-per-minute` (bursts of 5), per address and table or league.
    pub wrong_guesses: Rate<(IpAddr, Guarded)>,
    /// `--password-checks-per-minute` (bursts of as many).
    pub password_checks: Rate<IpAddr>,
    /// `--watches-per-minute` (bursts of 10).
    pub watches: Rate<IpAddr>,
    /// `--league-joins-per-minute` (bursts of as many).
    pub league_joins: Rate<IpAddr>,
    /// `--qr-codes-per-minute` (bursts of 10): codes drawn, not the cached ones served.
    pub qr_codes: Rate<IpAddr>,
    /// `--turn-credentials-per-minute` (bursts of as many).
    pub turn_credentials: Rate<IpAddr>,
    /// `--signal-bytes-per-second` (bursts of eight seconds' worth).
    pub signal_bytes: Rate<IpAddr>,
}

impl Budgets {
    pub(crate) fn new(config: &ServerConfig) -> Self {
        let per_minute = |n: f64| Rate::per_minute(n, n);
        Self {
            v4_prefix: config.ipv4_prefix,
            v6_prefix: config.ipv6_prefix,
            connections: Cap::new(config.max_connections_per_ip),
            tables: Cap::new(config.max_tables_per_ip),
            spectators: Cap::new(config.max_spectators_per_ip),
            adjourned: Cap::new(config.max_adjourned_per_ip),
            league_members: Cap::new(config.max_league_members_per_ip),
            creations: per_minute(f64::from(config.table_creations_per_minute)),
            wrong_guesses: Rate::per_minute(
                config.wrong_passwords_per_minute,
                limits::WRONG_PASSWORD_BURST,
            ),
            password_checks: per_minute(config.password_checks_per_minute),
            watches: Rate::per_minute(config.watches_per_minute, limits::WATCH_BURST),
            league_joins: per_minute(config.league_joins_per_minute),
            qr_codes: Rate::per_minute(config.qr_codes_per_minute, limits::QR_CODE_BURST),
            turn_credentials: per_minute(config.turn_credentials_per_minute),
            signal_bytes: Rate::per_second(
                config.signal_bytes_per_second,
                limits::SIGNAL_BYTES_BURST_SECS * config.signal_bytes_per_second,
            ),
        }
    }

    /// The address every budget counts `ip` as ([`client_key`]).
    pub(crate) fn key(&self, ip: IpAddr) -> IpAddr {
        client_key(ip, self.v4_prefix, self.v6_prefix)
    }

    /// Forgets the rates that have refilled completely (so the maps do not grow with every
    /// address ever seen); the caps forget a key when its last place is given back.
    pub(crate) fn sweep(&self, now: Instant) {
        self.creations.sweep(now);
        self.wrong_guesses.sweep(now);
        self.password_checks.sweep(now);
        self.watches.sweep(now);
        self.league_joins.sweep(now);
        self.qr_codes.sweep(now);
        self.turn_credentials.sweep(now);
        self.signal_bytes.sweep(now);
    }
}

/// `ip` as its client: the first `v4_prefix` or `v6_prefix` bits, the rest zero (an IPv4
/// address mapped into IPv6 is taken as IPv4). The same address always gives the same key,
/// and a key is its own key.
pub(crate) fn client_key(ip: IpAddr, v4_prefix: u8, v6_prefix: u8) -> IpAddr {
    let mask = |bits: u32, prefix: u8| -> u128 {
        let prefix = u32::from(prefix).min(bits);
        if prefix == 0 {
            0
        } else {
            (u128::MAX << (128 - prefix)) >> (128 - bits)
        }
    };
    match ip.to_canonical() {
        IpAddr::V4(v4) => {
            let bits = u32::from(v4) & u32::try_from(mask(32, v4_prefix)).unwrap_or(u32::MAX);
            IpAddr::V4(bits.into())
        }
        IpAddr::V6(v6) => IpAddr::V6((u128::from(v6) & mask(128, v6_prefix)).into()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn key(ip: &str, v4: u8, v6: u8) -> String {
        client_key(
            ip.parse::<IpAddr>().unwrap_or(IpAddr::from([0, 0, 0, 0])),
            v4,
            v6,
        )
        .to_string()
    }

    #[test]
    fn ipv6_addresses_count_by_their_prefix_and_ipv4_by_theirs() {
        assert_eq!(
            key("2001:db8:1:2:aaaa:bbbb:cccc:dddd", 32, 64),
            "2001:db8:1:2::"
        );
        assert_eq!(key("2001:db8:1:2::1", 32, 64), "2001:db8:1:2::");
        assert_eq!(key("2001:db8:1:3::1", 32, 64), "2001:db8:1:3::");
        assert_eq!(key("2001:db8:1:2:ff::1", 32, 56), "2001:db8:1::");
        assert_eq!(key("2001:db8:1:2::1", 32, 128), "2001:db8:1:2::1");
        assert_eq!(key("2001:db8:1:2::1", 32, 1), "::");
        assert_eq!(key("203.0.113.77", 32, 64), "203.0.113.77");
        assert_eq!(key("203.0.113.77", 24, 64), "203.0.113.0");
        assert_eq!(key("203.0.113.77", 1, 64), "128.0.0.0");
        assert_eq!(
            key("::ffff:203.0.113.77", 24, 64),
            "203.0.113.0",
            "mapped IPv4 is IPv4"
        );
        assert_eq!(key("::1", 32, 64), "::");
        // A key is its own key.
        let once = key("2001:db8:1:2:aaaa::1", 32, 48);
        assert_eq!(key(&once, 32, 48), once);
    }

    /// The manual's "A public server" (`docs/src/public-server.md`) lists every budget in one
    /// table, in this module's order.
    #[test]
    fn the_manual_lists_every_budget() {
        let chapter = include_str!("../../docs/src/public-server.md");
        let start = chapter
            .find("# A public server")
            .expect("docs/src/public-server.md is the chapter \"A public server\"");
        let section = &chapter[start..];
        let table: Vec<&str> = section
            .lines()
            .skip_while(|l| !l.starts_with("| budget"))
            .take_while(|l| l.starts_with('|'))
            .skip(2)
            .collect();
        let flags: Vec<&str> = table
            .iter()
            .filter_map(|row| {
                let cell = row.split('|').nth(2)?.trim();
                cell.strip_prefix('`')?.split('`').next()
            })
            .collect();
        let expected: Vec<&str> = BUDGETS.iter().map(|b| b.flag).collect();
        assert_eq!(
            flags, expected,
            "docs/src/public-server.md's budgets table: {table:#?}"
        );
        for budget in BUDGETS {
            let row = table.iter().find(|r| r.contains(budget.flag)).unwrap();
            assert!(
                row.contains(budget.what),
                "{row} should say: {}",
                budget.what
            );
        }
    }

    #[test]
    fn a_rate_refuses_past_its_burst_refills_and_is_forgotten_when_full() {
        let start = Instant::now();
        let rate: Rate<u8> = Rate::per_minute(60.0, 3.0);
        assert!((0..3).all(|_| rate.take(1, start)));
        assert!(!rate.take(1, start), "the burst is spent");
        assert!(rate.take(2, start), "another key has its own");
        assert!(!rate.allows(&1, start));
        assert!(rate.allows(&9, start), "asking remembers nothing");
        assert_eq!(rate.len(), 2);
        let later = start + Duration::from_secs(1);
        assert!(rate.take(1, later), "one a second comes back");
        rate.sweep(later);
        assert_eq!(rate.len(), 1, "key 2 refilled and was forgotten");
        rate.sweep(start + Duration::from_secs(10));
        assert_eq!(rate.len(), 0);
    }

    #[test]
    fn a_byte_rate_takes_a_whole_message_or_nothing() {
        let start = Instant::now();
        let rate: Rate<u8> = Rate::per_second(1000.0, 3000.0);
        assert!(rate.take_n(1, 2500.0, start));
        assert!(!rate.take_n(1, 1000.0, start), "500 left");
        assert!(rate.take_n(1, 500.0, start), "a refusal took nothing");
        assert!(!rate.take_n(1, 1.0, start));
    }

    #[test]
    fn a_zero_rate_is_no_limit() {
        let start = Instant::now();
        let rate: Rate<u8> = Rate::per_minute(0.0, 1.0);
        assert!((0..1000).all(|_| rate.take(1, start)));
        rate.charge(1, start);
        assert!(rate.allows(&1, start));
        assert_eq!(rate.len(), 0);
    }

    #[test]
    fn a_cap_holds_places_until_they_are_dropped() {
        let cap: Cap<u8> = Cap::new(2);
        let a = cap.hold(1).unwrap();
        let b = cap.hold(1).unwrap();
        assert!(cap.hold(1).is_none());
        assert!(cap.is_full(&1));
        assert!(cap.hold(2).is_some(), "another key has its own");
        drop(a);
        assert_eq!(cap.count(&1), 1);
        let c = cap.hold(1).unwrap();
        drop((b, c));
        assert_eq!(cap.count(&1), 0);
        assert!(cap.counts.is_empty(), "a key at zero is forgotten");
        let unlimited: Cap<u8> = Cap::new(0);
        let held: Vec<_> = (0..100).filter_map(|_| unlimited.hold(1)).collect();
        assert_eq!(held.len(), 100);
    }
}

//! "Today's mountain", pure: the day (a UTC calendar day, from a time the caller gives), the
//! day's dice (one secret per day, derived from the server's mountain secret, committed to
//! before the day and revealed after it; no climber's entropy, so every table of the day deals
//! the same mountain) and the day's standings (by ending, then by cards left; equal climbs
//! share a place).

use std::cmp::Reverse;

use sha2::{Digest, Sha256};

use crate::dice::{Dice, DiceSecret, entropy_digest};
use serde::{Deserialize, Serialize};

use crate::league::{LeagueId, MemberId};
use crate::mountain_magic_types::{ClimbEnd, DayClimb};
use crate::types::{StageName, TableId};
use crate::view::TableView;

/// Domain separation for the day's secrets.
const DAY_DOMAIN: &[u8] = b"grand-melee mountain day v1";

const SECS_PER_DAY: u64 = 86_400;

/// The first year a day may be in: days are counted from 1970-01-01 (UTC).
pub const FIRST_YEAR: u32 = 1970;

/// A UTC calendar day: days since 1970-01-01. Written `YYYY-MM-DD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Day(pub u32);

impl Day {
    /// The day holding `unix_secs` (seconds since 1970-01-01 00:00 UTC).
    pub fn of(unix_secs: u64) -> Day {
        Day(u32::try_from(unix_secs / SECS_PER_DAY).unwrap_or(u32::MAX))
    }

    /// The first second after this day: when its secret may be revealed, its climbs end and
    /// their replays open.
    pub fn ends_at(self) -> u64 {
        (u64::from(self.0) + 1) * SECS_PER_DAY
    }

    /// Whether the day is over at `unix_ms` (milliseconds since 1970-01-01 00:00 UTC): no climb
    /// of it can move any more.
    pub fn is_over(self, unix_ms: u64) -> bool {
        unix_ms >= self.ends_at().saturating_mul(1000)
    }

    /// When the day is over, as a reader is told it: `YYYY-MM-DD 00:00 UTC` of the next day.
    pub fn end_text(self) -> String {
        format!("{} 00:00 UTC", Day(self.0.saturating_add(1)))
    }

    /// `YYYY-MM-DD` (years [`FIRST_YEAR`] to 9999), else `None`: a day that does not exist
    /// (2026-02-30) is refused, not rolled over.
    pub fn parse(text: &str) -> Option<Day> {
        let bytes = text.as_bytes();
        if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
            return None;
        }
        let number = |range: std::ops::Range<usize>| -> Option<u32> {
            let part = text.get(range)?;
            if !part.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            part.parse().ok()
        };
        let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
        if year < FIRST_YEAR || !(1..=12).contains(&month) || day == 0 || day > days_in(year, month)
        {
            return None;
        }
        let days = days_from_civil(i64::from(year), month, day);
        u32::try_from(days).ok().map(Day)
    }

    /// The day's secret: SHA-256(`"grand-melee mountain day v1"` ‖ the server's mountain
    /// secret (32 bytes) ‖ the day as 4 bytes, big-endian). Its commitment
    /// ([`DiceSecret::commitment`]) can be published any time before the day.
    pub fn secret(self, mountain_secret: &DiceSecret) -> DiceSecret {
        let mut hash = Sha256::new();
        hash.update(DAY_DOMAIN);
        hash.update(mountain_secret.0);
        hash.update(self.0.to_be_bytes());
        DiceSecret(hash.finalize().into())
    }

    /// The day's dice: its secret with the entropy of no contributions (the same for every
    /// climber, so every table of the day deals the same mountain).
    pub fn dice(self, mountain_secret: &DiceSecret) -> Dice {
        Dice::new(
            self.secret(mountain_secret),
            entropy_digest(std::iter::empty()),
        )
    }
}

impl std::fmt::Display for Day {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (year, month, day) = civil_from_days(i64::from(self.0));
        write!(f, "{year:04}-{month:02}-{day:02}")
    }
}

fn is_leap(year: u32) -> bool {
    (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400)
}

fn days_in(year: u32, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01 (H. Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// One climber's place in a day's standings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DayStanding<T> {
    /// 1 for the best; climbs equal by ending and cards left share a place (the next place
    /// skips as many).
    pub place: u16,
    /// Whose climb (a name, a member…).
    pub climber: T,
    /// How the climb ended.
    pub end: ClimbEnd,
    /// The tie-break: cards left (the player's forces still in the battle; for a failed climb,
    /// the cards placed on the mountain).
    pub cards_left: u16,
}

/// A day's standings from its finished climbs' [`super::Climb::standing_key`]s: by end, then
/// by cards left (more is better); equal climbs share a place and keep the order given (when
/// they finished).
pub fn day_standings<T>(climbs: Vec<(T, (ClimbEnd, Reverse<u16>))>) -> Vec<DayStanding<T>> {
    let mut climbs = climbs;
    climbs.sort_by_key(|(_, key)| *key);
    let mut standings: Vec<DayStanding<T>> = Vec::with_capacity(climbs.len());
    for (k, (climber, (end, Reverse(cards_left)))) in climbs.into_iter().enumerate() {
        let place = match standings.last() {
            Some(last) if (last.end, last.cards_left) == (end, cards_left) => last.place,
            _ => u16::try_from(k + 1).unwrap_or(u16::MAX),
        };
        standings.push(DayStanding {
            place,
            climber,
            end,
            cards_left,
        });
    }
    standings
}

/// A finished climb of a day's mountain, as the server keeps it for the day's standings
/// (written once, when its table finishes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FinishedClimb {
    /// The day (days since 1970-01-01).
    pub day: u32,
    /// Its table.
    pub table: TableId,
    /// When it finished (milliseconds since 1970-01-01 UTC).
    pub finished_at_ms: u64,
    /// When its game started (milliseconds since 1970-01-01 UTC): a climber's first climb is
    /// the one he started first, however it ended. Absent in climbs kept before it was
    /// recorded (then when it finished stands for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at_ms: Option<u64>,
    /// The climber's name at the table.
    pub climber: String,
    /// A league climb's league and member.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub league: Option<LeagueId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<MemberId>,
    pub end: ClimbEnd,
    pub cards_left: u16,
}

impl FinishedClimb {
    /// The day climb a finished table's view shows, if it is one: `None` for another game, a
    /// climb of one's own deal, or a table whose game is not over. A climb that ended before
    /// its outcome (conceded, ruled out, abandoned, or still climbing when its day ended) is
    /// [`ClimbEnd::GaveUp`] with no cards left.
    pub fn of(
        view: &TableView,
        started_at_ms: Option<u64>,
        finished_at_ms: u64,
    ) -> Option<FinishedClimb> {
        let own = view.settings.mountain_magic.as_ref()?;
        let day = Day::parse(own.day.as_deref()?)?;
        if view.stage != StageName::Finished {
            return None;
        }
        let seat = view.players.first()?;
        let climb = super::Climb::from_view(view.mountain_magic.as_deref()?.clone());
        let (end, Reverse(cards_left)) = climb
            .standing_key()
            .unwrap_or((ClimbEnd::GaveUp, Reverse(0)));
        Some(FinishedClimb {
            day: day.0,
            table: view.table,
            finished_at_ms,
            started_at_ms,
            climber: seat.name.clone(),
            league: own.league,
            member: own.league.and(seat.deck.as_ref().map(|d| d.member)),
            end,
            cards_left,
        })
    }

    /// Who climbed, for "one climb each": a league member by number, anyone else by name,
    /// folded as every name comparison is ([`crate::text::name_key`]: `Cai` and `cai`, `Dev`
    /// and `Dеv` with a Cyrillic е, are one climber).
    fn climber_key(&self) -> (Option<MemberId>, String) {
        match self.member {
            Some(member) => (Some(member), String::new()),
            None => (None, crate::text::name_key(&self.climber)),
        }
    }

    /// When the climb began, for "the first climb counts".
    fn started(&self) -> u64 {
        self.started_at_ms.unwrap_or(self.finished_at_ms)
    }
}

/// A day's standings from the climbs kept for it (any order): only `league`'s climbs if given;
/// each climber's first climb counts, the one he started first, however it ended (a later
/// one, however good, is practice: a climber who peeks and walks away has had his climb), and
/// ranks by end, then by cards left, then by who finished first. Also returns how many
/// climbs finished in all (of the league, if given).
pub fn standings_of(
    mut climbs: Vec<FinishedClimb>,
    league: Option<LeagueId>,
) -> (Vec<DayClimb>, u32) {
    if league.is_some() {
        climbs.retain(|c| c.league == league);
    }
    let total = u32::try_from(climbs.len()).unwrap_or(u32::MAX);
    climbs.sort_by_key(|c| (c.started(), c.finished_at_ms, c.table));
    let mut seen = std::collections::HashSet::new();
    climbs.retain(|c| seen.insert(c.climber_key()));
    climbs.sort_by_key(|c| (c.finished_at_ms, c.table));
    let keyed = climbs
        .into_iter()
        .map(|c| {
            let key = (c.end, Reverse(c.cards_left));
            (c, key)
        })
        .collect();
    let standings = day_standings(keyed)
        .into_iter()
        .map(|s| DayClimb {
            place: s.place,
            climber: s.climber.climber,
            member: s.climber.member,
            end: s.end,
            cards_left: s.cards_left,
            table: s.climber.table,
            finished_at_ms: s.climber.finished_at_ms,
        })
        .collect();
    (standings, total)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::mountain_magic::Deal;
    use crate::mountain_magic::pool::{Deck, Pool};

    #[test]
    fn a_day_is_a_utc_date_written_and_read_back() {
        assert_eq!(Day::of(0).to_string(), "1970-01-01");
        assert_eq!(Day::of(86_399), Day(0));
        assert_eq!(Day::of(86_400), Day(1));
        // 2026-11-26 00:29 UTC.
        let day = Day::of(1_795_654_140);
        assert_eq!(day.to_string(), "2026-11-26");
        assert_eq!(Day::parse("2026-11-26"), Some(day));
        assert_eq!(day.ends_at(), u64::from(day.0 + 1) * 86_400);
        assert_eq!(Day::parse("2024-02-29").unwrap().to_string(), "2024-02-29");
        assert_eq!(Day::parse("2000-03-01").unwrap().to_string(), "2000-03-01");
        for n in [0u32, 59, 365, 10_956, 20_000, 2_932_896] {
            assert_eq!(Day::parse(&Day(n).to_string()), Some(Day(n)), "{n}");
        }
        for bad in [
            "2026-02-29",
            "2026-13-01",
            "2026-00-10",
            "2026-04-31",
            "1969-12-31",
            "2026-1-01",
            "2026/11/26",
            "+026-11-26",
            "",
        ] {
            assert_eq!(Day::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn every_table_of_a_day_deals_the_same_mountain_and_another_day_another() {
        let server = DiceSecret::from_seed(1);
        let pool = Pool::builtin();
        let deal = |day: Day, secret: &DiceSecret| {
            let dice = day.dice(secret);
            Deal::from_dice(pool, &Deck::default_from_dice(pool, &dice), &dice)
        };
        let today = Day::parse("2026-11-26").unwrap();
        assert_eq!(deal(today, &server), deal(today, &server));
        assert_ne!(deal(today, &server), deal(Day(today.0 + 1), &server));
        assert_ne!(deal(today, &server), deal(today, &DiceSecret::from_seed(2)));
        // The commitment published before the day is the revealed secret's.
        let secret = today.secret(&server);
        assert_eq!(secret.commitment().len(), 64);
        assert_ne!(secret, Day(today.0 + 1).secret(&server));
    }

    #[test]
    fn standings_go_by_ending_then_cards_left_and_equal_climbs_share_a_place() {
        let climbs = vec![
            ("failed", (ClimbEnd::FailedClimb, Reverse(20))),
            ("victory with 2", (ClimbEnd::Victory, Reverse(2))),
            ("total victory", (ClimbEnd::TotalVictory, Reverse(1))),
            ("victory with 4", (ClimbEnd::Victory, Reverse(4))),
            ("also victory with 2", (ClimbEnd::Victory, Reverse(2))),
            ("defeat", (ClimbEnd::Defeat, Reverse(0))),
            ("gave up", (ClimbEnd::GaveUp, Reverse(0))),
        ];
        let standings = day_standings(climbs);
        let got: Vec<(u16, &str)> = standings.iter().map(|s| (s.place, s.climber)).collect();
        assert_eq!(
            got,
            vec![
                (1, "total victory"),
                (2, "victory with 4"),
                (3, "victory with 2"),
                (3, "also victory with 2"),
                (5, "defeat"),
                (6, "failed"),
                (7, "gave up"),
            ]
        );
        assert_eq!(standings[1].cards_left, 4);
        assert_eq!(standings[5].end, ClimbEnd::FailedClimb);
        assert!(day_standings::<&str>(Vec::new()).is_empty());
    }

    #[test]
    fn each_climber_counts_once_by_first_finish_and_a_league_sees_its_own() {
        let league = LeagueId::from_u128(7);
        let climb =
            |table: u128, at: u64, climber: &str, member: Option<MemberId>, end, cards_left| {
                FinishedClimb {
                    day: 20_418,
                    table: TableId::from_u128(table),
                    finished_at_ms: at,
                    started_at_ms: None,
                    climber: climber.to_owned(),
                    league: member.map(|_| league),
                    member,
                    end,
                    cards_left,
                }
            };
        let climbs = vec![
            // Ada's second climb is better, but her first one counts.
            climb(3, 300, "ada", None, ClimbEnd::TotalVictory, 7),
            climb(1, 100, "Ada", None, ClimbEnd::Defeat, 0),
            climb(2, 200, "Brea", None, ClimbEnd::Victory, 2),
            // A member counts by number, whatever his name at the table.
            climb(4, 400, "Cai", Some(0), ClimbEnd::Defeat, 0),
            climb(5, 500, "Cai again", Some(0), ClimbEnd::Victory, 5),
            climb(6, 600, "Dee", Some(1), ClimbEnd::GaveUp, 0),
        ];
        let (all, total) = standings_of(climbs.clone(), None);
        assert_eq!(total, 6);
        let got: Vec<(u16, &str, ClimbEnd)> = all
            .iter()
            .map(|c| (c.place, c.climber.as_str(), c.end))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, "Brea", ClimbEnd::Victory),
                (2, "Ada", ClimbEnd::Defeat),
                (2, "Cai", ClimbEnd::Defeat),
                (4, "Dee", ClimbEnd::GaveUp),
            ]
        );
        let (members, total) = standings_of(climbs, Some(league));
        assert_eq!(total, 3);
        let got: Vec<(&str, Option<MemberId>)> = members
            .iter()
            .map(|c| (c.climber.as_str(), c.member))
            .collect();
        assert_eq!(got, vec![("Cai", Some(0)), ("Dee", Some(1))]);
    }

    /// Issue 43: a name is one climber whatever its case and look-alike letters, and his first
    /// climb is the one he started first, however it ended: a climber who peeks at the deal,
    /// walks away and climbs again has had his climb (the first ends, at the latest, with the
    /// day).
    #[test]
    fn the_first_climb_started_counts_and_names_fold_case_and_look_alikes() {
        let climb = |table: u128, started: u64, finished: u64, climber: &str, end, cards_left| {
            FinishedClimb {
                day: 20_418,
                table: TableId::from_u128(table),
                finished_at_ms: finished,
                started_at_ms: Some(started),
                climber: climber.to_owned(),
                league: None,
                member: None,
                end,
                cards_left,
            }
        };
        let climbs = vec![
            // Eve peeks at 100, walks away; her climb ends at the day's end (abandoned).
            climb(1, 100, 86_400_000, "Eve", ClimbEnd::GaveUp, 0),
            // She climbs again, started later, and finishes first: practice.
            climb(2, 200, 300, "eve", ClimbEnd::TotalVictory, 9),
            // A stranger climbs first as "Cai" and concedes: the line is his.
            climb(3, 50, 60, "Cai", ClimbEnd::GaveUp, 0),
            climb(4, 70, 400, "cai", ClimbEnd::Victory, 3),
            // Dev with a Cyrillic е, then Dev: one climber.
            climb(5, 10, 500, "D\u{435}v", ClimbEnd::Defeat, 0),
            climb(6, 20, 450, "Dev", ClimbEnd::Victory, 4),
        ];
        let (standings, total) = standings_of(climbs, None);
        assert_eq!(total, 6);
        let got: Vec<(&str, ClimbEnd, TableId)> = standings
            .iter()
            .map(|c| (c.climber.as_str(), c.end, c.table))
            .collect();
        assert_eq!(
            got,
            vec![
                ("D\u{435}v", ClimbEnd::Defeat, TableId::from_u128(5)),
                ("Cai", ClimbEnd::GaveUp, TableId::from_u128(3)),
                ("Eve", ClimbEnd::GaveUp, TableId::from_u128(1)),
            ]
        );
        // Climbs kept before the start was recorded count from when they finished.
        let old = FinishedClimb {
            started_at_ms: None,
            ..climb(7, 0, 1_000, "Fay", ClimbEnd::Victory, 1)
        };
        let new = climb(8, 900, 950, "FAY", ClimbEnd::Defeat, 0);
        let (standings, _) = standings_of(vec![old, new], None);
        assert_eq!(standings.len(), 1);
        assert_eq!(standings[0].table, TableId::from_u128(8));
    }

    #[test]
    fn a_day_is_over_at_midnight_utc() {
        let day = Day::parse("2026-11-26").unwrap();
        assert!(!day.is_over(day.ends_at() * 1000 - 1));
        assert!(day.is_over(day.ends_at() * 1000));
        assert_eq!(day.end_text(), "2026-11-27 00:00 UTC");
    }
}

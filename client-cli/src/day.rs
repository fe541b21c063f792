//! Mountain Magic's day climbs: the standings of a day's mountain (`grand-melee standings`),
//! read from `mountain_magic.standings` and written as a table 80 columns wide or as script
//! lines.

use std::io::Write;

use grand_melee_protocol::mountain_magic::day::Day;
use grand_melee_protocol::mountain_magic_types::DayClimb;
use grand_melee_protocol::{ClientMessage, ServerMessage};

use crate::net::Conn;
use crate::replay::utc;
use crate::{ClientError, league, safe};

/// A day's mountain as the server answers `mountain_magic.standings`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DayStandings {
    /// `YYYY-MM-DD`, as the server wrote it (written with [`DayStandings::day_words`]).
    pub day: String,
    /// The league asked for.
    pub league: Option<grand_melee_protocol::league::LeagueId>,
    /// The day's dice commitment (hex).
    pub commitment: String,
    /// The day's secret (hex), once the day is over.
    pub secret: Option<String>,
    /// Each climber's first finished climb, best first.
    pub standings: Vec<DayClimb>,
    /// Finished climbs in all.
    pub climbs: u32,
}

impl DayStandings {
    /// Reads a `mountain_magic.standings` answer.
    pub fn of(answer: ServerMessage) -> Result<Self, ClientError> {
        match answer {
            ServerMessage::MountainMagicStandings {
                day,
                league,
                commitment,
                secret,
                standings,
                climbs,
                ..
            } => Ok(Self {
                day,
                league,
                commitment,
                secret,
                standings,
                climbs,
            }),
            other => Err(ClientError::Protocol(other.name().to_owned())),
        }
    }

    /// The day as written: a date as it is, anything else quoted (so that it can neither act
    /// on a terminal nor forge the fields after it).
    pub fn day_words(&self) -> String {
        match Day::parse(&self.day) {
            Some(date) => date.to_string(),
            None => safe::quoted(&self.day),
        }
    }

    /// When the day's secret is revealed (the first second after the day, UTC), as written;
    /// `None` for a day that is not a date.
    pub fn revealed_at(&self) -> Option<String> {
        Day::parse(&self.day).map(|day| utc(day.ends_at().saturating_mul(1000)))
    }
}

/// Asks the server for `day`'s mountain (`today` or `YYYY-MM-DD`), only `league`'s climbs if
/// given (a league named by its id, the start of its id, or its name).
pub async fn fetch(
    conn: &mut Conn,
    day: &str,
    league: Option<&str>,
) -> Result<DayStandings, ClientError> {
    let league = match league {
        Some(text) => Some(league::resolve(conn, text).await?),
        None => None,
    };
    // Every page: the first says the day, each adds its climbs.
    let mut from = 0;
    let mut whole: Option<DayStandings> = None;
    loop {
        let answer = conn
            .call(ClientMessage::MountainMagicStandings {
                id: 0,
                day: day.trim().to_owned(),
                league,
                from,
                limit: grand_melee_protocol::MAX_PAGE_ITEMS,
            })
            .await?;
        let next = match &answer {
            ServerMessage::MountainMagicStandings { next, .. } => *next,
            _ => None,
        };
        let page = DayStandings::of(answer)?;
        match &mut whole {
            Some(whole) => whole.standings.extend(page.standings),
            None => whole = Some(page),
        }
        match next {
            Some(next) if next > from => from = next,
            _ => break,
        }
    }
    whole.ok_or_else(|| ClientError::Protocol("no standings".to_owned()))
}

/// Runs `grand-melee standings`.
pub async fn run(
    server: &str,
    day: &str,
    league: Option<&str>,
    plain: bool,
    out: &mut dyn Write,
) -> Result<(), ClientError> {
    let mut conn = Conn::open(server).await?;
    let standings = fetch(&mut conn, day, league).await;
    conn.close().await;
    let standings = standings?;
    if plain {
        write_lines(&standings, out)
    } else {
        write_table(&standings, out)
    }
}

/// Columns of the climber's name in the table.
const CLIMBER_WIDTH: usize = 16;

/// Columns of the ending's name (the longest, the humiliating defeat, fits).
const END_WIDTH: usize = 35;

/// `text` in at most `width` columns (cut with `…`), made printable.
fn fit(text: &str, width: usize) -> String {
    let text = safe::printable(text);
    if text.chars().count() <= width {
        return text;
    }
    let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// The day's mountain as a table no line of which is wider than 80 columns: the day, the
/// commitment, the secret (or when it comes), then place, climber, ending, cards left and the
/// start of the table's id (enough for `grand-melee replay watch`).
pub fn write_table(day: &DayStandings, out: &mut dyn Write) -> Result<(), ClientError> {
    let whose = match day.league {
        Some(league) => format!(", league {}", &league.to_string()[..8]),
        None => String::new(),
    };
    writeln!(
        out,
        "{}'s mountain{whose}: {} climber(s), {} climb(s)",
        day.day_words(),
        day.standings.len(),
        day.climbs
    )?;
    writeln!(out, "commitment {}", safe::printable(&day.commitment))?;
    match &day.secret {
        Some(secret) => writeln!(out, "secret     {}", safe::printable(secret))?,
        None => writeln!(
            out,
            "secret     revealed when the day is over{}",
            day.revealed_at()
                .map(|at| format!(", at {at}"))
                .unwrap_or_default()
        )?,
    }
    if day.standings.is_empty() {
        writeln!(out, "No finished climb yet.")?;
        return Ok(());
    }
    writeln!(
        out,
        "{:>4}  {:<CLIMBER_WIDTH$} {:<END_WIDTH$} {:>5}  table",
        "#", "climber", "ending", "cards"
    )?;
    for climb in &day.standings {
        writeln!(
            out,
            "{:>4}  {:<CLIMBER_WIDTH$} {:<END_WIDTH$} {:>5}  {}",
            climb.place,
            fit(&climb.climber, CLIMBER_WIDTH),
            climb.end.name(),
            climb.cards_left,
            &climb.table.to_string()[..8]
        )?;
    }
    Ok(())
}

/// Hex digits as they are; anything else quoted (a script line's field).
fn hex_words(text: &str) -> String {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_hexdigit()) {
        text.to_owned()
    } else {
        safe::quoted(text)
    }
}

/// The day's mountain as script lines: `day day=… climbers=… climbs=… commitment=…
/// secret=…|- revealed_at=…` (and `league=…`), then one `climb place=… climber="…" member=…
/// end=… cards_left=… table=… finished_at=…` per climber, best first.
pub fn write_lines(day: &DayStandings, out: &mut dyn Write) -> Result<(), ClientError> {
    let league = match day.league {
        Some(league) => format!(" league={league}"),
        None => String::new(),
    };
    writeln!(
        out,
        "day day={}{league} climbers={} climbs={} commitment={} secret={} revealed_at={}",
        day.day_words(),
        day.standings.len(),
        day.climbs,
        hex_words(&day.commitment),
        day.secret.as_deref().map_or("-".to_owned(), hex_words),
        day.revealed_at().unwrap_or_else(|| "-".to_owned())
    )?;
    for climb in &day.standings {
        let member = match climb.member {
            Some(member) => format!(" member={member}"),
            None => String::new(),
        };
        let end = serde_json::to_value(climb.end)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        writeln!(
            out,
            "climb place={} climber={}{member} end={end} cards_left={} table={} finished_at={} ending={}",
            climb.place,
            safe::quoted(&climb.climber),
            climb.cards_left,
            climb.table,
            utc(climb.finished_at_ms),
            safe::quoted(climb.end.name())
        )?;
    }
    Ok(())
}

/// Checks a climb of a day's mountain (`grand-melee verify`): its dice are the day's — the
/// day's secret with no climber's entropy — so the climb's commitment must be the day's, and
/// once the day is over (its secret in `day`) the deal is dealt again from the day's dice and
/// checked card by card ([`grand_melee_protocol::mountain_magic::verify_deal`]). Before the
/// end of the day: an error saying when the secret comes (the commitment is checked already).
pub fn verify_climb(
    events: &[grand_melee_protocol::Event],
    day: &DayStandings,
    out: &mut dyn Write,
) -> Result<(), ClientError> {
    use grand_melee_protocol::dice::{Dice, DiceSecret, entropy_digest};
    let started = (1u64..).zip(events).find_map(|(seq, event)| match event {
        grand_melee_protocol::Event::GameStarted { commitment, .. } => Some((seq, commitment)),
        _ => None,
    });
    let Some((start_seq, commitment)) = started else {
        return Err(ClientError::Verify(
            "event 0: the climb never started".to_owned(),
        ));
    };
    if *commitment != day.commitment {
        return Err(ClientError::Verify(format!(
            "event {start_seq}: the climb's commitment {} is not the commitment of {}'s mountain, {}",
            safe::printable(commitment),
            day.day_words(),
            safe::printable(&day.commitment)
        )));
    }
    let Some(revealed) = &day.secret else {
        return Err(ClientError::DayNotOver {
            day: day.day_words(),
            at: day
                .revealed_at()
                .unwrap_or_else(|| "the end of the day (UTC)".to_owned()),
        });
    };
    let secret = DiceSecret::from_hex(revealed).ok_or_else(|| {
        ClientError::Verify(format!(
            "the secret of {}'s mountain, {}, is not 64 hex digits",
            day.day_words(),
            safe::printable(revealed)
        ))
    })?;
    if secret.commitment() != day.commitment {
        return Err(ClientError::Verify(format!(
            "the secret of {}'s mountain does not match its commitment",
            day.day_words()
        )));
    }
    let dice = Dice::new(secret, entropy_digest(std::iter::empty::<&str>()));
    let deal = grand_melee_protocol::mountain_magic::verify_deal(&dice, None, (1u64..).zip(events))
        .map_err(|mismatch| ClientError::Verify(mismatch.to_string()))?
        .ok_or_else(|| ClientError::Verify("the climb holds no deal".to_owned()))?;
    let occupiers = if deal.occupiers {
        ", the occupying forces"
    } else {
        ""
    };
    writeln!(
        out,
        "verified: the climb's commitment is the day's; the secret of {}'s mountain matches it",
        day.day_words()
    )?;
    writeln!(
        out,
        "verified: the Mountain Magic deal of {}'s mountain (the default deck the day's dice draw): the bottom row, {} card(s) turned over, {} land(s){occupiers} are what the day's dice give",
        day.day_words(),
        deal.flipped,
        deal.lands
    )?;
    Ok(())
}

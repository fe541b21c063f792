//! Mountain Magic's days on the server: the server's mountain secret (made once, kept by the
//! store, so every restart and every node deals the same day's mountain), the settings of a
//! climb of today's mountain (checked and completed before its table is written), and the
//! answer to `mountain_magic.standings`. The rules of a day (its secret, its deal, its
//! standings) are the protocol crate's (`mountain_magic::day`); this is where they meet the
//! clock and the store.

use std::sync::Arc;

use grand_melee_protocol::dice::DiceSecret;
use grand_melee_protocol::mountain_magic::day::{Day, standings_of};
use grand_melee_protocol::mountain_magic::pool::{Deck, Pool};
use grand_melee_protocol::{self as wire, ClientMessage, ErrorCode, GameKind, ServerMessage};

use crate::conn::Refusal;
use crate::leagues::storage;
use crate::lobby::Shared;

/// The time as the server reads it for the days (`config::WallClock`: the system's, which
/// tests move), in seconds.
fn now_secs(shared: &Shared) -> u64 {
    shared.config.clock.now_ms() / 1000
}

/// The day of a climb of today's mountain, if `settings` are one's.
pub(crate) fn climb_day(settings: &wire::Settings) -> Option<Day> {
    let own = settings
        .mountain_magic
        .as_ref()
        .filter(|_| settings.game == GameKind::MountainMagic)?;
    Day::parse(own.day.as_deref()?)
}

/// Whether a day climb may be shown (watched, replayed) now: anything else may, a day climb
/// once its day is over; else the refusal, saying when it opens.
pub(crate) fn may_show(shared: &Shared, settings: &wire::Settings) -> Result<(), Refusal> {
    match climb_day(settings) {
        Some(day) if !day.is_over(shared.config.clock.now_ms()) => Err(Refusal {
            code: ErrorCode::DayNotOver,
            message: Some(format!(
                "a climb of today's mountain ({day}) can be watched and replayed once its day \
                 is over: from {}",
                day.end_text()
            )),
        }),
        _ => Ok(()),
    }
}

/// The server's mountain secret: read from (or, the first time, made in) the store once, then
/// kept.
async fn secret(shared: &Arc<Shared>) -> Result<DiceSecret, Refusal> {
    shared
        .mountain_secret
        .get_or_try_init(|| async { shared.store.mountain_secret().await })
        .await
        .copied()
        .map_err(storage)
}

/// A Mountain Magic table's own settings, checked before anything is written: its own deck
/// against the recipe (the error says what is wrong), and today's mountain: `today` becomes
/// the date (UTC), another day is refused, a league climb's league must exist. Gives the day's
/// secret for a climb of today's mountain.
pub(crate) async fn day_settings(
    shared: &Arc<Shared>,
    settings: &mut wire::Settings,
) -> Result<Option<DiceSecret>, Refusal> {
    let Some(own) = settings
        .mountain_magic
        .as_mut()
        .filter(|_| settings.game == GameKind::MountainMagic)
    else {
        return Ok(None);
    };
    if let Some(file) = &own.deck {
        Deck::from_file(Pool::builtin(), file)
            .map_err(|error| Refusal::settings(format!("mountain_magic.deck: {error}")))?;
    }
    let Some(day) = own.day.as_mut() else {
        if own.league.is_some() {
            return Err(Refusal::settings(
                "mountain_magic.league: a league climb is a climb of today's mountain (day)"
                    .to_owned(),
            ));
        }
        return Ok(None);
    };
    if own.deck.is_some() {
        return Err(Refusal::settings(
            "mountain_magic.day: today's mountain is dealt from the day's deck, not one's own"
                .to_owned(),
        ));
    }
    let today = Day::of(now_secs(shared));
    if day.as_str() == "today" {
        *day = today.to_string();
    }
    match Day::parse(day) {
        None => return Err(ErrorCode::BadDay.into()),
        Some(asked) if asked != today => {
            return Err(Refusal::settings(format!(
                "mountain_magic.day: only today's mountain ({today}) can be climbed, not {day}"
            )));
        }
        Some(_) => {}
    }
    if let Some(league) = own.league {
        crate::leagues::record(shared, league)
            .await?
            .ok_or(Refusal::from(ErrorCode::UnknownLeague))?;
    }
    let server = secret(shared).await?;
    Ok(Some(today.secret(&server)))
}

/// Answers `mountain_magic.standings`: the day's commitment, its standings so far (a league's
/// only, if asked), and its secret once the day is over (and with it every climb of the day).
pub(crate) async fn standings(
    request: &ClientMessage,
    shared: &Arc<Shared>,
) -> Result<ServerMessage, Refusal> {
    let ClientMessage::MountainMagicStandings {
        id,
        day,
        league,
        from,
        limit,
    } = request
    else {
        return Err(ErrorCode::BadMessage.into());
    };
    let now = now_secs(shared);
    let day = match day.as_str() {
        "today" => Day::of(now),
        day => Day::parse(day).ok_or(Refusal::from(ErrorCode::BadDay))?,
    };
    if let Some(league) = league {
        crate::leagues::record(shared, *league)
            .await?
            .ok_or(Refusal::from(ErrorCode::UnknownLeague))?;
    }
    let day_secret = day.secret(&secret(shared).await?);
    let climbs = shared.store.day_climbs(day.0).await.map_err(storage)?;
    let (standings, climbs) = standings_of(climbs, *league);
    let climbers = u32::try_from(standings.len()).unwrap_or(u32::MAX);
    let limit = (*limit).clamp(1, wire::MAX_PAGE_ITEMS);
    let page: Vec<_> = standings
        .into_iter()
        .skip(*from as usize)
        .take(limit as usize)
        .collect();
    let shown = from.saturating_add(u32::try_from(page.len()).unwrap_or(u32::MAX));
    let next = (shown < climbers).then_some(shown);
    Ok(ServerMessage::MountainMagicStandings {
        reply_to: *id,
        day: day.to_string(),
        league: *league,
        commitment: day_secret.commitment(),
        // Once the day is over no climb of it can move: each table ends its climb at the
        // day's end and refuses any move after it (`room`: `end_of_day`).
        secret: (now >= day.ends_at()).then(|| day_secret.to_hex()),
        standings: page,
        climbers,
        climbs,
        next,
    })
}

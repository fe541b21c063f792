//! The leagues' rows in the journal (schema version 3: `leagues`, `league_members`, `ledger`,
//! and `melee_tables.league_id`), the writes that decide by the league's pure rules
//! (`grand_melee_protocol::league`) inside the writer's transaction, and the reads. The cluster's
//! league store (`cluster::leagues`) takes the same writes and the same checks.
//!
//! A deck's state is never stored: it is the fold of its ledger (`ledger.entry`, one
//! MessagePack [`LedgerEntry`] per row), recomputed for every request. A purchase is decided by
//! folding the ledger and asking [`Deck::check_purchase`] *in the writer's transaction*, so two
//! purchases at once can never both spend the same points, and a refused one writes nothing.
//! A league game's credits are written by the same operation that marks the game finished
//! (`Journal::finish`), once: a table that is already finished credits nothing, and the unique
//! key `(league_id, member, table_id)` would refuse a second credit anyway.

use grand_melee_protocol::league::{
    Deck, LeagueGame, LeagueId, LeagueSummary, LeagueView, LedgerEntry, LedgerLine, MemberId,
    MemberStanding, MemberToken, sort_standings,
};
use grand_melee_protocol::{ErrorCode, OrganiserSecret, TableId, text};
use rusqlite::{Connection, OptionalExtension, params};

pub use crate::store::{Credit, DeckCommand, LeagueRecord, LeagueWrite};

use super::{JournalError, optional_uuid_column};

/// The most members one league takes.
pub const MAX_MEMBERS: u32 = grand_melee_protocol::MAX_LEAGUE_MEMBERS;

pub(crate) fn refused(code: ErrorCode, message: impl Into<String>) -> JournalError {
    JournalError::Refused {
        code,
        message: message.into(),
    }
}

pub(crate) fn key(name: &str) -> String {
    name.to_lowercase()
}

pub(crate) fn to_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// Carries out `write` (in the writer's savepoint: an error writes nothing).
pub(crate) fn apply(conn: &Connection, write: &LeagueWrite) -> Result<u64, JournalError> {
    match write {
        LeagueWrite::Create {
            id,
            name,
            password,
            organiser,
            at_ms,
        } => {
            let taken: Option<i64> = conn
                .prepare_cached("SELECT 1 FROM leagues WHERE name_key = ?1")?
                .query_row([key(name)], |row| row.get(0))
                .optional()?;
            if taken.is_some() {
                return Err(refused(
                    ErrorCode::NameTaken,
                    format!("a league named {name} exists already"),
                ));
            }
            conn.prepare_cached(
                "INSERT INTO leagues (id, name, name_key, password, organiser, created_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![
                id.as_bytes().as_slice(),
                name,
                key(name),
                password,
                organiser.as_bytes().as_slice(),
                to_i64(*at_ms)
            ])?;
            Ok(0)
        }
        LeagueWrite::Join {
            league,
            name,
            token,
            at_ms,
        } => {
            if league_record(conn, *league)?.is_none() {
                return Err(refused(ErrorCode::UnknownLeague, "there is no such league"));
            }
            let member = check_join(&members(conn, *league)?, name)?;
            conn.prepare_cached(
                "INSERT INTO league_members (league_id, member, name, name_key, token, joined_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![
                league.as_bytes().as_slice(),
                member,
                name,
                key(name),
                token.as_bytes().as_slice(),
                to_i64(*at_ms)
            ])?;
            Ok(u64::from(member))
        }
        LeagueWrite::Deck {
            league,
            token,
            command,
            at_ms,
        } => {
            if league_record(conn, *league)?.is_none() {
                return Err(refused(ErrorCode::UnknownLeague, "there is no such league"));
            }
            let (member, _) = member_by_token(conn, *league, *token)?.ok_or_else(|| {
                refused(
                    ErrorCode::NotAMember,
                    "that member token does not belong to a member of this league",
                )
            })?;
            let entry = check_deck(&ledger(conn, *league, member)?, command)?;
            append(conn, *league, member, *at_ms, None, &entry)?;
            Ok(u64::from(member))
        }
    }
}

/// Whether `name` may join a league with `members`; the new member's number. A full league
/// says so first, whatever the name; the new name's look-alike keys are made once, not once per
/// member.
pub(crate) fn check_join(
    members: &[(MemberId, String)],
    name: &str,
) -> Result<MemberId, JournalError> {
    let member = u32::try_from(members.len()).unwrap_or(u32::MAX);
    if member >= MAX_MEMBERS {
        return Err(refused(
            ErrorCode::LeagueFull,
            format!("a league has at most {MAX_MEMBERS} members: start another league"),
        ));
    }
    if members.iter().any(|(_, n)| key(n) == key(name)) {
        return Err(refused(
            ErrorCode::NameTaken,
            format!("{name} is a member of this league already"),
        ));
    }
    let keys = text::name_skeletons(name);
    if let Some((_, other)) = members
        .iter()
        .find(|(_, n)| text::name_skeletons(n).iter().any(|k| keys.contains(k)))
    {
        return Err(refused(
            ErrorCode::ConfusableName,
            format!("{name} looks like {other}, a member already"),
        ));
    }
    Ok(member)
}

/// What a deck command adds to the deck's ledger, or why it is refused (the league's rules,
/// on the fold of the ledger).
pub(crate) fn check_deck(
    ledger: &[LedgerLine],
    command: &DeckCommand,
) -> Result<LedgerEntry, JournalError> {
    let deck = Deck::fold(ledger.iter().map(|l| &l.entry));
    match command {
        DeckCommand::Register(spec) => deck.check_register(spec),
        DeckCommand::Buy(purchase, remove) => deck.check_purchase(purchase, *remove),
        DeckCommand::Remedy(remedy) => deck.check_remedy(remedy),
    }
    .map_err(|error| refused(error.code(), error.to_string()))
}

/// Writes a finished league game's credits (called by `Journal::finish` in its operation).
pub(crate) fn credit(
    conn: &Connection,
    table: TableId,
    at_ms: u64,
    credits: &[Credit],
) -> Result<(), JournalError> {
    for credit in credits {
        let already: Option<i64> = conn
            .prepare_cached(
                "SELECT 1 FROM ledger WHERE league_id = ?1 AND member = ?2 AND table_id = ?3",
            )?
            .query_row(
                params![
                    credit.league.as_bytes().as_slice(),
                    credit.member,
                    table.as_bytes().as_slice()
                ],
                |row| row.get(0),
            )
            .optional()?;
        if already.is_none() {
            append(
                conn,
                credit.league,
                credit.member,
                at_ms,
                Some(table),
                &credit.entry,
            )?;
        }
    }
    Ok(())
}

pub(crate) fn append(
    conn: &Connection,
    league: LeagueId,
    member: MemberId,
    at_ms: u64,
    table: Option<TableId>,
    entry: &LedgerEntry,
) -> Result<(), JournalError> {
    let next: i64 = conn
        .prepare_cached(
            "SELECT coalesce(max(seq), 0) + 1 FROM ledger WHERE league_id = ?1 AND member = ?2",
        )?
        .query_row(params![league.as_bytes().as_slice(), member], |row| {
            row.get(0)
        })?;
    let bytes = rmp_serde::to_vec_named(entry)
        .map_err(|error| JournalError::Corrupt(format!("cannot encode a ledger entry: {error}")))?;
    conn.prepare_cached(
        "INSERT INTO ledger (league_id, member, seq, at_ms, table_id, entry)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        league.as_bytes().as_slice(),
        member,
        next,
        to_i64(at_ms),
        table.as_ref().map(|t| t.as_bytes().to_vec()),
        bytes
    ])?;
    Ok(())
}

// ----- Reads -------------------------------------------------------------------------------------

pub(crate) fn league_record(
    conn: &Connection,
    id: LeagueId,
) -> Result<Option<LeagueRecord>, JournalError> {
    let row = conn
        .prepare_cached(
            "SELECT name, password, organiser, created_at_ms FROM leagues WHERE id = ?1",
        )?
        .query_row([id.as_bytes().as_slice()], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, Option<String>>(1)?,
                row.get::<_, Vec<u8>>(2)?,
                row.get::<_, i64>(3)?,
            ))
        })
        .optional()?;
    row.map(|(name, password, organiser, created)| {
        Ok(LeagueRecord {
            name,
            password,
            organiser: OrganiserSecret::from_slice(&organiser)
                .map_err(|_| JournalError::Corrupt("an organiser secret is not 16 bytes".into()))?,
            created_at_ms: u64::try_from(created).unwrap_or(0),
        })
    })
    .transpose()
}

pub(crate) fn members(
    conn: &Connection,
    league: LeagueId,
) -> Result<Vec<(MemberId, String)>, JournalError> {
    let mut stmt = conn.prepare_cached(
        "SELECT member, name FROM league_members WHERE league_id = ?1 ORDER BY member",
    )?;
    let rows = stmt.query_map([league.as_bytes().as_slice()], |row| {
        Ok((row.get(0)?, row.get(1)?))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

pub(crate) fn member_by_token(
    conn: &Connection,
    league: LeagueId,
    token: MemberToken,
) -> Result<Option<(MemberId, String)>, JournalError> {
    Ok(conn
        .prepare_cached(
            "SELECT member, name FROM league_members WHERE league_id = ?1 AND token = ?2",
        )?
        .query_row(
            params![league.as_bytes().as_slice(), token.as_bytes().as_slice()],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional()?)
}

pub(crate) fn ledger(
    conn: &Connection,
    league: LeagueId,
    member: MemberId,
) -> Result<Vec<LedgerLine>, JournalError> {
    let mut stmt = conn.prepare_cached(
        "SELECT seq, at_ms, entry FROM ledger WHERE league_id = ?1 AND member = ?2 ORDER BY seq",
    )?;
    let mut rows = stmt.query(params![league.as_bytes().as_slice(), member])?;
    let mut lines = Vec::new();
    while let Some(row) = rows.next()? {
        let seq: i64 = row.get(0)?;
        let at: i64 = row.get(1)?;
        let bytes: Vec<u8> = row.get(2)?;
        let entry: LedgerEntry = rmp_serde::from_slice(&bytes).map_err(|error| {
            JournalError::Corrupt(format!("a ledger entry cannot be read: {error}"))
        })?;
        lines.push(LedgerLine {
            seq: u32::try_from(seq).unwrap_or(u32::MAX),
            at_ms: u64::try_from(at).unwrap_or(0),
            entry,
        });
    }
    Ok(lines)
}

pub(crate) fn league_view(
    conn: &Connection,
    id: LeagueId,
) -> Result<Option<LeagueView>, JournalError> {
    let Some(record) = league_record(conn, id)? else {
        return Ok(None);
    };
    let mut standings = Vec::new();
    for (member, name) in members(conn, id)? {
        let lines = ledger(conn, id, member)?;
        let deck = Deck::fold(lines.iter().map(|l| &l.entry));
        standings.push(MemberStanding::new(member, name, &deck));
    }
    sort_standings(&mut standings);
    let mut stmt = conn.prepare_cached(
        "SELECT id, name, created_at_ms, finished_at_ms FROM melee_tables
         WHERE league_id = ?1 ORDER BY created_at_ms DESC, id",
    )?;
    let mut rows = stmt.query([id.as_bytes().as_slice()])?;
    let mut games = Vec::new();
    while let Some(row) = rows.next()? {
        let Some(table) = optional_uuid_column(row, 0)? else {
            continue;
        };
        let created: i64 = row.get(2)?;
        let finished: Option<i64> = row.get(3)?;
        games.push(LeagueGame {
            table,
            name: row.get(1)?,
            created_at_ms: u64::try_from(created).unwrap_or(0),
            finished_at_ms: finished.and_then(|f| u64::try_from(f).ok()),
        });
    }
    Ok(Some(LeagueView {
        league: id,
        name: record.name,
        password: record.password.is_some(),
        created_at_ms: record.created_at_ms,
        standings,
        games,
    }))
}

pub(crate) fn leagues_page(
    conn: &Connection,
    from: u32,
    limit: u32,
) -> Result<(Vec<LeagueSummary>, u32), JournalError> {
    let total: i64 = conn
        .prepare_cached("SELECT count(*) FROM leagues")?
        .query_row([], |row| row.get(0))?;
    let mut stmt = conn.prepare_cached(
        "SELECT l.id, l.name, l.password IS NOT NULL,
                (SELECT count(*) FROM league_members m WHERE m.league_id = l.id),
                (SELECT count(*) FROM melee_tables t
                  WHERE t.league_id = l.id AND t.finished_at_ms IS NOT NULL)
         FROM leagues l ORDER BY l.name_key, l.id LIMIT ?1 OFFSET ?2",
    )?;
    let mut rows = stmt.query(params![i64::from(limit), i64::from(from)])?;
    let mut leagues = Vec::new();
    while let Some(row) = rows.next()? {
        let Some(league) = optional_uuid_column(row, 0)? else {
            continue;
        };
        let members: i64 = row.get(3)?;
        let games: i64 = row.get(4)?;
        leagues.push(LeagueSummary {
            league,
            name: row.get(1)?,
            password: row.get(2)?,
            members: u32::try_from(members).unwrap_or(u32::MAX),
            games: u32::try_from(games).unwrap_or(u32::MAX),
        });
    }
    Ok((leagues, u32::try_from(total).unwrap_or(u32::MAX)))
}

// ----- Requests ----------------------------------------------------------------------------------

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// PROTOCOL.md's limits table says a league has at most `MAX_LEAGUE_MEMBERS` members and
    /// one more is `league_full`: the last place is taken, the one after it refused.
    #[test]
    fn a_league_takes_members_up_to_the_tables_limit() {
        let most = grand_melee_protocol::MAX_LEAGUE_MEMBERS;
        let mut members: Vec<(MemberId, String)> =
            (0..most - 1).map(|k| (k, format!("member {k}"))).collect();
        assert_eq!(check_join(&members, "last one").unwrap(), most - 1);
        members.push((most - 1, "last one".to_owned()));
        match check_join(&members, "one too many") {
            Err(JournalError::Refused { code, message }) => {
                assert_eq!(code, ErrorCode::LeagueFull);
                assert!(message.contains(&most.to_string()), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }
}

//! Ascension leagues on the server: their rows in the journal (schema version 3), the writes
//! that decide by the league's pure rules (`grand_melee_protocol::league`) inside the journal
//! writer's transaction, the reads, and the answers to the league requests.
//!
//! A deck's state is never stored: it is the fold of its ledger (`ledger.entry`, one
//! MessagePack [`LedgerEntry`] per row), recomputed for every request. A purchase is decided by
//! folding the ledger and asking [`Deck::check_purchase`] *in the writer's transaction*, so two
//! purchases at once can never both spend the same points, and a refused one writes nothing.
//! A league game's credits are written by the same operation that marks the game finished
//! (`Journal::finish`), once: a table that is already finished credits nothing, and the unique
//! key `(league_id, member, table_id)` would refuse a second credit anyway.

use std::net::IpAddr;
use std::sync::Arc;

use grand_melee_protocol::league::{
    Deck, DeckSpec, LeagueGame, LeagueId, LeagueSummary, LeagueView, LedgerEntry, LedgerLine,
    MemberId, MemberStanding, MemberToken, Purchase, Remedy, SeatDeck, sort_standings,
};
use grand_melee_protocol::{self as wire, ClientMessage, ErrorCode, ServerMessage, text};
use rusqlite::{Connection, OptionalExtension, params};
use tracing::{info, warn};
use uuid::Uuid;

use crate::conn::Refusal;
use crate::journal::{JournalError, optional_uuid_column};
use crate::lobby::Shared;

/// The most members one league takes.
pub const MAX_MEMBERS: u32 = 1000;

/// A deck's credit for one finished league game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credit {
    /// The league.
    pub league: LeagueId,
    /// The member.
    pub member: MemberId,
    /// The `credited` entry.
    pub entry: LedgerEntry,
}

/// A write to the leagues, decided in the journal writer's transaction. Each returns a number:
/// `Create` 0, `Join` and `Deck` the member's number.
#[derive(Debug, Clone)]
pub enum LeagueWrite {
    /// A new league.
    Create {
        id: LeagueId,
        name: String,
        /// The league's password, hashed.
        password: Option<String>,
        organiser: Uuid,
        at_ms: u64,
    },
    /// A new member.
    Join {
        league: LeagueId,
        name: String,
        token: MemberToken,
        at_ms: u64,
    },
    /// Something a member does with his deck.
    Deck {
        league: LeagueId,
        token: MemberToken,
        command: DeckCommand,
        at_ms: u64,
    },
}

/// What a member does with his deck.
#[derive(Debug, Clone)]
pub enum DeckCommand {
    Register(DeckSpec),
    Buy(Purchase, u8),
    Remedy(Remedy),
}

pub(crate) fn refused(code: ErrorCode, message: impl Into<String>) -> JournalError {
    JournalError::Refused {
        code,
        message: message.into(),
    }
}

pub(crate) fn key(name: &str) -> String {
    name.to_lowercase()
}

fn to_i64(value: u64) -> i64 {
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

/// Whether `name` may join a league with `members`; the new member's number.
pub(crate) fn check_join(
    members: &[(MemberId, String)],
    name: &str,
) -> Result<MemberId, JournalError> {
    if members.iter().any(|(_, n)| key(n) == key(name)) {
        return Err(refused(
            ErrorCode::NameTaken,
            format!("{name} is a member of this league already"),
        ));
    }
    if let Some((_, other)) = members
        .iter()
        .find(|(_, n)| text::names_confusable(n, name))
    {
        return Err(refused(
            ErrorCode::ConfusableName,
            format!("{name} looks like {other}, a member already"),
        ));
    }
    let member = u32::try_from(members.len()).unwrap_or(u32::MAX);
    if member >= MAX_MEMBERS {
        return Err(refused(
            ErrorCode::ServerBusy,
            format!("a league has at most {MAX_MEMBERS} members"),
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
    table: Uuid,
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

fn append(
    conn: &Connection,
    league: LeagueId,
    member: MemberId,
    at_ms: u64,
    table: Option<Uuid>,
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

/// A league's row.
#[derive(Debug, Clone)]
pub(crate) struct LeagueRecord {
    pub name: String,
    /// The password's hash.
    pub password: Option<String>,
    pub organiser: Uuid,
    pub created_at_ms: u64,
}

fn league_record(conn: &Connection, id: LeagueId) -> Result<Option<LeagueRecord>, JournalError> {
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
            organiser: Uuid::from_slice(&organiser)
                .map_err(|_| JournalError::Corrupt("an organiser secret is not 16 bytes".into()))?,
            created_at_ms: u64::try_from(created).unwrap_or(0),
        })
    })
    .transpose()
}

fn members(conn: &Connection, league: LeagueId) -> Result<Vec<(MemberId, String)>, JournalError> {
    let mut stmt = conn.prepare_cached(
        "SELECT member, name FROM league_members WHERE league_id = ?1 ORDER BY member",
    )?;
    let rows = stmt.query_map([league.as_bytes().as_slice()], |row| {
        Ok((row.get(0)?, row.get(1)?))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn member_by_token(
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

fn ledger(
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

fn league_view(conn: &Connection, id: LeagueId) -> Result<Option<LeagueView>, JournalError> {
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

fn leagues_page(
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

fn storage(error: JournalError) -> Refusal {
    match error {
        JournalError::Refused { code, message } => Refusal {
            code,
            message: Some(message),
        },
        error => {
            warn!(%error, "the journal failed a league request");
            ErrorCode::StorageFailed.into()
        }
    }
}

/// Runs a read on the journal's read connection, off the async threads.
async fn read<T: Send + 'static>(
    shared: &Arc<Shared>,
    f: impl FnOnce(&Connection) -> Result<T, JournalError> + Send + 'static,
) -> Result<T, Refusal> {
    let journal = shared.journal.clone();
    tokio::task::spawn_blocking(move || journal.read(f))
        .await
        .map_err(|_| Refusal::from(ErrorCode::StorageFailed))?
        .map_err(storage)
}

/// Carries out a league write where the leagues are kept: the journal's writer (in its
/// transaction), or in cluster mode the league store (compare-and-swap).
async fn write(shared: &Arc<Shared>, write: LeagueWrite) -> Result<u64, Refusal> {
    match &shared.cluster {
        Some(cluster) => cluster.league_write(write).await.map_err(storage),
        None => shared.journal.league_write(write).await.map_err(storage),
    }
}

/// A league's record, where the leagues are kept.
async fn record(shared: &Arc<Shared>, league: LeagueId) -> Result<Option<LeagueRecord>, Refusal> {
    match &shared.cluster {
        Some(cluster) => cluster.league_record(league).await.map_err(storage),
        None => read(shared, move |conn| league_record(conn, league)).await,
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn clean_name(raw: &str) -> Result<String, Refusal> {
    let name = text::normalize_name(raw).map_err(|error| Refusal::from(error.code()))?;
    if text::is_reserved_name(&name) {
        return Err(ErrorCode::ReservedName.into());
    }
    Ok(name)
}

/// The answer to a league request (`create_league`, `list_leagues`, `join_league`,
/// `get_league`, `get_deck`, `register_deck`, `buy`, `take_remedy`).
pub(crate) async fn answer(
    request: &ClientMessage,
    peer: IpAddr,
    shared: &Arc<Shared>,
) -> Result<ServerMessage, Refusal> {
    let id = request.id();
    match request {
        ClientMessage::CreateLeague { name, password, .. } => {
            let name = clean_name(name)?;
            if password
                .as_ref()
                .is_some_and(|p| p.is_empty() || p.chars().count() > wire::MAX_PASSWORD_CHARS)
            {
                return Err(Refusal {
                    code: ErrorCode::BadSettings,
                    message: Some(format!(
                        "password: a password has 1–{} characters",
                        wire::MAX_PASSWORD_CHARS
                    )),
                });
            }
            if !shared.may_create_league(peer, std::time::Instant::now()) {
                return Err(ErrorCode::TooManyTables.into());
            }
            let password = match password.clone() {
                Some(password) => Some(
                    shared
                        .hasher
                        .hash(password)
                        .await
                        .map_err(|_| Refusal::from(ErrorCode::ServerBusy))?
                        .map_err(|_| Refusal::from(ErrorCode::StorageFailed))?,
                ),
                None => None,
            };
            let league = Uuid::new_v4();
            let organiser = Uuid::new_v4();
            write(
                shared,
                LeagueWrite::Create {
                    id: league,
                    name: name.clone(),
                    password,
                    organiser,
                    at_ms: now_ms(),
                },
            )
            .await?;
            info!(%league, name, "league created");
            Ok(ServerMessage::LeagueCreated {
                reply_to: id,
                league,
                organiser,
            })
        }
        &ClientMessage::ListLeagues { from, limit, .. } => {
            let limit = limit.clamp(1, wire::MAX_PAGE_ITEMS);
            let (leagues, total) = match &shared.cluster {
                Some(cluster) => cluster.leagues_page(from, limit).await.map_err(storage)?,
                None => read(shared, move |conn| leagues_page(conn, from, limit)).await?,
            };
            // Bounded in bytes too, like every list: a page always fits the client's queue.
            let leagues = crate::connection::fill_page(
                leagues.into_iter(),
                usize::try_from(limit).unwrap_or(usize::MAX),
                crate::connection::page_bytes(shared),
            );
            let end = from.saturating_add(u32::try_from(leagues.len()).unwrap_or(u32::MAX));
            Ok(ServerMessage::Leagues {
                reply_to: id,
                leagues,
                total,
                next: (end < total).then_some(end),
            })
        }
        ClientMessage::JoinLeague {
            league,
            name,
            password,
            ..
        } => {
            let league = *league;
            let name = clean_name(name)?;
            let record = record(shared, league)
                .await?
                .ok_or(Refusal::from(ErrorCode::UnknownLeague))?;
            // Per address, like tables: a budget of joins and a cap of members per league.
            shared
                .may_join_league(peer, league, std::time::Instant::now())
                .map_err(|message| Refusal {
                    code: ErrorCode::RateLimited,
                    message: Some(message.to_owned()),
                })?;
            if let Some(hash) = record.password {
                crate::connection::check_password(
                    shared,
                    peer,
                    league,
                    Arc::from(hash.as_str()),
                    password.clone(),
                )
                .await?;
            }
            let token = Uuid::new_v4();
            let member = write(
                shared,
                LeagueWrite::Join {
                    league,
                    name: name.clone(),
                    token,
                    at_ms: now_ms(),
                },
            )
            .await?;
            shared.league_member_added(peer, league);
            info!(%league, member, name, "league member joined");
            Ok(ServerMessage::LeagueJoined {
                reply_to: id,
                league,
                member: u32::try_from(member).unwrap_or(u32::MAX),
                token,
            })
        }
        &ClientMessage::GetLeague {
            league,
            from,
            limit,
            ..
        } => {
            let view = match &shared.cluster {
                Some(cluster) => cluster.league_view(league).await.map_err(storage)?,
                None => read(shared, move |conn| league_view(conn, league)).await?,
            }
            .ok_or(Refusal::from(ErrorCode::UnknownLeague))?;
            Ok(league_page(id, view, from, limit, shared))
        }
        &ClientMessage::GetDeck { league, member, .. } => {
            deck_answer(shared, id, league, member).await
        }
        ClientMessage::RegisterDeck {
            league,
            token,
            deck,
            ..
        } => {
            let command = DeckCommand::Register(deck.clone());
            deck_write(shared, peer, id, *league, *token, command).await
        }
        ClientMessage::Buy {
            league,
            token,
            purchase,
            remove,
            ..
        } => {
            let command = DeckCommand::Buy(purchase.clone(), *remove);
            deck_write(shared, peer, id, *league, *token, command).await
        }
        ClientMessage::TakeRemedy {
            league,
            token,
            remedy,
            ..
        } => {
            let command = DeckCommand::Remedy(remedy.clone());
            deck_write(shared, peer, id, *league, *token, command).await
        }
        _ => Err(ErrorCode::BadMessage.into()),
    }
}

/// One page of a league (`get_league`): the standings and the games at positions `from`.. of
/// each list, as many positions as `limit` and the page's byte budget allow (a position counts
/// with its standing and its game together), so a league of 1000 members or games is read in
/// pages that each fit a connection's queue.
fn league_page(id: u32, view: LeagueView, from: u32, limit: u32, shared: &Shared) -> ServerMessage {
    let LeagueView {
        standings, games, ..
    } = &view;
    let (total_members, total_games) = (standings.len(), games.len());
    let positions = total_members.max(total_games);
    let start = usize::try_from(from).unwrap_or(usize::MAX).min(positions);
    let page = crate::connection::fill_page(
        (start..positions).map(|i| (standings.get(i), games.get(i))),
        crate::connection::page_items(limit),
        crate::connection::page_bytes(shared),
    );
    let end = start + page.len();
    let (standings, games): (Vec<_>, Vec<_>) = page.into_iter().unzip();
    let standings: Vec<MemberStanding> = standings.into_iter().flatten().cloned().collect();
    let games: Vec<LeagueGame> = games.into_iter().flatten().cloned().collect();
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    ServerMessage::League {
        reply_to: id,
        league: LeagueView {
            standings,
            games,
            ..view
        },
        total_members: count(total_members),
        total_games: count(total_games),
        next: (end < positions).then(|| count(end)),
    }
}

async fn deck_write(
    shared: &Arc<Shared>,
    peer: IpAddr,
    id: u32,
    league: LeagueId,
    token: MemberToken,
    command: DeckCommand,
) -> Result<ServerMessage, Refusal> {
    may_guess(shared, peer, league)?;
    let member = write(
        shared,
        LeagueWrite::Deck {
            league,
            token,
            command,
            at_ms: now_ms(),
        },
    )
    .await
    .inspect_err(|refusal| guessed(shared, peer, league, refusal.code))?;
    deck_answer(
        shared,
        id,
        league,
        u32::try_from(member).unwrap_or(u32::MAX),
    )
    .await
}

async fn deck_answer(
    shared: &Arc<Shared>,
    id: u32,
    league: LeagueId,
    member: MemberId,
) -> Result<ServerMessage, Refusal> {
    let found = match &shared.cluster {
        Some(cluster) => cluster
            .member_ledger(league, member)
            .await
            .map_err(storage)?,
        None => {
            read(shared, move |conn| {
                if league_record(conn, league)?.is_none() {
                    return Ok(Err(ErrorCode::UnknownLeague));
                }
                let Some((_, name)) = members(conn, league)?
                    .into_iter()
                    .find(|(m, _)| *m == member)
                else {
                    return Ok(Err(ErrorCode::UnknownPlayer));
                };
                Ok(Ok((name, ledger(conn, league, member)?)))
            })
            .await?
        }
    };
    let (name, ledger) = found.map_err(Refusal::from)?;
    Ok(ServerMessage::Deck {
        reply_to: id,
        league,
        member,
        name,
        deck: Deck::fold(ledger.iter().map(|l| &l.entry)),
        ledger,
    })
}

/// A member's seat at a league table: his name, and his deck as it sits down (with the opponent
/// of his last game if it was a two-player game).
#[derive(Debug, Clone)]
pub(crate) struct LeagueSeat {
    pub name: String,
    pub deck: SeatDeck,
}

/// Member tokens and organiser secrets are secrets like passwords: wrong ones are limited per
/// address and league with the wrong passwords (`--wrong-passwords-per-minute`), and past the
/// limit a request that shows one is answered `rate_limited` without looking, even a right one.
fn may_guess(shared: &Shared, peer: IpAddr, league: LeagueId) -> Result<(), Refusal> {
    if shared.may_guess(peer, league, std::time::Instant::now()) {
        Ok(())
    } else {
        Err(Refusal {
            code: ErrorCode::RateLimited,
            message: Some(
                "too many wrong member tokens, organiser secrets or passwords for this league \
                 from your address: try again in a minute"
                    .into(),
            ),
        })
    }
}

/// Counts a wrong member token or organiser secret (refused with `code`) against `peer`.
fn guessed(shared: &Shared, peer: IpAddr, league: LeagueId, code: ErrorCode) {
    if matches!(code, ErrorCode::NotAMember | ErrorCode::NotOrganiser) {
        shared.wrong_guess(peer, league, std::time::Instant::now());
    }
}

/// Looks up the member with `token` for a seat at one of `league`'s tables (a wrong token is a
/// guess from `peer`).
pub(crate) async fn seat(
    shared: &Arc<Shared>,
    peer: IpAddr,
    league: LeagueId,
    token: Option<MemberToken>,
) -> Result<LeagueSeat, Refusal> {
    let token = token.ok_or(Refusal::from(ErrorCode::LeagueSeat))?;
    may_guess(shared, peer, league)?;
    let found = match &shared.cluster {
        Some(cluster) => cluster
            .member_by_token(league, token)
            .await
            .map_err(storage)?,
        None => {
            read(shared, move |conn| {
                let Some((member, name)) = member_by_token(conn, league, token)? else {
                    return Ok(None);
                };
                Ok(Some((member, name, ledger(conn, league, member)?)))
            })
            .await?
        }
    };
    let (member, name, ledger) = found.ok_or_else(|| {
        guessed(shared, peer, league, ErrorCode::NotAMember);
        Refusal::from(ErrorCode::NotAMember)
    })?;
    let deck = Deck::fold(ledger.iter().map(|l| &l.entry));
    let spec = deck.spec.as_ref().ok_or(Refusal {
        code: ErrorCode::NoDeck,
        message: Some("register your deck before you sit at a league table".into()),
    })?;
    Ok(LeagueSeat {
        name,
        deck: SeatDeck {
            member,
            deck: spec.name.clone(),
            power: deck.power,
            last_duel: deck.last_duel,
        },
    })
}

/// Checks the organiser secret of `league` (a wrong one is a guess from `peer`).
pub(crate) async fn check_organiser(
    shared: &Arc<Shared>,
    peer: IpAddr,
    league: LeagueId,
    organiser: Option<Uuid>,
) -> Result<(), Refusal> {
    let record = record(shared, league)
        .await?
        .ok_or(Refusal::from(ErrorCode::UnknownLeague))?;
    may_guess(shared, peer, league)?;
    if organiser != Some(record.organiser) {
        guessed(shared, peer, league, ErrorCode::NotOrganiser);
        return Err(ErrorCode::NotOrganiser.into());
    }
    Ok(())
}

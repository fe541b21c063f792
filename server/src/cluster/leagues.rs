//! Cluster mode's league store: the key-value bucket [`LEAGUES`]. Each league is one document
//! (its record, its members and every deck's ledger) under `l.<league>`, changed only by
//! compare-and-swap on the document's revision: a write reads the document, decides with the
//! same checks as the SQLite journal (`journal::leagues::check_join`, `journal::leagues::check_deck`, the league's
//! pure rules) and writes it back expecting the revision it read, reading again when another
//! node wrote first. So two purchases at once can never spend the same points on any node, and
//! a refused one writes nothing. League names are reserved under `n.<hex of the lower-case
//! name>` with a create (which fails if the key exists). A league's games are the directory's
//! tables with that league. Each member's one unfinished league seat is the key
//! `s.<league>.<member>`, naming the table that holds it: taken with a create (or, from a
//! table that is finished or gone, by compare-and-swap on the key's revision) and given back
//! with a delete expecting the revision that names the table, so the rule holds on every node.

use async_nats::jetstream::kv;
use futures_util::StreamExt;
use grand_melee_protocol::league::{
    Deck, LeagueGame, LeagueId, LeagueSummary, LeagueView, LedgerEntry, LedgerLine, MemberId,
    MemberStanding, MemberToken, sort_standings,
};
use grand_melee_protocol::{ErrorCode, OrganiserSecret, TableId};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::{Cluster, decode, encode};
use crate::journal::JournalError;
use crate::journal::leagues::{Credit, LeagueRecord, LeagueWrite, refused};

/// The key-value bucket of leagues.
pub const LEAGUES: &str = "gm-leagues";

/// One league, whole.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct LeagueDoc {
    name: String,
    password: Option<String>,
    #[serde(with = "crate::store::uuid_form")]
    organiser: OrganiserSecret,
    created_at_ms: u64,
    members: Vec<MemberDoc>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct MemberDoc {
    name: String,
    #[serde(with = "crate::store::uuid_form")]
    token: MemberToken,
    joined_at_ms: u64,
    ledger: Vec<LedgerLine>,
}

fn doc_key(league: LeagueId) -> String {
    format!("l.{}", league.as_uuid().simple())
}

fn name_key(name: &str) -> String {
    format!("n.{}", hex::encode(crate::journal::leagues::key(name)))
}

fn seat_key(league: LeagueId, member: MemberId) -> String {
    format!("s.{}.{member}", league.as_uuid().simple())
}

fn failed(error: impl std::fmt::Display) -> JournalError {
    JournalError::Corrupt(format!("the league store: {error}"))
}

impl LeagueDoc {
    fn record(&self) -> LeagueRecord {
        LeagueRecord {
            name: self.name.clone(),
            password: self.password.clone(),
            organiser: self.organiser,
            created_at_ms: self.created_at_ms,
        }
    }

    fn names(&self) -> Vec<(MemberId, String)> {
        self.members
            .iter()
            .enumerate()
            .map(|(i, m)| (u32::try_from(i).unwrap_or(u32::MAX), m.name.clone()))
            .collect()
    }

    fn append(&mut self, member: MemberId, at_ms: u64, entry: LedgerEntry) {
        if let Some(doc) = self.members.get_mut(member as usize) {
            let seq = u32::try_from(doc.ledger.len() + 1).unwrap_or(u32::MAX);
            doc.ledger.push(LedgerLine { seq, at_ms, entry });
        }
    }
}

impl Cluster {
    async fn league_doc(&self, league: LeagueId) -> Result<Option<(LeagueDoc, u64)>, JournalError> {
        let entry = self.leagues.entry(doc_key(league)).await.map_err(failed)?;
        match entry {
            Some(entry) if entry.operation == kv::Operation::Put => {
                let doc = decode(&entry.value)
                    .ok_or_else(|| failed(format!("league {league} is unreadable")))?;
                Ok(Some((doc, entry.revision)))
            }
            _ => Ok(None),
        }
    }

    /// Changes a league's document with `change` (compare-and-swap, read again on a race).
    async fn modify_league<T>(
        &self,
        league: LeagueId,
        mut change: impl FnMut(&mut LeagueDoc) -> Result<T, JournalError>,
    ) -> Result<T, JournalError> {
        for _ in 0..50 {
            let Some((mut doc, revision)) = self.league_doc(league).await? else {
                return Err(refused(ErrorCode::UnknownLeague, "there is no such league"));
            };
            let answer = change(&mut doc)?;
            match self
                .leagues
                .update(doc_key(league), encode(&doc), revision)
                .await
            {
                Ok(_) => return Ok(answer),
                Err(e) if e.kind() == kv::UpdateErrorKind::WrongLastRevision => {}
                Err(e) => return Err(failed(e)),
            }
        }
        Err(failed("the league kept changing"))
    }

    /// Carries out a league write; returns what [`LeagueWrite`] says it returns.
    pub(crate) async fn league_write(&self, write: LeagueWrite) -> Result<u64, JournalError> {
        match write {
            LeagueWrite::Create {
                id,
                name,
                password,
                organiser,
                at_ms,
            } => {
                match self
                    .leagues
                    .create(name_key(&name), encode(&id.as_uuid().simple().to_string()))
                    .await
                {
                    Ok(_) => {}
                    Err(e) if e.kind() == kv::CreateErrorKind::AlreadyExists => {
                        return Err(refused(
                            ErrorCode::NameTaken,
                            format!("a league named {name} exists already"),
                        ));
                    }
                    Err(e) => return Err(failed(e)),
                }
                let doc = LeagueDoc {
                    name,
                    password,
                    organiser,
                    created_at_ms: at_ms,
                    members: Vec::new(),
                };
                self.leagues
                    .create(doc_key(id), encode(&doc))
                    .await
                    .map_err(failed)?;
                Ok(0)
            }
            LeagueWrite::Join {
                league,
                name,
                token,
                at_ms,
            } => {
                self.modify_league(league, |doc| {
                    let member = crate::journal::leagues::check_join(&doc.names(), &name)?;
                    doc.members.push(MemberDoc {
                        name: name.clone(),
                        token,
                        joined_at_ms: at_ms,
                        ledger: Vec::new(),
                    });
                    Ok(u64::from(member))
                })
                .await
            }
            LeagueWrite::Deck {
                league,
                token,
                command,
                at_ms,
            } => {
                self.modify_league(league, |doc| {
                    let member = doc
                        .members
                        .iter()
                        .position(|m| m.token == token)
                        .ok_or_else(|| {
                            refused(
                                ErrorCode::NotAMember,
                                "that member token does not belong to a member of this league",
                            )
                        })?;
                    let entry =
                        crate::journal::leagues::check_deck(&doc.members[member].ledger, &command)?;
                    let member = u32::try_from(member).unwrap_or(u32::MAX);
                    doc.append(member, at_ms, entry);
                    Ok(u64::from(member))
                })
                .await
            }
        }
    }

    /// Writes a finished league game's credits, each once: a deck that has a credit from this
    /// table already gets nothing more (a table finished again after a takeover).
    pub(crate) async fn credit(
        &self,
        table: TableId,
        at_ms: u64,
        credits: &[Credit],
    ) -> Result<(), JournalError> {
        let Some(league) = credits.first().map(|c| c.league) else {
            return Ok(());
        };
        self.modify_league(league, |doc| {
            for credit in credits.iter().filter(|c| c.league == league) {
                let Some(member) = doc.members.get(credit.member as usize) else {
                    continue;
                };
                let credited = member.ledger.iter().any(|line| {
                    matches!(&line.entry, LedgerEntry::Credited { table: t, .. } if *t == table)
                });
                if !credited {
                    doc.append(credit.member, at_ms, credit.entry.clone());
                }
            }
            Ok(())
        })
        .await
    }

    pub(crate) async fn league_record(
        &self,
        league: LeagueId,
    ) -> Result<Option<LeagueRecord>, JournalError> {
        Ok(self.league_doc(league).await?.map(|(doc, _)| doc.record()))
    }

    /// A league's games: the directory's tables of that league, newest first.
    fn league_games(&self, league: LeagueId) -> Vec<LeagueGame> {
        let mut games: Vec<LeagueGame> = self
            .cache
            .iter()
            .filter(|c| c.entry.league == Some(league))
            .map(|c| LeagueGame {
                table: *c.key(),
                name: c.entry.name.clone(),
                created_at_ms: c.entry.created_at_ms,
                finished_at_ms: c.entry.finished_at_ms,
            })
            .collect();
        games.sort_by(|a, b| {
            b.created_at_ms
                .cmp(&a.created_at_ms)
                .then(a.table.cmp(&b.table))
        });
        games
    }

    pub(crate) async fn league_view(
        &self,
        league: LeagueId,
    ) -> Result<Option<LeagueView>, JournalError> {
        let Some((doc, _)) = self.league_doc(league).await? else {
            return Ok(None);
        };
        let mut standings: Vec<MemberStanding> = doc
            .members
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let deck = Deck::fold(m.ledger.iter().map(|l| &l.entry));
                MemberStanding::new(u32::try_from(i).unwrap_or(u32::MAX), m.name.clone(), &deck)
            })
            .collect();
        sort_standings(&mut standings);
        Ok(Some(LeagueView {
            league,
            name: doc.name,
            password: doc.password.is_some(),
            created_at_ms: doc.created_at_ms,
            standings,
            games: self.league_games(league),
        }))
    }

    pub(crate) async fn leagues_page(
        &self,
        from: u32,
        limit: u32,
    ) -> Result<(Vec<LeagueSummary>, u32), JournalError> {
        let mut keys = self.leagues.keys().await.map_err(failed)?;
        let mut ids = Vec::new();
        while let Some(key) = keys.next().await {
            let key = key.map_err(failed)?;
            if let Some(id) = key
                .strip_prefix("l.")
                .and_then(|k| Uuid::parse_str(k).ok().map(LeagueId::from))
            {
                ids.push(id);
            }
        }
        let mut leagues = Vec::new();
        for id in ids {
            if let Some((doc, _)) = self.league_doc(id).await? {
                let games = self
                    .league_games(id)
                    .iter()
                    .filter(|g| g.finished_at_ms.is_some())
                    .count();
                leagues.push((
                    crate::journal::leagues::key(&doc.name),
                    LeagueSummary {
                        league: id,
                        name: doc.name,
                        password: doc.password.is_some(),
                        members: u32::try_from(doc.members.len()).unwrap_or(u32::MAX),
                        games: u32::try_from(games).unwrap_or(u32::MAX),
                    },
                ));
            }
        }
        leagues.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.league.cmp(&b.1.league)));
        let total = u32::try_from(leagues.len()).unwrap_or(u32::MAX);
        let page = leagues
            .into_iter()
            .skip(from as usize)
            .take(limit as usize)
            .map(|(_, s)| s)
            .collect();
        Ok((page, total))
    }

    /// A member's name and ledger (`Err`: the league or the member is unknown).
    pub(crate) async fn member_ledger(
        &self,
        league: LeagueId,
        member: MemberId,
    ) -> Result<Result<(String, Vec<LedgerLine>), ErrorCode>, JournalError> {
        let Some((doc, _)) = self.league_doc(league).await? else {
            return Ok(Err(ErrorCode::UnknownLeague));
        };
        Ok(doc
            .members
            .get(member as usize)
            .map(|m| (m.name.clone(), m.ledger.clone()))
            .ok_or(ErrorCode::UnknownPlayer))
    }

    /// The member with `token`: number, name and ledger.
    pub(crate) async fn member_by_token(
        &self,
        league: LeagueId,
        token: MemberToken,
    ) -> Result<Option<(MemberId, String, Vec<LedgerLine>)>, JournalError> {
        let Some((doc, _)) = self.league_doc(league).await? else {
            return Ok(None);
        };
        Ok(doc
            .members
            .iter()
            .enumerate()
            .find(|(_, m)| m.token == token)
            .map(|(i, m)| {
                (
                    u32::try_from(i).unwrap_or(u32::MAX),
                    m.name.clone(),
                    m.ledger.clone(),
                )
            }))
    }
}

// ----- League seats ------------------------------------------------------------------------------

impl Cluster {
    /// The table holding a member's league seat, and the key's revision; `None`: nobody holds
    /// it.
    async fn seat_holder(
        &self,
        league: LeagueId,
        member: MemberId,
    ) -> Result<Option<(Option<TableId>, u64)>, JournalError> {
        let entry = self
            .leagues
            .entry(seat_key(league, member))
            .await
            .map_err(failed)?;
        Ok(match entry {
            Some(entry) if entry.operation == kv::Operation::Put => {
                let holder = std::str::from_utf8(&entry.value)
                    .ok()
                    .and_then(super::table_of_dir_key);
                Some((holder, entry.revision))
            }
            _ => None,
        })
    }

    /// Takes a member's one unfinished league seat for `table` ([`crate::store::Store::hold_league_seat`]):
    /// a create of the seat's key, or, when another table holds it, a compare-and-swap of the
    /// key if that table is finished or gone from the directory (its seat was never given back:
    /// its node died, or the release failed). `false`: an unfinished table holds it.
    pub(crate) async fn hold_league_seat(
        &self,
        league: LeagueId,
        member: MemberId,
        table: TableId,
    ) -> Result<bool, JournalError> {
        let key = seat_key(league, member);
        let value = bytes::Bytes::from(super::dir_key(table));
        for _ in 0..20 {
            // Refused: taken already, or a race with another create or delete: read who holds
            // it.
            if self.leagues.create(&key, value.clone()).await.is_ok() {
                return Ok(true);
            }
            let Some((holder, revision)) = self.seat_holder(league, member).await? else {
                continue;
            };
            if holder == Some(table) {
                return Ok(true);
            }
            let live = match holder {
                Some(holder) => self
                    .dir_get(holder)
                    .await
                    .map_err(failed)?
                    .is_some_and(|cached| cached.entry.finished_at_ms.is_none()),
                None => false,
            };
            if live {
                return Ok(false);
            }
            match self.leagues.update(&key, value.clone(), revision).await {
                Ok(_) => return Ok(true),
                Err(e) if e.kind() == kv::UpdateErrorKind::WrongLastRevision => {}
                Err(e) => return Err(failed(e)),
            }
        }
        Err(failed("a league seat kept changing"))
    }

    /// Gives a member's league seat back if `table` still holds it: a delete expecting the
    /// revision that names `table`, so a seat another table took meanwhile stays its.
    pub(crate) async fn release_league_seat(
        &self,
        league: LeagueId,
        member: MemberId,
        table: TableId,
    ) -> Result<(), JournalError> {
        let key = seat_key(league, member);
        for _ in 0..20 {
            let Some((Some(holder), revision)) = self.seat_holder(league, member).await? else {
                return Ok(());
            };
            if holder != table {
                return Ok(());
            }
            if self
                .leagues
                .delete_expect_revision(&key, Some(revision))
                .await
                .is_ok()
            {
                return Ok(());
            }
            // The key changed since it was read (or the engine failed): read it again.
        }
        Err(failed("a league seat kept changing"))
    }

    /// Gives back the seats of `league` that `table` holds for members not in `seated`
    /// ([`crate::store::Store::release_league_seats_but`]): the league's seat keys are listed
    /// (only when a table is read back, so rarely), and each is released as above.
    pub(crate) async fn release_league_seats_but(
        &self,
        league: LeagueId,
        table: TableId,
        seated: &[MemberId],
    ) -> Result<(), JournalError> {
        let prefix = format!("s.{}.", league.as_uuid().simple());
        let mut keys = self.leagues.keys().await.map_err(failed)?;
        let mut members = Vec::new();
        while let Some(key) = keys.next().await {
            let key = key.map_err(failed)?;
            if let Some(member) = key
                .strip_prefix(&prefix)
                .and_then(|m| m.parse::<MemberId>().ok())
                && !seated.contains(&member)
            {
                members.push(member);
            }
        }
        for member in members {
            self.release_league_seat(league, member, table).await?;
        }
        Ok(())
    }
}

//! Ascension leagues on the server: the answers to the league requests and a member's seat at a
//! league table. The rows and the writes that decide by the league's pure rules live with the
//! storage, behind [`crate::store::Store`]: [`crate::journal::leagues`] (SQLite, in the writer's
//! transaction) or the cluster's league store (compare-and-swap).

use std::net::IpAddr;
use std::sync::Arc;

use grand_melee_protocol::league::{
    Deck, LeagueGame, LeagueId, LeagueView, LedgerLine, MemberId, MemberStanding, MemberToken,
    SeatDeck,
};
use grand_melee_protocol::{
    self as wire, ClientMessage, ErrorCode, OrganiserSecret, ServerMessage, text,
};
use tracing::{info, warn};

use crate::conn::Refusal;
use crate::lobby::LeagueSeat;
use crate::lobby::Shared;
use crate::store::{DeckCommand, LeagueRecord, LeagueWrite, StoreError};

pub(crate) fn storage(error: StoreError) -> Refusal {
    match error {
        StoreError::Refused { code, message } => Refusal {
            code,
            message: Some(message),
        },
        error => {
            warn!(%error, "the store failed a league request");
            ErrorCode::StorageFailed.into()
        }
    }
}

/// Carries out a league write where the leagues are kept (decided there by the league's rules).
async fn write(shared: &Arc<Shared>, write: LeagueWrite) -> Result<u64, Refusal> {
    shared.store.league_write(write).await.map_err(storage)
}

/// A league's record, where the leagues are kept.
pub(crate) async fn record(
    shared: &Arc<Shared>,
    league: LeagueId,
) -> Result<Option<LeagueRecord>, Refusal> {
    shared.store.league_record(league).await.map_err(storage)
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
            if password.as_ref().is_some_and(|p| {
                !(wire::MIN_PASSWORD_CHARS..=wire::MAX_PASSWORD_CHARS).contains(&p.chars().count())
            }) {
                return Err(Refusal {
                    code: ErrorCode::BadSettings,
                    message: Some(format!(
                        "password: a password has {}–{} characters",
                        wire::MIN_PASSWORD_CHARS,
                        wire::MAX_PASSWORD_CHARS
                    )),
                });
            }
            if !shared
                .budgets
                .creations
                .take(shared.key(peer), std::time::Instant::now())
            {
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
            let league = LeagueId::new_random();
            let organiser = OrganiserSecret::new_random();
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
            let (leagues, total) = shared
                .store
                .leagues_page(from, limit)
                .await
                .map_err(storage)?;
            // Bounded in bytes too, like every list: a page always fits the client's queue.
            let leagues = crate::lobby::fill_page(
                leagues.into_iter(),
                usize::try_from(limit).unwrap_or(usize::MAX),
                shared.page_bytes(),
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
                crate::lobby::check_password(
                    shared,
                    peer,
                    league,
                    Arc::from(hash.as_str()),
                    password.clone(),
                )
                .await?;
            }
            let token = MemberToken::new_random();
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
            shared
                .budgets
                .league_members
                .add((shared.key(peer), league));
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
            let view = shared
                .store
                .league_view(league)
                .await
                .map_err(storage)?
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
    let page = crate::lobby::fill_page(
        (start..positions).map(|i| (standings.get(i), games.get(i))),
        crate::lobby::page_items(limit),
        shared.page_bytes(),
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
    let found = shared
        .store
        .member_ledger(league, member)
        .await
        .map_err(storage)?;
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
    let (member, name, ledger) = member(shared, peer, league, token).await?;
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

/// The member of `league` whose token this is (a wrong token is a guess from `peer`): his
/// number, name and ledger.
async fn member(
    shared: &Arc<Shared>,
    peer: IpAddr,
    league: LeagueId,
    token: Option<MemberToken>,
) -> Result<(MemberId, String, Vec<LedgerLine>), Refusal> {
    let token = token.ok_or(Refusal::from(ErrorCode::LeagueSeat))?;
    may_guess(shared, peer, league)?;
    let found = shared
        .store
        .member_by_token(league, token)
        .await
        .map_err(storage)?;
    found.ok_or_else(|| {
        guessed(shared, peer, league, ErrorCode::NotAMember);
        Refusal::from(ErrorCode::NotAMember)
    })
}

/// Looks up the member with `token` for a league climb of `league` (a wrong token is a guess
/// from `peer`): a climb needs no registered deck; the seat counts the member only.
pub(crate) async fn climber(
    shared: &Arc<Shared>,
    peer: IpAddr,
    league: LeagueId,
    token: Option<MemberToken>,
) -> Result<LeagueSeat, Refusal> {
    let (member, name, _) = member(shared, peer, league, token).await?;
    Ok(LeagueSeat {
        name,
        deck: SeatDeck {
            member,
            deck: String::new(),
            power: 0,
            last_duel: None,
        },
    })
}

/// Checks the organiser secret of `league` (a wrong one is a guess from `peer`).
pub(crate) async fn check_organiser(
    shared: &Arc<Shared>,
    peer: IpAddr,
    league: LeagueId,
    organiser: Option<OrganiserSecret>,
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

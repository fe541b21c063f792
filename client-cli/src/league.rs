//! `grand-melee league …`: Ascension leagues. Create one (the organiser secret is kept in the
//! data folder), join one (the member token is kept there too), register and improve your deck,
//! and read the standings and any deck's ledger.

use std::io::Write;

use clap::{Args, Subcommand, ValueEnum};
use grand_melee_protocol::league::{
    Alliance, Deck, DeckSpec, LeagueId, LeagueSummary, LeagueView, LedgerEntry, LedgerLine,
    MemberId, MemberToken, Purchase, Rarity, Remedy,
};
use grand_melee_protocol::{ClientMessage, OrganiserSecret, ServerMessage};

use crate::net::Conn;
use crate::replay::utc;
use crate::safe;
use crate::store::{SavedLeague, TokenStore};
use crate::{Candidate, ClientError, Words, next_page, pick};

/// What to do with leagues.
#[derive(Debug, Clone, Subcommand)]
pub enum LeagueCmd {
    /// List the server's leagues.
    List,
    /// Create a league. Its organiser secret (needed to create its tables) is kept in the data
    /// folder.
    #[command(
        after_help = "Example:\n  grand-melee league create \"Tuesday Ascension\" --password swordfish\n  grand-melee create --league Tuesday --name \"Week 1\" --seats 6"
    )]
    Create {
        /// The league's name (1–32 characters).
        name: String,
        /// A password members need to join.
        #[arg(long, env = "GM_LEAGUE_PASSWORD")]
        password: Option<String>,
    },
    /// Join a league as a member. Your member token is kept in the data folder: it registers
    /// and improves your deck and seats you at the league's tables.
    Join {
        /// The league: its id, the start of its id, or its name.
        league: String,
        /// Your name in the league (1–32 characters).
        name: String,
        /// The league's password, if it has one.
        #[arg(long, env = "GM_LEAGUE_PASSWORD")]
        password: Option<String>,
    },
    /// The standings (deck power, games, wins, average place) and the league's games.
    Show {
        /// The league: its id, the start of its id, or its name.
        league: String,
    },
    /// A deck and its whole ledger: yours, or a member's by number or name.
    Deck {
        /// The league: its id, the start of its id, or its name.
        league: String,
        /// The member (number or name) [default: you].
        member: Option<String>,
    },
    /// Register your deck (once): its name, alliance, basic set and expansion set.
    #[command(
        after_help = "Example:\n  grand-melee league register Tuesday --deck Crusade --alliance green-white --basic-set Mirage --expansion-set Visions"
    )]
    Register {
        /// The league.
        league: String,
        #[command(flatten)]
        deck: DeckArgs,
    },
    /// Buy a deck option with your deck's unspent mana points (between games).
    #[command(
        after_help = "Costs (the seed's): common 1, uncommon 2, rare 4 each; gold +1, Summon Legend +2 each; two basic lands 1; an expansion set 10, 12, then 15 (four at most); duplicates: three of a card 8, then four 10; sideboard: 10, 12, then 14 (15 cards at most). A deck holds at most 70 cards: --remove takes cards out to make room. A card names its set (the deck's basic set or one of its expansion sets), and the copies of a card bought never exceed the deck's limit (2, then 3, then 4).\n\nExamples:\n  grand-melee league buy Tuesday uncommon --card \"Lightning Bolt\" --set Mirage\n  grand-melee league buy Tuesday lands --count 4\n  grand-melee league buy Tuesday set --set Weatherlight\n  grand-melee league buy Tuesday sideboard"
    )]
    Buy {
        /// The league.
        league: String,
        /// What to buy.
        #[arg(value_enum)]
        option: OptionArg,
        /// How many copies (cards) or lands (an even number).
        #[arg(long, default_value_t = 1)]
        count: u8,
        /// A gold card (+1 each).
        #[arg(long)]
        gold: bool,
        /// A Summon Legend (+2 each).
        #[arg(long)]
        legend: bool,
        /// The card's name (cards: required; its copies are counted).
        #[arg(long)]
        card: Option<String>,
        /// Cards: the card's set, the deck's basic set or one of its expansion sets (required);
        /// `set`: the expansion set to buy.
        #[arg(long = "set", value_name = "NAME")]
        set_name: Option<String>,
        /// Cards taken out of the deck to keep it within 70.
        #[arg(long, default_value_t = 0)]
        remove: u8,
    },
    /// Take the losing-streak remedy (once, after five losses in a row within the deck's first
    /// ten games): `swap-five` (five cards for five commons) or `new-deck` (a new deck with no
    /// rare cards: give its --deck, --alliance, --basic-set and --expansion-set).
    Remedy {
        /// The league.
        league: String,
        /// Which remedy.
        #[arg(value_enum)]
        remedy: RemedyArg,
        #[command(flatten)]
        deck: OptionalDeckArgs,
    },
}

/// A deck's registration.
#[derive(Debug, Clone, Args)]
pub struct DeckArgs {
    /// The deck's name.
    #[arg(long = "deck")]
    pub name: String,
    /// Its two or three colours, one of the seed's alliances: white-blue, blue-black,
    /// black-red, red-green, green-white, white-blue-black, blue-black-red, black-red-green,
    /// red-green-white, green-white-blue.
    #[arg(long, value_parser = parse_alliance)]
    pub alliance: Alliance,
    /// Its basic set (the seed's: 7th Edition, Ice Age, Mirage, Tempest, Urza's Saga,
    /// Mercadian Masques, Invasion, Odyssey).
    #[arg(long)]
    pub basic_set: String,
    /// Its expansion set.
    #[arg(long)]
    pub expansion_set: String,
}

/// A new deck, for the `new-deck` remedy.
#[derive(Debug, Clone, Args)]
pub struct OptionalDeckArgs {
    /// The new deck's name.
    #[arg(long = "deck")]
    pub name: Option<String>,
    /// Its alliance (as for `register`).
    #[arg(long, value_parser = parse_alliance)]
    pub alliance: Option<Alliance>,
    /// Its basic set.
    #[arg(long)]
    pub basic_set: Option<String>,
    /// Its expansion set.
    #[arg(long)]
    pub expansion_set: Option<String>,
}

/// A `--alliance` that names none of the seed's alliances (what was typed); its text lists the
/// seed's ten.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not one of the seed's alliances: {}", alliance_names())]
pub struct UnknownAlliance(pub String);

/// The seed's alliances by their wire names, separated by commas.
fn alliance_names() -> String {
    let names: Vec<&str> = Alliance::ALL.iter().map(|a| a.name()).collect();
    names.join(", ")
}

/// Parses an alliance by its wire name (`green_white`; `green-white` too); any other is refused
/// with the seed's ten.
fn parse_alliance(text: &str) -> Result<Alliance, UnknownAlliance> {
    Alliance::from_name(&text.trim().to_lowercase().replace('-', "_"))
        .ok_or_else(|| UnknownAlliance(text.to_owned()))
}

/// What `league buy` buys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OptionArg {
    /// Common cards (1 each).
    Common,
    /// Uncommon cards (2 each).
    Uncommon,
    /// Rare cards (4 each).
    Rare,
    /// Basic lands, two for 1.
    Lands,
    /// An expansion set (--set NAME), with five of its commons.
    Set,
    /// One more copy of a card allowed.
    Duplicates,
    /// Five more sideboard cards.
    Sideboard,
}

/// The losing-streak remedies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RemedyArg {
    /// Five cards out (two commons) for five commons.
    SwapFive,
    /// A new deck with no rare cards.
    NewDeck,
}

const LEAGUE_WORDS: Words = Words {
    none: "no league called",
    several: "several leagues match",
    listing: "grand-melee league list",
};

/// Every league on the server.
pub async fn all_leagues(conn: &mut Conn) -> Result<Vec<LeagueSummary>, ClientError> {
    let mut all = Vec::new();
    let mut from = 0;
    loop {
        let answer = conn
            .call(ClientMessage::ListLeagues {
                id: 0,
                from,
                limit: crate::PAGE_ITEMS,
            })
            .await?;
        let ServerMessage::Leagues { leagues, next, .. } = answer else {
            return Err(ClientError::Protocol(answer.name().to_owned()));
        };
        let got = leagues.len();
        all.extend(leagues);
        match next_page("leagues", u64::from(from), got, next.map(u64::from))? {
            Some(next) => from = u32::try_from(next).unwrap_or(u32::MAX),
            None => return Ok(all),
        }
    }
}

/// A league's whole standings and games: every page of `get_league`.
pub async fn whole_league(conn: &mut Conn, league: LeagueId) -> Result<LeagueView, ClientError> {
    let mut whole: Option<LeagueView> = None;
    let mut from = 0;
    loop {
        let answer = conn
            .call(ClientMessage::GetLeague {
                id: 0,
                league,
                from,
                limit: crate::PAGE_ITEMS,
            })
            .await?;
        let ServerMessage::League {
            league: page, next, ..
        } = answer
        else {
            return Err(ClientError::Protocol(answer.name().to_owned()));
        };
        let got = page.standings.len().max(page.games.len());
        match &mut whole {
            None => whole = Some(page),
            Some(whole) => {
                whole.standings.extend(page.standings);
                whole.games.extend(page.games);
            }
        }
        match next_page("league", u64::from(from), got, next.map(u64::from))? {
            Some(next) => from = u32::try_from(next).unwrap_or(u32::MAX),
            None => return whole.ok_or_else(|| ClientError::Protocol("league".into())),
        }
    }
}

/// A league named by its id, the start of its id, or its name.
pub async fn resolve(conn: &mut Conn, text: &str) -> Result<LeagueId, ClientError> {
    if let Ok(id) = uuid::Uuid::parse_str(text.trim()).map(LeagueId::from) {
        return Ok(id);
    }
    let leagues = all_leagues(conn).await?;
    let candidates = leagues.iter().map(|l| Candidate {
        table: l.league,
        name: &l.name,
    });
    pick(text, candidates, &LEAGUE_WORDS)
}

fn member_token(
    store: &TokenStore,
    server: &str,
    league: LeagueId,
) -> Result<MemberToken, ClientError> {
    store
        .load_league(server, league)
        .member
        .map(|(_, _, token)| token)
        .ok_or_else(|| {
            ClientError::Table(format!(
                "this computer is not a member of league {league} (data folder {}): join it first with `grand-melee league join {league} <your name>`",
                store.dir().display()
            ))
        })
}

/// The organiser secret kept for `league`, or an error saying how to get one.
pub fn organiser(
    store: &TokenStore,
    server: &str,
    league: LeagueId,
) -> Result<OrganiserSecret, ClientError> {
    store.load_league(server, league).organiser.ok_or_else(|| {
        ClientError::Table(format!(
            "this computer does not hold the organiser secret of league {league} (data folder {}): only the computer that created the league can create its tables",
            store.dir().display()
        ))
    })
}

/// The member token kept for `league`, if this computer joined it.
pub fn saved_member(
    store: &TokenStore,
    server: &str,
    league: LeagueId,
) -> Option<(MemberId, String, MemberToken)> {
    store.load_league(server, league).member
}

/// Runs `grand-melee league …`.
pub async fn run(
    server: &str,
    command: LeagueCmd,
    store: &TokenStore,
    out: &mut dyn Write,
) -> Result<(), ClientError> {
    let mut conn = Conn::open(server).await?;
    let result = run_on(&mut conn, server, command, store, out).await;
    conn.close().await;
    result
}

async fn run_on(
    conn: &mut Conn,
    server: &str,
    command: LeagueCmd,
    store: &TokenStore,
    out: &mut dyn Write,
) -> Result<(), ClientError> {
    match command {
        LeagueCmd::List => {
            let leagues = all_leagues(conn).await?;
            if leagues.is_empty() {
                writeln!(out, "no leagues")?;
            }
            for l in leagues {
                writeln!(
                    out,
                    "league {} members={} games={} password={} name={}",
                    l.league,
                    l.members,
                    l.games,
                    if l.password { "yes" } else { "no" },
                    safe::quoted(&l.name)
                )?;
            }
        }
        LeagueCmd::Create { name, password } => {
            let answer = conn
                .call(ClientMessage::CreateLeague {
                    id: 0,
                    name,
                    password,
                })
                .await?;
            let ServerMessage::LeagueCreated {
                league, organiser, ..
            } = answer
            else {
                return Err(ClientError::Protocol(answer.name().to_owned()));
            };
            let mut saved = store.load_league(server, league);
            saved.organiser = Some(organiser);
            store.save_league(server, league, &saved)?;
            writeln!(out, "league_created {league}")?;
            writeln!(
                out,
                "The organiser secret is kept in {} (back it up: it creates the league's tables).",
                store.league_path(server, league).display()
            )?;
            writeln!(
                out,
                "Members join with: grand-melee league join {league} <name>; tables: grand-melee create --league {league} --name <name> --seats <n>"
            )?;
        }
        LeagueCmd::Join {
            league,
            name,
            password,
        } => {
            let league = resolve(conn, &league).await?;
            if let Some((member, held, _)) = saved_member(store, server, league) {
                return Err(ClientError::Table(format!(
                    "this computer is already member {member} ({}) of this league; a second member on this computer needs his own --data-dir",
                    safe::quoted(&held)
                )));
            }
            let answer = conn
                .call(ClientMessage::JoinLeague {
                    id: 0,
                    league,
                    name: name.clone(),
                    password,
                })
                .await?;
            let ServerMessage::LeagueJoined { member, token, .. } = answer else {
                return Err(ClientError::Protocol(answer.name().to_owned()));
            };
            let mut saved: SavedLeague = store.load_league(server, league);
            saved.member = Some((member, name, token));
            store.save_league(server, league, &saved)?;
            writeln!(out, "league_joined {league} member={member}")?;
            writeln!(
                out,
                "Register your deck: grand-melee league register {league} --deck <name> --alliance <colours> --basic-set <set> --expansion-set <set>"
            )?;
        }
        LeagueCmd::Show { league } => {
            let league = resolve(conn, &league).await?;
            write_standings(&whole_league(conn, league).await?, out)?;
        }
        LeagueCmd::Deck { league, member } => {
            let league = resolve(conn, &league).await?;
            let member = match member {
                None => {
                    saved_member(store, server, league)
                        .ok_or_else(|| {
                            ClientError::Table(
                                "name the member: this computer is not a member of this league"
                                    .into(),
                            )
                        })?
                        .0
                }
                Some(text) => match text.trim().parse::<MemberId>() {
                    Ok(number) => number,
                    Err(_) => member_by_name(conn, league, &text).await?,
                },
            };
            let answer = conn
                .call(ClientMessage::GetDeck {
                    id: 0,
                    league,
                    member,
                })
                .await?;
            write_deck(&answer, out)?;
        }
        LeagueCmd::Register { league, deck } => {
            let league = resolve(conn, &league).await?;
            let token = member_token(store, server, league)?;
            let answer = conn
                .call(ClientMessage::RegisterDeck {
                    id: 0,
                    league,
                    token,
                    deck: DeckSpec {
                        name: deck.name,
                        alliance: deck.alliance,
                        basic_set: deck.basic_set,
                        expansion_set: deck.expansion_set,
                    },
                })
                .await?;
            write_deck(&answer, out)?;
        }
        LeagueCmd::Buy {
            league,
            option,
            count,
            gold,
            legend,
            card,
            set_name,
            remove,
        } => {
            let league = resolve(conn, &league).await?;
            let token = member_token(store, server, league)?;
            let cards = |rarity| Purchase::Cards {
                rarity,
                count,
                gold,
                legend,
                card: card.clone(),
                set: set_name.clone(),
            };
            let purchase = match option {
                OptionArg::Common => cards(Rarity::Common),
                OptionArg::Uncommon => cards(Rarity::Uncommon),
                OptionArg::Rare => cards(Rarity::Rare),
                OptionArg::Lands => Purchase::BasicLands {
                    count: if count == 1 { 2 } else { count },
                },
                OptionArg::Set => Purchase::ExpansionSet {
                    name: set_name.ok_or_else(|| {
                        ClientError::Table("name the expansion set: --set NAME".into())
                    })?,
                },
                OptionArg::Duplicates => Purchase::Duplicates,
                OptionArg::Sideboard => Purchase::Sideboard,
            };
            let answer = conn
                .call(ClientMessage::Buy {
                    id: 0,
                    league,
                    token,
                    purchase,
                    remove,
                })
                .await?;
            write_deck(&answer, out)?;
        }
        LeagueCmd::Remedy {
            league,
            remedy,
            deck,
        } => {
            let league = resolve(conn, &league).await?;
            let token = member_token(store, server, league)?;
            let remedy = match remedy {
                RemedyArg::SwapFive => Remedy::SwapFive,
                RemedyArg::NewDeck => {
                    let missing = || {
                        ClientError::Table(
                            "a new deck needs --deck, --alliance, --basic-set and --expansion-set"
                                .into(),
                        )
                    };
                    Remedy::NewDeck {
                        deck: DeckSpec {
                            name: deck.name.ok_or_else(missing)?,
                            alliance: deck.alliance.ok_or_else(missing)?,
                            basic_set: deck.basic_set.ok_or_else(missing)?,
                            expansion_set: deck.expansion_set.ok_or_else(missing)?,
                        },
                    }
                }
            };
            let answer = conn
                .call(ClientMessage::TakeRemedy {
                    id: 0,
                    league,
                    token,
                    remedy,
                })
                .await?;
            write_deck(&answer, out)?;
        }
    }
    Ok(())
}

async fn member_by_name(
    conn: &mut Conn,
    league: LeagueId,
    name: &str,
) -> Result<MemberId, ClientError> {
    let league = whole_league(conn, league).await?;
    let lower = name.trim().to_lowercase();
    let found: Vec<MemberId> = league
        .standings
        .iter()
        .filter(|m| m.name.to_lowercase().starts_with(&lower))
        .map(|m| m.member)
        .collect();
    match found[..] {
        [one] => Ok(one),
        [] => Err(ClientError::Table(format!(
            "no member called {}",
            safe::quoted(name)
        ))),
        _ => Err(ClientError::Table(format!(
            "several members match {}; give the number",
            safe::quoted(name)
        ))),
    }
}

/// The average place, to one decimal, or `-`.
fn average(places: u32, games: u32) -> String {
    if games == 0 {
        "-".into()
    } else {
        format!("{:.1}", f64::from(places) / f64::from(games))
    }
}

/// Writes a league's standings and games.
pub fn write_standings(league: &LeagueView, out: &mut dyn Write) -> Result<(), ClientError> {
    writeln!(
        out,
        "league {} name={} members={} games={} password={}",
        league.league,
        safe::quoted(&league.name),
        league.standings.len(),
        league.games.len(),
        if league.password { "yes" } else { "no" }
    )?;
    writeln!(
        out,
        "{:>3}  {:<3} {:<16} {:<18} {:<16} {:>5} {:>7} {:>5} {:>4} {:>9}",
        "#", "no", "member", "deck", "alliance", "power", "unspent", "games", "wins", "avg place"
    )?;
    for (rank, m) in league.standings.iter().enumerate() {
        writeln!(
            out,
            "{:>3}  {:<3} {:<16} {:<18} {:<16} {:>5} {:>7} {:>5} {:>4} {:>9}",
            rank + 1,
            m.member,
            safe::printable(&m.name),
            safe::printable(m.deck.as_deref().unwrap_or("(no deck)")),
            m.alliance.map_or("-", Alliance::name),
            m.power,
            m.balance,
            m.games,
            m.wins,
            average(m.places, m.games)
        )?;
    }
    for game in &league.games {
        let when = match game.finished_at_ms {
            Some(ms) => format!("finished {}", utc(ms)),
            None => "being played".to_owned(),
        };
        writeln!(
            out,
            "game {} {when} name={}",
            game.table,
            safe::quoted(&game.name)
        )?;
    }
    Ok(())
}

/// Writes a `deck` answer: the deck, then its ledger.
pub fn write_deck(answer: &ServerMessage, out: &mut dyn Write) -> Result<(), ClientError> {
    let ServerMessage::Deck {
        member,
        name,
        deck,
        ledger,
        ..
    } = answer
    else {
        return Err(ClientError::Protocol(answer.name().to_owned()));
    };
    write_deck_state(*member, name, deck, out)?;
    writeln!(out, "ledger:")?;
    for line in ledger {
        writeln!(out, "  {}", ledger_line(line))?;
    }
    Ok(())
}

fn write_deck_state(
    member: MemberId,
    name: &str,
    deck: &Deck,
    out: &mut dyn Write,
) -> Result<(), ClientError> {
    let Some(spec) = &deck.spec else {
        writeln!(
            out,
            "deck member={member} name={} registered=no",
            safe::quoted(name)
        )?;
        return Ok(());
    };
    let sets: Vec<String> = deck
        .expansion_sets
        .iter()
        .map(|s| safe::printable(s))
        .collect();
    let remedy = if deck.remedy_used {
        "used"
    } else if deck.remedy_open() {
        "open"
    } else {
        "closed"
    };
    writeln!(
        out,
        "deck member={member} name={} deck={} alliance={} basic_set={} sets={} power={} spent={} unspent={} cards={} duplicates={} sideboard={} games={} wins={} avg_place={} losing_streak={} remedy={remedy}",
        safe::quoted(name),
        safe::quoted(&spec.name),
        spec.alliance.name(),
        safe::quoted(&spec.basic_set),
        safe::quoted(&sets.join(",")),
        deck.power,
        deck.spent,
        deck.balance(),
        deck.cards,
        deck.duplicates,
        deck.sideboard,
        deck.games,
        deck.wins,
        average(deck.place_sum, deck.games),
        deck.losing_streak
    )?;
    Ok(())
}

/// One ledger line in words.
pub fn ledger_line(line: &LedgerLine) -> String {
    let what = match &line.entry {
        LedgerEntry::Registered { deck } => format!(
            "registered {} ({}, {} / {})",
            safe::quoted(&deck.name),
            deck.alliance.name(),
            safe::printable(&deck.basic_set),
            safe::printable(&deck.expansion_set)
        ),
        LedgerEntry::Credited {
            table_name,
            place,
            players,
            mana_points,
            ..
        } => format!(
            "+{mana_points} mana points: place {place} of {players} at {}",
            safe::quoted(table_name)
        ),
        LedgerEntry::Bought {
            purchase,
            cost,
            removed,
        } => {
            let item = match purchase {
                Purchase::Cards {
                    rarity,
                    count,
                    gold,
                    legend,
                    card,
                    set,
                } => {
                    let rarity = match rarity {
                        Rarity::Common => "common",
                        Rarity::Uncommon => "uncommon",
                        Rarity::Rare => "rare",
                    };
                    format!(
                        "{count} {rarity}{}{}{}{}",
                        if *gold { " gold" } else { "" },
                        if *legend { " Summon Legend" } else { "" },
                        card.as_ref()
                            .map(|c| format!(" {}", safe::quoted(c)))
                            .unwrap_or_default(),
                        set.as_ref()
                            .map(|s| format!(" from {}", safe::quoted(s)))
                            .unwrap_or_default()
                    )
                }
                Purchase::BasicLands { count } => format!("{count} basic lands"),
                Purchase::ExpansionSet { name } => {
                    format!("expansion set {} (+5 commons)", safe::quoted(name))
                }
                Purchase::Duplicates => "one more copy of a card allowed".to_owned(),
                Purchase::Sideboard => "five sideboard cards".to_owned(),
            };
            let removed = if *removed > 0 {
                format!(", {removed} cards taken out")
            } else {
                String::new()
            };
            format!("bought {item} for {cost}{removed}")
        }
        LedgerEntry::RemedyTaken { remedy } => match remedy {
            Remedy::SwapFive => "losing-streak remedy: five cards swapped for commons".to_owned(),
            Remedy::NewDeck { deck } => format!(
                "losing-streak remedy: a new deck with no rares, {} ({})",
                safe::quoted(&deck.name),
                deck.alliance.name()
            ),
        },
    };
    format!("#{} {} {what}", line.seq, utc(line.at_ms))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn an_alliance_is_read_by_its_wire_name_and_any_other_is_refused_with_the_list() {
        let white_blue = Alliance::from_name("white_blue").unwrap();
        assert_eq!(parse_alliance(" White-Blue "), Ok(white_blue));
        let error = parse_alliance("purple").unwrap_err();
        assert_eq!(error, UnknownAlliance("purple".to_owned()));
        let text = error.to_string();
        assert!(
            text.starts_with("not one of the seed's alliances: "),
            "{text}"
        );
        for alliance in Alliance::ALL {
            assert!(text.contains(alliance.name()), "{text}");
        }
    }
}

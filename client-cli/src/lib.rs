//! The terminal client for one Grand Melee seat (and for watching a table): the `grand-melee`
//! binary.
//!
//! - [`cli`]: flags and subcommands (`list`, `create`, `join`, `resume`, `watch`, `replay`).
//! - [`net`]: the WebSocket connection, `hello` and request/answer calls.
//! - [`session`]: one seat at one table — sits down or resumes with the saved token, mirrors the
//!   table with the protocol's one fold, [`Mirror`](grand_melee_protocol::Mirror), of the
//!   snapshot's game ([`games::GameMirror`]; a gap asks for a snapshot), sends commands, and
//!   reconnects by itself with backoff.
//! - [`command`]: the short commands a player types, parsed into requests.
//! - [`describe`]: words for events and for the player's situation.
//! - [`games`]: what each game gives the client (its mirror, its events' words, its commands,
//!   the player's situation); the rest is the frame.
//! - [`words`]: players written and read, shared by the frame and the games.
//! - [`script`]: script mode (one line per event and per error).
//! - [`tui`]: the full-screen terminal UI (ratatui); [`draw`]: its drawing helpers, shared
//!   with the games' panels.
//! - [`replay`]: finished games: listing, export, and stepping through one in the watch view.
//! - [`day`]: Mountain Magic's day climbs: a day's standings.
//! - [`store`]: saved seat tokens.

pub mod cli;
pub mod command;
pub mod day;
pub mod describe;
pub mod draw;
pub mod games;
pub mod league;
pub mod net;
pub mod replay;
pub mod safe;
pub mod script;
pub mod session;
pub mod store;
pub mod tui;
pub mod words;

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};

use grand_melee_protocol::{
    ClientMessage, ErrorCode, Reduction, ServerMessage, TableId, TableSummary,
};
use tokio::sync::mpsc;

use crate::cli::{Cli, Cmd, CreateArgs, ExportFormat, ReductionArg, ReplayCmd};
use crate::net::Conn;
use crate::session::{Input, Mode, Options};
use crate::store::TokenStore;

/// Why the client stopped.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The server could not be reached.
    #[error("cannot reach the server at {url}: {reason} (is grand-melee-server running there?)")]
    Unreachable {
        /// The WebSocket URL.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// The connection dropped.
    #[error("the connection dropped: {0}")]
    Dropped(String),
    /// The server refused a request.
    #[error("{request} refused: {} ({})", safe::printable(message), code.name())]
    Rejected {
        /// Why.
        code: ErrorCode,
        /// The request's type.
        request: String,
        /// The server's explanation (a `bad_settings` names the setting and its range).
        message: String,
    },
    /// Another client resumed this seat (another window or computer with its token).
    #[error(
        "your seat was taken over by another client (another window or computer resumed it); \
         this one stops here. To play from here again: grand-melee resume {table}"
    )]
    TakenOver {
        /// The table.
        table: TableId,
    },
    /// `join` under a new name where this computer already holds a seat at the table.
    #[error(
        "this computer already holds {} seat at this table (saved in {dir}), and `join` would take that seat back rather than seat {}.\n  \
         - to play {} seat: grand-melee resume {table}\n  \
         - to play it under the name given anyway: add --takeover\n  \
         - for a second player on this computer: give him his own folder, e.g. grand-melee --data-dir ~/.grand-melee-{} join {table} {}",
        safe::quoted(&format!("{saved}'s")),
        safe::quoted(wanted),
        safe::quoted(&format!("{saved}'s")),
        safe::printable(&wanted.to_lowercase().replace(' ', "-")),
        safe::quoted(wanted)
    )]
    SeatHeld {
        /// The table.
        table: TableId,
        /// The name of the saved seat.
        saved: String,
        /// The name given to `join`.
        wanted: String,
        /// The token directory.
        dir: String,
    },
    /// The game at this table is over.
    #[error("the game is over (see `grand-melee replay watch {table}`)")]
    GameOver {
        /// The table.
        table: TableId,
    },
    /// The seat could not be taken back.
    #[error("your seat is lost: {0}")]
    SeatLost(String),
    /// `resume` without a saved seat.
    #[error(
        "no seat saved for table {table} on {server} (looked in {dir}); use `grand-melee join` to sit down"
    )]
    NoSavedSeat {
        /// The server's URL.
        server: String,
        /// The table.
        table: TableId,
        /// The token directory.
        dir: String,
    },
    /// A table name that matches no table, or several.
    #[error("{0}")]
    Table(String),
    /// `verify` found an outcome its dice do not give.
    #[error("NOT VERIFIED: {0}")]
    Verify(String),
    /// `verify` of a climb of a day's mountain before the day is over.
    #[error(
        "this is a climb of {day}'s mountain: its deal comes from the day's dice, and the day's secret is revealed when the day is over, at {at}; verify it then (its commitment is the day's)"
    )]
    DayNotOver {
        /// The day.
        day: String,
        /// When its secret is revealed.
        at: String,
    },
    /// `--ca-cert` could not be used.
    #[error("--ca-cert {path}: {reason}")]
    CaCert {
        /// The file.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The server said something unexpected.
    #[error("unexpected answer from the server: {0}")]
    Protocol(String),
    /// No directory for seat tokens.
    #[error("no data directory for seat tokens: pass --data-dir or set GM_CLI_DATA_DIR")]
    NoDataDir,
    /// Writing a file failed.
    #[error("cannot write {}: {source}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: io::Error,
    },
    /// Refused to write MessagePack to a terminal.
    #[error(
        "MessagePack is binary: write it to a file with --output FILE or redirect standard output"
    )]
    BinaryToTerminal,
    /// Reading or writing the terminal or a file failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Runs the command line.
pub async fn run(cli: Cli) -> Result<(), ClientError> {
    net::configure_tls(cli.ca_cert.as_deref())?;
    let server = net::endpoint(&cli.server);
    let plain = cli.plain || !io::stdin().is_terminal() || !io::stdout().is_terminal();
    let store = || -> Result<TokenStore, ClientError> {
        cli.data_dir
            .clone()
            .or_else(TokenStore::default_dir)
            .map(TokenStore::new)
            .ok_or(ClientError::NoDataDir)
    };
    let options = Options {
        stay: cli.stay,
        ..Options::default()
    };
    let mode = match cli.command.clone() {
        Cmd::List => {
            let out = &mut io::stdout().lock();
            return if cli.plain || !io::stdout().is_terminal() {
                list(&server, PAGE_ITEMS, out).await
            } else {
                list_for_people(&server, PAGE_ITEMS, out).await
            };
        }
        Cmd::Replay(command) => {
            let store = store().ok();
            return run_replay(&server, command, plain, store).await;
        }
        Cmd::Verify {
            table,
            file,
            password,
        } => {
            let (settings, events) = match (file, table) {
                (Some(path), _) => replay::read_jsonl(&path)?,
                (None, Some(table)) => {
                    let access = replay::Access {
                        password,
                        store: store().ok(),
                    };
                    let replay = replay::fetch(&server, &table, &access, PAGE_ITEMS).await?;
                    (Some(replay.settings), replay.events)
                }
                (None, None) => return Err(ClientError::Table("name the game, or --file".into())),
            };
            let own = settings.and_then(|s| s.mountain_magic).unwrap_or_default();
            if let Some(date) = own.day {
                // A climb of a day's mountain: the day's dice, its secret from the standings.
                let mut conn = Conn::open(&server).await?;
                let day = day::fetch(&mut conn, &date, None).await;
                conn.close().await;
                return day::verify_climb(&events, &day?, &mut io::stdout().lock());
            }
            return verify(&events, own.deck.as_ref(), &mut io::stdout().lock());
        }
        Cmd::League(command) => {
            return league::run(&server, command, &store()?, &mut io::stdout().lock()).await;
        }
        Cmd::Standings { day, league } => {
            let plain = cli.plain || !io::stdout().is_terminal();
            let out = &mut io::stdout().lock();
            return day::run(&server, &day, league.as_deref(), plain, out).await;
        }
        Cmd::Create(args) => {
            let league = match &args.league {
                Some(text) => {
                    let mut conn = Conn::open(&server).await?;
                    let league = league::resolve(&mut conn, text).await;
                    conn.close().await;
                    Some(league?)
                }
                None => None,
            };
            let (table_league, climb) = match (league, &args.day) {
                // A league climb of the day's mountain: any member creates it, and only a
                // member sits down (with his token, under his league name).
                (Some(league), Some(_)) => {
                    if args.join.is_some()
                        && league::saved_member(&store()?, &server, league).is_none()
                    {
                        return Err(ClientError::Table(format!(
                            "a league climb is for the league's members, and this computer is not a member of league {league}: join it first with `grand-melee league join {league} <your name>`"
                        )));
                    }
                    (None, Some(league))
                }
                (Some(league), None) => (
                    Some((league, league::organiser(&store()?, &server, league)?)),
                    None,
                ),
                (None, _) => (None, None),
            };
            let mountain_magic = mountain_magic_settings(&args, climb)?;
            let out = &mut io::stdout().lock();
            let table = create(&server, &args, table_league, mountain_magic, out).await?;
            let Some(name) = args.join else {
                if !plain {
                    let mut out = io::stdout().lock();
                    writeln!(
                        out,
                        "Sit down with: grand-melee join {table} <your name>   (or watch {table})"
                    )?;
                }
                return Ok(());
            };
            let member =
                league.and_then(|league| league::saved_member(&store().ok()?, &server, league));
            // At a league table the member's league name is his name there.
            let (name, member_token) = match member {
                Some((_, member_name, token)) => (member_name, Some(token)),
                None => (name, None),
            };
            Mode::Join {
                table,
                name,
                password: args.password,
                member_token,
            }
        }
        Cmd::Join {
            table,
            name,
            password,
            takeover,
        } => {
            let table = resolve_table(&server, &table, PAGE_ITEMS).await?;
            let store = store()?;
            // At a league table the member sits down under his league name, with his token
            // (only a member of some league on this server needs to look).
            let league = if store.has_leagues(&server) {
                table_league(&server, table).await?
            } else {
                None
            };
            let (name, member_token) = match league {
                Some(league) => {
                    let (_, member_name, token) = league::saved_member(&store, &server, league)
                        .ok_or_else(|| {
                            ClientError::Table(format!(
                                "this is a game of league {league}, and this computer is not a member: join the league first with `grand-melee league join {league} <your name>`"
                            ))
                        })?;
                    (member_name, Some(token))
                }
                None => (name, None),
            };
            if let Some(saved) = store.load(&server, table)
                && !takeover
                && !saved.name.eq_ignore_ascii_case(name.trim())
            {
                return Err(ClientError::SeatHeld {
                    table,
                    saved: saved.name,
                    wanted: name,
                    dir: store.dir().display().to_string(),
                });
            }
            Mode::Join {
                table,
                name,
                password,
                member_token,
            }
        }
        Cmd::Resume { table } => Mode::Resume {
            table: resolve_table(&server, &table, PAGE_ITEMS).await?,
        },
        Cmd::Watch { table, password } => Mode::Watch {
            table: resolve_table(&server, &table, PAGE_ITEMS).await?,
            password,
        },
    };
    let store = store()?;
    let result = if plain {
        run_script(server.clone(), mode.clone(), &store, &options).await
    } else {
        run_interactive(server.clone(), mode.clone(), &store, &options, &cli.server).await
    };
    match (result, &mode) {
        // A seat refused at a table whose game is over: say so, and where its replay is.
        (
            Err(ClientError::Rejected {
                code: ErrorCode::GameStarted | ErrorCode::UnknownTable,
                ..
            }),
            Mode::Join { table, .. },
        ) if game_is_over(&server, *table).await => Err(ClientError::GameOver { table: *table }),
        (result, _) => result,
    }
}

/// The league whose game is played at `table`, as the table list says.
async fn table_league(
    server: &str,
    table: TableId,
) -> Result<Option<grand_melee_protocol::league::LeagueId>, ClientError> {
    let mut conn = Conn::open(server).await?;
    let tables = all_tables(&mut conn, PAGE_ITEMS).await;
    conn.close().await;
    Ok(tables?
        .iter()
        .find(|t| t.table == table)
        .and_then(|t| t.league))
}

/// Whether `table` has finished: the table list says so, or its replay is kept.
async fn game_is_over(server: &str, table: TableId) -> bool {
    let Ok(mut conn) = Conn::open(server).await else {
        return false;
    };
    let finished = match all_tables(&mut conn, PAGE_ITEMS).await {
        Ok(tables) => tables
            .iter()
            .any(|t| t.table == table && t.stage == grand_melee_protocol::StageName::Finished),
        Err(_) => false,
    };
    let finished = finished
        || matches!(
            conn.call(ClientMessage::GetReplay {
                id: 0,
                table,
                from_seq: 1,
                password: None,
                token: None,
            })
            .await,
            Ok(_)
                | Err(ClientError::Rejected {
                    code: ErrorCode::WrongPassword,
                    ..
                })
        );
    conn.close().await;
    finished
}

/// Items asked for in each page of `list_tables` and `list_replays`: the server's maximum
/// (the server still ends a page early rather than pass its byte limit).
pub const PAGE_ITEMS: u32 = grand_melee_protocol::MAX_PAGE_ITEMS;

/// Where the next page starts, after a page that started at `from` and held `got` items, as
/// the server's `next` (or `next_seq`) says: `None` after the last page. A next page that does
/// not move forward, or that follows an empty page, is refused rather than asked for again, so
/// that a server repeating a page cannot keep the client asking forever.
pub fn next_page(
    what: &str,
    from: u64,
    got: usize,
    next: Option<u64>,
) -> Result<Option<u64>, ClientError> {
    match next {
        None => Ok(None),
        Some(_) if got == 0 => Err(ClientError::Protocol(format!(
            "an empty page of {what} from {from} that says more follow"
        ))),
        Some(next) if next <= from => Err(ClientError::Protocol(format!(
            "the page of {what} from {from} says the next one starts at {next}: it does not advance"
        ))),
        Some(next) => Ok(Some(next)),
    }
}

/// Every table on the server: every page of `list_tables`, `limit` tables a page.
pub async fn all_tables(conn: &mut Conn, limit: u32) -> Result<Vec<TableSummary>, ClientError> {
    let mut all = Vec::new();
    let mut from = 0;
    loop {
        let answer = conn
            .call(ClientMessage::ListTables { id: 0, from, limit })
            .await?;
        let ServerMessage::Tables { tables, next, .. } = answer else {
            return Err(ClientError::Protocol(answer.name().to_owned()));
        };
        let got = tables.len();
        all.extend(tables);
        match next_page("tables", u64::from(from), got, next.map(u64::from))? {
            Some(next) => from = u32::try_from(next).unwrap_or(u32::MAX),
            None => return Ok(all),
        }
    }
}

/// Writes one line per table (every page, `limit` tables a page):
/// `table <id> stage=… seated=3/8 … name="<name>"`.
pub async fn list(server: &str, limit: u32, out: &mut dyn Write) -> Result<(), ClientError> {
    let mut conn = Conn::open(server).await?;
    let tables = all_tables(&mut conn, limit).await;
    conn.close().await;
    let tables = tables?;
    if tables.is_empty() {
        writeln!(out, "no tables")?;
    }
    for t in tables {
        let stage = match t.stage {
            grand_melee_protocol::StageName::Lobby => "lobby",
            grand_melee_protocol::StageName::Mulligan => "mulligan",
            grand_melee_protocol::StageName::Playing => "playing",
            grand_melee_protocol::StageName::Finished => "finished",
        };
        let reduction = match t.reduction {
            Reduction::Eager => "eager",
            Reduction::Forced => "forced",
        };
        writeln!(
            out,
            "table {} stage={stage} seated={}/{} spectators={} rules={} range={} reduction={reduction} dice={} mulligan={} adjourned={} password={} name={}",
            t.table,
            t.seated,
            t.seats,
            t.spectators,
            t.rules.name(),
            t.spell_range,
            if t.combat_dice { "yes" } else { "no" },
            t.mulligan.name(),
            if t.adjourned { "yes" } else { "no" },
            if t.password { "yes" } else { "no" },
            safe::quoted(&t.name)
        )?;
    }
    Ok(())
}

/// The width of `list`'s table on a terminal: one table a line in an 80-column terminal.
pub const LIST_WIDTH: usize = 80;

/// Writes the server's tables (every page, `limit` tables a page) as a table for people, one
/// table a line no wider than [`LIST_WIDTH`]: the start of its id (enough to name it), its name,
/// stage, seats taken, spectators, and its game or its Grand Melee settings, abbreviated, with
/// `password` first when it has one. A name or settings too long for the line end in `…`.
pub async fn list_for_people(
    server: &str,
    limit: u32,
    out: &mut dyn Write,
) -> Result<(), ClientError> {
    let mut conn = Conn::open(server).await?;
    let tables = all_tables(&mut conn, limit).await;
    conn.close().await;
    write_tables(&tables?, out)
}

/// `text` cut to `width` columns, its end replaced by `…` if it was longer.
fn shortened(text: &str, width: usize) -> String {
    use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};
    if text.width() <= width {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// [`list_for_people`]'s table.
pub fn write_tables(tables: &[TableSummary], out: &mut dyn Write) -> Result<(), ClientError> {
    use unicode_width::UnicodeWidthStr;
    const NAME: usize = 18;
    if tables.is_empty() {
        writeln!(out, "no tables")?;
        return Ok(());
    }
    let head = format!(
        "{:<8}  {:<NAME$}  {:<9} {:>5} {:>5}  ",
        "table", "name", "stage", "seats", "watch"
    );
    let settings_width = LIST_WIDTH.saturating_sub(head.width());
    writeln!(out, "{head}game / settings")?;
    for t in tables {
        let stage = match (t.adjourned, t.stage) {
            (true, _) => "adjourned",
            (false, grand_melee_protocol::StageName::Lobby) => "lobby",
            (false, grand_melee_protocol::StageName::Mulligan) => "mulligan",
            (false, grand_melee_protocol::StageName::Playing) => "playing",
            (false, grand_melee_protocol::StageName::Finished) => "finished",
        };
        let mut settings: Vec<String> = Vec::new();
        if t.password {
            settings.push("password".into());
        }
        match t.game {
            grand_melee_protocol::GameKind::MagicTech => settings.push("Magic Tech".into()),
            grand_melee_protocol::GameKind::MountainMagic => settings.push("Mountain Magic".into()),
            _ => {
                settings.push(format!("{} R{}", t.rules.name(), t.spell_range));
                settings.push(
                    match t.reduction {
                        Reduction::Eager => "eager",
                        Reduction::Forced => "forced",
                    }
                    .into(),
                );
                settings.push(match t.mulligan {
                    grand_melee_protocol::MulliganMode::Paris => "paris".into(),
                    grand_melee_protocol::MulliganMode::Simultaneous => "simult.".into(),
                });
                if t.combat_dice {
                    settings.push("dice".into());
                }
            }
        }
        let id = t.table.to_string();
        let name = shortened(&safe::printable(&t.name), NAME);
        let pad = " ".repeat(NAME.saturating_sub(name.width()));
        writeln!(
            out,
            "{}  {name}{pad}  {stage:<9} {:>5} {:>5}  {}",
            &id[..8],
            format!("{}/{}", t.seated, t.seats),
            t.spectators,
            shortened(&settings.join(" "), settings_width)
        )?;
    }
    Ok(())
}

/// Checks a finished game's dice ([`grand_melee_protocol::dice::verify`]) and, for a Mountain
/// Magic climb, its deal ([`grand_melee_protocol::mountain_magic::verify_deal`], with the
/// table's own deck if it had one), and says what it found; a mismatch is an error naming the
/// event.
pub fn verify(
    events: &[grand_melee_protocol::Event],
    own_deck: Option<&grand_melee_protocol::mountain_magic_types::DeckFile>,
    out: &mut dyn Write,
) -> Result<(), ClientError> {
    let numbered = (1u64..).zip(events);
    match grand_melee_protocol::dice::verify(numbered) {
        Ok(verified) => {
            let deal = grand_melee_protocol::mountain_magic::verify_deal(
                &verified.dice,
                own_deck,
                (1u64..).zip(events),
            )
            .map_err(|mismatch| ClientError::Verify(mismatch.to_string()))?;
            if let Some(deal) = deal {
                let deck = if deal.own_deck {
                    "the table's own deck"
                } else {
                    "the default deck the dice draw"
                };
                let occupiers = if deal.occupiers {
                    ", the occupying forces"
                } else {
                    ""
                };
                writeln!(
                    out,
                    "verified: the Mountain Magic deal of {deck}: the bottom row, {} card(s) turned over, {} land(s){occupiers} are what the dice give",
                    deal.flipped, deal.lands
                )?;
            }
            let first = if verified.first_player_drawn {
                "the first player drawn"
            } else {
                "the first player chosen by the host"
            };
            let seating = match verified.seating {
                grand_melee_protocol::SeatingMode::Random => format!(
                    "the seating of {} players (random), {first}",
                    verified.players
                ),
                grand_melee_protocol::SeatingMode::Joined => format!(
                    "{first} (the seating of {} players was in join order, as announced: not the dice's)",
                    verified.players
                ),
                grand_melee_protocol::SeatingMode::Arranged => format!(
                    "{first} (the seating of {} players was arranged by the host: not the dice's)",
                    verified.players
                ),
            };
            writeln!(
                out,
                "verified: the secret matches its commitment; {seating} and all {} d20 roll(s) are what the dice give",
                verified.rolls
            )?;
            Ok(())
        }
        Err(mismatch) => Err(ClientError::Verify(mismatch.to_string())),
    }
}

/// A new table's Mountain Magic settings: `--day` (and a league climb's league), checked to
/// be for a Mountain Magic climb.
pub fn mountain_magic_settings(
    args: &CreateArgs,
    league: Option<grand_melee_protocol::league::LeagueId>,
) -> Result<Option<grand_melee_protocol::mountain_magic_types::MountainMagicSettings>, ClientError>
{
    let Some(day) = &args.day else {
        return Ok(None);
    };
    if args.game != grand_melee_protocol::GameKind::MountainMagic || args.seats != 1 {
        return Err(ClientError::Table(
            "--day is a Mountain Magic climb of the day's mountain: add --game mountain_magic --seats 1".to_owned(),
        ));
    }
    Ok(Some(
        grand_melee_protocol::mountain_magic_types::MountainMagicSettings {
            day: Some(day.trim().to_owned()),
            league,
            ..Default::default()
        },
    ))
}

/// Creates a table and writes `table_created <id>`; returns the id.
pub async fn create(
    server: &str,
    args: &CreateArgs,
    league: Option<(
        grand_melee_protocol::league::LeagueId,
        grand_melee_protocol::OrganiserSecret,
    )>,
    mountain_magic: Option<grand_melee_protocol::mountain_magic_types::MountainMagicSettings>,
    out: &mut dyn Write,
) -> Result<TableId, ClientError> {
    let mut conn = Conn::open(server).await?;
    let answer = conn
        .call(ClientMessage::CreateTable {
            mountain_magic,
            id: 0,
            name: args.name.clone(),
            seats: args.seats,
            // Absent: the rules' own range (2 for the seed's rules, 1 for cr807).
            spell_range: args.spell_range.unwrap_or(0),
            reduction: match args.reduction {
                ReductionArg::Eager => Reduction::Eager,
                ReductionArg::Forced => Reduction::Forced,
            },
            starting_life: args.starting_life,
            password: args.password.clone(),
            seed: args.seed,
            turn_clock_secs: args.turn_clock,
            absence_limit_secs: args.absence_limit,
            mulligan_clock_secs: args.mulligan_clock,
            max_spectators: args.max_spectators,
            rules: args.rules.into(),
            combat_dice: args.combat_dice,
            mulligan: args.mulligan.into(),
            game: args.game,
            league: league.map(|(league, _)| league),
            organiser: league.map(|(_, organiser)| organiser),
        })
        .await?;
    conn.close().await;
    let ServerMessage::TableCreated { table, .. } = answer else {
        return Err(ClientError::Protocol(answer.name().to_owned()));
    };
    writeln!(out, "table_created {table}")?;
    out.flush()?;
    Ok(table)
}

/// A table named by its id, the start of its id, or its name (case does not matter), looked
/// up in every page of the table list, `limit` tables a page.
pub async fn resolve_table(server: &str, text: &str, limit: u32) -> Result<TableId, ClientError> {
    if let Ok(id) = uuid::Uuid::parse_str(text.trim()).map(TableId::from) {
        return Ok(id);
    }
    let mut conn = Conn::open(server).await?;
    let tables = all_tables(&mut conn, limit).await;
    conn.close().await;
    let tables = tables?;
    let candidates = tables.iter().map(|t| Candidate {
        table: t.table,
        name: &t.name,
    });
    pick(text, candidates, &TABLE_WORDS)
}

/// A table (or finished game, or league: `Id` is its kind of id) that a name given on the
/// command line may mean.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'a, Id = TableId> {
    /// Its id.
    pub table: Id,
    /// Its name.
    pub name: &'a str,
}

/// How [`pick`] words its errors.
#[derive(Debug, Clone, Copy)]
pub struct Words {
    /// `no table called`.
    pub none: &'static str,
    /// `several tables match`.
    pub several: &'static str,
    /// The command that lists them.
    pub listing: &'static str,
}

const TABLE_WORDS: Words = Words {
    none: "no table called",
    several: "several tables match",
    listing: "grand-melee list",
};

/// The one candidate whose name is `text` (any case); or else whose name starts with `text`;
/// or else whose id starts with `text`.
pub fn pick<'a, Id: Copy + std::fmt::Display>(
    text: &str,
    candidates: impl Iterator<Item = Candidate<'a, Id>> + Clone,
    words: &Words,
) -> Result<Id, ClientError> {
    let text = text.trim();
    let lower = text.to_lowercase();
    let by_name: Vec<Id> = candidates
        .clone()
        .filter(|c| c.name.eq_ignore_ascii_case(text))
        .map(|c| c.table)
        .collect();
    let by_prefix = || -> Vec<Id> {
        candidates
            .clone()
            .filter(|c| !text.is_empty() && c.name.to_lowercase().starts_with(&lower))
            .map(|c| c.table)
            .collect()
    };
    let by_id = || -> Vec<Id> {
        candidates
            .clone()
            .filter(|c| c.table.to_string().starts_with(&lower))
            .map(|c| c.table)
            .collect()
    };
    let matching = if !by_name.is_empty() {
        by_name
    } else {
        let prefixed = by_prefix();
        if prefixed.is_empty() {
            by_id()
        } else {
            prefixed
        }
    };
    match matching[..] {
        [one] => Ok(one),
        [] => Err(ClientError::Table(format!(
            "{} `{text}` (see `{}`)",
            words.none, words.listing
        ))),
        _ => Err(ClientError::Table(format!(
            "{} `{text}`; use the id from `{}`",
            words.several, words.listing
        ))),
    }
}

/// `grand-melee replay …`.
pub async fn run_replay(
    server: &str,
    command: ReplayCmd,
    plain: bool,
    store: Option<TokenStore>,
) -> Result<(), ClientError> {
    match command {
        ReplayCmd::List => replay::list(server, PAGE_ITEMS, &mut io::stdout().lock()).await,
        ReplayCmd::Export {
            table,
            format,
            output,
            password,
        } => {
            if format == ExportFormat::Msgpack && output.is_none() && io::stdout().is_terminal() {
                return Err(ClientError::BinaryToTerminal);
            }
            let access = replay::Access { password, store };
            let replay = replay::fetch(server, &table, &access, PAGE_ITEMS).await?;
            match output {
                Some(path) => export_to_file(&replay, format, &path),
                None => export(&replay, format, &mut io::stdout().lock()).map_err(ClientError::Io),
            }
        }
        ReplayCmd::Watch { table, password } => {
            let access = replay::Access { password, store };
            let replay = replay::fetch(server, &table, &access, PAGE_ITEMS).await?;
            let mut stepper = replay::Stepper::new(replay)?;
            if plain {
                replay::script(
                    &mut stepper,
                    server,
                    &mut io::stdin().lock(),
                    &mut io::stdout().lock(),
                )
            } else {
                run_replay_tui(replay::Viewer::new(stepper, server))
            }
        }
    }
}

fn export(replay: &replay::Replay, format: ExportFormat, out: &mut dyn Write) -> io::Result<()> {
    match format {
        ExportFormat::Jsonl => replay::write_jsonl(replay, out),
        ExportFormat::Msgpack => replay::write_msgpack(replay, out),
    }
}

fn export_to_file(
    replay: &replay::Replay,
    format: ExportFormat,
    path: &Path,
) -> Result<(), ClientError> {
    let file_error = |source| ClientError::File {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::File::create(path).map_err(file_error)?;
    let mut out = io::BufWriter::new(file);
    export(replay, format, &mut out).map_err(file_error)?;
    out.into_inner()
        .map_err(|e| file_error(e.into_error()))?
        .sync_all()
        .map_err(file_error)
}

/// The full-screen replay view, until the player quits.
fn run_replay_tui(mut viewer: replay::Viewer) -> Result<(), ClientError> {
    use ratatui::crossterm::event::{self, Event as TermEvent};
    let guard = TerminalGuard::enter()?;
    let mut terminal =
        ratatui::Terminal::new(ratatui::backend::CrosstermBackend::new(io::stdout()))?;
    loop {
        viewer.draw(&mut terminal)?;
        let quit = match event::read()? {
            TermEvent::Key(key) => viewer.key(key),
            TermEvent::Resize(..) => {
                terminal
                    .autoresize()
                    .map_err(|e| io::Error::other(e.to_string()))?;
                false
            }
            _ => false,
        };
        if quit {
            break;
        }
    }
    drop(terminal);
    drop(guard);
    Ok(())
}

/// Script mode: commands from standard input, lines on standard output.
pub async fn run_script(
    server: String,
    mode: Mode,
    store: &TokenStore,
    options: &Options,
) -> Result<(), ClientError> {
    let (tx, mut rx) = mpsc::channel(64);
    std::thread::spawn(move || {
        for line in io::stdin().lines() {
            let Ok(line) = line else { break };
            if tx.blocking_send(Input::Line(line)).is_err() {
                return;
            }
        }
        let _ = tx.blocking_send(Input::Eof);
    });
    let mut frontend = script::Script::new(io::stdout());
    session::play(server, mode, store, &mut rx, &mut frontend, options).await
}

/// Puts the terminal back as it was, however the UI ends.
struct TerminalGuard;

impl TerminalGuard {
    fn enter() -> io::Result<Self> {
        use ratatui::crossterm::{execute, terminal};
        terminal::enable_raw_mode()?;
        execute!(io::stdout(), terminal::EnterAlternateScreen)?;
        Ok(Self)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        use ratatui::crossterm::{cursor, execute, terminal};
        let _ = terminal::disable_raw_mode();
        let _ = execute!(io::stdout(), terminal::LeaveAlternateScreen, cursor::Show);
    }
}

/// Interactive mode: the full-screen UI. `server_arg` is the server as the user gave it, for the
/// line that says how to come back.
pub async fn run_interactive(
    server: String,
    mode: Mode,
    store: &TokenStore,
    options: &Options,
    server_arg: &str,
) -> Result<(), ClientError> {
    use ratatui::crossterm::event::{self, Event as TermEvent};
    let guard = TerminalGuard::enter()?;
    let terminal = ratatui::Terminal::new(ratatui::backend::CrosstermBackend::new(io::stdout()))?;
    let (tx, mut rx) = mpsc::channel(64);
    std::thread::spawn(move || {
        loop {
            let input = match event::read() {
                Ok(TermEvent::Key(key)) => Input::Key(key),
                Ok(TermEvent::Resize(..)) => Input::Resize,
                Ok(_) => continue,
                Err(_) => Input::Eof,
            };
            let end = matches!(input, Input::Eof);
            if tx.blocking_send(input).is_err() || end {
                return;
            }
        }
    });
    let bell = Box::new(|| {
        let mut out = io::stdout();
        let _ = out.write_all(b"\x07");
        let _ = out.flush();
    });
    let mut frontend = tui::Tui::with_bell(terminal, bell);
    frontend.draw(&session::State::new(server.clone(), mode.table()))?;
    let result = session::play(
        server.clone(),
        mode.clone(),
        store,
        &mut rx,
        &mut frontend,
        options,
    )
    .await;
    drop(frontend);
    drop(guard);
    // Back on the normal screen: how to come back, for a player whose seat is kept.
    let table = mode.table();
    let flag = if server_arg == cli::DEFAULT_SERVER {
        String::new()
    } else {
        format!("--server {server_arg} ")
    };
    let mut err = io::stderr().lock();
    match &mode {
        _ if result.is_err() => {}
        Mode::Watch { .. } => {
            writeln!(err, "Watch again with: grand-melee {flag}watch {table}")?;
        }
        Mode::Join { .. } | Mode::Resume { .. } if store.load(&server, table).is_some() => {
            writeln!(
                err,
                "Your seat is kept. Come back with: grand-melee {flag}resume {table}"
            )?;
        }
        _ => {}
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_followed_only_while_they_advance() {
        assert_eq!(next_page("tables", 0, 500, Some(500)).ok(), Some(Some(500)));
        assert_eq!(next_page("tables", 500, 3, None).ok(), Some(None));
        assert_eq!(next_page("tables", 0, 0, None).ok(), Some(None));
        // A server that sends the same page again, or goes back, or says more follow an empty
        // page, is not followed.
        for (from, got, next) in [(500, 10, 500), (500, 10, 20), (7, 0, 8)] {
            let error = next_page("replays", from, got, Some(next)).expect_err("refused");
            assert!(
                matches!(&error, ClientError::Protocol(m) if m.contains("replays")),
                "{error}"
            );
        }
    }

    #[test]
    fn verify_says_how_the_table_was_seated() {
        use grand_melee_protocol::dice::{Dice, DiceSecret, entropy_digest};
        use grand_melee_protocol::{Event, SeatingMode};
        let secret = DiceSecret::from_seed(5);
        let game = |mode: SeatingMode, seating: Vec<u16>| {
            let mut events: Vec<Event> = (0..3)
                .map(|player| Event::PlayerJoined {
                    player,
                    name: format!("p{player}"),
                    entropy: String::new(),
                    deck: None,
                })
                .collect();
            let dice = Dice::new(secret, entropy_digest(["", "", ""]));
            let first_player = seating[dice.first_seat(3)];
            events.push(Event::GameStarted {
                seating,
                first_player,
                turn_holders: vec![first_player],
                commitment: secret.commitment(),
                first_player_chosen: false,
                first_decided_by: None,
                bonuses: Vec::new(),
                seating_mode: mode,
            });
            events.push(Event::DiceRevealed {
                secret: secret.to_hex(),
            });
            let mut out = Vec::new();
            let verified = verify(&events, None, &mut out)
                .map(|()| String::from_utf8(out).unwrap_or_default());
            verified.map_err(|e| e.to_string())
        };
        let joined = game(SeatingMode::Joined, vec![0, 1, 2]);
        assert!(
            joined
                .as_ref()
                .is_ok_and(|o| o.contains("join order, as announced: not the dice's")),
            "{joined:?}"
        );
        let arranged = game(SeatingMode::Arranged, vec![2, 0, 1]);
        assert!(
            arranged
                .as_ref()
                .is_ok_and(|o| o.contains("arranged by the host")),
            "{arranged:?}"
        );
        // "As joined" that is not the join order is caught.
        let wrong = game(SeatingMode::Joined, vec![2, 0, 1]);
        assert!(
            wrong.as_ref().is_err_and(|e| e.contains("join order")),
            "{wrong:?}"
        );
    }
}

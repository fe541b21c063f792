//! Command-line flags and subcommands.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use grand_melee_protocol::{self as wire, DEFAULT_ABSENCE_LIMIT_SECS, DEFAULT_STARTING_LIFE};

/// The heading of the flags every subcommand takes, after its own in its `--help`.
const GLOBAL: &str = "Global options";

/// The server when none is given.
pub const DEFAULT_SERVER: &str = "127.0.0.1:7878";

/// Terminal client for Grand Melee: find a table, sit down and play your seat, or watch.
///
/// On a terminal, `join`, `resume` and `watch` open a full-screen UI; with `--plain` (or when
/// standard input or output is not a terminal) they run in script mode: one command per line on
/// standard input, one line per event and per error on standard output. Type `help` at the
/// table for the commands.
#[derive(Debug, Clone, Parser)]
#[command(name = "grand-melee", version, about, long_about)]
pub struct Cli {
    /// Optional: the server, as HOST:PORT, HOST (port 7878), a ws:// or wss:// URL (wss: TLS,
    /// checked against the system's root certificates and `--ca-cert`), or the address of its
    /// page (http:// means ws://, https:// means wss://).
    #[arg(
        long,
        short,
        global = true,
        help_heading = GLOBAL,
        env = "GM_SERVER",
        value_name = "HOST:PORT|URL",
        default_value = DEFAULT_SERVER
    )]
    pub server: String,

    /// Directory where seat tokens are saved [default: the user's data directory, e.g.
    /// ~/.local/share/grand-melee].
    #[arg(long, global = true, help_heading = GLOBAL, env = "GM_CLI_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,

    /// A CA certificate (PEM) to trust besides the system's, for a server with a self-signed
    /// certificate (`--server wss://HOST:PORT`): the organiser's certificate file.
    #[arg(long, global = true, help_heading = GLOBAL, env = "GM_CA_CERT", value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,

    /// Script mode even on a terminal: commands from standard input, one line per event.
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub plain: bool,

    /// In script mode, keep running after the end of standard input (to watch a table from a
    /// script) instead of quitting once every command has been answered.
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub stay: bool,

    /// What to do.
    #[command(subcommand)]
    pub command: Cmd,
}

/// The subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum Cmd {
    /// List the server's tables.
    List,
    /// Create a table (and sit down at it with --join).
    Create(CreateArgs),
    /// Take a seat at a table. If a seat token is saved for this table under the same name,
    /// takes that seat back.
    #[command(
        after_help = "Examples:\n  grand-melee join Friday Ann\n  grand-melee --server melee.example.org join Friday Ann\n  grand-melee --server https://melee.example.org join 5f3c Ann\n\nOne seat per table is saved per data folder: two players on one computer give the second his own --data-dir."
    )]
    Join {
        /// The table: its id, the start of its id, or its name (a unique start of it is
        /// enough).
        table: String,
        /// Your name at the table (1–32 characters, unique at the table).
        name: String,
        /// The table's password, if it has one.
        #[arg(long, env = "GM_TABLE_PASSWORD")]
        password: Option<String>,
        /// Take back the seat saved for this table even though it was saved under another
        /// name (without it, `join` refuses and explains).
        #[arg(long)]
        takeover: bool,
    },
    /// Take back your saved seat after a crash or a dropped connection.
    Resume {
        /// The table: its id, the start of its id, or its name.
        table: String,
    },
    /// Watch a table as a spectator.
    Watch {
        /// The table: its id, the start of its id, or its name.
        table: String,
        /// The table's password, if it has one.
        #[arg(long, env = "GM_TABLE_PASSWORD")]
        password: Option<String>,
    },
    /// Finished games kept by the server: list them, export one, or step through one.
    #[command(subcommand)]
    Replay(ReplayCmd),
    /// Ascension leagues: create or join one, register and improve your deck, see the
    /// standings and any deck's ledger.
    #[command(subcommand)]
    League(crate::league::LeagueCmd),
    /// Mountain Magic: a day's mountain — its standings (place, climber, ending, cards left,
    /// table), its dice commitment and, once the day is over (UTC), its secret.
    ///
    /// On a terminal it prints a table 80 columns wide; in script mode (--plain, or standard
    /// output not a terminal) one line per climb: `climb place=… climber="…" end=… cards_left=…
    /// table=…`, after a `day` line with the commitment and the secret.
    #[command(
        after_help = "Examples:\n  grand-melee standings                      (today's mountain)\n  grand-melee standings --day 2026-11-25      (a past day: its secret too)\n  grand-melee standings --league Tuesday     (the league's climbs only)\n\nClimb today's mountain: grand-melee create --game mountain_magic --seats 1 --day today --name \"Ann's climb\" --join Ann"
    )]
    Standings {
        /// The day: `today` (UTC) or YYYY-MM-DD.
        #[arg(long, value_name = "today|YYYY-MM-DD", default_value = "today")]
        day: String,
        /// Only this league's climbs (its id, the start of its id, or its name).
        #[arg(long, value_name = "LEAGUE")]
        league: Option<String>,
    },
    /// Check a finished game's dice: recompute the seating, the first player and every d20
    /// from the secret revealed at the end and the players' entropy, and say which outcome
    /// does not match, if any.
    ///
    /// A Mountain Magic climb is dealt again and every card checked. A climb of a day's
    /// mountain is dealt by the day's dice: its commitment is the day's, and the day's secret
    /// comes from the server's standings (`grand-melee standings`) once the day is over (UTC);
    /// before that, verify says when it will be revealed.
    #[command(
        after_help = "Examples:\n  grand-melee verify Friday\n  grand-melee verify --file friday.jsonl   (from `grand-melee replay export`)\n\nExit status 0: every outcome matches; 1: one does not (named), the game could not be read, or a day climb's secret is not revealed yet (the day is not over)."
    )]
    Verify {
        /// The finished game: its table id, the start of its id, or its name (not needed with
        /// --file).
        #[arg(required_unless_present = "file")]
        table: Option<String>,
        /// Read the game from a `replay export` file (JSON lines) instead of the server.
        #[arg(long, value_name = "FILE", conflicts_with = "table")]
        file: Option<PathBuf>,
        /// The table's password, if the game was played at a table with one.
        #[arg(long, env = "GM_TABLE_PASSWORD")]
        password: Option<String>,
    },
}

/// What to do with replays (finished games).
#[derive(Debug, Clone, Subcommand)]
pub enum ReplayCmd {
    /// List the finished games the server keeps: id, times (UTC), event count, whether it
    /// needs a password, and name.
    List,
    /// Export a finished game: a header, then every event, as JSON lines or MessagePack.
    Export {
        /// The finished game: its table id, the start of its id, or its name.
        table: String,
        /// jsonl: one JSON object per line; msgpack: a stream of MessagePack maps.
        #[arg(long, value_enum, default_value_t = ExportFormat::Jsonl)]
        format: ExportFormat,
        /// Write to this file instead of standard output.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
        /// The table's password, if the game was played at a table with one (not needed by a
        /// player who sat at it: his saved seat token opens it).
        #[arg(long, env = "GM_TABLE_PASSWORD")]
        password: Option<String>,
    },
    /// Step through a finished game in the watch view (→/n next, ←/p back, Home/End, q).
    ///
    /// In script mode (--plain, or standard input or output not a terminal) it reads `next [K]`,
    /// `back [K]`, `goto SEQ`, `start`, `end`, `status`, `help` and `quit` from standard input,
    /// prints every event stepped over as the live script mode does, and `step seq=N` after
    /// each move.
    Watch {
        /// The finished game: its table id, the start of its id, or its name.
        table: String,
        /// The table's password, if the game was played at a table with one (not needed by a
        /// player who sat at it: his saved seat token opens it).
        #[arg(long, env = "GM_TABLE_PASSWORD")]
        password: Option<String>,
    },
}

/// The format of `replay export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// One JSON object per line: the header, then `{"seq": N, "event": {...}}` per event.
    Jsonl,
    /// The same records as a stream of MessagePack maps.
    Msgpack,
}

/// Settings of a new table.
#[derive(Debug, Clone, Args)]
pub struct CreateArgs {
    /// The table's display name (1–32 characters).
    #[arg(long)]
    pub name: String,
    /// Most players who may sit (2–40; a Mountain Magic climb has one seat, and the server
    /// refuses one seat for the other games).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=i64::from(wire::MAX_SEATS)))]
    pub seats: u8,
    /// The game the table plays: `grand_melee`, `magic_tech` (two players, `--seats 2`) or
    /// `mountain_magic` (one climber, `--seats 1`); the Grand Melee settings below do not
    /// apply to the other games.
    #[arg(long, value_name = "GAME", default_value = "grand_melee", value_parser = parse_game)]
    pub game: wire::GameKind,
    /// Which rules: `seed` (the seed's Grand Melee, spheres of spell range R) or `cr807` (the
    /// Comprehensive Rules' official variant: range 1, attack left, a turn marker for each full
    /// four players).
    #[arg(long, value_enum, default_value_t = RulesArg::Seed)]
    pub rules: RulesArg,
    /// Spell range R (1–4): how many seats on each side a player's spells reach [default: 2
    /// with the seed's rules; cr807 allows only 1].
    #[arg(long, value_parser = clap::value_parser!(u8).range(i64::from(wire::MIN_SPELL_RANGE)..=i64::from(wire::MAX_SPELL_RANGE)))]
    pub spell_range: Option<u8>,
    /// Combat with Dice: attacks are rolled (`roll` and `counter` at the table) with the
    /// server's verifiable dice.
    #[arg(long)]
    pub combat_dice: bool,
    /// Mulligan decisions one player at a time (`paris`) or everyone at once
    /// (`simultaneous`: much quicker at a big table).
    #[arg(long, value_enum, default_value_t = MulliganArg::Paris)]
    pub mulligan: MulliganArg,
    /// When to give up a simultaneous turn as players are eliminated.
    #[arg(long, value_enum, default_value_t = ReductionArg::Eager)]
    pub reduction: ReductionArg,
    /// Life each player starts with (1–1000).
    #[arg(long, default_value_t = DEFAULT_STARTING_LIFE, allow_negative_numbers = true, value_parser = clap::value_parser!(i32).range(1..=i64::from(wire::MAX_STARTING_LIFE)))]
    pub starting_life: i32,
    /// A password to join or watch.
    #[arg(long, env = "GM_TABLE_PASSWORD")]
    pub password: Option<String>,
    /// Kept with the table for the record only: seating, first player and dice come from the
    /// table's verifiable dice, which nobody can predict (`grand-melee verify`).
    #[arg(long, hide = true)]
    pub seed: Option<u64>,
    /// A running turn longer than this many seconds ends by itself (0: no clock).
    #[arg(long, value_name = "SECS", default_value_t = 0)]
    pub turn_clock: u32,
    /// Seconds a player may be disconnected before he is announced absent.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_ABSENCE_LIMIT_SECS)]
    pub absence_limit: u32,
    /// Seconds each player has for a mulligan decision before it is taken as `keep` (0: no
    /// clock; a decider who is disconnected keeps after the server's grace period anyway). The
    /// host can also `rule keep` for the decider.
    #[arg(long, value_name = "SECS", default_value_t = grand_melee_protocol::DEFAULT_MULLIGAN_CLOCK_SECS)]
    pub mulligan_clock: u32,
    /// Most spectators at once (0–1000); more get `spectators_full`.
    #[arg(long, value_name = "N", default_value_t = grand_melee_protocol::DEFAULT_MAX_SPECTATORS, value_parser = clap::value_parser!(u32).range(0..=i64::from(wire::MAX_SPECTATORS)))]
    pub max_spectators: u32,
    /// Sit down at the new table under this name right away.
    #[arg(long, value_name = "NAME")]
    pub join: Option<String>,
    /// A game of this league (its id, the start of its id, or its name): only its members sit
    /// down, and their decks are credited at the end. Needs the organiser secret kept by
    /// `league create` on this computer. With --day: a league climb of the day's mountain
    /// instead (any member may create it, no organiser secret; the member token kept by
    /// `league join` seats him under his league name, and the climb counts in the league's
    /// standings of the day).
    #[arg(long, value_name = "LEAGUE")]
    pub league: Option<String>,
    /// Mountain Magic: a climb of today's mountain, the same deal for everyone who climbs it
    /// today (UTC), with standings (`grand-melee standings`): `today`, or today's date
    /// YYYY-MM-DD (the server refuses any other day). Needs --game mountain_magic --seats 1.
    #[arg(long, value_name = "today|YYYY-MM-DD")]
    pub day: Option<String>,
}

/// A game by its wire name (`grand_melee`, `magic_tech`, `mountain_magic`): the protocol's
/// names, defined once.
fn parse_game(name: &str) -> Result<wire::GameKind, String> {
    serde_json::from_value(serde_json::Value::String(name.to_owned()))
        .map_err(|_| format!("no game called `{name}` (grand_melee, magic_tech, mountain_magic)"))
}

/// The rule set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RulesArg {
    /// The seed's Grand Melee, as docs/RULES.md reads it.
    Seed,
    /// The Comprehensive Rules' Grand Melee, rule 807.
    Cr807,
}

impl From<RulesArg> for wire::RuleSet {
    fn from(rules: RulesArg) -> Self {
        match rules {
            RulesArg::Seed => wire::RuleSet::Seed,
            RulesArg::Cr807 => wire::RuleSet::Cr807,
        }
    }
}

/// How mulligan decisions are taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MulliganArg {
    /// One player at a time, from the first player to the left.
    Paris,
    /// Everyone at the same time.
    Simultaneous,
}

impl From<MulliganArg> for wire::MulliganMode {
    fn from(mode: MulliganArg) -> Self {
        match mode {
            MulliganArg::Paris => wire::MulliganMode::Paris,
            MulliganArg::Simultaneous => wire::MulliganMode::Simultaneous,
        }
    }
}

/// The turn reduction policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReductionArg {
    /// As soon as ⌊living / (2R+2)⌋ gives fewer turns (recommended).
    Eager,
    /// Only when turns × (2R+1) exceeds the living players.
    Forced,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_subcommand_has_help() {
        let mut cli = Cli::command();
        for sub in cli.get_subcommands_mut() {
            let help = sub.render_help().to_string();
            assert!(help.contains("Usage:"), "{}", sub.get_name());
            assert!(
                sub.get_about().is_some(),
                "{} has a description",
                sub.get_name()
            );
        }
    }

    #[test]
    fn every_replay_subcommand_has_help() {
        let mut cli = Cli::command();
        let replay = cli
            .find_subcommand_mut("replay")
            .expect("a replay subcommand");
        let names: Vec<String> = replay
            .get_subcommands()
            .map(|s| s.get_name().to_owned())
            .collect();
        assert_eq!(names, ["list", "export", "watch"]);
        for sub in replay.get_subcommands_mut() {
            let help = sub.render_long_help().to_string();
            assert!(help.contains("Usage:"), "{help}");
            assert!(sub.get_about().is_some(), "{}", sub.get_name());
        }
    }

    #[test]
    fn replay_export_defaults_to_json_lines_on_standard_output() {
        let cli =
            Cli::try_parse_from(["grand-melee", "replay", "export", "Friday"]).expect("parses");
        let Cmd::Replay(ReplayCmd::Export {
            table,
            format,
            output,
            ..
        }) = cli.command
        else {
            panic!("replay export expected");
        };
        assert_eq!(table, "Friday");
        assert_eq!(format, ExportFormat::Jsonl);
        assert_eq!(output, None);
        let cli = Cli::try_parse_from([
            "grand-melee",
            "replay",
            "export",
            "5f3c",
            "--format",
            "msgpack",
            "-o",
            "out.msgpack",
        ])
        .expect("parses");
        let Cmd::Replay(ReplayCmd::Export { format, output, .. }) = cli.command else {
            panic!("replay export expected");
        };
        assert_eq!(format, ExportFormat::Msgpack);
        assert_eq!(output, Some(PathBuf::from("out.msgpack")));
        assert!(
            Cli::try_parse_from(["grand-melee", "replay", "export", "x", "--format", "csv"])
                .is_err()
        );
    }

    #[test]
    fn settings_out_of_range_are_named_with_their_range() {
        for (flag, value, range) in [
            ("--seats", "41", "1..=40"),
            ("--seats", "0", "1..=40"),
            ("--spell-range", "5", "1..=4"),
            ("--starting-life", "0", "1..=1000"),
            ("--max-spectators", "1001", "0..=1000"),
        ] {
            let mut args = vec!["grand-melee", "create", "--name", "F"];
            if flag != "--seats" {
                args.extend(["--seats", "4"]);
            }
            args.extend([flag, value]);
            let error = Cli::try_parse_from(args).expect_err("refused").to_string();
            assert!(error.contains(flag) && error.contains(range), "{error}");
        }
    }

    #[test]
    fn join_takes_a_takeover_flag_and_the_server_is_optional() {
        let cli = Cli::try_parse_from(["grand-melee", "join", "Couch", "Bob", "--takeover"])
            .expect("parses");
        let Cmd::Join { takeover, .. } = cli.command else {
            panic!("join expected");
        };
        assert!(takeover);
        let help = Cli::try_parse_from(["grand-melee", "join", "--help"])
            .expect_err("help")
            .to_string();
        assert!(help.contains("Optional: the server"), "{help}");
        assert!(help.contains("--takeover"), "{help}");
    }

    #[test]
    fn create_takes_every_setting_as_a_flag() {
        let cli = Cli::try_parse_from([
            "grand-melee",
            "create",
            "--name",
            "Friday",
            "--seats",
            "28",
            "--spell-range",
            "1",
            "--reduction",
            "forced",
            "--starting-life",
            "30",
            "--password",
            "pw",
            "--seed",
            "7",
            "--turn-clock",
            "300",
            "--absence-limit",
            "60",
            "--mulligan-clock",
            "0",
            "--max-spectators",
            "5",
            "--rules",
            "cr807",
            "--combat-dice",
            "--mulligan",
            "simultaneous",
            "--join",
            "Ann",
        ])
        .expect("parses");
        let Cmd::Create(args) = cli.command else {
            panic!("create expected");
        };
        assert_eq!(args.seats, 28);
        assert_eq!(args.rules, RulesArg::Cr807);
        assert!(args.combat_dice);
        assert_eq!(args.mulligan, MulliganArg::Simultaneous);
        assert_eq!(args.spell_range, Some(1));
        assert_eq!(args.reduction, ReductionArg::Forced);
        assert_eq!(args.turn_clock, 300);
        assert_eq!((args.mulligan_clock, args.max_spectators), (0, 5));
        assert_eq!(args.join.as_deref(), Some("Ann"));
        // Left out, they are the protocol's defaults.
        let cli = Cli::try_parse_from(["grand-melee", "create", "--name", "F", "--seats", "4"])
            .expect("parses");
        let Cmd::Create(args) = cli.command else {
            panic!("create expected");
        };
        assert_eq!(
            (args.mulligan_clock, args.max_spectators),
            (
                grand_melee_protocol::DEFAULT_MULLIGAN_CLOCK_SECS,
                grand_melee_protocol::DEFAULT_MAX_SPECTATORS
            )
        );
        assert_eq!(
            (
                args.rules,
                args.spell_range,
                args.combat_dice,
                args.mulligan
            ),
            (RulesArg::Seed, None, false, MulliganArg::Paris)
        );
    }

    #[test]
    fn create_takes_the_game_by_its_wire_name() {
        let game = |extra: &[&str]| {
            let mut args = vec!["grand-melee", "create", "--name", "F", "--seats", "2"];
            args.extend(extra);
            Cli::try_parse_from(args).map(|cli| match cli.command {
                Cmd::Create(args) => Some(args.game),
                _ => None,
            })
        };
        // Left out: Grand Melee, the default game.
        assert_eq!(game(&[]).ok().flatten(), Some(wire::GameKind::GrandMelee));
        // Every game the protocol knows is named as the wire names it.
        for &kind in <wire::GameKind as strum::VariantArray>::VARIANTS {
            assert_eq!(game(&["--game", kind.name()]).ok().flatten(), Some(kind));
        }
        let refused = game(&["--game", "chess"]).expect_err("no such game");
        assert!(
            refused.to_string().contains("no game called `chess`"),
            "{refused}"
        );
    }

    #[test]
    fn replays_take_a_password_from_the_flag() {
        let cli = Cli::try_parse_from([
            "grand-melee",
            "replay",
            "watch",
            "Friday",
            "--password",
            "pw",
        ])
        .expect("parses");
        let Cmd::Replay(ReplayCmd::Watch { password, .. }) = cli.command else {
            panic!("replay watch expected");
        };
        assert_eq!(password.as_deref(), Some("pw"));
    }
}

//! The words the frame and every game share: a player written for people and for scripts
//! ([`name`], [`who`], [`list`]), an event's wire fields, one event's [`Wording`]; and a typed
//! line read back: the players it names ([`Resolver`]), its amounts, and why it was not
//! understood ([`CommandError`]).

use grand_melee_protocol::{Event, PlayerId, StageName, TableView};

use crate::safe;

/// A player's display name as the view has it (unescaped), or `#id` if it does not know him.
pub fn raw_name(view: &TableView, player: PlayerId) -> String {
    view.player(player)
        .map_or_else(|| format!("#{player}"), |p| p.name.clone())
}

/// A player's display name, safe to print ([`safe::printable`]), or `#id` if the view does not
/// know him.
pub fn name(view: &TableView, player: PlayerId) -> String {
    safe::printable(&raw_name(view, player))
}

/// `3 "Ann"`: a player's id and quoted name ([`safe::quoted`]), as script lines write a single
/// player.
pub fn who(view: &TableView, player: PlayerId) -> String {
    format!("{player} {}", safe::quoted(&raw_name(view, player)))
}

/// `3,5 "Ann","Ben"`: several players, as script lines write a list.
pub fn list(view: &TableView, players: &[PlayerId]) -> String {
    let ids: Vec<String> = players.iter().map(ToString::to_string).collect();
    let names: Vec<String> = players
        .iter()
        .map(|&p| safe::quoted(&raw_name(view, p)))
        .collect();
    format!("{} {}", ids.join(","), names.join(","))
}

/// `Ann, Ben`: names only.
pub fn names(view: &TableView, players: &[PlayerId]) -> String {
    let names: Vec<String> = players.iter().map(|&p| name(view, p)).collect();
    names.join(", ")
}

/// A value's wire name (`"clock"`, `"conceded"`, …), exactly as the protocol writes it: the
/// names are defined once, by the protocol's types.
pub fn wire_name(value: &impl serde::Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

/// The fields of an event this client has no words for, as ` key=value` pairs from its wire
/// form (so a newer server's event still reads sensibly).
pub fn generic_fields(event: &Event) -> String {
    let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(event) else {
        return String::new();
    };
    fields
        .iter()
        .filter(|(key, _)| key.as_str() != "kind")
        .map(|(key, value)| match value {
            serde_json::Value::String(text) => format!(" {key}={}", safe::quoted(text)),
            other => format!(" {key}={}", safe::printable(&other.to_string())),
        })
        .collect()
}

/// One event's words for the terminal: the script line's ` key=value` fields and the UI's
/// sentence, both worded with the view as it was before the event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wording {
    /// The script line's fields after `event <seq> <kind>`, each with its leading space.
    pub fields: String,
    /// The sentence for the log and the replay.
    pub sentence: String,
}

impl Wording {
    /// The words of one event.
    pub fn new(fields: String, sentence: String) -> Self {
        Self { fields, sentence }
    }
}

/// Why a typed line was not understood; its text is what the player reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// The command's words do not fit its form; holds the form.
    #[error("usage: {0}")]
    Usage(&'static str),
    /// `mute` or `unmute` (as typed) without whom.
    #[error("usage: {0} <who>|spectators")]
    MuteUsage(String),
    #[error("unknown command `{0}`; type `help` for the list")]
    UnknownCommand(String),
    #[error("`{0}` is not an amount")]
    NotAnAmount(String),
    #[error("`{0}` is not a change like +3 or -2")]
    NotAChange(String),
    #[error("`{0}` is not a life total")]
    NotALifeTotal(String),
    #[error("unknown phase `{0}`: beginning, main1, combat, main2, end or next")]
    UnknownPhase(String),
    /// `phase next` without a turn of one's own running.
    #[error("you have no running turn")]
    NoRunningTurn,
    /// `phase next` in the turn's last phase.
    #[error("your turn is already in its last phase")]
    LastPhase,
    /// Words left over after the player they named.
    #[error("unexpected `{0}`")]
    Unexpected(String),
    #[error("name a player (name, seat number, #id or me)")]
    NoPlayerNamed,
    /// A player was named before the table's first snapshot.
    #[error("no table yet")]
    NoTable,
    /// `me` from a spectator.
    #[error("you have no seat")]
    NoSeat,
    #[error("`{0}` is not a player id")]
    NotAPlayerId(String),
    #[error("no player #{0}")]
    NoPlayerId(PlayerId),
    #[error("no seat {0}")]
    NoSuchSeat(u16),
    #[error("no player called `{0}`")]
    NoSuchName(String),
    /// A start of a name that several players' names have.
    #[error("`{typed}` could be {}", quoted_names(.names))]
    Ambiguous { typed: String, names: Vec<String> },
}

/// Names, each quoted, separated by commas.
fn quoted_names(names: &[String]) -> String {
    names
        .iter()
        .map(|name| safe::quoted(name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A non-negative amount.
pub fn amount(text: &str) -> Result<u32, CommandError> {
    text.trim_start_matches('+')
        .parse()
        .map_err(|_| CommandError::NotAnAmount(text.to_owned()))
}

/// A signed change: `+3`, `-2` or `3`.
pub fn delta(text: &str) -> Result<i32, CommandError> {
    text.trim_start_matches('+')
        .parse()
        .map_err(|_| CommandError::NotAChange(text.to_owned()))
}

/// Names players from what was typed.
#[derive(Debug, Clone, Copy)]
pub struct Resolver<'a> {
    /// The table, once a snapshot has arrived.
    pub view: Option<&'a TableView>,
    /// The player who typed, if seated (`me`).
    pub me: Option<PlayerId>,
}

impl Resolver<'_> {
    /// The player named by all of `words`.
    pub fn whole(&self, words: &[&str]) -> Result<PlayerId, CommandError> {
        match self.take(words)? {
            (player, []) => Ok(player),
            (_, rest) => Err(CommandError::Unexpected(rest.join(" "))),
        }
    }

    /// The player named by the first words, and the words after.
    pub fn take<'w>(
        &self,
        words: &'w [&'w str],
    ) -> Result<(PlayerId, &'w [&'w str]), CommandError> {
        let Some(first) = words.first() else {
            return Err(CommandError::NoPlayerNamed);
        };
        let view = self.view.ok_or(CommandError::NoTable)?;
        // The longest run of words that is exactly someone's name.
        for k in (1..=words.len()).rev() {
            let candidate = words[..k].join(" ");
            if let Some(p) = view
                .players
                .iter()
                .find(|p| p.name.eq_ignore_ascii_case(&candidate))
            {
                return Ok((p.player, &words[k..]));
            }
        }
        let rest = &words[1..];
        if first.eq_ignore_ascii_case("me") {
            return self.me.map(|p| (p, rest)).ok_or(CommandError::NoSeat);
        }
        if let Some(id) = first.strip_prefix('#') {
            let id: PlayerId = id
                .parse()
                .map_err(|_| CommandError::NotAPlayerId((*first).to_owned()))?;
            return view
                .player(id)
                .map(|p| (p.player, rest))
                .ok_or(CommandError::NoPlayerId(id));
        }
        if let Ok(n) = first.parse::<u16>() {
            let found = if view.stage == StageName::Lobby {
                view.player(n)
            } else {
                view.players
                    .iter()
                    .find(|p| p.seat.map(u16::from) == Some(n))
            };
            return found
                .map(|p| (p.player, rest))
                .ok_or(CommandError::NoSuchSeat(n));
        }
        let lower = first.to_lowercase();
        let matches: Vec<_> = view
            .players
            .iter()
            .filter(|p| p.name.to_lowercase().starts_with(&lower))
            .collect();
        match matches[..] {
            [p] => Ok((p.player, rest)),
            [] => Err(CommandError::NoSuchName((*first).to_owned())),
            _ => Err(CommandError::Ambiguous {
                typed: (*first).to_owned(),
                names: matches.iter().map(|p| p.name.clone()).collect(),
            }),
        }
    }
}

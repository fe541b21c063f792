//! Words for what happens at a table: one stable, greppable line per event for script mode, a
//! sentence per event for the terminal UI, and the player's situation ("your turn", "waiting for
//! Ben to finish", "in Cid's sphere").

use std::fmt::Write as _;

use crate::safe;

use grand_melee_protocol::{
    Event, KeepReason, Phase, PlayerId, PlayerStatus, SeatingMode, StageName, TableView,
    TurnStateName,
};

/// A player's display name as the view has it (unescaped), or `#id` if it does not know him.
fn raw_name(view: &TableView, player: PlayerId) -> String {
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

/// A phase as players say it.
pub fn phase_words(phase: Phase) -> &'static str {
    match phase {
        Phase::Beginning => "beginning",
        Phase::PrecombatMain => "main 1",
        Phase::Combat => "combat",
        Phase::PostcombatMain => "main 2",
        Phase::Ending => "end",
    }
}

/// The script-mode line for event `seq`, worded with `view` as it was *before* the event
/// (so that a player who leaves still has his name), e.g.
/// `event 17 turn_began turn=0 player=3 "Ann"`: its fields from [`wording`].
pub fn script_line(seq: u64, event: &Event, view: &TableView) -> String {
    let fields = wording(event, view).map_or_else(|| generic_fields(event), |w| w.fields);
    format!("event {seq} {}{fields}", event.name())
}

/// A value's wire name (`"clock"`, `"conceded"`, …), exactly as the protocol writes it: the
/// names are defined once, by the protocol's types.
fn wire_name(value: &impl serde::Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

/// The fields of an event this client has no words for, as ` key=value` pairs from its wire
/// form (so a newer server's event still reads sensibly).
fn generic_fields(event: &Event) -> String {
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

/// The sentence for the terminal UI's log, worded with the view as it was before the event, or
/// `None` for an event the log leaves out because it tells the network, not the game: a
/// player's connection dropping, and coming back before he was reported absent
/// (`player_absent`). A return after that is one line, "X is back". Script mode and the journal
/// keep every event.
pub fn log_sentence(event: &Event, view: &TableView) -> Option<String> {
    if let Event::ConnectionChanged { player, connected } = event {
        let was_absent = view.player(*player).is_some_and(|p| p.absent);
        if !(*connected && was_absent) {
            return None;
        }
    }
    Some(sentence(event, view))
}

/// A sentence for any event, worded with the view as it was before the event: the log's
/// ([`log_sentence`]), and what a replay's step says it is. From [`wording`].
pub fn sentence(event: &Event, view: &TableView) -> String {
    wording(event, view).map_or_else(
        || {
            format!(
                "{}:{}",
                event.name().replace('_', " "),
                generic_fields(event)
            )
        },
        |w| w.sentence,
    )
}

/// One event's words for the terminal: the script line's ` key=value` fields and the UI's
/// sentence, both worded with the view as it was before the event.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Wording {
    /// The script line's fields after `event <seq> <kind>`, each with its leading space.
    fields: String,
    /// The sentence for the log and the replay.
    sentence: String,
}

impl Wording {
    fn new(fields: String, sentence: String) -> Self {
        Self { fields, sentence }
    }
}

/// The one list of the terminal's words for each event kind ([`script_line`] and [`sentence`]
/// both come from it), or `None` for a kind this client has no words for (a newer server's):
/// both then fall back to the event's wire fields.
fn wording(event: &Event, view: &TableView) -> Option<Wording> {
    let w = |p: PlayerId| who(view, p);
    let n = |p: PlayerId| name(view, p);
    // Writing to a String cannot fail.
    let words = match event {
        Event::PlayerJoined {
            player, name, deck, ..
        } => {
            let mut fields = format!(" player={player} {}", safe::quoted(name));
            let sentence = match deck {
                Some(d) => {
                    let _ = write!(
                        fields,
                        " member={} deck={} power={}",
                        d.member,
                        safe::quoted(&d.deck),
                        d.power
                    );
                    format!(
                        "{} sat down with {} (deck power {})",
                        safe::printable(name),
                        safe::printable(&d.deck),
                        d.power
                    )
                }
                None => format!("{} sat down", safe::printable(name)),
            };
            Wording::new(fields, sentence)
        }
        Event::FirstPlayerChosen { by, player } => Wording::new(
            format!(" by={} player={}", w(*by), w(*player)),
            format!("{} chose {} to play first", n(*by), n(*player)),
        ),
        Event::PlayerLeft { player } => Wording::new(
            format!(" player={}", w(*player)),
            format!("{} left the table", n(*player)),
        ),
        Event::PlayerAbsent { player } => Wording::new(
            format!(" player={}", w(*player)),
            format!("{} is absent", n(*player)),
        ),
        Event::ResumeRequested { player } => Wording::new(
            format!(" player={}", w(*player)),
            format!(
                "{} asks to resume the game ({} of {} asks needed)",
                n(*player),
                view.resume_asks.len() + 1,
                view.resume_quorum()
            ),
        ),
        Event::PlayerKicked { player, banned } => Wording::new(
            format!(" player={} banned={banned}", w(*player)),
            if *banned {
                format!("{} was removed and banned by the host", n(*player))
            } else {
                format!("{} was removed by the host", n(*player))
            },
        ),
        Event::GameStarted {
            seating,
            first_player,
            turn_holders,
            commitment,
            first_decided_by,
            bonuses,
            seating_mode,
            ..
        } => {
            let mut fields = format!(
                " first={} seating={} turns={}",
                w(*first_player),
                list(view, seating),
                list(view, turn_holders),
            );
            if !seating_mode.is_random() {
                let _ = write!(fields, " seating_mode={}", wire_name(seating_mode));
            }
            if let Some(by) = first_decided_by {
                let _ = write!(fields, " decided_by={}", w(*by));
            }
            let seated = match seating_mode {
                SeatingMode::Random => "",
                SeatingMode::Joined => " (seated in join order)",
                SeatingMode::Arranged => " (seated as the host arranged)",
            };
            let mut sentence = format!(
                "The game started{seated}: {} plays first, {} simultaneous turn(s)",
                n(*first_player),
                turn_holders.len()
            );
            for b in bonuses {
                let _ = write!(
                    fields,
                    " bonus={}:behind={},life=+{},cards=+{}",
                    w(b.player),
                    b.behind,
                    b.life,
                    b.cards
                );
                let _ = write!(
                    sentence,
                    "; {} is {} behind: +{} life, +{} card(s)",
                    n(b.player),
                    b.behind,
                    b.life,
                    b.cards
                );
            }
            if !commitment.is_empty() {
                let _ = write!(fields, " commitment={}", safe::printable(commitment));
            }
            Wording::new(fields, sentence)
        }
        Event::Mulliganed { player, hand_size } => Wording::new(
            format!(" player={} hand={hand_size}", w(*player)),
            format!("{} mulliganed to {hand_size}", n(*player)),
        ),
        Event::Kept {
            player,
            hand_size,
            reason,
        } => Wording::new(
            format!(
                " player={} hand={hand_size} reason={}",
                w(*player),
                wire_name(reason)
            ),
            match reason {
                KeepReason::Decided => format!("{} kept {hand_size}", n(*player)),
                KeepReason::Clock => {
                    format!("{} kept {hand_size} (mulligan clock ran out)", n(*player))
                }
                KeepReason::Absent => format!("{} kept {hand_size} (away too long)", n(*player)),
                KeepReason::Ruling => format!("{} kept {hand_size} (host's ruling)", n(*player)),
            },
        ),
        Event::TurnBegan { turn, player } => Wording::new(
            format!(" turn={turn} player={}", w(*player)),
            format!("{} began turn {turn}", n(*player)),
        ),
        Event::PhaseChanged { turn, phase } => {
            let holder = view.turn(*turn).map(|t| t.player);
            Wording::new(
                format!(
                    " turn={turn} phase={}{}",
                    phase.name(),
                    holder.map_or_else(String::new, |p| format!(" player={}", w(p)))
                ),
                format!(
                    "{} moved to {} (turn {turn})",
                    holder.map_or_else(String::new, n),
                    phase_words(*phase)
                ),
            )
        }
        Event::Attacked {
            attacker,
            defender,
            damage,
            poison,
        } => {
            let mut sentence = format!("{} attacked {} for {damage}", n(*attacker), n(*defender));
            if *poison > 0 {
                let _ = write!(sentence, " and {poison} poison");
            }
            Wording::new(
                format!(
                    " attacker={} defender={} damage={damage} poison={poison}",
                    w(*attacker),
                    w(*defender)
                ),
                sentence,
            )
        }
        Event::DamageDealt {
            source,
            target,
            amount,
        } => Wording::new(
            format!(
                " source={} target={} amount={amount}",
                w(*source),
                w(*target)
            ),
            format!("{} dealt {amount} damage to {}", n(*source), n(*target)),
        ),
        Event::LifeChanged { player, life } => Wording::new(
            format!(" player={} life={life}", w(*player)),
            format!("{} is at {life} life", n(*player)),
        ),
        Event::PoisonChanged { player, poison } => Wording::new(
            format!(" player={} poison={poison}", w(*player)),
            format!("{} has {poison} poison", n(*player)),
        ),
        Event::Eliminated { players, cause } => Wording::new(
            format!(
                " players={} cause={}",
                list(view, players),
                wire_name(cause)
            ),
            format!("{} eliminated ({})", names(view, players), wire_name(cause)),
        ),
        Event::TurnMarkedForRemoval { turn } => Wording::new(
            format!(" turn={turn}"),
            format!("Turn {turn} will be removed when it ends"),
        ),
        Event::TurnRemovalCancelled { turn } => Wording::new(
            format!(" turn={turn}"),
            format!("Turn {turn} will pass again"),
        ),
        Event::TurnEnded {
            turn,
            player,
            reason,
        } => Wording::new(
            format!(
                " turn={turn} player={} reason={}",
                w(*player),
                wire_name(reason)
            ),
            format!("{} ended turn {turn} ({})", n(*player), wire_name(reason)),
        ),
        Event::TurnPassed { turn, from, to } => Wording::new(
            format!(" turn={turn} from={} to={}", w(*from), w(*to)),
            format!("Turn {turn} passed to {}", n(*to)),
        ),
        Event::TurnRemoved {
            turn,
            player,
            reason,
        } => Wording::new(
            format!(
                " turn={turn} player={} reason={}",
                w(*player),
                wire_name(reason)
            ),
            format!("Turn {turn} left the table"),
        ),
        Event::PositionsRemoved { players } => Wording::new(
            format!(" players={}", list(view, players)),
            format!("Positions of {} removed", names(view, players)),
        ),
        Event::GameOver { standings } => {
            let parts: Vec<String> = standings
                .iter()
                .map(|s| format!("{}:{}:{}", s.place, s.player, s.mana_points))
                .collect();
            let first: Vec<PlayerId> = standings
                .iter()
                .filter(|s| s.place == 1)
                .map(|s| s.player)
                .collect();
            let winner = first
                .first()
                .map(|&p| format!(" winner={}", w(p)))
                .unwrap_or_default();
            Wording::new(
                format!("{winner} standings={}", parts.join(",")),
                match first.as_slice() {
                    [] => "Game over: nobody wins".to_owned(),
                    [winner] => format!("Game over: {} wins", n(*winner)),
                    // An abandoned game: the players still in it share the first place.
                    shared => format!("Game over: {} share first place", names(view, shared)),
                },
            )
        }
        Event::GameAbandoned => Wording::new(
            generic_fields(event),
            "Everyone still in the game has been away for the table's absence limit: the game \
             ends as it stands"
                .to_owned(),
        ),
        Event::ConnectionChanged { player, connected } => Wording::new(
            format!(" player={} connected={connected}", w(*player)),
            if *connected {
                format!("{} is back", n(*player))
            } else {
                format!("{} lost the connection", n(*player))
            },
        ),
        Event::HostChanged { player } => match player {
            Some(p) => Wording::new(
                format!(" player={}", w(*p)),
                format!("{} is the host", n(*p)),
            ),
            None => Wording::new(" player=none".to_owned(), "Nobody is host".to_owned()),
        },
        Event::SpectatorsChanged { spectators } => Wording::new(
            format!(" spectators={spectators}"),
            format!("{spectators} spectator(s)"),
        ),
        Event::Chat { from, name, text } => Wording::new(
            format!(
                " from={} {} text={}",
                from.map_or_else(|| "none".to_owned(), |p| p.to_string()),
                safe::quoted(name),
                safe::quoted(text)
            ),
            format!("{}: {}", safe::printable(name), safe::printable(text)),
        ),
        Event::TablePaused { paused } => Wording::new(
            format!(" paused={paused}"),
            if *paused {
                "The host paused the table".to_owned()
            } else {
                "The table resumed".to_owned()
            },
        ),
        Event::TableAdjourned { adjourned } => Wording::new(
            format!(" adjourned={adjourned}"),
            if *adjourned {
                "The host adjourned the game: everyone may leave, and it waits for the host \
                 (`resume-game`) or a majority of the players (`resume-game` from each) to \
                 resume it"
                    .to_owned()
            } else {
                "The game resumed where it stopped".to_owned()
            },
        ),
        Event::PlayerMuted { player, muted } => {
            let who = player.map_or_else(|| "The spectators".to_owned(), n);
            Wording::new(
                match player {
                    Some(p) => format!(" player={} muted={muted}", w(*p)),
                    None => format!(" player=spectators muted={muted}"),
                },
                if *muted {
                    format!("{who}: muted by the host")
                } else {
                    format!("{who}: no longer muted")
                },
            )
        }
        Event::HostCalled { player, reason } => Wording::new(
            format!(" player={} reason={}", w(*player), safe::quoted(reason)),
            format!("{} calls the host: {}", n(*player), safe::printable(reason)),
        ),
        Event::HostAnswered { player } => match player {
            Some(p) => Wording::new(
                format!(" player={}", w(*p)),
                format!("The host answered {}'s call", n(*p)),
            ),
            None => Wording::new(
                " player=all".to_owned(),
                "The host answered every open call".to_owned(),
            ),
        },
        Event::ExtraTurnGranted {
            player,
            before_next,
        } => Wording::new(
            generic_fields(event),
            if *before_next {
                format!("{} takes an extra turn before his next turn", n(*player))
            } else {
                format!("{} takes an extra turn after this one", n(*player))
            },
        ),
        Event::ExtraTurnDeferred { player } => Wording::new(
            generic_fields(event),
            format!(
                "{} cannot keep his turn: his extra turn comes before his next turn",
                n(*player)
            ),
        ),
        Event::TurnKept { turn, player } => Wording::new(
            generic_fields(event),
            format!("{} keeps turn {turn} for another turn", n(*player)),
        ),
        Event::AttackRolled {
            roller,
            opponent,
            counter,
            natural,
            modifier,
            total,
            result,
            damage,
            self_damage,
            opposing,
            ..
        } => {
            let what = if *counter {
                "counter strike against"
            } else if opposing.is_empty() {
                "undefended attack on"
            } else {
                "resisted attack on"
            };
            let mut sentence = format!(
                "{} rolled {natural} {modifier:+} = {total} ({what} {}): {}",
                n(*roller),
                n(*opponent),
                result.name().replace('_', " ")
            );
            if *damage > 0 {
                let _ = write!(sentence, ", {damage} damage");
            }
            if *self_damage > 0 {
                let _ = write!(sentence, ", its creature takes {self_damage}");
            }
            Wording::new(generic_fields(event), sentence)
        }
        Event::DiceRevealed { .. } => Wording::new(
            generic_fields(event),
            "The dice secret is revealed: check every roll with grand-melee verify".to_owned(),
        ),
        _ => return None,
    };
    Some(words)
}

/// Where the player stands right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Situation {
    /// Watching as a spectator (or not seated).
    Spectating,
    /// In the lobby, waiting for the host to start.
    Lobby {
        /// Whether the player is the host (and may `start`).
        host: bool,
    },
    /// The player decides on a mulligan now.
    MulliganDecide {
        /// Cards in hand.
        hand: u8,
    },
    /// Another player decides on a mulligan.
    MulliganWait {
        /// Who decides.
        decider: String,
    },
    /// The player's turn is running.
    YourTurn {
        /// Its phase.
        phase: Option<Phase>,
    },
    /// The player holds a turn that may not begin yet because of these running turns.
    WaitingFor {
        /// Holders of the running turns whose spheres would overlap.
        holders: Vec<String>,
    },
    /// The player is in a running turn's sphere of influence.
    InSphere {
        /// The turn's holder.
        holder: String,
    },
    /// No turn concerns the player right now.
    Idle,
    /// The player is out of the game.
    Eliminated,
    /// The game is over.
    GameOver {
        /// The player's place, if he has one.
        place: Option<u8>,
    },
}

impl Situation {
    /// Works out the situation of `me` (`None` for a spectator).
    pub fn of(view: &TableView, me: Option<PlayerId>) -> Self {
        let Some(me) = me else {
            return Situation::Spectating;
        };
        match view.stage {
            StageName::Lobby => Situation::Lobby {
                host: view.host == Some(me),
            },
            StageName::Finished => Situation::GameOver {
                place: view
                    .standings
                    .iter()
                    .find(|s| s.player == me)
                    .map(|s| s.place),
            },
            StageName::Mulligan if view.mulligan_deciders.contains(&me) => {
                Situation::MulliganDecide {
                    hand: view.player(me).map_or(0, |p| p.hand_size),
                }
            }
            StageName::Mulligan => match view.mulligan_deciders.first() {
                // Paris mulligans: one decider; simultaneous: the others are still deciding.
                Some(&d) if view.mulligan_deciders.len() == 1 => Situation::MulliganWait {
                    decider: raw_name(view, d),
                },
                Some(_) => Situation::MulliganWait {
                    decider: format!("{} players", view.mulligan_deciders.len()),
                },
                None => Situation::Idle,
            },
            StageName::Playing => {
                if view
                    .player(me)
                    .is_some_and(|p| p.status != PlayerStatus::Alive)
                {
                    return Situation::Eliminated;
                }
                if let Some(turn) = view.turn_of(me) {
                    match turn.state {
                        TurnStateName::Running => {
                            return Situation::YourTurn { phase: turn.phase };
                        }
                        TurnStateName::Waiting => {
                            let mine = &turn.sphere;
                            let holders = view
                                .turns
                                .iter()
                                .filter(|t| t.state == TurnStateName::Running && t.player != me)
                                .filter(|t| t.sphere.iter().any(|p| mine.contains(p)))
                                .map(|t| raw_name(view, t.player))
                                .collect();
                            return Situation::WaitingFor { holders };
                        }
                        TurnStateName::Ended => {}
                    }
                }
                view.turns
                    .iter()
                    .find(|t| t.state == TurnStateName::Running && t.sphere.contains(&me))
                    .map_or(Situation::Idle, |t| Situation::InSphere {
                        holder: raw_name(view, t.player),
                    })
            }
        }
    }

    /// The script-mode words, e.g. `your_turn phase=combat` or `waiting_for "Ben"`.
    pub fn script(&self) -> String {
        match self {
            Situation::Spectating => "spectating".to_owned(),
            Situation::Lobby { host: true } => "lobby host".to_owned(),
            Situation::Lobby { host: false } => "lobby".to_owned(),
            Situation::MulliganDecide { hand } => format!("mulligan_decide hand={hand}"),
            Situation::MulliganWait { decider } => {
                format!("mulligan_wait decider={}", safe::quoted(decider))
            }
            Situation::YourTurn { phase } => {
                format!("your_turn phase={}", phase.map_or("none", Phase::name))
            }
            Situation::WaitingFor { holders } => {
                let holders: Vec<String> = holders.iter().map(|h| safe::quoted(h)).collect();
                format!("waiting_for {}", holders.join(","))
            }
            Situation::InSphere { holder } => format!("in_sphere {}", safe::quoted(holder)),
            Situation::Idle => "idle".to_owned(),
            Situation::Eliminated => "eliminated".to_owned(),
            Situation::GameOver { place } => match place {
                Some(place) => format!("game_over place={place}"),
                None => "game_over".to_owned(),
            },
        }
    }

    /// The words for the terminal UI.
    pub fn text(&self) -> String {
        match self {
            Situation::Spectating => "Watching as a spectator".to_owned(),
            Situation::Lobby { host: true } => {
                "In the lobby — you are the host: type `start` when everyone is here".to_owned()
            }
            Situation::Lobby { host: false } => {
                "In the lobby — waiting for the host to start".to_owned()
            }
            Situation::MulliganDecide { hand } => {
                format!("Your mulligan decision ({hand} cards): `keep` or `mulligan`")
            }
            Situation::MulliganWait { decider } => {
                format!(
                    "Waiting for {} to decide on a mulligan",
                    safe::printable(decider)
                )
            }
            Situation::YourTurn { phase } => match phase {
                Some(phase) => format!("YOUR TURN — {}", phase_words(*phase)),
                None => "YOUR TURN".to_owned(),
            },
            Situation::WaitingFor { holders } if holders.is_empty() => {
                "Your turn is about to begin".to_owned()
            }
            Situation::WaitingFor { holders } => {
                let holders: Vec<String> = holders.iter().map(|h| safe::printable(h)).collect();
                format!("Waiting for {} to finish", holders.join(" and "))
            }
            Situation::InSphere { holder } => format!("In {}'s sphere", safe::printable(holder)),
            Situation::Idle => "No turn near you".to_owned(),
            Situation::Eliminated => "You have been eliminated".to_owned(),
            Situation::GameOver { place } => match place {
                Some(1) => "Game over — you won!".to_owned(),
                Some(place) => format!("Game over — you finished #{place}"),
                None => "Game over".to_owned(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use grand_melee_protocol::{Event, KeepReason, Settings, TableId, TableView};

    use grand_melee_protocol::examples;

    use super::{Situation, log_sentence, script_line, sentence, wording};
    use crate::safe::{self, tests::HOSTILE, tests::is_inert};
    use crate::script::status_lines;
    use crate::session::State;

    /// A table of two players with honest names (Ann, Ben) and one with `hostile` as his name,
    /// in the mulligan stage with the hostile player deciding.
    fn table_with(hostile: &str) -> TableView {
        let mut view = TableView::new(TableId::nil(), hostile, Settings::default());
        let events = [
            Event::PlayerJoined {
                player: 0,
                name: "Ann".into(),
                entropy: String::new(),
                deck: None,
            },
            Event::PlayerJoined {
                player: 1,
                name: "Ben".into(),
                entropy: String::new(),
                deck: None,
            },
            Event::PlayerJoined {
                player: 2,
                name: hostile.into(),
                entropy: String::new(),
                deck: None,
            },
            Event::GameStarted {
                seating: vec![2, 0, 1],
                first_player: 2,
                turn_holders: vec![2],
                commitment: String::new(),
                first_player_chosen: false,
                bonuses: Vec::new(),
                first_decided_by: None,
                seating_mode: grand_melee_protocol::SeatingMode::Random,
            },
        ];
        view = view.folded(1, &events).unwrap();
        view
    }

    /// Events naming player 2 or carrying `hostile` text.
    fn events_with(hostile: &str) -> Vec<Event> {
        vec![
            Event::Chat {
                from: Some(2),
                name: hostile.into(),
                text: hostile.into(),
            },
            Event::Chat {
                from: None,
                name: hostile.into(),
                text: hostile.into(),
            },
            Event::Kept {
                player: 2,
                hand_size: 7,
                reason: KeepReason::Clock,
            },
            Event::PlayerMuted {
                player: Some(2),
                muted: true,
            },
            Event::PlayerKicked {
                player: 2,
                banned: true,
            },
            Event::PlayerJoined {
                player: 3,
                name: hostile.into(),
                entropy: String::new(),
                deck: None,
            },
        ]
    }

    #[test]
    fn script_lines_sentences_and_status_escape_every_hostile_name_and_chat_line() {
        for hostile in HOSTILE {
            let view = table_with(hostile);
            let mut state = State::new("ws://h/ws", TableId::nil());
            state.me = Some(0);
            state.view = Some(view.clone());
            let mut out: Vec<String> = status_lines(&state);
            out.push(Situation::of(&view, Some(0)).script());
            out.push(Situation::of(&view, Some(0)).text());
            for (seq, event) in (5..).zip(&events_with(hostile)) {
                out.push(script_line(seq, event, &view));
                out.push(sentence(event, &view));
            }
            for line in &out {
                assert!(is_inert(line), "{hostile:?} came out as {line:?}");
            }
        }
    }

    #[test]
    fn no_hostile_name_or_chat_line_can_forge_a_field() {
        for hostile in HOSTILE {
            let view = table_with(hostile);
            let events = events_with(hostile);
            // The fields read back exactly, and nothing follows that the name did not put there.
            let line = script_line(5, &events[0], &view);
            let value = line.strip_prefix("event 5 chat from=2 ").unwrap();
            let (name, rest) = safe::unquote(value).unwrap();
            assert_eq!(name, hostile);
            let (text, rest) = safe::unquote(rest.strip_prefix(" text=").unwrap()).unwrap();
            assert_eq!((text.as_str(), rest), (hostile, ""), "{line}");
            let line = script_line(7, &events[2], &view);
            let value = line.strip_prefix("event 7 kept player=2 ").unwrap();
            let (name, rest) = safe::unquote(value).unwrap();
            assert_eq!((name.as_str(), rest), (hostile, " hand=7 reason=clock"));
            let line = script_line(10, &events[5], &view);
            let value = line
                .strip_prefix("event 10 player_joined player=3 ")
                .unwrap();
            assert_eq!(safe::unquote(value).unwrap(), (hostile.to_owned(), ""));
            let line = script_line(
                4,
                &Event::GameStarted {
                    seating: vec![2, 0, 1],
                    first_player: 2,
                    turn_holders: vec![2, 0],
                    commitment: String::new(),
                    first_player_chosen: false,
                    bonuses: Vec::new(),
                    first_decided_by: None,
                    seating_mode: grand_melee_protocol::SeatingMode::Random,
                },
                &view,
            );
            let quoted = safe::quoted(hostile);
            assert_eq!(
                line,
                format!(
                    "event 4 game_started first=2 {quoted} seating=2,0,1 {quoted},\"Ann\",\"Ben\" turns=2,0 {quoted},\"Ann\""
                )
            );
        }
    }

    #[test]
    fn the_log_tells_a_return_only_after_the_player_was_reported_absent() {
        let mut view = table_with("Eve");
        let mut seq = 5;
        // Each event's log line (worded before it) and script line, then the event folded.
        let mut step = |event: Event| {
            let logged = log_sentence(&event, &view);
            let line = script_line(seq, &event, &view);
            view = view.folded(seq, std::slice::from_ref(&event)).unwrap();
            seq += 1;
            (logged, line)
        };
        let drop = |player| Event::ConnectionChanged {
            player,
            connected: false,
        };
        let back = |player| Event::ConnectionChanged {
            player,
            connected: true,
        };
        // A drop and a return within the grace period (a restart, a tunnel): nothing in the log,
        // while script mode still has every event.
        for event in [drop(1), back(1)] {
            let (logged, line) = step(event);
            assert_eq!(logged, None);
            assert!(
                line.contains("connection_changed player=1 \"Ben\""),
                "{line}"
            );
        }
        // Away past the absence limit: the absence is told, and so is the return, once.
        assert_eq!(step(drop(1)).0, None);
        assert_eq!(
            step(Event::PlayerAbsent { player: 1 }).0.as_deref(),
            Some("Ben is absent")
        );
        assert_eq!(step(back(1)).0.as_deref(), Some("Ben is back"));
        // Back means no longer absent: the next drop and return are quiet again.
        assert_eq!(step(drop(1)).0, None);
        assert_eq!(step(back(1)).0, None);
        // Every other event keeps its line.
        assert_eq!(
            step(Event::TablePaused { paused: true }).0.as_deref(),
            Some("The host paused the table")
        );
    }

    /// The one list has words for every kind of event the protocol has: no script line or
    /// sentence of this client falls back to the wire fields.
    #[test]
    fn every_event_kind_has_a_wording() {
        let view = table_with("Eve");
        let events = examples::events();
        for kind in Event::NAMES {
            let event = events
                .iter()
                .find(|e| e.name() == *kind)
                .unwrap_or_else(|| panic!("no example of {kind}"));
            let words = wording(event, &view).unwrap_or_else(|| panic!("no words for {kind}"));
            assert!(!words.sentence.is_empty(), "{kind}");
            assert_eq!(
                script_line(4, event, &view),
                format!("event 4 {kind}{}", words.fields)
            );
            assert_eq!(sentence(event, &view), words.sentence);
        }
    }

    #[test]
    fn new_events_have_words_in_both_modes() {
        let view = table_with("Eve");
        let words = |event: Event| (script_line(9, &event, &view), sentence(&event, &view));
        for (reason, script, text) in [
            (KeepReason::Decided, "decided", "Eve kept 6"),
            (
                KeepReason::Clock,
                "clock",
                "Eve kept 6 (mulligan clock ran out)",
            ),
            (KeepReason::Absent, "absent", "Eve kept 6 (away too long)"),
            (KeepReason::Ruling, "ruling", "Eve kept 6 (host's ruling)"),
        ] {
            let (line, sentence) = words(Event::Kept {
                player: 2,
                hand_size: 6,
                reason,
            });
            assert_eq!(
                line,
                format!("event 9 kept player=2 \"Eve\" hand=6 reason={script}")
            );
            assert_eq!(sentence, text);
        }
        assert_eq!(
            words(Event::PlayerKicked {
                player: 1,
                banned: true
            }),
            (
                "event 9 player_kicked player=1 \"Ben\" banned=true".to_owned(),
                "Ben was removed and banned by the host".to_owned()
            )
        );
        assert_eq!(
            words(Event::PlayerKicked {
                player: 1,
                banned: false
            }),
            (
                "event 9 player_kicked player=1 \"Ben\" banned=false".to_owned(),
                "Ben was removed by the host".to_owned()
            )
        );
        assert_eq!(
            words(Event::PlayerMuted {
                player: Some(0),
                muted: true
            }),
            (
                "event 9 player_muted player=0 \"Ann\" muted=true".to_owned(),
                "Ann: muted by the host".to_owned()
            )
        );
        assert_eq!(
            words(Event::HostCalled {
                player: 1,
                reason: "is \"Wrath\" resolved?".to_owned()
            }),
            (
                "event 9 host_called player=1 \"Ben\" reason=\"is \\\"Wrath\\\" resolved?\""
                    .to_owned(),
                "Ben calls the host: is \"Wrath\" resolved?".to_owned()
            )
        );
        assert_eq!(
            words(Event::HostAnswered { player: None }),
            (
                "event 9 host_answered player=all".to_owned(),
                "The host answered every open call".to_owned()
            )
        );
        assert_eq!(
            words(Event::PlayerMuted {
                player: None,
                muted: false
            }),
            (
                "event 9 player_muted player=spectators muted=false".to_owned(),
                "The spectators: no longer muted".to_owned()
            )
        );
    }

    #[test]
    fn status_shows_who_is_muted() {
        let mut view = table_with("Eve");
        view = view
            .folded(
                5,
                &[
                    Event::PlayerMuted {
                        player: Some(1),
                        muted: true,
                    },
                    Event::PlayerMuted {
                        player: None,
                        muted: true,
                    },
                ],
            )
            .unwrap();
        let mut state = State::new("ws://h/ws", TableId::nil());
        state.view = Some(view);
        let lines = status_lines(&state);
        assert!(lines[0].contains(" spectators_muted=true "), "{}", lines[0]);
        let seat = |name: &str| {
            lines
                .iter()
                .find(|l| l.contains(&format!("\"{name}\"")))
                .unwrap()
                .clone()
        };
        assert!(seat("Ben").contains(" muted=true "), "{}", seat("Ben"));
        assert!(seat("Ann").contains(" muted=false "), "{}", seat("Ann"));
    }
}

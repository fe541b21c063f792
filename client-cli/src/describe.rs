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
/// `event 17 turn_began turn=0 player=3 "Ann"`.
pub fn script_line(seq: u64, event: &Event, view: &TableView) -> String {
    let mut line = format!("event {seq} {}", event.name());
    let w = |p: PlayerId| who(view, p);
    // Writing to a String cannot fail.
    let _ = match event {
        Event::PlayerJoined {
            player, name, deck, ..
        } => {
            let _ = write!(line, " player={player} {}", safe::quoted(name));
            match deck {
                Some(d) => write!(
                    line,
                    " member={} deck={} power={}",
                    d.member,
                    safe::quoted(&d.deck),
                    d.power
                ),
                None => Ok(()),
            }
        }
        Event::FirstPlayerChosen { by, player } => {
            write!(line, " by={} player={}", w(*by), w(*player))
        }
        Event::PlayerLeft { player }
        | Event::PlayerAbsent { player }
        | Event::ResumeRequested { player } => {
            write!(line, " player={}", w(*player))
        }
        Event::PlayerKicked { player, banned } => {
            write!(line, " player={} banned={banned}", w(*player))
        }
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
            let _ = write!(
                line,
                " first={} seating={} turns={}",
                w(*first_player),
                list(view, seating),
                list(view, turn_holders),
            );
            if !seating_mode.is_random() {
                let _ = write!(line, " seating_mode={}", wire_name(seating_mode));
            }
            if let Some(by) = first_decided_by {
                let _ = write!(line, " decided_by={}", w(*by));
            }
            for b in bonuses {
                let _ = write!(
                    line,
                    " bonus={}:behind={},life=+{},cards=+{}",
                    w(b.player),
                    b.behind,
                    b.life,
                    b.cards
                );
            }
            if commitment.is_empty() {
                Ok(())
            } else {
                write!(line, " commitment={}", safe::printable(commitment))
            }
        }
        Event::Mulliganed { player, hand_size } => {
            write!(line, " player={} hand={hand_size}", w(*player))
        }
        Event::Kept {
            player,
            hand_size,
            reason,
        } => write!(
            line,
            " player={} hand={hand_size} reason={}",
            w(*player),
            wire_name(reason)
        ),
        Event::TurnBegan { turn, player } => write!(line, " turn={turn} player={}", w(*player)),
        Event::PhaseChanged { turn, phase } => {
            let holder = view
                .turn(*turn)
                .map(|t| format!(" player={}", w(t.player)))
                .unwrap_or_default();
            write!(line, " turn={turn} phase={}{holder}", phase.name())
        }
        Event::Attacked {
            attacker,
            defender,
            damage,
            poison,
        } => write!(
            line,
            " attacker={} defender={} damage={damage} poison={poison}",
            w(*attacker),
            w(*defender)
        ),
        Event::DamageDealt {
            source,
            target,
            amount,
        } => write!(
            line,
            " source={} target={} amount={amount}",
            w(*source),
            w(*target)
        ),
        Event::LifeChanged { player, life } => write!(line, " player={} life={life}", w(*player)),
        Event::PoisonChanged { player, poison } => {
            write!(line, " player={} poison={poison}", w(*player))
        }
        Event::Eliminated { players, cause } => write!(
            line,
            " players={} cause={}",
            list(view, players),
            wire_name(cause)
        ),
        Event::TurnMarkedForRemoval { turn } | Event::TurnRemovalCancelled { turn } => {
            write!(line, " turn={turn}")
        }
        Event::TurnEnded {
            turn,
            player,
            reason,
        } => write!(
            line,
            " turn={turn} player={} reason={}",
            w(*player),
            wire_name(reason)
        ),
        Event::TurnPassed { turn, from, to } => {
            write!(line, " turn={turn} from={} to={}", w(*from), w(*to))
        }
        Event::TurnRemoved {
            turn,
            player,
            reason,
        } => write!(
            line,
            " turn={turn} player={} reason={}",
            w(*player),
            wire_name(reason)
        ),
        Event::PositionsRemoved { players } => write!(line, " players={}", list(view, players)),
        Event::GameOver { standings } => {
            let parts: Vec<String> = standings
                .iter()
                .map(|s| format!("{}:{}:{}", s.place, s.player, s.mana_points))
                .collect();
            let winner = standings
                .iter()
                .find(|s| s.place == 1)
                .map(|s| format!(" winner={}", w(s.player)))
                .unwrap_or_default();
            write!(line, "{winner} standings={}", parts.join(","))
        }
        Event::ConnectionChanged { player, connected } => {
            write!(line, " player={} connected={connected}", w(*player))
        }
        Event::HostChanged { player } => match player {
            Some(p) => write!(line, " player={}", w(*p)),
            None => write!(line, " player=none"),
        },
        Event::SpectatorsChanged { spectators } => write!(line, " spectators={spectators}"),
        Event::Chat { from, name, text } => {
            let from = from.map_or_else(|| "none".to_owned(), |p| p.to_string());
            write!(
                line,
                " from={from} {} text={}",
                safe::quoted(name),
                safe::quoted(text)
            )
        }
        Event::TablePaused { paused } => write!(line, " paused={paused}"),
        Event::TableAdjourned { adjourned } => write!(line, " adjourned={adjourned}"),
        Event::PlayerMuted { player, muted } => match player {
            Some(p) => write!(line, " player={} muted={muted}", w(*p)),
            None => write!(line, " player=spectators muted={muted}"),
        },
        Event::HostCalled { player, reason } => {
            write!(
                line,
                " player={} reason={}",
                w(*player),
                safe::quoted(reason)
            )
        }
        Event::HostAnswered { player } => match player {
            Some(p) => write!(line, " player={}", w(*p)),
            None => write!(line, " player=all"),
        },
        _ => write!(line, "{}", generic_fields(event)),
    };
    line
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
/// ([`log_sentence`]), and what a replay's step says it is.
pub fn sentence(event: &Event, view: &TableView) -> String {
    let n = |p: PlayerId| name(view, p);
    match event {
        Event::PlayerJoined {
            name,
            deck: Some(deck),
            ..
        } => format!(
            "{} sat down with {} (deck power {})",
            safe::printable(name),
            safe::printable(&deck.deck),
            deck.power
        ),
        Event::PlayerJoined { name, .. } => format!("{} sat down", safe::printable(name)),
        Event::FirstPlayerChosen { by, player } => {
            format!("{} chose {} to play first", n(*by), n(*player))
        }
        Event::PlayerLeft { player } => format!("{} left the table", n(*player)),
        Event::GameStarted {
            first_player,
            turn_holders,
            bonuses,
            seating_mode,
            ..
        } => {
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
                    sentence,
                    "; {} is {} behind: +{} life, +{} card(s)",
                    n(b.player),
                    b.behind,
                    b.life,
                    b.cards
                );
            }
            sentence
        }
        Event::Mulliganed { player, hand_size } => {
            format!("{} mulliganed to {hand_size}", n(*player))
        }
        Event::Kept {
            player,
            hand_size,
            reason,
        } => match reason {
            KeepReason::Decided => format!("{} kept {hand_size}", n(*player)),
            KeepReason::Clock => {
                format!("{} kept {hand_size} (mulligan clock ran out)", n(*player))
            }
            KeepReason::Absent => format!("{} kept {hand_size} (away too long)", n(*player)),
            KeepReason::Ruling => format!("{} kept {hand_size} (host's ruling)", n(*player)),
        },
        Event::TurnBegan { turn, player } => format!("{} began turn {turn}", n(*player)),
        Event::PhaseChanged { turn, phase } => {
            let holder = view.turn(*turn).map_or_else(String::new, |t| n(t.player));
            format!("{holder} moved to {} (turn {turn})", phase_words(*phase))
        }
        Event::Attacked {
            attacker,
            defender,
            damage,
            poison,
        } => {
            let mut s = format!("{} attacked {} for {damage}", n(*attacker), n(*defender));
            if *poison > 0 {
                let _ = write!(s, " and {poison} poison");
            }
            s
        }
        Event::DamageDealt {
            source,
            target,
            amount,
        } => format!("{} dealt {amount} damage to {}", n(*source), n(*target)),
        Event::LifeChanged { player, life } => format!("{} is at {life} life", n(*player)),
        Event::PoisonChanged { player, poison } => {
            format!("{} has {poison} poison", n(*player))
        }
        Event::Eliminated { players, cause } => {
            format!("{} eliminated ({})", names(view, players), wire_name(cause))
        }
        Event::TurnMarkedForRemoval { turn } => {
            format!("Turn {turn} will be removed when it ends")
        }
        Event::TurnRemovalCancelled { turn } => format!("Turn {turn} will pass again"),
        Event::TurnEnded {
            turn,
            player,
            reason,
        } => format!("{} ended turn {turn} ({})", n(*player), wire_name(reason)),
        Event::TurnPassed { turn, to, .. } => format!("Turn {turn} passed to {}", n(*to)),
        Event::TurnRemoved { turn, .. } => format!("Turn {turn} left the table"),
        Event::PositionsRemoved { players } => {
            format!("Positions of {} removed", names(view, players))
        }
        Event::GameOver { standings } => {
            let first: Vec<PlayerId> = standings
                .iter()
                .filter(|s| s.place == 1)
                .map(|s| s.player)
                .collect();
            match first.as_slice() {
                [] => "Game over: nobody wins".to_owned(),
                [winner] => format!("Game over: {} wins", n(*winner)),
                // An abandoned game: the players still in it share the first place.
                shared => format!("Game over: {} share first place", names(view, shared)),
            }
        }
        Event::GameAbandoned => {
            "Everyone still in the game has been away for the table's absence limit: the game \
             ends as it stands"
                .to_owned()
        }
        Event::ConnectionChanged { player, connected } => {
            if *connected {
                format!("{} is back", n(*player))
            } else {
                format!("{} lost the connection", n(*player))
            }
        }
        Event::HostChanged { player } => match player {
            Some(p) => format!("{} is the host", n(*p)),
            None => "Nobody is host".to_owned(),
        },
        Event::SpectatorsChanged { spectators } => format!("{spectators} spectator(s)"),
        Event::Chat { name, text, .. } => {
            format!("{}: {}", safe::printable(name), safe::printable(text))
        }
        Event::TablePaused { paused } => {
            if *paused {
                "The host paused the table".to_owned()
            } else {
                "The table resumed".to_owned()
            }
        }
        Event::TableAdjourned { adjourned: true } => {
            "The host adjourned the game: everyone may leave, and it waits for the host \
             (`resume-game`) or a majority of the players (`resume-game` from each) to resume it"
                .to_owned()
        }
        Event::TableAdjourned { adjourned: false } => {
            "The game resumed where it stopped".to_owned()
        }
        Event::ResumeRequested { player } => format!(
            "{} asks to resume the game ({} of {} asks needed)",
            n(*player),
            view.resume_asks.len() + 1,
            view.resume_quorum()
        ),
        Event::PlayerAbsent { player } => format!("{} is absent", n(*player)),
        Event::HostCalled { player, reason } => {
            format!("{} calls the host: {}", n(*player), safe::printable(reason))
        }
        Event::HostAnswered { player } => match player {
            Some(p) => format!("The host answered {}'s call", n(*p)),
            None => "The host answered every open call".to_owned(),
        },
        Event::PlayerKicked { player, banned } => {
            if *banned {
                format!("{} was removed and banned by the host", n(*player))
            } else {
                format!("{} was removed by the host", n(*player))
            }
        }
        Event::ExtraTurnGranted {
            player,
            before_next,
        } => {
            if *before_next {
                format!("{} takes an extra turn before his next turn", n(*player))
            } else {
                format!("{} takes an extra turn after this one", n(*player))
            }
        }
        Event::ExtraTurnDeferred { player } => format!(
            "{} cannot keep his turn: his extra turn comes before his next turn",
            n(*player)
        ),
        Event::TurnKept { turn, player } => {
            format!("{} keeps turn {turn} for another turn", n(*player))
        }
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
            let mut s = format!(
                "{} rolled {natural} {modifier:+} = {total} ({what} {}): {}",
                n(*roller),
                n(*opponent),
                result.name().replace('_', " ")
            );
            if *damage > 0 {
                let _ = write!(s, ", {damage} damage");
            }
            if *self_damage > 0 {
                let _ = write!(s, ", its creature takes {self_damage}");
            }
            s
        }
        Event::DiceRevealed { .. } => {
            "The dice secret is revealed: check every roll with grand-melee verify".to_owned()
        }
        Event::PlayerMuted { player, muted } => {
            let who = player.map_or_else(|| "The spectators".to_owned(), n);
            if *muted {
                format!("{who}: muted by the host")
            } else {
                format!("{who}: no longer muted")
            }
        }
        _ => format!(
            "{}:{}",
            event.name().replace('_', " "),
            generic_fields(event)
        ),
    }
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

    use grand_melee_protocol::{Event, KeepReason, Settings, TableView, Uuid};

    use super::{Situation, log_sentence, script_line, sentence};
    use crate::safe::{self, tests::HOSTILE, tests::is_inert};
    use crate::script::status_lines;
    use crate::session::State;

    /// A table of two players with honest names (Ann, Ben) and one with `hostile` as his name,
    /// in the mulligan stage with the hostile player deciding.
    fn table_with(hostile: &str) -> TableView {
        let mut view = TableView::new(Uuid::nil(), hostile, Settings::default());
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
            let mut state = State::new("ws://h/ws", Uuid::nil());
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
        let mut state = State::new("ws://h/ws", Uuid::nil());
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

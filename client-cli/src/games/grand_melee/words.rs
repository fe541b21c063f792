//! Grand Melee's words: a sentence and script fields for each of its events (the start and its
//! seating, mulligans, turns and phases, attacks, life and poison, eliminations), and its
//! phases as players say them.

use std::fmt::Write as _;

use grand_melee_protocol::{Event, KeepReason, Phase, PlayerId, SeatingMode, TableView};

use crate::safe;
use crate::words::{Wording, generic_fields, list, name, names, who, wire_name};

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

/// The words of one of Grand Melee's events, worded with the view as it was before it, or
/// `None` for an event that is not Grand Melee's.
pub fn wording(event: &Event, view: &TableView) -> Option<Wording> {
    let w = |p: PlayerId| who(view, p);
    let n = |p: PlayerId| name(view, p);
    // Writing to a String cannot fail.
    let words = match event {
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
        _ => return None,
    };
    Some(words)
}

//! Magic Tech's board in the full-screen UI: the opponent's side on top, the turn and the
//! mission in the middle, the player's own side below; each side its stockpile, hand,
//! scrapheap and mana, then its cards by area (patrol, guards with what they guard, the deploy
//! area with face-down cards and their counters); and the board in script mode's `status`.

use grand_melee_protocol::magic_tech_types::{Area, CardType, CardView, MagicTechView, SideView};
use grand_melee_protocol::{PlayerId, TableView};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use super::words::{
    area_field, cards_field, correction_words, cost_words, phase_words, target_field, type_words,
};
use crate::draw::{fit, title_row};
use crate::safe;
use crate::words::{name, who};

/// What the board's marks mean.
pub const LEGEND: &str = "▶ whose turn · #n a card · ▫cN face down, N mana counters · P/A/S attack/armour/structure · dN damage · ↷ tapped · * new this turn · →#n guards card n";

/// The narrowest the board is drawn.
const MIN_WIDTH: usize = 40;
/// Rows of the compact board.
const COMPACT: usize = 11;
/// Rows of the roomy board.
const FULL: usize = 15;
/// The widest a card's name is written.
const NAME: usize = 16;
/// The area labels' column.
const LABEL: usize = 8;

/// The narrowest width and its rows.
pub fn min_size() -> (usize, usize) {
    (MIN_WIDTH, COMPACT)
}

/// Whether the board can be drawn `width` columns wide.
pub fn fits_width(width: usize) -> bool {
    width >= MIN_WIDTH
}

/// The board's rows.
pub fn rows(full: bool) -> usize {
    if full { FULL } else { COMPACT }
}

/// The two sides as drawn for `me`: the opponent's first (on top), then his own (a spectator
/// sees the first player's side below).
fn sides(board: &MagicTechView, me: Option<PlayerId>) -> (Option<&SideView>, Option<&SideView>) {
    let mine = me
        .and_then(|me| board.sides.iter().find(|s| s.player == me))
        .or_else(|| board.sides.first());
    let theirs = board
        .sides
        .iter()
        .find(|s| Some(s.player) != mine.map(|m| m.player));
    (theirs, mine)
}

/// A name cut to `width` characters.
fn short(text: &str, width: usize) -> String {
    let text = safe::printable(text);
    if text.chars().count() <= width {
        text
    } else {
        let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// One card as the board writes it: `#4 Grizzly Bears 2/2/2 d1↷`, `#6 ▫c2`.
pub fn card_token(card: &CardView) -> String {
    let mut token = format!("#{}", card.card);
    match &card.face {
        None => {
            token.push_str(&format!(" ▫c{}", card.counters));
            if card.shown {
                token.push('!');
            }
        }
        Some(face) => {
            token.push(' ');
            token.push_str(&short(&face.name, NAME));
            match face.card_type {
                CardType::Land => {}
                CardType::Creature => {
                    token.push_str(&format!(
                        " {}/{}/{}",
                        face.attack(),
                        face.armour(),
                        face.structure()
                    ));
                }
                _ => token.push_str(&format!(" -/{}/{}", face.armour(), face.structure())),
            }
        }
    }
    if card.damage > 0 {
        token.push_str(&format!(" d{}", card.damage));
    }
    if let Area::Guard { card: guarded } = card.area {
        match guarded {
            Some(guarded) => token.push_str(&format!(" →#{guarded}")),
            None => token.push_str(" →stockpile"),
        }
    }
    if card.tapped {
        token.push('↷');
    }
    if card.fresh {
        token.push('*');
    }
    token
}

/// Tokens packed into rows `width` wide after a label column, the label on the first.
fn packed(label: &str, tokens: &[String], width: usize) -> Vec<String> {
    let room = width.saturating_sub(LABEL + 1).max(1);
    let mut rows: Vec<String> = Vec::new();
    let mut row = String::new();
    for token in tokens {
        let len = row.chars().count();
        if len > 0 && len + 3 + token.chars().count() > room {
            rows.push(std::mem::take(&mut row));
        }
        if !row.is_empty() {
            row.push_str(" · ");
        }
        row.push_str(token);
    }
    if !row.is_empty() {
        rows.push(row);
    }
    rows.into_iter()
        .enumerate()
        .map(|(i, row)| {
            let label = if i == 0 { label } else { "" };
            format!(" {label:<width$}{row}", width = LABEL)
        })
        .collect()
}

/// A side's rows: its counts, then its cards by area.
fn side_rows(
    view: &TableView,
    board: &MagicTechView,
    side: &SideView,
    width: usize,
) -> Vec<String> {
    let active = if board.active == Some(side.player) {
        "▶"
    } else {
        " "
    };
    let deck = side
        .deck
        .map_or_else(|| "deck ?".to_owned(), |d| format!("deck {d}"));
    let mut rows = vec![format!(
        "{active}{} · stockpile {} · hand {} · scrapheap {} · mana {} · {deck}",
        short(&name(view, side.player), NAME),
        side.stockpile,
        side.hand,
        side.scrapheap,
        side.mana,
    )];
    let theirs = |area: fn(&Area) -> bool| -> Vec<String> {
        board
            .cards
            .iter()
            .filter(|c| c.owner == side.player && area(&c.area))
            .map(card_token)
            .collect()
    };
    rows.extend(packed(
        "patrol",
        &theirs(|a| matches!(a, Area::Patrol)),
        width,
    ));
    rows.extend(packed(
        "guard",
        &theirs(|a| matches!(a, Area::Guard { .. })),
        width,
    ));
    rows.extend(packed(
        "deploy",
        &theirs(|a| matches!(a, Area::Deploy)),
        width,
    ));
    rows
}

/// The middle row: the turn, its phase and what is left of it, the mission, a proposal.
fn middle_row(view: &TableView, board: &MagicTechView) -> String {
    let mut parts = Vec::new();
    match (board.active, board.phase) {
        (Some(active), phase) => parts.push(format!(
            "turn {} · {}'s {} · deployed {} · lands {}",
            board.turn_number,
            name(view, active),
            phase.map_or("", phase_words),
            board.deployed,
            board.lands
        )),
        (None, _) => parts.push("no turn yet".to_owned()),
    }
    if let Some(mission) = &board.mission {
        let attackers: Vec<String> = mission.attackers.iter().map(|a| format!("#{a}")).collect();
        let target = match mission.target {
            grand_melee_protocol::magic_tech_types::Target::Card { card } => format!("#{card}"),
            grand_melee_protocol::magic_tech_types::Target::Stockpile { player } => {
                format!("{}'s stockpile", name(view, player))
            }
        };
        parts.push(format!("MISSION {} → {target}", attackers.join(",")));
    }
    if let Some(proposal) = &board.proposal {
        let (_, sentence) = correction_words(view, &proposal.correction);
        parts.push(format!(
            "{} proposes: {sentence}",
            name(view, proposal.player)
        ));
    }
    format!("═ {}", parts.join(" · "))
}

/// Draws the board in `area` for `me`, with a title row if `titled`.
pub fn render(
    frame: &mut Frame<'_>,
    area: Rect,
    view: &TableView,
    me: Option<PlayerId>,
    titled: bool,
) {
    let width = usize::from(area.width);
    let mut lines: Vec<Line<'static>> = Vec::new();
    let mut height = usize::from(area.height);
    if titled && height > 1 {
        lines.push(title_row("Board · P/A/S attack/armour/structure", width));
        height -= 1;
    }
    for (text, style) in board_rows(view, me, width, height) {
        lines.push(Line::styled(fit(&text, width), style));
    }
    frame.render_widget(Paragraph::new(lines), area);
}

/// The board's rows, each with its style, at most `height` of them.
pub fn board_rows(
    view: &TableView,
    me: Option<PlayerId>,
    width: usize,
    height: usize,
) -> Vec<(String, Style)> {
    let Some(board) = view.magic_tech.as_deref() else {
        return view
            .players
            .iter()
            .take(height)
            .map(|p| (format!(" {}", name(view, p.player)), Style::default()))
            .collect();
    };
    let (theirs, mine) = sides(board, me);
    let top = theirs.map_or_else(Vec::new, |s| side_rows(view, board, s, width));
    let bottom = mine.map_or_else(Vec::new, |s| side_rows(view, board, s, width));
    let budget = height.saturating_sub(1);
    // Each side gets half the rows, and what the other leaves unused.
    let top_n = top
        .len()
        .min(budget.saturating_sub(bottom.len()).max(budget / 2));
    let bottom_n = bottom.len().min(budget - top_n);
    let mut rows = Vec::new();
    let cut = |side: Vec<String>, n: usize, rows: &mut Vec<(String, Style)>, style: Style| {
        let hidden = side.len().saturating_sub(n);
        for (i, text) in side.into_iter().take(n).enumerate() {
            let text = if hidden > 0 && i + 1 == n {
                format!(" … {} more row(s)", hidden + 1)
            } else {
                text
            };
            rows.push((
                text,
                if i == 0 {
                    style.add_modifier(Modifier::BOLD)
                } else {
                    style
                },
            ));
        }
    };
    cut(top, top_n, &mut rows, Style::default().fg(Color::Red));
    if height > 0 {
        rows.push((middle_row(view, board), Style::default().fg(Color::Yellow)));
    }
    cut(
        bottom,
        bottom_n,
        &mut rows,
        Style::default().fg(Color::Cyan),
    );
    rows
}

/// The table's facts on the title bar: the turn and its phase.
pub fn header_facts(view: &TableView) -> String {
    let Some(board) = view.magic_tech.as_deref() else {
        return String::new();
    };
    match board.active {
        Some(active) => format!(
            "turn {} · {}'s {}",
            board.turn_number,
            name(view, active),
            board.phase.map_or("turn", phase_words)
        ),
        None => String::new(),
    }
}

/// The player's own line: his counts and what is left of his turn.
pub fn you_line(view: &TableView, me: Option<PlayerId>, width: usize) -> Option<String> {
    let me = me?;
    let board = view.magic_tech.as_deref()?;
    let side = board.sides.iter().find(|s| s.player == me)?;
    let line = format!(
        "You: stockpile {} · hand {} · scrapheap {} · mana {}",
        side.stockpile, side.hand, side.scrapheap, side.mana
    );
    Some(fit(&line, width).trim_end().to_owned())
}

/// `status`'s lines: each side, each card in play, the turn, the mission, a proposal.
pub fn status_lines(view: &TableView, _me: Option<PlayerId>) -> Vec<String> {
    let Some(board) = view.magic_tech.as_deref() else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    for side in &board.sides {
        lines.push(format!(
            "side player={} deck={} stockpile={} hand={} scrapheap={} mana={} active={}",
            who(view, side.player),
            side.deck
                .map_or_else(|| "none".to_owned(), |d| d.to_string()),
            side.stockpile,
            side.hand,
            side.scrapheap,
            side.mana,
            board.active == Some(side.player)
        ));
    }
    for card in &board.cards {
        let face = match &card.face {
            None => format!(" face_down counters={}", card.counters),
            Some(face) => format!(
                " name={} type={} cost={} attack={} armour={} structure={}",
                safe::quoted(&face.name),
                type_words(face.card_type),
                cost_words(face),
                face.attack(),
                face.armour(),
                face.structure()
            ),
        };
        lines.push(format!(
            "card {} owner={} area={}{face} damage={} tapped={} fresh={}",
            card.card,
            card.owner,
            area_field(card.area),
            card.damage,
            card.tapped,
            card.fresh
        ));
    }
    if let Some(active) = board.active {
        lines.push(format!(
            "turn number={} player={} phase={} deployed={} lands={}",
            board.turn_number,
            who(view, active),
            board.phase.map_or("none", phase_words),
            board.deployed,
            board.lands
        ));
    }
    if let Some(mission) = &board.mission {
        lines.push(format!(
            "mission player={} attackers={} target={}",
            who(view, mission.player),
            cards_field(&mission.attackers),
            target_field(mission.target)
        ));
    }
    if let Some(proposal) = &board.proposal {
        let (fields, _) = correction_words(view, &proposal.correction);
        lines.push(format!(
            "proposal player={}{fields}",
            who(view, proposal.player)
        ));
    }
    lines
}

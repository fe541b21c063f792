//! Mountain Magic's panel in the full-screen UI: while climbing, the mountain (the top row
//! first, each place its card's name or, empty, its `row:pos`, the places the card to place
//! may go marked), the card to place and the discard pile; at the path, the complete
//! mountain; in the battle, both sides' cards (powered, mana on them, used, gone), whose turn
//! and the land drawn; at the end, the ending. And the same facts in script mode's `status`.

use grand_melee_protocol::mountain_magic::Climb;
use grand_melee_protocol::mountain_magic::pool::Pool;
use grand_melee_protocol::mountain_magic_types::{
    Colour, ForceView, Kind, MmPhase, MountainView, ROWS, Removal, Side,
};
use grand_melee_protocol::{PlayerId, StageName, TableView};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use super::situation::{outcome_words, places_field};
use super::words::card;
use crate::draw::{fit, title_row};

/// What the panel's marks mean.
pub const LEGEND: &str = "r:p an empty place (row:pos) · ▸r:p the card to place may go there · * on your path · yN/oN your/occupying card N · ● powered · ○ unpowered (mana on it) · ↷ used · ✝ gone";

/// The narrowest the panel is drawn.
const MIN_WIDTH: usize = 40;
/// Its rows: a header, the seven rows of the mountain, the card to place, the discard pile.
const ROWS_DRAWN: usize = 10;
/// The widest a card's name is written on the mountain.
const SLOT: usize = 10;

/// The narrowest width and its rows.
pub fn min_size() -> (usize, usize) {
    (MIN_WIDTH, ROWS_DRAWN)
}

/// Whether the panel can be drawn `width` columns wide.
pub fn fits_width(width: usize) -> bool {
    width >= MIN_WIDTH
}

/// The panel's rows.
pub fn rows(_full: bool) -> usize {
    ROWS_DRAWN
}

fn climb_of(view: &TableView) -> Option<Climb> {
    view.mountain_magic
        .as_deref()
        .map(|m| Climb::from_view(m.clone()))
}

/// A name cut to `width` characters.
fn short(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_owned()
    } else {
        let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

fn colour_letter(colour: Colour) -> char {
    match colour {
        Colour::White => 'W',
        Colour::Blue => 'U',
        Colour::Black => 'B',
        Colour::Red => 'R',
        Colour::Green => 'G',
    }
}

/// What a card is, briefly: `creature 2/3 RG`, `sorcery U`, `artifact`.
fn card_facts(no: u16) -> String {
    let Some(c) = Pool::builtin().card(no) else {
        return String::new();
    };
    let kind = match c.kind {
        Kind::Land => "land",
        Kind::Creature => "creature",
        Kind::Sorcery => "sorcery",
        Kind::Enchantment => "enchantment",
        Kind::Instant => "instant",
        Kind::Interrupt => "interrupt",
        Kind::Artifact => "artifact",
    };
    let colours: String = c.colours().into_iter().map(colour_letter).collect();
    let mut facts = kind.to_owned();
    if c.kind == Kind::Creature {
        facts.push_str(&format!(" {}/{}", c.power, c.toughness));
    }
    if !colours.is_empty() {
        facts.push(' ');
        facts.push_str(&colours);
    }
    if c.flying {
        facts.push_str(" flying");
    }
    facts
}

/// Whether place (`row`, `pos`) is on the chosen path (`path`: top row first).
fn on_path(mountain: &MountainView, row: u8, pos: u8) -> bool {
    let top_down = usize::from(ROWS - 1 - row);
    mountain.path.get(top_down) == Some(&pos)
}

/// The mountain's rows, the top row first, each centred over the bottom row.
fn mountain_rows(climb: &Climb, places: &[(u8, u8)]) -> Vec<(String, Style)> {
    let view = climb.view();
    (0..ROWS)
        .rev()
        .map(|row| {
            let mut text = format!("{row} {}", " ".repeat(usize::from(row) * SLOT / 2));
            for pos in 0..ROWS - row {
                let slot = match climb.at(row, pos) {
                    Some(no) => {
                        let mark = if on_path(view, row, pos) { "*" } else { "" };
                        format!("{mark}{}", short(&card(no), SLOT - 1 - mark.len()))
                    }
                    None if places.contains(&(row, pos)) => format!("▸{row}:{pos}"),
                    None => format!("{row}:{pos}"),
                };
                text.push_str(&format!("{slot:<width$}", width = SLOT));
            }
            let style = if places.iter().any(|&(r, _)| r == row) {
                Style::default().fg(Color::Green)
            } else {
                Style::default()
            };
            (text, style)
        })
        .collect()
}

/// One card in the battle: `y2 Name 2/3 ●`, `o1 Name ○U`, `y4 Name ✝killed`.
fn force_token(side: Side, k: usize, force: &ForceView) -> String {
    let tag = match side {
        Side::Player => 'y',
        Side::Opponent => 'o',
    };
    let mut token = format!("{tag}{k} {}", short(&card(force.card), 14));
    if let Some(c) = Pool::builtin().card(force.card)
        && c.kind == Kind::Creature
    {
        token.push_str(&format!(" {}/{}", c.power, c.toughness));
    }
    if let Some(why) = force.gone {
        token.push_str(match why {
            Removal::Killed => " ✝killed",
            Removal::Countered => " ✝countered",
            Removal::TappedAway => " ✝tapped",
            Removal::WalkedOff => " ✝walked",
        });
        return token;
    }
    token.push(' ');
    token.push(if force.powered { '●' } else { '○' });
    token.extend(force.mana.iter().copied().map(colour_letter));
    if force.uses > 0 {
        token.push_str(&format!(" +{}", force.uses));
    }
    if force.used {
        token.push('↷');
    }
    token
}

/// Tokens packed into rows `width` wide after `label`.
fn packed(label: &str, tokens: &[String], width: usize) -> Vec<String> {
    let mut rows = Vec::new();
    let mut row = format!("{label} ");
    let indent = " ".repeat(label.chars().count() + 1);
    let mut empty = true;
    for token in tokens {
        let len = row.chars().count();
        if !empty && len + 3 + token.chars().count() > width {
            rows.push(std::mem::replace(&mut row, indent.clone()));
            empty = true;
        }
        if !empty {
            row.push_str(" · ");
        }
        row.push_str(token);
        empty = false;
    }
    rows.push(row);
    rows
}

/// The panel's rows for `width` columns (at most `height`).
pub fn panel_rows(view: &TableView, width: usize, height: usize) -> Vec<(String, Style)> {
    let Some(climb) = climb_of(view) else {
        return vec![(
            "No climb yet: the host's `start` deals the mountain".to_owned(),
            Style::default(),
        )];
    };
    let mm = climb.view();
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let mut rows: Vec<(String, Style)> = Vec::new();
    match mm.phase {
        MmPhase::Undealt => rows.push(("Not dealt yet".to_owned(), Style::default())),
        MmPhase::Climbing | MmPhase::Path => {
            rows.push((
                format!(
                    "Mountain · spell deck {} · land deck {} · discard pile {}",
                    mm.spells_left,
                    mm.lands_left,
                    mm.discard.len()
                ),
                bold,
            ));
            let places = climb.placements();
            rows.extend(mountain_rows(&climb, &places));
            if mm.phase == MmPhase::Path {
                rows.push((
                    "Complete: choose your path, `path <p6> … <p0>` (top first)".to_owned(),
                    Style::default().fg(Color::Yellow),
                ));
            } else {
                let next = match climb.card_to_place() {
                    Some(no) if places.is_empty() && mm.flipped.is_none() => format!(
                        "To place: none ({} on the discard pile fits nowhere) · `flip`",
                        card(no)
                    ),
                    Some(no) if places.is_empty() => format!(
                        "To place: {} ({}) · fits nowhere: `discard`",
                        card(no),
                        card_facts(no)
                    ),
                    Some(no) => format!(
                        "To place: {} ({}) → {}{}",
                        card(no),
                        card_facts(no),
                        places_field(&places),
                        if mm.flipped.is_none() {
                            " · or `flip`"
                        } else {
                            ""
                        }
                    ),
                    None => "To place: none · `flip` the top spell card".to_owned(),
                };
                rows.push((next, Style::default().fg(Color::Yellow)));
            }
            let discard = match mm.discard.last() {
                Some(&top) if mm.may_recover && mm.flipped.is_none() => {
                    format!("Discard pile: {} on top (may be placed now)", card(top))
                }
                Some(&top) => format!("Discard pile: {} on top", card(top)),
                None => "Discard pile: empty".to_owned(),
            };
            rows.push((discard, Style::default()));
        }
        MmPhase::Battle | MmPhase::Over => {
            let head = match (&mm.battle, outcome_words(&climb)) {
                (_, Some(ending)) => format!("The climb is over: {ending}"),
                (Some(b), None) => {
                    let turn = match b.turn {
                        Some(Side::Player) => "your turn",
                        Some(Side::Opponent) => "the occupying forces' turn",
                        None => "no turn",
                    };
                    let land = b
                        .pending_land
                        .map(|l| format!(" · you drew {}: `mana`", card(l)))
                        .unwrap_or_default();
                    format!(
                        "Battle · {turn} {} · land deck {}{land}",
                        b.turns[0], mm.lands_left
                    )
                }
                (None, None) => "Battle".to_owned(),
            };
            rows.push((head, bold.fg(Color::Yellow)));
            if let Some(b) = &mm.battle {
                let tokens = |side: Side, forces: &[ForceView]| -> Vec<String> {
                    forces
                        .iter()
                        .enumerate()
                        .map(|(k, f)| force_token(side, k, f))
                        .collect()
                };
                for row in packed("Occupying", &tokens(Side::Opponent, &b.opponent), width) {
                    rows.push((row, Style::default().fg(Color::Red)));
                }
                for row in packed("Yours    ", &tokens(Side::Player, &b.player), width) {
                    rows.push((row, Style::default().fg(Color::Cyan)));
                }
                if b.doomed.iter().any(|&d| d > 0) {
                    rows.push((
                        format!(
                            "Lands doomed: yours {} · theirs {}",
                            b.doomed[0], b.doomed[1]
                        ),
                        Style::default(),
                    ));
                }
            } else if mm.phase == MmPhase::Over {
                let places = Vec::new();
                rows.extend(mountain_rows(&climb, &places));
            }
        }
    }
    // A finished climb of a day's mountain: where its standings are, under the first row.
    if let (StageName::Finished, Some(day)) = (view.stage, day_of(view)) {
        rows.insert(
            rows.len().min(1),
            (
                format!("{day}'s mountain · standings: grand-melee standings --day {day}"),
                Style::default(),
            ),
        );
    }
    rows.truncate(height);
    rows
}

/// Draws the panel.
pub fn render(
    frame: &mut Frame<'_>,
    area: Rect,
    view: &TableView,
    _me: Option<PlayerId>,
    titled: bool,
) {
    let width = usize::from(area.width);
    let mut height = usize::from(area.height);
    let mut lines: Vec<Line<'static>> = Vec::new();
    if titled && height > 1 {
        lines.push(title_row("Mountain Magic", width));
        height -= 1;
    }
    for (text, style) in panel_rows(view, width, height) {
        lines.push(Line::styled(fit(&text, width), style));
    }
    frame.render_widget(Paragraph::new(lines), area);
}

/// A climb of a day's mountain: the day (`YYYY-MM-DD`), printable.
pub fn day_of(view: &TableView) -> Option<String> {
    let day = view.settings.mountain_magic.as_ref()?.day.as_deref()?;
    Some(crate::safe::printable(day))
}

/// The climb's facts on the title bar (a day climb's day first).
pub fn header_facts(view: &TableView) -> String {
    let day = day_of(view).map(|day| format!("{day}'s mountain"));
    let Some(climb) = climb_of(view) else {
        return day.unwrap_or_default();
    };
    let mm = climb.view();
    let facts = match mm.phase {
        MmPhase::Undealt => String::new(),
        MmPhase::Climbing => format!("climbing · {} spells left", mm.spells_left),
        MmPhase::Path => "the path".to_owned(),
        MmPhase::Battle => format!("battle · {} lands left", mm.lands_left),
        MmPhase::Over => outcome_words(&climb).unwrap_or_default(),
    };
    match day {
        Some(day) if facts.is_empty() => day,
        Some(day) => format!("{day} · {facts}"),
        None => facts,
    }
}

/// The climber's own line.
pub fn you_line(view: &TableView, me: Option<PlayerId>, width: usize) -> Option<String> {
    let me = me?;
    view.players.iter().find(|p| p.player == me)?;
    let climb = climb_of(view)?;
    let mm = climb.view();
    let placed = mm.mountain.iter().flatten().filter(|c| c.is_some()).count();
    let line = format!(
        "You: {placed} cards on the mountain · spell deck {} · land deck {}",
        mm.spells_left, mm.lands_left
    );
    Some(fit(&line, width).trim_end().to_owned())
}

/// `status`'s lines: the climb, the mountain row by row, the card to place, the battle.
pub fn status_lines(view: &TableView, _me: Option<PlayerId>) -> Vec<String> {
    let Some(climb) = climb_of(view) else {
        return Vec::new();
    };
    let mm = climb.view();
    let phase = match mm.phase {
        MmPhase::Undealt => "undealt",
        MmPhase::Climbing => "climbing",
        MmPhase::Path => "path",
        MmPhase::Battle => "battle",
        MmPhase::Over => "over",
    };
    let day = day_of(view)
        .map(|day| format!(" day={day}"))
        .unwrap_or_default();
    let mut lines = vec![format!(
        "climb phase={phase} spells={} lands={} discard={}{day} ending={}",
        mm.spells_left,
        mm.lands_left,
        mm.discard.len(),
        crate::safe::quoted(&outcome_words(&climb).unwrap_or_else(|| "none".to_owned()))
    )];
    for row in (0..ROWS).rev() {
        let cards: Vec<String> = (0..ROWS - row)
            .map(|pos| {
                climb
                    .at(row, pos)
                    .map_or_else(|| "-".to_owned(), |no| crate::safe::quoted(&card(no)))
            })
            .collect();
        lines.push(format!("row {row}: {}", cards.join(" ")));
    }
    if let Some(no) = climb.card_to_place() {
        lines.push(format!(
            "to_place card={} places={}",
            crate::safe::quoted(&card(no)),
            places_field(&climb.placements())
        ));
    }
    if let Some(b) = &mm.battle {
        for (side, forces) in [(Side::Player, &b.player), (Side::Opponent, &b.opponent)] {
            for (k, f) in forces.iter().enumerate() {
                lines.push(format!("force {}", force_token(side, k, f)));
            }
        }
    }
    lines
}

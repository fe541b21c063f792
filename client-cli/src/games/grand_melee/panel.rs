//! Grand Melee's panel in the full-screen UI: the ring of seats, the turns and their spheres,
//! the player's own line and the seats' lines of `status`.
//!
//! Every seat is one cell that starts with its seat number: `@` marks the player's own seat and
//! `»` the seats in his range; then the first 8 (or 16) characters of the name, the life (`OUT`
//! once eliminated, `---` once his position is removed), the poison counters, `●` connected,
//! `○` disconnected, `◌` away past the absence limit, `★` the host, the turn he holds (`▶0c`
//! running turn 0 in combat — phases `b`, `1`, `c`, `2`, `e` — `…0` waiting, `■0` ended), and
//! last `n┃` when the seat is in running turn n's sphere: at the cell's right edge, like a
//! closing bracket, so it cannot be read as the next cell's (the holder's `▶n` says it for him,
//! and the seat number is drawn in the turn's colour too). With room enough the cells are drawn
//! around an oval, clockwise in seating order (turns pass clockwise), with the turns and their
//! spheres written in the middle; otherwise in columns.

use grand_melee_protocol::{
    Phase, PlayerId, PlayerStatus, PlayerView, StageName, TableView, TurnStateName,
};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use unicode_width::UnicodeWidthStr;

use super::words::phase_words;
use crate::draw::{fit, title_row, wrap};
use crate::safe::printable;
use crate::words::{name, names};

/// Colors of the simultaneous turns, by turn id.
const TURN_COLORS: [Color; 6] = [
    Color::Cyan,
    Color::Magenta,
    Color::Yellow,
    Color::LightBlue,
    Color::LightGreen,
    Color::LightRed,
];

fn turn_color(turn: u8) -> Color {
    TURN_COLORS[usize::from(turn) % TURN_COLORS.len()]
}

/// What the marks of the ring mean (in `help`, and over the ring when there is room).
pub const LEGEND: &str = "@ you · » in your range · ● on ○ off ◌ away · ★ host · ▶0c running turn 0 (phase b 1 c 2 e) · …0 waiting · 0┃ in turn 0's sphere";

/// Width of a compact seat cell (8 characters of the name).
const COMPACT: usize = 26;
/// Width of a full seat cell (16 characters of the name, the phase in words).
const FULL: usize = 47;
/// Columns between two cells side by side.
const GAP: usize = 1;
/// How many cells of `cell` columns fit side by side in `width`.
fn columns_in(width: usize, cell: usize) -> usize {
    (width + GAP) / (cell + GAP)
}

/// The narrowest the ring gets for `seats` seats: three columns of compact cells.
pub fn min_width(seats: usize) -> usize {
    let columns = seats.clamp(1, 3);
    columns * (COMPACT + GAP) - GAP
}

/// The rows the ring takes for `seats` seats at its narrowest ([`min_width`]).
pub fn min_rows(seats: usize) -> usize {
    seats.max(1).div_ceil(seats.clamp(1, 3))
}

/// Whether one compact cell fits in `width` columns.
pub fn fits_width(width: usize) -> bool {
    columns_in(width, COMPACT) > 0
}

/// The rows the ring takes for `seats` seats in `width` columns, with full cells or compact
/// ones.
pub fn rows(seats: usize, width: usize, full: bool) -> usize {
    let cell = if full { FULL } else { COMPACT };
    seats.max(1).div_ceil(columns_in(width, cell).max(1))
}

/// The table's facts on the UI's title bar: `39/40 alive · R=2 · 5/6 turns running`.
pub fn header_facts(view: &TableView) -> String {
    let running = view
        .turns
        .iter()
        .filter(|t| t.state == TurnStateName::Running)
        .count();
    format!(
        "{}/{} alive · R={} · {running}/{} turns running",
        view.living(),
        view.players.len(),
        view.settings.spell_range,
        view.turns.len(),
    )
}

/// The player's own line (`None` if he has no seat): seat, life, poison and whom he may attack and target, in `width`
/// columns (a list that does not fit is counted, and the ring's `»` marks show it).
pub fn you_line(view: &TableView, me: Option<PlayerId>, width: usize) -> Option<String> {
    let me = me.and_then(|me| view.player(me))?;
    let seat = me.seat.map_or_else(String::new, |s| format!(", seat {s}"));
    let host = if view.host == Some(me.player) {
        " ★ host"
    } else {
        ""
    };
    let head = format!(
        " You: {}{seat}{host} · {} life · {} poison",
        printable(&me.name),
        me.life,
        me.poison
    );
    if view.stage != StageName::Playing {
        return Some(head);
    }
    let list = |players: &[u16]| {
        if players.is_empty() {
            "–".to_owned()
        } else {
            names(view, players)
        }
    };
    let full = format!(
        "{head} · may attack: {} · may target: {}",
        list(&me.may_attack),
        list(&me.may_target)
    );
    if full.width() <= width {
        return Some(full);
    }
    let shorter = format!(
        "{head} · attack: {} · target: {}",
        list(&me.may_attack),
        list(&me.may_target)
    );
    if shorter.width() <= width {
        return Some(shorter);
    }
    let count = |players: &[u16]| match players.len() {
        0 => "nobody".to_owned(),
        1 => "1 player".to_owned(),
        n => format!("{n} players"),
    };
    let counted = format!(
        "{head} · attack: {} · target: {} (»)",
        list(&me.may_attack),
        count(&me.may_target)
    );
    if counted.width() <= width {
        return Some(counted);
    }
    // The name is on the ring (`@`): leave it out.
    Some(format!(
        " You{seat}{host} · {} life · {} poison · attack: {} · target: {} (»)",
        me.life,
        me.poison,
        count(&me.may_attack),
        count(&me.may_target)
    ))
}

/// One letter for a phase, for compact cells.
fn phase_letter(phase: Phase) -> char {
    match phase {
        Phase::Beginning => 'b',
        Phase::PrecombatMain => '1',
        Phase::Combat => 'c',
        Phase::PostcombatMain => '2',
        Phase::Ending => 'e',
    }
}

/// One seat's cell, `COMPACT` or `FULL` columns wide (see the module's documentation).
fn seat_cell(
    me: Option<PlayerId>,
    view: &TableView,
    p: &PlayerView,
    full: bool,
) -> Vec<Span<'static>> {
    let name_width = if full { 16 } else { 8 };
    let mine = me.and_then(|me| view.player(me));
    let range: &[u16] = mine.map_or(&[], |m| &m.may_target);
    let is_me = me == Some(p.player);
    let in_range = !is_me && range.contains(&p.player);
    let sphere = view
        .turns
        .iter()
        .find(|t| t.state == TurnStateName::Running && t.sphere.contains(&p.player));
    let mut spans = Vec::with_capacity(10);
    // The seat number as the ring shows it (the player's id in the lobby), on the sphere's
    // color.
    let number = p.seat.map_or(p.player, u16::from);
    let mut seat_style = Style::default().add_modifier(Modifier::BOLD);
    if let Some(t) = sphere {
        seat_style = seat_style.fg(Color::Black).bg(turn_color(t.turn));
    }
    spans.push(Span::styled(format!("{:>2}", number % 100), seat_style));
    let mark = if is_me {
        "@"
    } else if in_range {
        "»"
    } else {
        " "
    };
    spans.push(Span::styled(
        mark,
        Style::default()
            .fg(Color::LightGreen)
            .add_modifier(Modifier::BOLD),
    ));
    let mut name_style = Style::default();
    if is_me {
        name_style = name_style.add_modifier(Modifier::BOLD | Modifier::REVERSED);
    } else if in_range {
        name_style = name_style.fg(Color::LightGreen);
    }
    if p.status != PlayerStatus::Alive {
        name_style = name_style
            .fg(Color::DarkGray)
            .add_modifier(Modifier::CROSSED_OUT);
    }
    spans.push(Span::styled(
        fit(&printable(&p.name), name_width),
        name_style,
    ));
    let life_width = if full { 5 } else { 4 };
    let (life, life_style) = match p.status {
        PlayerStatus::Alive => (
            format!(
                "{:>life_width$}",
                short_number(i64::from(p.life), life_width)
            ),
            if p.life <= 5 {
                Style::default().fg(Color::Red)
            } else {
                Style::default()
            },
        ),
        PlayerStatus::Eliminated => (
            format!("{:>life_width$}", "OUT"),
            Style::default().fg(Color::DarkGray),
        ),
        PlayerStatus::Removed => (
            format!("{:>life_width$}", "---"),
            Style::default().fg(Color::DarkGray),
        ),
    };
    spans.push(Span::styled(life, life_style));
    let poison_style = if p.poison > 0 {
        Style::default().fg(Color::Magenta)
    } else {
        Style::default().fg(Color::DarkGray)
    };
    spans.push(Span::styled(
        format!("{:>2}p ", short_number(i64::from(p.poison), 2)),
        poison_style,
    ));
    spans.push(if p.absent {
        Span::styled("◌", Style::default().fg(Color::Red))
    } else if p.connected {
        Span::styled("●", Style::default().fg(Color::Green))
    } else {
        Span::styled("○", Style::default().fg(Color::Red))
    });
    spans.push(Span::styled(
        if view.host == Some(p.player) {
            "★"
        } else {
            " "
        },
        Style::default().fg(Color::Yellow),
    ));
    let turn_width = if full { 15 } else { 3 };
    let turn = view.turn_of(p.player).map(|t| {
        let color = Style::default().fg(turn_color(t.turn));
        let id = turn_number(view, t.turn) % 10;
        let last = if t.marked_for_removal { "!" } else { "" };
        match (t.state, full) {
            (TurnStateName::Running, false) => (
                format!("▶{id}{}", t.phase.map_or(' ', phase_letter)),
                color.add_modifier(Modifier::BOLD),
            ),
            (TurnStateName::Running, true) => (
                format!(
                    " ▶{id} {}{last}",
                    t.phase.map_or("", |phase| phase_words(phase))
                ),
                color.add_modifier(Modifier::BOLD),
            ),
            (TurnStateName::Waiting, false) => (format!("…{id}{last}"), color),
            (TurnStateName::Waiting, true) => (format!(" …{id} waiting{last}"), color),
            (TurnStateName::Ended, false) => (format!("■{id}"), color),
            (TurnStateName::Ended, true) => (format!(" ■{id} ended"), color),
        }
    });
    let (turn, turn_style) = turn.unwrap_or_default();
    spans.push(Span::styled(fit(&turn, turn_width), turn_style));
    spans.push(match sphere {
        // The holder of a running turn is in its sphere: `▶1c` says so already.
        Some(t) if t.player == p.player => Span::raw("  "),
        Some(t) => Span::styled(
            format!("{}┃", turn_number(view, t.turn) % 10),
            Style::default().fg(turn_color(t.turn)),
        ),
        None => Span::raw("  "),
    });
    spans
}

/// A number in at most `width` columns: `1234` as `1k`, and so on.
fn short_number(n: i64, width: usize) -> String {
    let text = n.to_string();
    if text.len() <= width {
        return text;
    }
    let thousands = format!("{}k", n / 1000);
    if thousands.len() <= width {
        thousands
    } else if n < 0 {
        "-".repeat(width)
    } else {
        "+".repeat(width)
    }
}

/// Draws the ring in `area` for the player `me` (`None`: a spectator), with a title row over
/// it (`Ring` and the [`LEGEND`]) if `titled`.
pub fn render(
    frame: &mut Frame<'_>,
    area: Rect,
    view: &TableView,
    me: Option<PlayerId>,
    titled: bool,
) {
    let mut area = area;
    if titled && area.height > 1 {
        let title = format!("Ring · {LEGEND}");
        frame.render_widget(
            Paragraph::new(title_row(&title, usize::from(area.width))),
            Rect::new(area.x, area.y, area.width, 1),
        );
        area = Rect::new(area.x, area.y + 1, area.width, area.height - 1);
    }
    let seats = view.players.len();
    if seats == 0 || area.height == 0 {
        return;
    }
    if view.stage != StageName::Lobby && render_oval(frame, area, me, view) {
        return;
    }
    let width = usize::from(area.width);
    let height = usize::from(area.height);
    // The fewest columns that hold every seat; full cells if they fit.
    let pick = |cell: usize| {
        let most = columns_in(width, cell);
        (1..=most).find(|&c| seats.div_ceil(c) <= height)
    };
    let (columns, full) = match (pick(FULL), pick(COMPACT)) {
        (Some(c), _) => (c, true),
        (None, Some(c)) => (c, false),
        (None, None) => (columns_in(width, COMPACT).max(1), false),
    };
    let cell = if full { FULL } else { COMPACT };
    let rows = seats.div_ceil(columns);
    for (i, p) in view.players.iter().enumerate() {
        let (column, row) = (i / rows, i % rows);
        let x = column * (cell + GAP);
        if row >= height || x + cell > width {
            continue;
        }
        let at = Rect::new(
            area.x + u16::try_from(x).unwrap_or(0),
            area.y + u16::try_from(row).unwrap_or(0),
            u16::try_from(cell).unwrap_or(0),
            1,
        );
        frame.render_widget(Paragraph::new(Line::from(seat_cell(me, view, p, full))), at);
    }
}

/// The cells around an oval, clockwise from the top left in seating order, with the turns in
/// the middle; `false` (nothing drawn) if the area is too small for it.
fn render_oval(frame: &mut Frame<'_>, area: Rect, me: Option<PlayerId>, view: &TableView) -> bool {
    let seats = view.players.len();
    let (width, height) = (usize::from(area.width), usize::from(area.height));
    let cell = COMPACT;
    let gap = 3;
    let most = (width + gap) / (cell + gap);
    if seats < 4 || most < 3 {
        return false;
    }
    // Cells on the top and bottom rows; the rest go down the sides.
    let across = most.min(seats.div_ceil(4).max(2));
    let down = seats.saturating_sub(2 * across);
    let (right, left) = (down.div_ceil(2), down / 2);
    let middle = width.saturating_sub(2 * (cell + gap));
    if right + 2 > height || middle < 24 || height < 8 {
        return false;
    }
    let mut places = Vec::with_capacity(seats);
    let spread = |i: usize, n: usize, span: usize| {
        if n <= 1 { span / 2 } else { i * span / (n - 1) }
    };
    for i in 0..across {
        places.push((spread(i, across, width - cell), 0));
    }
    // Down the right side, between the top and bottom rows.
    for i in 0..right {
        places.push((width - cell, 1 + (i + 1) * (height - 2) / (right + 1)));
    }
    for i in (0..across).rev() {
        places.push((spread(i, across, width - cell), height - 1));
    }
    for i in (0..left).rev() {
        places.push((0, 1 + (i + 1) * (height - 2) / (left + 1)));
    }
    for (p, (x, y)) in view.players.iter().zip(places) {
        let at = Rect::new(
            area.x + u16::try_from(x).unwrap_or(0),
            area.y + u16::try_from(y).unwrap_or(0),
            u16::try_from(cell).unwrap_or(0),
            1,
        );
        frame.render_widget(
            Paragraph::new(Line::from(seat_cell(me, view, p, false))),
            at,
        );
    }
    // The turns and their spheres, in the middle.
    let inner_x = cell + gap;
    let inner = Rect::new(
        area.x + u16::try_from(inner_x).unwrap_or(0),
        area.y + 2,
        u16::try_from(middle).unwrap_or(0),
        area.height.saturating_sub(4),
    );
    let mut lines = vec![Line::styled(
        "Turns pass clockwise ↻",
        Style::default().fg(Color::DarkGray),
    )];
    let seat_number = |p: u16| {
        view.player(p)
            .and_then(|v| v.seat)
            .map_or_else(|| format!("#{p}"), |s| s.to_string())
    };
    for t in &view.turns {
        let color = Style::default().fg(turn_color(t.turn));
        let (head, style) = match t.state {
            TurnStateName::Running => (
                format!(
                    "▶ {}: {} · {}",
                    turn_title(view, t.turn),
                    name(view, t.player),
                    t.phase.map_or("", |phase| phase_words(phase))
                ),
                color.add_modifier(Modifier::BOLD),
            ),
            TurnStateName::Waiting => (
                format!(
                    "… {}: {} waits",
                    turn_title(view, t.turn),
                    name(view, t.player)
                ),
                color,
            ),
            TurnStateName::Ended => (
                format!(
                    "■ {}: {} ended",
                    turn_title(view, t.turn),
                    name(view, t.player)
                ),
                color,
            ),
        };
        for row in wrap(&head, middle) {
            lines.push(Line::styled(row, style));
        }
        if t.state == TurnStateName::Running && !t.sphere.is_empty() {
            let sphere: Vec<String> = t.sphere.iter().map(|&p| seat_number(p)).collect();
            let text = format!(
                "  {}┃ sphere: seats {}",
                turn_number(view, t.turn) % 10,
                sphere.join(", ")
            );
            for row in wrap(&text, middle) {
                lines.push(Line::styled(row, color));
            }
        }
    }
    frame.render_widget(Paragraph::new(lines), inner);
    true
}

/// How a turn is numbered for people: under CR 807 turns are the numbered turn markers (turn 0
/// is marker 1); under the seed's rules by their id.
pub fn turn_number(view: &TableView, turn: u8) -> u8 {
    match view.settings.rules {
        grand_melee_protocol::RuleSet::Cr807 => turn.saturating_add(1),
        grand_melee_protocol::RuleSet::Seed => turn,
    }
}

/// "Turn 2" or, under CR 807, "Marker 3".
pub fn turn_title(view: &TableView, turn: u8) -> String {
    match view.settings.rules {
        grand_melee_protocol::RuleSet::Cr807 => format!("Marker {}", turn_number(view, turn)),
        grand_melee_protocol::RuleSet::Seed => format!("Turn {turn}"),
    }
}

/// `status`'s lines for the seats: one per seat as the ring numbers them (life and poison,
/// presence, the turn he holds, the sphere he is in), then whom `me` may attack and target.
pub fn status_lines(view: &TableView, me: Option<PlayerId>) -> Vec<String> {
    let mut out = Vec::new();
    for p in &view.players {
        let number = p
            .seat
            .map_or_else(|| format!("Player #{}", p.player), |s| format!("Seat {s}"));
        let mut parts = vec![format!("{number}: {}", printable(&p.name))];
        if me == Some(p.player) {
            parts[0].push_str(" (you)");
        }
        parts.push(match p.status {
            PlayerStatus::Alive => format!("{} life, {} poison", p.life, p.poison),
            PlayerStatus::Eliminated => "eliminated".into(),
            PlayerStatus::Removed => "eliminated, position removed".into(),
        });
        parts.push(
            if p.absent {
                "away"
            } else if p.connected {
                "connected"
            } else {
                "disconnected"
            }
            .into(),
        );
        if view.host == Some(p.player) {
            parts.push("host".into());
        }
        if p.muted {
            parts.push("muted".into());
        }
        if let Some(t) = view.turn_of(p.player) {
            parts.push(match t.state {
                TurnStateName::Running => format!(
                    "taking {} ({})",
                    turn_title(view, t.turn).to_lowercase(),
                    t.phase.map_or("", |phase| phase_words(phase))
                ),
                TurnStateName::Waiting => {
                    format!("{} waits", turn_title(view, t.turn).to_lowercase())
                }
                TurnStateName::Ended => {
                    format!("{} ended", turn_title(view, t.turn).to_lowercase())
                }
            });
            if t.designations > 1 {
                parts.push(format!("designated for removal ×{}", t.designations));
            } else if t.marked_for_removal {
                parts.push("to be removed when it ends".into());
            }
        }
        let extra = u32::from(p.extra_turns) + u32::from(p.extra_next);
        if extra > 0 {
            parts.push(format!("{extra} extra turn(s) to come"));
        }
        if let Some(t) = view
            .turns
            .iter()
            .find(|t| t.state == TurnStateName::Running && t.sphere.contains(&p.player))
        {
            parts.push(match view.settings.rules {
                grand_melee_protocol::RuleSet::Cr807 => {
                    format!("in {}'s range", turn_title(view, t.turn).to_lowercase())
                }
                grand_melee_protocol::RuleSet::Seed => format!("in turn {}'s sphere", t.turn),
            });
        }
        out.push(parts.join(" · "));
    }
    if let Some(me) = me.and_then(|me| view.player(me)) {
        let list = |players: &[u16]| {
            if players.is_empty() {
                "nobody".to_owned()
            } else {
                players
                    .iter()
                    .map(|&p| {
                        let seat = view
                            .player(p)
                            .and_then(|v| v.seat)
                            .map_or_else(String::new, |s| format!("{s} "));
                        format!("{seat}{}", name(view, p))
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        out.push(format!("You may attack: {}", list(&me.may_attack)));
        out.push(format!("You may target: {}", list(&me.may_target)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draw::fit;

    #[test]
    fn numbers_fit_their_columns() {
        assert_eq!(short_number(20, 4), "20");
        assert_eq!(short_number(1000, 3), "1k");
        assert_eq!(short_number(-5000, 3), "-5k");
        assert_eq!(short_number(123_456, 2), "++");
        assert_eq!(fit("Bartholomew", 8), "Bartholo");
        assert_eq!(fit("Ann", 5), "Ann  ");
    }

    #[test]
    fn under_cr807_turns_are_named_as_numbered_markers() {
        let mut view = TableView::new(
            grand_melee_protocol::TableId::nil(),
            "t",
            grand_melee_protocol::Settings::default(),
        );
        assert_eq!(
            (turn_number(&view, 0), turn_title(&view, 2)),
            (0, "Turn 2".into())
        );
        view.settings.rules = grand_melee_protocol::RuleSet::Cr807;
        assert_eq!(
            (turn_number(&view, 0), turn_title(&view, 2)),
            (1, "Marker 3".into())
        );
    }
}

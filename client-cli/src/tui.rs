//! Interactive mode: a full-screen terminal UI that fits 80×24 with 40 seats.
//!
//! ```text
//!  Friday melee · playing · 39/40 alive · R=2 · 5/6 turns running · seq 98 · 1 watching
//!  Waiting for Player37-Long to finish
//!  You, seat 37 · 20 life · 0 poison · attack: nobody · target: 5 players (»)
//!  0 Player11  17 1p ○    1┃ 14 Player01  20 0p ●    3┃ 28 Player23  20 0p ● ▶5b
//!  1 Player37  20 0p ● ▶1c   15 Player28  20 0p ● ▶3b   29 Player10  20 0p ●    5┃
//!  …
//!  4 Player34 OUT 0p ●       18 Player04  20 0p ●       37@Player16  20 0p ● …0
//! ─ Log · PgUp/PgDn/Home scroll ───────────────────────────────────────────────────
//! #97 Player25 attacked Player21 for 3 and 1 poison
//! #98 Player21 is at 17 life
//!  ✖ end: you are not taking a turn (not_your_turn)
//! >                                            help · Tab completes · Ctrl-C quits
//! ```
//!
//! The first row names the table, its stage and the game's facts; the second is the player's
//! situation; the third his own line; in the middle the game's [`Panel`] (Grand Melee's ring:
//! `games/grand_melee/panel.rs`), with the log (and the chat) beside or under it. Below the
//! size the table needs, the UI says "window too small (need W×H)".
//!
//! The log is wrapped here, row by row, so the newest line is always on screen and PgUp/PgDn
//! (Home/End) reach every line. `help`, `status` and the game's standings open as overlays closed
//! with Esc; `concede` (and `leave`) ask for a `y` first.

use std::cell::Cell;
use std::collections::VecDeque;
use std::io;

use grand_melee_protocol::{ErrorCode, Event, StageName};
use ratatui::Frame;
use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use unicode_width::UnicodeWidthStr;

use crate::command::{self, complete};
use crate::describe;
use crate::draw::{fit, title_row, wrap};
/// How a Grand Melee turn is numbered for people (its panel's; here for the tests' path).
pub use crate::games::grand_melee::panel::turn_number;
use crate::games::{self, Panel, Urgency};
use crate::safe::{guard, printable};
use crate::session::{Action, Frontend, Input, Note, State};

/// Lines of log and chat kept.
const KEEP: usize = 1000;

/// What a line of the log is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// An event of the table.
    Event,
    /// A chat line (in the log only on narrow terminals; wide ones have a chat panel).
    Chat,
    /// Something the client says (connected, refused, …).
    Info,
}

/// A line of the log with its color.
#[derive(Debug, Clone)]
struct LogLine {
    text: String,
    style: Style,
    kind: Kind,
    /// The event's number, for lines of events (past events rebuilt after a resume are put
    /// back in order by it).
    seq: Option<u64>,
}

/// A window over the table, closed with Esc.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Overlay {
    /// The commands and keys, in reading order.
    Help,
    /// Every seat and the player's situation, in words.
    Status,
    /// The final places and mana points.
    Standings,
    /// A command that cannot be undone, waiting for `y`.
    Confirm(String),
}

/// What the UI shows besides the table: the log, the chat, the overlays and the command line.
#[derive(Debug, Default)]
pub struct Screen {
    log: VecDeque<LogLine>,
    /// The command being typed.
    pub input: String,
    message: Option<(bool, String)>,
    history: Vec<String>,
    history_pos: Option<usize>,
    /// Rows of the log scrolled back from its newest row.
    scroll: usize,
    /// The log's width, height and furthest scroll as last drawn, and whether it showed the
    /// chat.
    log_area: Cell<(usize, usize, usize, bool)>,
    /// The overlay on top of the table, if any.
    pub overlay: Option<Overlay>,
    overlay_scroll: usize,
    overlay_max: Cell<usize>,
    /// Replay mode: the line shown in place of the player's situation (the step and its
    /// event); the command line then lists the stepping keys instead of taking commands.
    pub replay: Option<String>,
}

/// The table's commands that cannot be undone, asked for twice (the game adds its own:
/// [`games::confirm`]).
const CONFIRM: &[(&str, &str)] = &[(
    "leave",
    "Leave? You give up your seat (in a game it is kept, as if you had quit).",
)];

/// The question asked before the command whose first word is `first`, if it cannot be undone.
fn confirmation(state: &State, first: &str) -> Option<&'static str> {
    CONFIRM
        .iter()
        .chain(games::confirm(games::kind(state.view.as_ref())))
        .find(|(word, _)| first.eq_ignore_ascii_case(word))
        .map(|(_, question)| *question)
}

impl Screen {
    /// An empty screen.
    pub fn new() -> Self {
        Self::default()
    }

    fn push(&mut self, line: LogLine) {
        if self.log.len() == KEEP {
            self.log.pop_front();
        }
        // Scrolled back: the rows on screen stay where they are.
        let (width, _, _, with_chat) = self.log_area.get();
        if self.scroll > 0 && width > 0 && (with_chat || line.kind != Kind::Chat) {
            self.scroll += wrap(&guard(&line.text), width).len();
        }
        self.log.push_back(line);
    }

    fn log(&mut self, text: impl Into<String>, style: Style) {
        self.push(LogLine {
            text: text.into(),
            style,
            kind: Kind::Info,
            seq: None,
        });
    }

    /// The log's lines, oldest first (for tests).
    pub fn log_lines(&self) -> Vec<String> {
        self.log.iter().map(|l| l.text.clone()).collect()
    }

    /// The message line, if any: whether it reports a problem, and its text.
    pub fn message(&self) -> Option<&(bool, String)> {
        self.message.as_ref()
    }

    fn event_line(state: &State, seq: u64, event: &Event, sentence: &str) -> LogLine {
        let dim = Style::default().fg(Color::DarkGray);
        if let Event::Chat { name, text, .. } = event {
            return LogLine {
                text: format!("{}: {}", printable(name), printable(text)),
                style: Style::default().fg(Color::Cyan),
                kind: Kind::Chat,
                seq: Some(seq),
            };
        }
        let style = match event {
            Event::GameOver { .. } => Style::default().fg(Color::Yellow),
            _ if games::panel(games::kind(state.view.as_ref()))
                .is_some_and(|p| p.milestone(event)) =>
            {
                Style::default().fg(Color::Yellow)
            }
            Event::ConnectionChanged { .. } | Event::SpectatorsChanged { .. } => dim,
            _ => Style::default(),
        };
        LogLine {
            text: format!("#{seq} {sentence}"),
            style,
            kind: Kind::Event,
            seq: Some(seq),
        }
    }

    /// Records a note (what the UI should tell the player).
    pub fn note(&mut self, state: &State, note: Note) {
        let dim = Style::default().fg(Color::DarkGray);
        let bad = Style::default().fg(Color::Red);
        match note {
            Note::Connected => self.log(format!("Connected to {}", state.server), dim),
            Note::Seated { resumed } => {
                let text = if resumed {
                    "Back in your seat"
                } else {
                    "Seated; your seat token is saved"
                };
                self.log(text, Style::default().fg(Color::Green));
                // A reconnection answers the earlier "disconnected".
                if self.message.as_ref().is_some_and(|(bad, _)| *bad) {
                    self.message = Some((false, format!("✓ {text}")));
                }
            }
            Note::Watching => {
                self.log("Watching as a spectator", dim);
                if self.message.as_ref().is_some_and(|(bad, _)| *bad) {
                    self.message = Some((false, "✓ watching again".into()));
                }
            }
            Note::Snapshot | Note::Applied => {}
            Note::Event {
                seq,
                event,
                sentence: Some(sentence),
                ..
            } => self.push(Self::event_line(state, seq, &event, &sentence)),
            // Left out of the log (a connection's drop and return).
            Note::Event { sentence: None, .. } | Note::Past { sentence: None, .. } => {}
            Note::Past {
                seq,
                event,
                sentence: Some(sentence),
            } => {
                // Before every line of a later event, after everything else.
                let line = Self::event_line(state, seq, &event, &sentence);
                let at = self
                    .log
                    .iter()
                    .position(|l| l.seq.is_some_and(|s| s >= seq))
                    .unwrap_or(self.log.len());
                if self.log.get(at).and_then(|l| l.seq) == Some(seq) {
                    return;
                }
                if self.log.len() == KEEP {
                    if at == 0 {
                        return;
                    }
                    self.log.pop_front();
                    self.log.insert(at - 1, line);
                } else {
                    self.log.insert(at, line);
                }
            }
            Note::Ack { command, .. } => {
                self.message = Some((false, format!("✓ {command}")));
            }
            Note::Rejected {
                code,
                command,
                message,
            } => {
                let hint = state
                    .view
                    .as_ref()
                    .and_then(|view| games::refusal_hint(games::kind(Some(view)), code, view));
                let text = rejection(code, &command, &message, hint.as_deref());
                self.log(text.clone(), bad);
                self.message = Some((true, text));
            }
            Note::Problem { kind, message } => {
                let text = format!("✖ {kind}: {message}");
                self.message = Some((true, text));
            }
            Note::Disconnected { reason } => {
                self.log(format!("Disconnected: {reason}"), bad);
                self.message = Some((true, format!("✖ disconnected: {reason}")));
            }
            Note::Reconnecting { delay } => {
                self.log(format!("Reconnecting in {:.1}s…", delay.as_secs_f64()), dim);
            }
            Note::Help => self.open(Overlay::Help),
            Note::Status => self.open(Overlay::Status),
            Note::Left => self.log("You left the table", dim),
        }
    }

    /// Opens an overlay at its top.
    pub fn open(&mut self, overlay: Overlay) {
        self.overlay = Some(overlay);
        self.overlay_scroll = 0;
    }

    /// Handles a key; returns what the session should do.
    pub fn key(&mut self, state: &State, key: KeyEvent) -> Option<Action> {
        if key.kind != KeyEventKind::Press {
            return None;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && matches!(key.code, KeyCode::Char('c' | 'd')) {
            return Some(Action::Quit);
        }
        if let Some(overlay) = self.overlay.clone() {
            if let Overlay::Confirm(line) = overlay {
                self.overlay = None;
                if matches!(key.code, KeyCode::Char('y' | 'Y')) {
                    return Some(Action::Line(line));
                }
                self.message = Some((false, format!("not done: {line}")));
                return None;
            }
            let page = 10;
            match key.code {
                KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q') => self.overlay = None,
                KeyCode::Up => self.overlay_scroll = self.overlay_scroll.saturating_sub(1),
                KeyCode::Down => {
                    self.overlay_scroll = (self.overlay_scroll + 1).min(self.overlay_max.get());
                }
                KeyCode::PageUp => self.overlay_scroll = self.overlay_scroll.saturating_sub(page),
                KeyCode::PageDown => {
                    self.overlay_scroll = (self.overlay_scroll + page).min(self.overlay_max.get());
                }
                KeyCode::Home => self.overlay_scroll = 0,
                KeyCode::End => self.overlay_scroll = self.overlay_max.get(),
                // Typing goes on under the overlay.
                _ => {
                    self.overlay = None;
                    return self.key(state, key);
                }
            }
            return None;
        }
        match key.code {
            KeyCode::Char('u') if ctrl => self.input.clear(),
            KeyCode::Char('l') if ctrl => self.scroll = 0,
            KeyCode::Char(c) if !ctrl => self.input.push(c),
            KeyCode::Backspace => {
                self.input.pop();
            }
            KeyCode::Esc => self.input.clear(),
            KeyCode::Tab => {
                if let Some(done) = complete(&self.input, state.view.as_ref()) {
                    self.input = done;
                }
            }
            KeyCode::Up => {
                let pos = match self.history_pos {
                    None => self.history.len().checked_sub(1),
                    Some(p) => Some(p.saturating_sub(1)),
                };
                if let Some(p) = pos {
                    self.history_pos = Some(p);
                    self.input = self.history[p].clone();
                }
            }
            KeyCode::Down => match self.history_pos {
                Some(p) if p + 1 < self.history.len() => {
                    self.history_pos = Some(p + 1);
                    self.input = self.history[p + 1].clone();
                }
                _ => {
                    self.history_pos = None;
                    self.input.clear();
                }
            },
            KeyCode::PageUp => {
                let (_, height, max, _) = self.log_area.get();
                self.scroll = (self.scroll + height.saturating_sub(1).max(1)).min(max);
            }
            KeyCode::PageDown => {
                let (_, height, _, _) = self.log_area.get();
                self.scroll = self.scroll.saturating_sub(height.saturating_sub(1).max(1));
            }
            KeyCode::Home => self.scroll = self.log_area.get().2,
            KeyCode::End => self.scroll = 0,
            KeyCode::Enter => {
                let line = std::mem::take(&mut self.input);
                self.history_pos = None;
                if line.trim().is_empty() {
                    return None;
                }
                if self.history.last() != Some(&line) {
                    self.history.push(line.clone());
                }
                self.message = None;
                let first = line.split_whitespace().next().unwrap_or("");
                if confirmation(state, first).is_some() {
                    self.open(Overlay::Confirm(line));
                    return None;
                }
                return Some(Action::Line(line));
            }
            _ => {}
        }
        None
    }
}

fn rejection(code: ErrorCode, command: &str, message: &str, hint: Option<&str>) -> String {
    // The server's own words when it says more than the code's standard description (a
    // `bad_settings` names the setting); the game's when it can say what to do instead (where
    // a refused card may go), which the message row shows before the code.
    let why = if let Some(hint) = hint {
        hint
    } else if message.is_empty() || message == code.description() {
        code.description()
    } else {
        message
    };
    if command.is_empty() {
        format!("✖ {}: {}", code.name(), printable(why))
    } else {
        format!("✖ {command}: {} ({})", printable(why), code.name())
    }
}

/// The command line of the replay view.
const REPLAY_KEYS: &str = "→/n next · ←/p back · PgDn/PgUp 10 events · Home/End start/end · q quit";

/// Rows above the game's panel: the table, the situation, the player.
const HEADER: u16 = 3;
/// Rows below: the message and the command line.
const FOOTER: u16 = 2;
/// The fewest rows of log (and its title) worth showing.
const MIN_LOG: u16 = 4;
/// Terminals at least this wide get the game's panel on the left, log and chat on the right.
const WIDE: u16 = 110;
/// The narrowest the UI gets.
const MIN_WIDTH: u16 = 40;

/// The size the UI needs for a table of `seats` seats with the game's `panel` (at its
/// narrowest) in the middle.
pub fn needed_size(panel: Option<&dyn Panel>, seats: usize) -> (u16, u16) {
    let (width, rows) = panel.map_or((0, 0), |p| p.min_size(seats));
    (
        u16::try_from(width.max(usize::from(MIN_WIDTH))).unwrap_or(u16::MAX),
        HEADER + FOOTER + MIN_LOG + u16::try_from(rows).unwrap_or(u16::MAX),
    )
}

/// Whether the UI fits a `width`×`height` terminal for `seats` seats with the game's `panel`.
fn fits(panel: Option<&dyn Panel>, seats: usize, width: u16, height: u16) -> bool {
    if width < MIN_WIDTH {
        return false;
    }
    let Some(panel) = panel else {
        return usize::from(height) >= usize::from(HEADER + FOOTER + MIN_LOG);
    };
    if width >= WIDE {
        // The panel gets the left part of the middle, all of its height.
        let left = usize::from(width) * 58 / 100;
        let rows = panel.rows(seats, left, false);
        return usize::from(height) > usize::from(HEADER + FOOTER) + rows;
    }
    panel.fits_width(usize::from(width))
        && usize::from(height)
            >= usize::from(HEADER + FOOTER + MIN_LOG) + panel.rows(seats, usize::from(width), false)
}

/// Draws the whole UI.
pub fn render(frame: &mut Frame<'_>, screen: &Screen, state: &State) {
    let area = frame.area();
    let seats = state.view.as_ref().map_or(0, |v| v.players.len());
    let panel = games::panel(games::kind(state.view.as_ref()));
    if !fits(panel, seats, area.width, area.height) {
        render_too_small(frame, area, panel, seats);
        return;
    }
    let header = Rect::new(area.x, area.y, area.width, HEADER);
    let middle = Rect::new(
        area.x,
        area.y + HEADER,
        area.width,
        area.height - HEADER - FOOTER,
    );
    let message = Rect::new(area.x, area.bottom() - 2, area.width, 1);
    let input = Rect::new(area.x, area.bottom() - 1, area.width, 1);
    render_header(frame, header, state, screen.replay.as_deref());
    if middle.width >= WIDE {
        // The game's panel on the left, log and chat on the right.
        let board_width = middle.width * 58 / 100;
        let board = Rect::new(middle.x, middle.y, board_width, middle.height);
        let side = Rect::new(
            middle.x + board_width + 1,
            middle.y,
            middle.width - board_width - 1,
            middle.height,
        );
        let log_height = (side.height * 65 / 100).max(MIN_LOG);
        let log = Rect::new(side.x, side.y, side.width, log_height);
        let chat = Rect::new(
            side.x,
            side.y + log_height,
            side.width,
            side.height - log_height,
        );
        render_panel(frame, board, state, panel, true);
        render_log(frame, log, screen, false);
        render_chat(frame, chat, screen);
    } else {
        // The game's panel across the screen, as few rows as it can; the log (with the chat)
        // under it. Its roomier form when that leaves the log 8 rows.
        let rows = |full: bool| {
            let rows = panel.map_or(0, |p| p.rows(seats, usize::from(middle.width), full));
            u16::try_from(rows).unwrap_or(u16::MAX)
        };
        let full_rows = rows(true);
        let board_rows = if middle.height.saturating_sub(full_rows + 1) >= 8 {
            full_rows
        } else {
            rows(false)
        };
        let spare = middle.height.saturating_sub(board_rows + MIN_LOG);
        // A title over the panel when there is a row to spare for it.
        let titled = spare > 2;
        let board_height = board_rows + u16::from(titled);
        let board = Rect::new(middle.x, middle.y, middle.width, board_height);
        let log = Rect::new(
            middle.x,
            middle.y + board_height,
            middle.width,
            middle.height - board_height,
        );
        render_panel(frame, board, state, panel, titled);
        render_log(frame, log, screen, true);
    }
    if let Some((bad, text)) = &screen.message {
        let color = if *bad { Color::Red } else { Color::Green };
        frame.render_widget(
            Paragraph::new(Line::styled(
                fit(&format!(" {}", guard(text)), usize::from(message.width)),
                Style::default().fg(color),
            )),
            message,
        );
    }
    if screen.replay.is_some() {
        frame.render_widget(
            Paragraph::new(Line::styled(
                fit(REPLAY_KEYS, usize::from(input.width)),
                Style::default().fg(Color::DarkGray),
            )),
            input,
        );
    } else {
        render_input(frame, input, screen);
    }
    if let Some(overlay) = &screen.overlay {
        render_overlay(frame, area, screen, overlay, state);
    }
}

/// The game's panel, if the table's game has one here and a snapshot has arrived.
fn render_panel(
    frame: &mut Frame<'_>,
    area: Rect,
    state: &State,
    panel: Option<&dyn Panel>,
    titled: bool,
) {
    if let (Some(panel), Some(view)) = (panel, &state.view) {
        panel.render(frame, area, view, state.me, titled);
    }
}

fn render_too_small(frame: &mut Frame<'_>, area: Rect, panel: Option<&dyn Panel>, seats: usize) {
    let (width, height) = needed_size(panel, seats);
    let text = format!(
        "window too small (need {width}×{height}, have {}×{}) — make it bigger, or Ctrl-C to quit",
        area.width, area.height
    );
    let lines: Vec<Line<'_>> = wrap(&text, usize::from(area.width))
        .into_iter()
        .map(|row| Line::styled(row, Style::default().fg(Color::Yellow)))
        .collect();
    frame.render_widget(Paragraph::new(lines), area);
}

fn render_input(frame: &mut Frame<'_>, area: Rect, screen: &Screen) {
    const HINT: &str = " help · Tab completes · Ctrl-C quits";
    let width = usize::from(area.width);
    // What the player typed, or a name that Tab completed: shown escaped like everything else.
    let typed = guard(&screen.input);
    let prompt = format!("> {typed}");
    let mut shown = prompt.clone();
    // A long line shows its end, where the cursor is.
    while shown.width() >= width && !shown.is_empty() {
        shown.remove(2.min(shown.len().saturating_sub(1)));
    }
    let mut spans = vec![Span::styled(
        shown.clone(),
        Style::default().add_modifier(Modifier::BOLD),
    )];
    if shown.width() + HINT.width() < width {
        spans.push(Span::raw(" ".repeat(width - shown.width() - HINT.width())));
        spans.push(Span::styled(HINT, Style::default().fg(Color::DarkGray)));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
    let cursor = u16::try_from(shown.width()).unwrap_or(u16::MAX);
    frame.set_cursor_position(Position::new(
        area.x
            .saturating_add(cursor)
            .min(area.right().saturating_sub(1)),
        area.y,
    ));
}

/// The rows of the log's lines that `keep` wants, wrapped to `width`, oldest first.
fn log_rows(screen: &Screen, width: usize, keep: impl Fn(Kind) -> bool) -> Vec<Line<'static>> {
    screen
        .log
        .iter()
        .filter(|l| keep(l.kind))
        .flat_map(|l| {
            wrap(&guard(&l.text), width)
                .into_iter()
                .map(|row| Line::styled(row, l.style))
        })
        .collect()
}

fn render_log(frame: &mut Frame<'_>, area: Rect, screen: &Screen, with_chat: bool) {
    if area.height < 2 {
        return;
    }
    let width = usize::from(area.width);
    let height = usize::from(area.height) - 1;
    let rows = log_rows(screen, width, |kind| with_chat || kind != Kind::Chat);
    let max = rows.len().saturating_sub(height);
    let scroll = screen.scroll.min(max);
    screen.log_area.set((width, height, max, with_chat));
    let title = if screen.replay.is_some() {
        "Log".to_owned()
    } else if scroll > 0 {
        format!("Log · {scroll} newer rows below: PgDn or End")
    } else if max > 0 {
        "Log · PgUp/PgDn/Home scroll".to_owned()
    } else {
        "Log".to_owned()
    };
    let end = rows.len() - scroll;
    let start = end.saturating_sub(height);
    let mut lines = vec![title_row(&title, width)];
    lines.extend(rows[start..end].iter().cloned());
    frame.render_widget(Paragraph::new(lines), area);
}

fn render_chat(frame: &mut Frame<'_>, area: Rect, screen: &Screen) {
    if area.height < 2 {
        return;
    }
    let width = usize::from(area.width);
    let height = usize::from(area.height) - 1;
    let rows = log_rows(screen, width, |kind| kind == Kind::Chat);
    let title = if screen.replay.is_some() {
        "Chat"
    } else {
        "Chat (say <text>)"
    };
    let mut lines = vec![title_row(title, width)];
    lines.extend(rows[rows.len().saturating_sub(height)..].iter().cloned());
    frame.render_widget(Paragraph::new(lines), area);
}

fn stage_words(stage: StageName) -> &'static str {
    match stage {
        StageName::Lobby => "lobby",
        StageName::Mulligan => "mulligans",
        StageName::Playing => "playing",
        StageName::Finished => "finished",
    }
}

fn render_header(frame: &mut Frame<'_>, area: Rect, state: &State, replay: Option<&str>) {
    let width = usize::from(area.width);
    let Some(view) = &state.view else {
        let text = if state.connected {
            "Waiting for the table…"
        } else {
            "Connecting…"
        };
        frame.render_widget(Paragraph::new(format!(" {text}")), area);
        return;
    };
    let panel = games::panel(games::kind(Some(view)));
    // A game with nothing to say yet (a climb not dealt) leaves no empty field between dots.
    let facts = panel
        .map(|p| p.header_facts(view))
        .filter(|facts| !facts.is_empty())
        .map_or_else(String::new, |facts| format!(" · {facts}"));
    let mut first = format!(
        " {}{} · {}{facts} · seq {}",
        printable(&view.name),
        if replay.is_some() { " — replay" } else { "" },
        stage_words(view.stage),
        view.seq
    );
    if view.spectators > 0 {
        first.push_str(&format!(" · {} watching", view.spectators));
    }
    if view.paused {
        first.push_str(" · PAUSED");
    }
    if view.adjourned {
        first.push_str(&format!(
            " · ADJOURNED (resume asks {}/{})",
            view.resume_asks.len(),
            view.resume_quorum()
        ));
    }
    if !state.connected {
        first.push_str(" · OFFLINE");
    }
    let host_called = state.me.is_some() && view.host == state.me && !view.calls.is_empty();
    if host_called && let Some(call) = view.calls.last() {
        // The host's alert, first on the line so a narrow window does not cut it: who called
        // and why (the newest call; `answer` closes them).
        let more = match view.calls.len() {
            1 => String::new(),
            n => format!(" (+{} more)", n - 1),
        };
        first = format!(
            " CALL from {}: {}{more} ·{first}",
            describe::name(view, call.player),
            printable(&call.reason)
        );
    }
    let first_style = if state.connected && !view.paused && !view.adjourned && !host_called {
        Style::default().add_modifier(Modifier::REVERSED)
    } else {
        Style::default()
            .fg(Color::Black)
            .bg(Color::Yellow)
            .add_modifier(Modifier::BOLD)
    };
    let situation = games::Situation::of(view, state.me);
    // The situation in the row's width, less the `▶▶ ` and ` ◀◀` around a call to act.
    let (urgency, text) = situation
        .as_ref()
        .map_or((Urgency::Calm, String::new()), |s| {
            let urgency = s.urgency();
            let room = width.saturating_sub(if urgency == Urgency::Act { 6 } else { 1 });
            (urgency, s.text_within(room))
        });
    let (second, second_style) = match replay {
        Some(text) => (
            format!(" {}", guard(text)),
            Style::default()
                .fg(Color::Cyan)
                .add_modifier(Modifier::BOLD),
        ),
        None => match urgency {
            Urgency::Act => (
                format!("▶▶ {text} ◀◀"),
                Style::default()
                    .fg(Color::Black)
                    .bg(Color::LightGreen)
                    .add_modifier(Modifier::BOLD),
            ),
            Urgency::Wait => (
                format!(" {text}"),
                Style::default()
                    .fg(Color::Yellow)
                    .add_modifier(Modifier::BOLD),
            ),
            Urgency::Calm => (
                format!(" {text}"),
                Style::default().add_modifier(Modifier::BOLD),
            ),
        },
    };
    let third = panel
        .and_then(|p| p.you_line(view, state.me, width))
        .unwrap_or_else(|| {
            format!(
                " {} · host: {}",
                if replay.is_some() {
                    "Replay"
                } else {
                    "Watching"
                },
                view.host
                    .map_or_else(|| "none".to_owned(), |h| describe::name(view, h))
            )
        });
    let lines = vec![
        Line::styled(fit(&first, width), first_style),
        Line::styled(fit(&second, width), second_style),
        Line::raw(fit(&third, width)),
    ];
    frame.render_widget(Paragraph::new(lines), area);
}

/// The widest a column of terms (commands, keys) gets in `help`: what they mean keeps the rest
/// of the width (at least 44 columns in an 80-column terminal's window), so it reads as
/// sentences instead of a narrow column of a few words a row.
const TERM_COLUMN: usize = 28;

/// `entries` (a term and its meaning) as rows of `width`: the terms in a column as wide as the
/// widest that fits [`TERM_COLUMN`], each meaning wrapped beside its term; a wider term has a
/// row of its own, its meaning under it in the same column.
fn term_rows(
    lines: &mut Vec<Line<'static>>,
    entries: &[(&str, &str)],
    width: usize,
    term_style: Style,
) {
    let limit = TERM_COLUMN.min(width / 2);
    let column = entries
        .iter()
        .map(|(term, _)| term.width())
        .filter(|&w| w <= limit)
        .max()
        .unwrap_or(0);
    let indent = " ".repeat(column + 2);
    for (term, meaning) in entries {
        let mut rows = wrap(meaning, width.saturating_sub(column + 2)).into_iter();
        if term.width() <= column {
            let pad = " ".repeat(column - term.width() + 2);
            lines.push(Line::from(vec![
                Span::styled(format!("{term}{pad}"), term_style),
                Span::raw(rows.next().unwrap_or_default()),
            ]));
        } else {
            for row in wrap(term, width) {
                lines.push(Line::styled(row, term_style));
            }
        }
        for row in rows {
            lines.push(Line::raw(format!("{indent}{row}")));
        }
    }
}

/// The overlay's title and rows.
fn overlay_lines(overlay: &Overlay, state: &State, width: usize) -> (String, Vec<Line<'static>>) {
    let dim = Style::default().fg(Color::DarkGray);
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let mut lines: Vec<Line<'static>> = Vec::new();
    let text = |lines: &mut Vec<Line<'static>>, s: String, style: Style| {
        for row in wrap(&s, width) {
            lines.push(Line::styled(row, style));
        }
    };
    let title = match overlay {
        Overlay::Help => {
            text(&mut lines, "Commands".into(), bold);
            let help = command::help(games::kind(state.view.as_ref()));
            term_rows(&mut lines, &help, width, bold);
            text(&mut lines, String::new(), dim);
            text(
                &mut lines,
                "A player is named by his name (a unique start is enough), his seat number as the ring shows it, #id, or me.".into(),
                Style::default(),
            );
            text(&mut lines, String::new(), dim);
            text(&mut lines, "Keys".into(), bold);
            let keys = [
                ("Tab", "complete a command, a name or a phase"),
                ("↑ ↓", "earlier commands"),
                ("PgUp PgDn Home End", "scroll the log"),
                (
                    "Esc",
                    "clear the command line, or close a window like this one",
                ),
                (
                    "Ctrl-C",
                    "quit; your seat is kept and `grand-melee resume` takes it back",
                ),
            ];
            term_rows(&mut lines, &keys, width, Style::default());
            text(&mut lines, String::new(), dim);
            if let Some(panel) = games::panel(games::kind(state.view.as_ref())) {
                let (title, legend) = panel.legend();
                text(&mut lines, title.into(), bold);
                for part in legend.split(" · ") {
                    text(&mut lines, format!("  {part}"), Style::default());
                }
            }
            " Help — Esc closes, ↑↓ PgUp PgDn scroll ".to_owned()
        }
        Overlay::Status => {
            for (line, style) in status_words(state) {
                text(&mut lines, line, style);
            }
            " Status — Esc closes, ↑↓ PgUp PgDn scroll ".to_owned()
        }
        Overlay::Standings => {
            if let Some(view) = &state.view {
                text(
                    &mut lines,
                    "Place  Player                            Mana points".into(),
                    bold,
                );
                for s in &view.standings {
                    let me = if state.me == Some(s.player) {
                        "  ← you"
                    } else {
                        ""
                    };
                    text(
                        &mut lines,
                        format!(
                            "{:>4}.  {}{:>6}{me}",
                            s.place,
                            fit(&describe::name(view, s.player), 32),
                            s.mana_points
                        ),
                        if s.place == 1 { bold } else { Style::default() },
                    );
                }
                text(&mut lines, String::new(), dim);
                text(
                    &mut lines,
                    format!(
                        "The replay stays on the server: grand-melee replay watch {}",
                        view.table
                    ),
                    dim,
                );
            }
            " Game over — standings (Esc closes) ".to_owned()
        }
        Overlay::Confirm(line) => {
            let first = line.split_whitespace().next().unwrap_or("").to_lowercase();
            let question = confirmation(state, &first).unwrap_or("Are you sure?");
            text(&mut lines, question.to_owned(), bold);
            text(&mut lines, String::new(), dim);
            text(
                &mut lines,
                "Press y to do it; any other key keeps things as they are.".into(),
                Style::default(),
            );
            format!(" {} ", guard(line))
        }
    };
    (title, lines)
}

/// `status` for people: the table, then the game's lines for its seats (and the player's range),
/// then his situation.
pub fn status_words(state: &State) -> Vec<(String, Style)> {
    let plain = Style::default();
    let Some(view) = &state.view else {
        return vec![("No copy of the table yet.".into(), plain)];
    };
    let mut out = vec![(
        format!(
            "{}: {}{}, {} watching, event {}{}",
            printable(&view.name),
            stage_words(view.stage),
            games::panel(games::kind(Some(view)))
                .map_or_else(String::new, |p| format!(", {}", p.status_facts(view))),
            view.spectators,
            view.seq,
            if view.adjourned {
                ", ADJOURNED"
            } else if view.paused {
                ", PAUSED"
            } else {
                ""
            }
        ),
        Style::default().add_modifier(Modifier::BOLD),
    )];
    out.push((
        format!(
            "Host: {}",
            view.host
                .map_or_else(|| "nobody".to_owned(), |h| describe::name(view, h))
        ),
        plain,
    ));
    let seats = games::panel(games::kind(Some(view)))
        .map_or_else(Vec::new, |panel| panel.status_lines(view, state.me));
    for line in seats {
        out.push((line, plain));
    }
    if let Some(situation) = state.situation() {
        out.push((
            situation.text(),
            Style::default().add_modifier(Modifier::BOLD),
        ));
    }
    out
}

fn render_overlay(
    frame: &mut Frame<'_>,
    area: Rect,
    screen: &Screen,
    overlay: &Overlay,
    state: &State,
) {
    let width = area.width.saturating_sub(4).min(100);
    let inner_width = usize::from(width.saturating_sub(2));
    let (title, lines) = overlay_lines(overlay, state, inner_width);
    let wanted = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX);
    let height = wanted.min(area.height.saturating_sub(2)).max(3);
    let at = Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height - height) / 2,
        width,
        height,
    );
    let visible = usize::from(height - 2);
    let max = lines.len().saturating_sub(visible);
    screen.overlay_max.set(max);
    let scroll = screen.overlay_scroll.min(max);
    let mut block = Block::bordered()
        .title(title)
        .border_style(Style::default().fg(Color::Cyan));
    if max > 0 {
        block = block.title_bottom(format!(
            " {}–{} of {} ",
            scroll + 1,
            scroll + visible,
            lines.len()
        ));
    }
    frame.render_widget(Clear, at);
    frame.render_widget(
        Paragraph::new(lines[scroll..(scroll + visible).min(lines.len())].to_vec()).block(block),
        at,
    );
}

/// Rings the terminal's bell.
pub type Bell = Box<dyn FnMut() + Send>;

/// The interactive front end: the UI drawn on a terminal.
pub struct Tui<B: Backend> {
    terminal: Terminal<B>,
    /// The log, chat and command line.
    pub screen: Screen,
    bell: Bell,
    bells: usize,
    /// Whether the last situation called for the player (his turn, his mulligan decision).
    called: bool,
    /// The open calls for the host last seen while the player was host.
    host_calls: Vec<grand_melee_protocol::HostCall>,
}

impl<B: Backend> std::fmt::Debug for Tui<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tui")
            .field("screen", &self.screen)
            .field("bells", &self.bells)
            .finish_non_exhaustive()
    }
}

impl<B: Backend> Tui<B> {
    /// A UI drawing on `terminal`, with a silent bell (tests count [`Tui::bells`]).
    pub fn new(terminal: Terminal<B>) -> Self {
        Self::with_bell(terminal, Box::new(|| {}))
    }

    /// A UI drawing on `terminal` that calls `bell` when the player's turn or mulligan decision
    /// comes up.
    pub fn with_bell(terminal: Terminal<B>, bell: Bell) -> Self {
        Self {
            terminal,
            screen: Screen::new(),
            bell,
            bells: 0,
            called: false,
            host_calls: Vec::new(),
        }
    }

    /// How many times the bell has rung.
    pub fn bells(&self) -> usize {
        self.bells
    }

    /// Redraws the whole screen.
    pub fn draw(&mut self, state: &State) -> io::Result<()> {
        let screen = &self.screen;
        self.terminal
            .draw(|frame| render(frame, screen, state))
            .map_err(|e| io::Error::other(e.to_string()))?;
        Ok(())
    }

    /// The terminal (for tests on a test backend).
    pub fn terminal(&self) -> &Terminal<B> {
        &self.terminal
    }

    /// Rings the bell when the player's turn or his mulligan decision has just come up.
    fn call_if_needed(&mut self, state: &State) {
        let called = state
            .situation()
            .is_some_and(|s| s.urgency() == Urgency::Act);
        // The host is called too when a player calls him (a call he has not seen yet).
        let calls = state
            .view
            .as_ref()
            .filter(|v| v.host.is_some() && v.host == state.me)
            .map(|v| v.calls.clone())
            .unwrap_or_default();
        let new_call = calls.iter().any(|c| !self.host_calls.contains(c));
        if (called && !self.called) || new_call {
            self.bells += 1;
            (self.bell)();
        }
        self.called = called;
        self.host_calls = calls;
    }
}

impl<B: Backend + Send> Frontend for Tui<B> {
    fn note(&mut self, state: &State, note: Note) -> io::Result<()> {
        let game_over = matches!(
            note,
            Note::Event {
                event: Event::GameOver { .. },
                ..
            }
        );
        let settled = matches!(note, Note::Applied | Note::Snapshot);
        self.screen.note(state, note);
        if game_over {
            self.screen.open(Overlay::Standings);
        }
        if settled {
            self.call_if_needed(state);
        }
        self.draw(state)
    }

    fn input(&mut self, state: &State, input: Input) -> io::Result<Option<Action>> {
        let action = match input {
            Input::Key(key) => self.screen.key(state, key),
            Input::Line(line) => Some(Action::Line(line)),
            Input::Resize => {
                self.terminal
                    .autoresize()
                    .map_err(|e| io::Error::other(e.to_string()))?;
                None
            }
            Input::Eof => Some(Action::Quit),
        };
        self.draw(state)?;
        Ok(action)
    }

    fn wants_history(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_breaks_at_spaces_and_keeps_every_character() {
        let text = "Disconnected: the connection dropped hard";
        let rows = wrap(text, 12);
        assert!(rows.iter().all(|r| r.width() <= 12), "{rows:?}");
        assert_eq!(
            rows,
            ["Disconnected", ": the", "connection", "dropped hard"]
        );
        let rows = wrap(text, 20);
        assert_eq!(rows, ["Disconnected: the", "connection dropped", "hard"]);
        assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap("", 10), [""]);
        assert_eq!(wrap("漢字漢字", 5), ["漢字", "漢字"]);
    }

    #[test]
    fn the_needed_size_grows_with_the_table() {
        let gm: Option<&dyn Panel> = Some(&crate::games::grand_melee::GrandMelee);
        assert_eq!(needed_size(gm, 40), (80, 23));
        assert_eq!(needed_size(gm, 28), (80, 19));
        assert!(fits(gm, 40, 80, 24));
        assert!(!fits(gm, 28, 50, 15));
        assert!(fits(gm, 6, 50, 15));
    }
}

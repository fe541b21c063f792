//! Drawing helpers shared by the full-screen UI's frame and the games' panels: text wrapped
//! or fitted to a width, and title rows.

use ratatui::style::{Color, Style};
use ratatui::text::Line;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// `text` cut into rows at most `width` columns wide, at spaces where it can be.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(2);
    let mut rows = Vec::new();
    let mut row = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        while used + w > width && !row.is_empty() {
            match row.rfind(' ').filter(|&i| i > 0) {
                Some(i) => {
                    let rest = row[i + 1..].to_owned();
                    row.truncate(i);
                    rows.push(std::mem::replace(&mut row, rest));
                    used = row.width();
                    if used + w > width {
                        rows.push(std::mem::take(&mut row));
                        used = 0;
                    }
                }
                None => {
                    rows.push(std::mem::take(&mut row));
                    used = 0;
                }
            }
        }
        if c == ' ' && row.is_empty() && !rows.is_empty() {
            continue;
        }
        row.push(c);
        used += w;
    }
    if !row.is_empty() || rows.is_empty() {
        rows.push(row);
    }
    rows
}

/// `text` cut to `width` columns (no wrapping), padded with spaces to exactly `width`.
pub fn fit(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > width {
            break;
        }
        out.push(c);
        used += w;
    }
    out.extend(std::iter::repeat_n(' ', width - used));
    out
}

/// A title row: `─ Log · PgUp/PgDn ─────`.
pub fn title_row(title: &str, width: usize) -> Line<'static> {
    let text = format!("─ {title} ");
    let rest = width.saturating_sub(text.width());
    Line::styled(
        fit(&format!("{text}{}", "─".repeat(rest)), width),
        Style::default().fg(Color::DarkGray),
    )
}

//! Magic Tech, as the terminal client shows and plays it: its words for its events
//! ([`words`]), the player's situation ([`situation`]), its typed commands ([`commands`]) and
//! its panel in the full-screen UI and `status` ([`panel`]: the two-sided board).

pub mod commands;
pub mod panel;
pub mod situation;
pub mod words;

pub use situation::Situation;

use grand_melee_protocol::{Event, PlayerId, TableView};
use ratatui::Frame;
use ratatui::layout::Rect;

use crate::games::Panel;

/// Magic Tech, for the frame.
#[derive(Debug, Clone, Copy)]
pub struct MagicTech;

impl Panel for MagicTech {
    fn min_size(&self, _seats: usize) -> (usize, usize) {
        panel::min_size()
    }

    fn fits_width(&self, width: usize) -> bool {
        panel::fits_width(width)
    }

    fn rows(&self, _seats: usize, _width: usize, full: bool) -> usize {
        panel::rows(full)
    }

    fn render(
        &self,
        frame: &mut Frame<'_>,
        area: Rect,
        view: &TableView,
        me: Option<PlayerId>,
        titled: bool,
    ) {
        panel::render(frame, area, view, me, titled);
    }

    fn header_facts(&self, view: &TableView) -> String {
        panel::header_facts(view)
    }

    fn status_facts(&self, view: &TableView) -> String {
        let facts = panel::header_facts(view);
        if facts.is_empty() {
            format!("{} players", view.players.len())
        } else {
            facts
        }
    }

    fn you_line(&self, view: &TableView, me: Option<PlayerId>, width: usize) -> Option<String> {
        panel::you_line(view, me, width)
    }

    fn legend(&self) -> (&'static str, &'static str) {
        ("The board", panel::LEGEND)
    }

    fn status_lines(&self, view: &TableView, me: Option<PlayerId>) -> Vec<String> {
        panel::status_lines(view, me)
    }

    fn milestone(&self, event: &Event) -> bool {
        matches!(
            event,
            Event::MagicTechRanOut { .. } | Event::MagicTechDestroyed { .. }
        )
    }
}

#[cfg(test)]
mod tests;

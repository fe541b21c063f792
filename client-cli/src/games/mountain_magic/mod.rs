//! Mountain Magic, as the terminal client shows and plays it: its words for its events
//! ([`words`]), the climber's situation ([`situation`]), its typed commands ([`commands`]) and
//! its panel in the full-screen UI and `status` ([`panel`]: the mountain, the card to place
//! and where it may go, the discard pile, the path, the battle, the ending).

pub mod commands;
pub mod panel;
pub mod situation;
pub mod words;

pub use situation::Situation;
pub use words::wording;

use grand_melee_protocol::{Event, PlayerId, TableView};
use ratatui::Frame;
use ratatui::layout::Rect;

use crate::games::Panel;

/// Mountain Magic, for the frame.
#[derive(Debug, Clone, Copy)]
pub struct MountainMagic;

impl Panel for MountainMagic {
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
            "a climb".to_owned()
        } else {
            facts
        }
    }

    fn you_line(&self, view: &TableView, me: Option<PlayerId>, width: usize) -> Option<String> {
        panel::you_line(view, me, width)
    }

    fn legend(&self) -> (&'static str, &'static str) {
        ("The mountain", panel::LEGEND)
    }

    fn status_lines(&self, view: &TableView, me: Option<PlayerId>) -> Vec<String> {
        panel::status_lines(view, me)
    }

    fn milestone(&self, event: &Event) -> bool {
        matches!(
            event,
            Event::MountainMagicClimbFailed
                | Event::MountainMagicPathChosen { .. }
                | Event::MountainMagicEnded { .. }
        )
    }
}

#[cfg(test)]
mod tests;

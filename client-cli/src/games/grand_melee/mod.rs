//! Grand Melee, as the terminal client shows and plays it: its words for its events
//! ([`words`]), the player's situation ([`situation`]) and its typed commands ([`commands`]) and
//! its panel in the full-screen UI ([`panel`]: the ring); its seats in script mode's
//! `status` ([`status`]).

pub mod commands;
pub mod panel;
pub mod situation;
pub mod status;
pub mod words;

pub use situation::Situation;

use grand_melee_protocol::{Event, PlayerId, TableView};
use ratatui::Frame;
use ratatui::layout::Rect;

use crate::games::Panel;

/// Grand Melee, for the frame.
#[derive(Debug, Clone, Copy)]
pub struct GrandMelee;

impl Panel for GrandMelee {
    fn min_size(&self, seats: usize) -> (usize, usize) {
        (panel::min_width(seats), panel::min_rows(seats))
    }

    fn fits_width(&self, width: usize) -> bool {
        panel::fits_width(width)
    }

    fn rows(&self, seats: usize, width: usize, full: bool) -> usize {
        panel::rows(seats, width, full)
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
        format!(
            "{} of {} players alive, spell range {}",
            view.living(),
            view.players.len(),
            view.settings.spell_range
        )
    }

    fn you_line(&self, view: &TableView, me: Option<PlayerId>, width: usize) -> Option<String> {
        panel::you_line(view, me, width)
    }

    fn legend(&self) -> (&'static str, &'static str) {
        ("The ring", panel::LEGEND)
    }

    fn status_lines(&self, view: &TableView, me: Option<PlayerId>) -> Vec<String> {
        panel::status_lines(view, me)
    }

    fn milestone(&self, event: &Event) -> bool {
        matches!(event, Event::Eliminated { .. })
    }
}

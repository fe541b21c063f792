//! Grand Melee behind the game seam: the rules core's [`Table`] is the game's state, and this is
//! what the shell asks of it ([`Game`]).

use crate::command::{Actor, Command};
use crate::dice::DiceSecret;
use crate::error::{ApplyError, ErrorCode};
use crate::event::Event;
use crate::game::{Game, GameKind};
use crate::league::MemberId;
use crate::shell::{SessionFacts, Stage};
use crate::types::{PlayerId, TableId, TurnId};
use crate::view::{Settings, TableView};

use super::config::TableConfig;
use super::table::{Table, TurnState};

impl Game for Table {
    const KIND: GameKind = GameKind::GrandMelee;

    fn create(settings: &Settings, secret: DiceSecret) -> Result<Self, ErrorCode> {
        if settings.game != GameKind::GrandMelee || settings.mountain_magic.is_some() {
            return Err(ErrorCode::BadSettings);
        }
        let mut config =
            TableConfig::from_settings(settings, 0).map_err(|_| ErrorCode::BadSettings)?;
        config.secret = secret;
        Table::new(config).map_err(|_| ErrorCode::BadSettings)
    }

    fn handle(&mut self, actor: Actor, command: Command) -> Result<Vec<Event>, ErrorCode> {
        Table::handle(self, actor, command)
    }

    fn apply(&mut self, event: &Event) -> Result<(), &'static str> {
        Table::apply(self, event)
    }

    fn view(&self, table: TableId, name: &str, seq: u64, settings: &Settings) -> TableView {
        Table::view(self, table, name, seq, settings)
    }

    fn from_view(view: &TableView) -> Result<Self, ApplyError> {
        if view.settings.game != GameKind::GrandMelee {
            return Err(ApplyError::Invalid("not a Grand Melee table"));
        }
        Table::from_view(view)
    }

    fn facts(&self) -> &SessionFacts {
        Table::facts(self)
    }

    fn stage(&self) -> Stage {
        Table::stage(self)
    }

    fn name_of(&self, player: PlayerId) -> Option<&str> {
        self.lobby()
            .iter()
            .find(|(p, _)| *p == player)
            .map(|(_, name)| name.as_str())
            .or_else(|| self.player(player).map(|p| p.name.as_str()))
    }

    fn is_alive(&self, player: PlayerId) -> bool {
        match self.stage() {
            Stage::Lobby => self.lobby().iter().any(|(p, _)| *p == player),
            _ => self.player(player).is_some_and(|p| p.status.is_alive()),
        }
    }

    fn living(&self) -> usize {
        Table::living(self)
    }

    /// Both still have a position in the ring, at most the spell range apart.
    fn within_range(&self, a: PlayerId, b: PlayerId) -> bool {
        self.distance(a, b)
            .is_some_and(|d| d <= self.config().spell_range.get())
    }

    fn running(&self) -> Vec<(TurnId, PlayerId)> {
        self.turns()
            .iter()
            .filter(|t| matches!(t.state, TurnState::Running(_)))
            .map(|t| (t.id, self.players()[t.seat].id))
            .collect()
    }

    fn deciders(&self) -> Vec<PlayerId> {
        self.mulligan_deciders()
    }

    fn league_members(&self) -> Vec<MemberId> {
        Table::league_members(self).collect()
    }

    fn restarts_clock(event: &Event) -> Option<(TurnId, PlayerId)> {
        match event {
            Event::TurnKept { turn, player } => Some((*turn, *player)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_of_another_game_is_not_grand_melees() {
        let ours = Settings::default();
        assert!(<Table as Game>::create(&ours, DiceSecret::from_seed(1)).is_ok());
        let theirs = Settings {
            game: GameKind::MagicTech,
            seats: 2,
            ..Settings::default()
        };
        assert_eq!(
            <Table as Game>::create(&theirs, DiceSecret::from_seed(1)).err(),
            Some(ErrorCode::BadSettings)
        );
    }
}

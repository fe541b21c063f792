//! Saved seat tokens: one small file per (server, table) under the user's data directory, so
//! that `join` or `resume` after a crash puts the player back in his seat.
//!
//! Layout: `<dir>/seats/<server key>/<table id>`, holding `player=`, `name=` and `token=` lines.
//! The server key is the server's WebSocket URL with every character other than letters, digits,
//! `.` and `-` replaced by `_`. On Unix the files are readable by their owner only.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use grand_melee_protocol::league::{LeagueId, MemberToken};
use grand_melee_protocol::{OrganiserSecret, PlayerId, SeatToken, TableId};

/// The environment variable that overrides the data directory (as `--data-dir` does).
pub const DATA_DIR_ENV: &str = "GM_CLI_DATA_DIR";

/// A seat saved for one table on one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedSeat {
    /// The player's id at the table.
    pub player: PlayerId,
    /// The display name he joined with.
    pub name: String,
    /// The token that resumes the seat.
    pub token: SeatToken,
}

/// Where seat tokens are kept.
#[derive(Debug, Clone)]
pub struct TokenStore {
    dir: PathBuf,
}

impl TokenStore {
    /// A store rooted at `dir` (created on first save).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The default directory: `<user data dir>/grand-melee` (for instance
    /// `~/.local/share/grand-melee` on Linux), if the platform has one.
    pub fn default_dir() -> Option<PathBuf> {
        dirs::data_dir().map(|d| d.join("grand-melee"))
    }

    /// The store's root directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file holding the seat for `table` on `server`.
    pub fn path(&self, server: &str, table: TableId) -> PathBuf {
        self.dir
            .join("seats")
            .join(server_key(server))
            .join(table.to_string())
    }

    /// The saved seat, if any. A missing or unreadable file is no seat.
    pub fn load(&self, server: &str, table: TableId) -> Option<SavedSeat> {
        let text = fs::read_to_string(self.path(server, table)).ok()?;
        parse(&text)
    }

    /// Saves a seat, replacing any earlier one for the same server and table.
    pub fn save(&self, server: &str, table: TableId, seat: &SavedSeat) -> io::Result<()> {
        let name = seat.name.replace(['\n', '\r'], " ");
        let text = format!(
            "player={}\nname={}\ntoken={}\n",
            seat.player, name, seat.token
        );
        self.write_private(&self.path(server, table), &text)
    }

    /// Replaces `path` with `text` as a whole (a temporary file renamed over it), readable by
    /// its owner only on Unix.
    fn write_private(&self, path: &Path, text: &str) -> io::Result<()> {
        let parent = path.parent().unwrap_or(&self.dir);
        fs::create_dir_all(parent)?;
        let tmp = path.with_extension("tmp");
        {
            let mut options = fs::OpenOptions::new();
            options.write(true).create(true).truncate(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                options.mode(0o600);
            }
            let mut file = options.open(&tmp)?;
            file.write_all(text.as_bytes())?;
            file.sync_all()?;
        }
        fs::rename(&tmp, path)
    }

    /// Forgets the seat (nothing happens if none is saved).
    pub fn remove(&self, server: &str, table: TableId) -> io::Result<()> {
        match fs::remove_file(self.path(server, table)) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }
}

/// What this computer keeps for one league on one server: the member's token (after `league
/// join`) and the organiser secret (after `league create`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SavedLeague {
    /// The member's number, name and token.
    pub member: Option<(u32, String, MemberToken)>,
    /// The organiser secret.
    pub organiser: Option<OrganiserSecret>,
}

impl TokenStore {
    /// The file holding what is kept for `league` on `server`.
    pub fn league_path(&self, server: &str, league: LeagueId) -> PathBuf {
        self.dir
            .join("leagues")
            .join(server_key(server))
            .join(league.to_string())
    }

    /// Whether this computer keeps anything for a league on `server`.
    pub fn has_leagues(&self, server: &str) -> bool {
        fs::read_dir(self.dir.join("leagues").join(server_key(server)))
            .is_ok_and(|mut entries| entries.next().is_some())
    }

    /// What is kept for a league (nothing if the file is missing or unreadable).
    pub fn load_league(&self, server: &str, league: LeagueId) -> SavedLeague {
        let Ok(text) = fs::read_to_string(self.league_path(server, league)) else {
            return SavedLeague::default();
        };
        let mut saved = SavedLeague::default();
        let (mut member, mut name, mut token) = (None, None, None);
        for line in text.lines() {
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            match key {
                "member" => member = value.trim().parse().ok(),
                "name" => name = Some(value.to_owned()),
                "token" => {
                    token = uuid::Uuid::parse_str(value.trim())
                        .ok()
                        .map(MemberToken::from)
                }
                "organiser" => {
                    saved.organiser = uuid::Uuid::parse_str(value.trim())
                        .ok()
                        .map(OrganiserSecret::from);
                }
                _ => {}
            }
        }
        if let (Some(member), Some(token)) = (member, token) {
            saved.member = Some((member, name.unwrap_or_default(), token));
        }
        saved
    }

    /// Keeps what is known of a league (private to its owner on Unix).
    pub fn save_league(
        &self,
        server: &str,
        league: LeagueId,
        saved: &SavedLeague,
    ) -> io::Result<()> {
        let mut text = String::new();
        if let Some((member, name, token)) = &saved.member {
            let name = name.replace(['\n', '\r'], " ");
            text.push_str(&format!("member={member}\nname={name}\ntoken={}\n", token));
        }
        if let Some(organiser) = saved.organiser {
            text.push_str(&format!("organiser={}\n", organiser));
        }
        self.write_private(&self.league_path(server, league), &text)
    }
}

fn parse(text: &str) -> Option<SavedSeat> {
    let mut player = None;
    let mut name = None;
    let mut token = None;
    for line in text.lines() {
        let (key, value) = line.split_once('=')?;
        match key {
            "player" => player = value.trim().parse().ok(),
            "name" => name = Some(value.to_owned()),
            "token" => {
                token = uuid::Uuid::parse_str(value.trim())
                    .ok()
                    .map(SeatToken::from)
            }
            _ => {}
        }
    }
    Some(SavedSeat {
        player: player?,
        name: name.unwrap_or_default(),
        token: token?,
    })
}

/// A file-name-safe key for a server URL.
pub fn server_key(server: &str) -> String {
    server
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seat_is_saved_per_server_and_table_and_can_be_forgotten() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let store = TokenStore::new(dir.path());
        let table = TableId::new_random();
        let other_table = TableId::new_random();
        let seat = SavedSeat {
            player: 7,
            name: "Ann".into(),
            token: SeatToken::new_random(),
        };
        assert_eq!(store.load("ws://127.0.0.1:7878/ws", table), None);
        store
            .save("ws://127.0.0.1:7878/ws", table, &seat)
            .expect("saved");
        assert_eq!(
            store.load("ws://127.0.0.1:7878/ws", table),
            Some(seat.clone())
        );
        assert_eq!(store.load("ws://127.0.0.1:9999/ws", table), None);
        assert_eq!(store.load("ws://127.0.0.1:7878/ws", other_table), None);
        store
            .remove("ws://127.0.0.1:7878/ws", table)
            .expect("removed");
        assert_eq!(store.load("ws://127.0.0.1:7878/ws", table), None);
        store
            .remove("ws://127.0.0.1:7878/ws", table)
            .expect("removing twice is fine");
    }

    #[cfg(unix)]
    #[test]
    fn token_files_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("a temp dir");
        let store = TokenStore::new(dir.path());
        let table = TableId::new_random();
        let seat = SavedSeat {
            player: 1,
            name: "Ben".into(),
            token: SeatToken::new_random(),
        };
        store.save("ws://h:1/ws", table, &seat).expect("saved");
        let mode = fs::metadata(store.path("ws://h:1/ws", table))
            .expect("metadata")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn league_secrets_are_kept_per_server_and_league() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let store = TokenStore::new(dir.path());
        let league = LeagueId::new_random();
        assert_eq!(
            store.load_league("ws://h:1/ws", league),
            SavedLeague::default()
        );
        let saved = SavedLeague {
            member: Some((3, "Ann".into(), MemberToken::new_random())),
            organiser: Some(OrganiserSecret::new_random()),
        };
        store
            .save_league("ws://h:1/ws", league, &saved)
            .expect("saved");
        assert_eq!(store.load_league("ws://h:1/ws", league), saved);
        assert_eq!(
            store.load_league("ws://h:2/ws", league),
            SavedLeague::default()
        );
    }

    #[test]
    fn server_keys_are_file_names() {
        assert_eq!(
            server_key("ws://127.0.0.1:7878/ws"),
            "ws___127.0.0.1_7878_ws"
        );
    }
}

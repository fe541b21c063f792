//! The limits PROTOCOL.md's table gives (`protocol/src/limits_of.rs`) that only the server
//! checks, probed through a socket at the table's own values: the bound itself is taken, one
//! past it refused with the table's code, and nothing is created by a refusal.
#![allow(clippy::unwrap_used)]

use grand_melee_e2e::{Client, CreateTable, TestServer};
use grand_melee_protocol::limits_of::LIMITS;
use grand_melee_protocol::{ClientMessage, ErrorCode, ServerMessage};

/// The value the limits table gives the constant `name`.
fn value(name: &str) -> usize {
    let num = LIMITS
        .iter()
        .flat_map(|limit| limit.value.nums())
        .find(|n| n.name == name)
        .unwrap_or_else(|| panic!("the limits table does not name {name}"));
    num.value as usize
}

async fn create_table(client: &mut Client, password: &str) -> Result<ServerMessage, ErrorCode> {
    let table = CreateTable::new("Locked", 4).password(password);
    client.call(|id| table.request(id)).await
}

async fn create_league(client: &mut Client, password: &str) -> Result<ServerMessage, ErrorCode> {
    let password = Some(password.to_owned());
    client
        .call(|id| ClientMessage::CreateLeague {
            id,
            name: format!("League {}", password.as_ref().map_or(0, String::len)),
            password,
        })
        .await
}

/// A table's and a league's password is `MIN_PASSWORD_CHARS`–`MAX_PASSWORD_CHARS` characters
/// (`bad_settings` otherwise, nothing created); at a table, a longer one given to `join` is
/// `wrong_password`, the longest one it may have lets the player in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passwords_are_probed_at_the_tables_bounds() {
    let server = TestServer::start().await;
    let mut client = server.client().await;
    let (min, max) = (value("MIN_PASSWORD_CHARS"), value("MAX_PASSWORD_CHARS"));
    assert_eq!(min, 1);
    let longest = "é".repeat(max);
    for refused in [String::new(), "é".repeat(max + 1)] {
        assert_eq!(
            create_table(&mut client, &refused).await.err(),
            Some(ErrorCode::BadSettings),
            "{} characters",
            refused.chars().count()
        );
        assert_eq!(
            create_league(&mut client, &refused).await.err(),
            Some(ErrorCode::BadSettings),
            "{} characters",
            refused.chars().count()
        );
    }
    let listed = client
        .call(|id| ClientMessage::ListTables {
            id,
            from: 0,
            limit: 10,
        })
        .await
        .unwrap();
    assert!(
        matches!(&listed, ServerMessage::Tables { total: 0, .. }),
        "{listed:?}"
    );
    let created = create_table(&mut client, &longest).await.unwrap();
    let table = CreateTable::new("Locked", 4).created(created);
    assert!(matches!(
        create_league(&mut client, &"p".repeat(min)).await,
        Ok(ServerMessage::LeagueCreated { .. })
    ));
    let mut player = server.client().await;
    let join = |password: String| {
        move |id| ClientMessage::Join {
            id,
            table,
            name: "Ann".into(),
            password: Some(password),
            entropy: None,
            member_token: None,
        }
    };
    assert_eq!(
        player.call(join("é".repeat(max + 1))).await.err(),
        Some(ErrorCode::WrongPassword)
    );
    assert!(matches!(
        player.call(join(longest)).await,
        Ok(ServerMessage::Seated { .. })
    ));
    server.shutdown().await;
}

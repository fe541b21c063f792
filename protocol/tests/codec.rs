//! Every message round-trips through the MessagePack codec, and the encoding is what a stock
//! MessagePack library expects: a map with named fields, a `type` tag, UUIDs as strings.
#![allow(clippy::unwrap_used)]

use grand_melee_protocol::examples::{self, Example};
use grand_melee_protocol::league::Alliance;
use grand_melee_protocol::{
    ClientMessage, DecodeError, ErrorCode, Event, MAX_CLIENT_MESSAGE_BYTES, Phase, Reduction,
    ServerMessage, decode_client, decode_server, encode_client, encode_server,
};
use grand_melee_protocol::{
    GameKind, MulliganMode, RollResult, RuleSet, Ruling, Settings, TableSummary,
};
use serde::{Deserialize, Serialize};
use strum::{VariantArray, VariantNames};

#[derive(Deserialize)]
struct Tagged {
    #[serde(rename = "type")]
    tag: String,
}

#[derive(Deserialize)]
struct Kinded {
    kind: String,
}

#[test]
fn every_client_message_round_trips() {
    let all = examples::client();
    assert_eq!(all.len(), 79);
    for message in all {
        let bytes = encode_client(&message);
        assert!(!bytes.is_empty());
        assert_eq!(
            decode_client(&bytes).unwrap(),
            message,
            "{}",
            message.name()
        );
        let tagged: Tagged = rmp_serde::from_slice(&bytes).unwrap();
        assert_eq!(tagged.tag, message.name());
    }
}

/// With `every_event_round_trips_inside_an_events_message` (each example's `name()` is its
/// serialized `kind`): every variant's `name()` is serde's name.
#[test]
fn every_event_kind_has_an_example() {
    let mut names: Vec<&str> = examples::events().iter().map(Event::name).collect();
    names.sort_unstable();
    names.dedup();
    let mut kinds = Event::NAMES.to_vec();
    kinds.sort_unstable();
    assert_eq!(names, kinds);
}

/// Every value's `name()` is what serde writes for it (the names come from strum's snake_case
/// rule, serde's own).
#[test]
fn value_names_are_serdes() {
    fn check<T: Serialize + std::fmt::Debug>(all: &[T], name: impl Fn(&T) -> &'static str) {
        for value in all {
            let wire = serde_json::to_value(value).unwrap();
            assert_eq!(wire.as_str(), Some(name(value)), "{value:?}");
        }
    }
    check(Phase::ALL, |v| v.name());
    check(Alliance::ALL, |v| v.name());
    check(<RuleSet as VariantArray>::VARIANTS, |v| v.name());
    check(<MulliganMode as VariantArray>::VARIANTS, |v| v.name());
    check(<RollResult as VariantArray>::VARIANTS, |v| v.name());
    let mut rulings: Vec<&str> = examples::client()
        .iter()
        .filter_map(|m| match m {
            ClientMessage::Ruling { ruling, .. } => Some(ruling.name()),
            _ => None,
        })
        .collect();
    rulings.sort_unstable();
    rulings.dedup();
    let mut kinds = <Ruling as VariantNames>::VARIANTS.to_vec();
    kinds.sort_unstable();
    // With `every_ruling_carries_its_kind`: every ruling's name is its serialized `kind`.
    assert_eq!(rulings, kinds, "an example of every ruling");
}

#[test]
fn every_client_type_has_an_example() {
    let names: Vec<&str> = examples::client().iter().map(ClientMessage::name).collect();
    for name in ClientMessage::NAMES {
        assert!(names.contains(name), "{name}");
    }
    let names: Vec<&str> = examples::server().iter().map(ServerMessage::name).collect();
    assert_eq!(names, ServerMessage::NAMES);
}

#[test]
fn every_server_message_round_trips() {
    for message in examples::server() {
        let bytes = encode_server(&message);
        assert_eq!(
            decode_server(&bytes).unwrap(),
            message,
            "{}",
            message.name()
        );
        let tagged: Tagged = rmp_serde::from_slice(&bytes).unwrap();
        assert_eq!(tagged.tag, message.name());
    }
}

#[test]
fn every_event_round_trips_inside_an_events_message() {
    let events = examples::events();
    assert_eq!(events.len(), 82);
    for event in events {
        let message = ServerMessage::Events {
            table: examples::TABLE,
            seq: 1,
            events: vec![event.clone()],
        };
        let bytes = encode_server(&message);
        assert_eq!(decode_server(&bytes).unwrap(), message, "{}", event.name());
        let kinded: Kinded =
            rmp_serde::from_slice(&Example::Event(event.clone()).encode()).unwrap();
        assert_eq!(kinded.kind, event.name());
    }
    let all = ServerMessage::Events {
        table: examples::TABLE,
        seq: 100,
        events: examples::events(),
    };
    assert_eq!(decode_server(&encode_server(&all)).unwrap(), all);
}

#[test]
fn every_ruling_carries_its_kind() {
    for message in examples::client() {
        if let ClientMessage::Ruling { ruling, .. } = &message {
            #[derive(Deserialize)]
            struct Outer {
                ruling: Kinded,
            }
            let outer: Outer = rmp_serde::from_slice(&encode_client(&message)).unwrap();
            assert_eq!(outer.ruling.kind, ruling.name());
        }
    }
}

#[test]
fn example_names_are_unique() {
    let mut names: Vec<String> = examples::all().into_iter().map(|(n, _)| n).collect();
    let count = names.len();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), count);
    assert!(examples::get("client/hello").is_some());
    assert!(examples::get("client/nothing").is_none());
}

#[test]
fn uuids_are_strings_on_the_wire() {
    let message = ClientMessage::Join {
        id: 1,
        table: examples::TABLE,
        name: "Alice".to_owned(),
        password: None,
        entropy: None,
        member_token: None,
    };
    let bytes = encode_client(&message);
    let text = examples::TABLE.as_uuid().hyphenated().to_string();
    // str8 marker, length 36, then the text.
    let mut needle = vec![0xd9, 36];
    needle.extend_from_slice(text.as_bytes());
    assert!(bytes.windows(needle.len()).any(|w| w == needle));
}

#[test]
fn enum_values_are_snake_case_strings() {
    let bytes = encode_client(&ClientMessage::SetPhase {
        id: 1,
        phase: Phase::PostcombatMain,
    });
    assert!(bytes.windows(15).any(|w| w == b"postcombat_main"));
    let bytes = encode_server(&ServerMessage::error(None, ErrorCode::NotAPlayer));
    assert!(bytes.windows(12).any(|w| w == b"not_a_player"));
}

#[test]
fn error_code_names_match_the_wire() {
    #[derive(Serialize, Deserialize)]
    struct Holder {
        code: ErrorCode,
    }
    #[derive(Deserialize)]
    struct Named {
        code: String,
    }
    for &code in ErrorCode::ALL {
        let bytes = rmp_serde::to_vec_named(&Holder { code }).unwrap();
        let named: Named = rmp_serde::from_slice(&bytes).unwrap();
        assert_eq!(named.code, code.name(), "{code:?}");
        assert_eq!(rmp_serde::from_slice::<Holder>(&bytes).unwrap().code, code);
        assert!(!code.description().is_empty());
    }
}

/// The shape a Python client would send: only the required fields, tag last, integers in
/// whatever width the library picks.
#[test]
fn create_table_defaults_and_tag_anywhere() {
    #[derive(Serialize)]
    struct Minimal {
        id: u64,
        name: &'static str,
        seats: u64,
        #[serde(rename = "type")]
        tag: &'static str,
    }
    let bytes = rmp_serde::to_vec_named(&Minimal {
        id: 7,
        name: "T",
        seats: 12,
        tag: "create_table",
    })
    .unwrap();
    assert_eq!(
        decode_client(&bytes).unwrap(),
        ClientMessage::CreateTable {
            mountain_magic: None,
            id: 7,
            name: "T".to_owned(),
            seats: 12,
            spell_range: 0, // absent: the rules' own (2 for seed)
            reduction: Reduction::Eager,
            starting_life: 20,
            password: None,
            seed: None,
            turn_clock_secs: 0,
            absence_limit_secs: 600,
            mulligan_clock_secs: 60,
            max_spectators: 100,
            rules: Default::default(),
            combat_dice: false,
            mulligan: Default::default(),
            game: Default::default(),
            league: None,
            organiser: None,
        }
    );
}

/// `game` names the game a table plays: absent means `grand_melee`, and a game the server does
/// not know is a malformed request.
#[test]
fn create_table_names_its_game() {
    #[derive(Serialize)]
    struct WithGame {
        #[serde(rename = "type")]
        tag: &'static str,
        id: u32,
        name: &'static str,
        seats: u8,
        game: &'static str,
    }
    let request = |game| {
        rmp_serde::to_vec_named(&WithGame {
            tag: "create_table",
            id: 1,
            name: "T",
            seats: 8,
            game,
        })
        .unwrap()
    };
    let ClientMessage::CreateTable { game, .. } = decode_client(&request("grand_melee")).unwrap()
    else {
        panic!("not a create_table");
    };
    assert_eq!(game, GameKind::GrandMelee);
    assert!(matches!(
        decode_client(&request("chess")),
        Err(DecodeError::Malformed(_))
    ));
    // The default game is left out of every message that carries it.
    let mut create = examples::client()
        .into_iter()
        .find(|m| m.name() == "create_table")
        .unwrap();
    let ClientMessage::CreateTable { game, .. } = &mut create else {
        unreachable!()
    };
    *game = GameKind::GrandMelee;
    assert!(!encode_client(&create).windows(4).any(|w| w == b"game"));
    let settings = examples::view().settings;
    assert_eq!(settings.game, GameKind::GrandMelee);
    let snapshot = rmp_serde::to_vec_named(&settings).unwrap();
    assert!(!snapshot.windows(4).any(|w| w == b"game"));
    let summary = TableSummary::new(examples::TABLE, "T", &settings);
    assert!(
        !rmp_serde::to_vec_named(&summary)
            .unwrap()
            .windows(4)
            .any(|w| w == b"game")
    );
}

/// A `create_table`'s settings: the one `Settings`, with the rules' own spell range for 0 and
/// the password as whether there is one; the lobby's line is derived from them.
#[test]
fn create_table_gives_the_settings_and_the_summary() {
    let request = |spell_range, rules, password: Option<&str>| {
        let mut request = examples::client()
            .into_iter()
            .find(|m| m.name() == "create_table")
            .unwrap();
        if let ClientMessage::CreateTable {
            spell_range: r,
            rules: s,
            password: p,
            league,
            combat_dice,
            ..
        } = &mut request
        {
            *r = spell_range;
            *s = rules;
            *p = password.map(str::to_owned);
            *league = Some(examples::LEAGUE);
            *combat_dice = true;
        }
        request
    };
    let settings = Settings::requested(&request(0, RuleSet::Seed, None)).unwrap();
    assert_eq!(
        settings.spell_range,
        grand_melee_protocol::DEFAULT_SPELL_RANGE
    );
    assert!(!settings.password);
    assert_eq!(settings.league, Some(examples::LEAGUE));
    assert!(settings.combat_dice);
    assert_eq!(settings.seats, 8);
    assert_eq!(settings.hand_size, Settings::default().hand_size);
    let settings = Settings::requested(&request(0, RuleSet::Cr807, Some("pw"))).unwrap();
    assert_eq!((settings.spell_range, settings.rules), (1, RuleSet::Cr807));
    assert!(settings.password);
    let settings_3 = Settings::requested(&request(3, RuleSet::Seed, None)).unwrap();
    assert_eq!(settings_3.spell_range, 3);
    let hello = ClientMessage::Hello {
        id: 1,
        protocol: 1,
        client: String::new(),
    };
    assert_eq!(Settings::requested(&hello), None);

    let summary = TableSummary::new(examples::TABLE, "Friday melee", &settings);
    assert_eq!(
        (
            summary.seats,
            summary.spell_range,
            summary.rules,
            summary.password
        ),
        (8, 1, RuleSet::Cr807, true)
    );
    assert_eq!(
        (
            summary.combat_dice,
            summary.league,
            summary.seated,
            summary.spectators
        ),
        (true, Some(examples::LEAGUE), 0, 0)
    );
}

#[test]
fn attack_damage_and_poison_default_to_zero() {
    #[derive(Serialize)]
    struct Attack {
        #[serde(rename = "type")]
        tag: &'static str,
        id: u32,
        target: u16,
    }
    let bytes = rmp_serde::to_vec_named(&Attack {
        tag: "attack",
        id: 1,
        target: 3,
    })
    .unwrap();
    assert_eq!(
        decode_client(&bytes).unwrap(),
        ClientMessage::Attack {
            id: 1,
            target: 3,
            damage: 0,
            poison: 0
        }
    );
}

#[test]
fn optional_fields_may_be_nil_or_absent() {
    #[derive(Serialize)]
    struct Start {
        #[serde(rename = "type")]
        tag: &'static str,
        id: u32,
        first_player: Option<u16>,
    }
    for first_player in [None, Some(2)] {
        let bytes = rmp_serde::to_vec_named(&Start {
            tag: "start",
            id: 1,
            first_player,
        })
        .unwrap();
        assert_eq!(
            decode_client(&bytes).unwrap(),
            ClientMessage::Start {
                id: 1,
                first_player,
                seating: grand_melee_protocol::SeatingMode::Random,
                order: Vec::new(),
            }
        );
    }
}

#[test]
fn oversized_input_is_refused_before_parsing() {
    let bytes = vec![0u8; MAX_CLIENT_MESSAGE_BYTES + 1];
    assert_eq!(
        decode_client(&bytes),
        Err(DecodeError::TooLarge {
            size: MAX_CLIENT_MESSAGE_BYTES + 1,
            max: MAX_CLIENT_MESSAGE_BYTES
        })
    );
    // A chat line just under the limit still decodes.
    let message = ClientMessage::Chat {
        id: 1,
        text: "x".repeat(MAX_CLIENT_MESSAGE_BYTES - 100),
    };
    let bytes = encode_client(&message);
    assert!(bytes.len() <= MAX_CLIENT_MESSAGE_BYTES);
    assert_eq!(decode_client(&bytes).unwrap(), message);
}

#[test]
fn malformed_input_is_an_error() {
    let cases: Vec<Vec<u8>> = vec![
        vec![],
        vec![0xc1],
        vec![0x90],
        vec![0x80],
        rmp_serde::to_vec_named(&("hello", 1)).unwrap(),
        // Unknown type.
        encode_client(&ClientMessage::Leave { id: 1 })
            .iter()
            .map(|&b| if b == b'l' { b'x' } else { b })
            .collect(),
        // Deep nesting.
        [vec![0x91; 10_000], vec![0xc0]].concat(),
    ];
    for bytes in cases {
        assert!(matches!(
            decode_client(&bytes),
            Err(DecodeError::Malformed(_))
        ));
        assert!(decode_server(&bytes).is_err());
    }
    let mut bytes = encode_client(&ClientMessage::Leave { id: 1 });
    bytes.push(0xc0);
    assert_eq!(decode_client(&bytes), Err(DecodeError::TrailingBytes(1)));
}

#[test]
fn bad_uuid_is_an_error() {
    #[derive(Serialize)]
    struct Watch {
        #[serde(rename = "type")]
        tag: &'static str,
        id: u32,
        table: &'static str,
    }
    let bytes = rmp_serde::to_vec_named(&Watch {
        tag: "watch",
        id: 1,
        table: "not-a-uuid",
    })
    .unwrap();
    assert!(decode_client(&bytes).is_err());
}

#[test]
fn request_ids_and_reply_ids() {
    for message in examples::client() {
        let id = message.id();
        assert!(id > 0);
    }
    let request = ClientMessage::Keep { id: 42 };
    let error = ServerMessage::error(Some(&request), ErrorCode::NotYourDecision);
    assert_eq!(error.reply_to(), Some(42));
    assert_eq!(error.name(), "error");
    let ServerMessage::Error { request, .. } = error else {
        unreachable!()
    };
    assert_eq!(request.as_deref(), Some("keep"));
    let events = ServerMessage::Events {
        table: examples::TABLE,
        seq: 1,
        events: vec![Event::SpectatorsChanged { spectators: 0 }],
    };
    assert_eq!(events.reply_to(), None);
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// Frames packed by Python's `msgpack.packb(dict)` (msgpack 1.1): key order as written, integers
/// in the smallest width (`uint32`, `uint64`, `int16`), optional fields left out.
#[test]
fn frames_packed_by_python_msgpack_decode() {
    let cases = [
        (
            "84a474797065a568656c6c6fa2696401a870726f746f636f6c01a6636c69656e74a27079",
            ClientMessage::Hello {
                id: 1,
                protocol: 1,
                client: "py".to_owned(),
            },
        ),
        (
            "85a26964ce00011170a474797065ac6372656174655f7461626c65a46e616d65a154a5736561747328a473656564cf8000000000000000",
            ClientMessage::CreateTable {
                mountain_magic: None,
                id: 70_000,
                name: "T".to_owned(),
                seats: 40,
                spell_range: 0,
                reduction: Reduction::Eager,
                starting_life: 20,
                password: None,
                seed: Some(1 << 63),
                turn_clock_secs: 0,
                absence_limit_secs: 600,
                mulligan_clock_secs: 60,
                max_spectators: 100,
                rules: Default::default(),
                combat_dice: false,
                mulligan: Default::default(),
                game: Default::default(),
                league: None,
                organiser: None,
            },
        ),
        (
            "84a474797065a46a6f696ea2696403a57461626c65d92435663363316132652d386434622d346336652d396137662d306231633264336534663530a46e616d65a45a6fc3ab",
            ClientMessage::Join {
                id: 3,
                table: examples::TABLE,
                name: "Zoë".to_owned(),
                password: None,
                entropy: None,
                member_token: None,
            },
        ),
        (
            "83a474797065ab6368616e67655f6c696665a2696404a564656c7461d1fed4",
            ClientMessage::ChangeLife { id: 4, delta: -300 },
        ),
        (
            "83a474797065a672756c696e67a2696405a672756c696e6782a7706c61796572739201cd012ca46b696e64a9656c696d696e617465",
            ClientMessage::Ruling {
                id: 5,
                ruling: grand_melee_protocol::Ruling::Eliminate {
                    players: vec![1, 300],
                },
            },
        ),
        (
            "84a474797065a661747461636ba2696406a674617267657402a664616d61676503",
            ClientMessage::Attack {
                id: 6,
                target: 2,
                damage: 3,
                poison: 0,
            },
        ),
    ];
    for (hex, expected) in cases {
        assert_eq!(decode_client(&unhex(hex)).unwrap(), expected);
    }
}

#[test]
fn out_of_range_integers_are_errors() {
    #[derive(Serialize)]
    struct Keep {
        #[serde(rename = "type")]
        tag: &'static str,
        id: i64,
    }
    for id in [-1, i64::from(u32::MAX) + 1] {
        let bytes = rmp_serde::to_vec_named(&Keep { tag: "keep", id }).unwrap();
        assert!(decode_client(&bytes).is_err(), "{id}");
    }
}

#[test]
fn a_malformed_request_still_yields_its_id_and_known_type() {
    use grand_melee_protocol::peek_request;
    // `{"type": "attack", "id": 7, "target": "x"}`: the target has the wrong type.
    let mut bad = vec![0x83];
    for (key, value) in [
        ("type", vec![0xa6, b'a', b't', b't', b'a', b'c', b'k']),
        ("id", vec![0x07]),
        ("target", vec![0xa1, b'x']),
    ] {
        bad.push(0xa0 | key.len() as u8);
        bad.extend_from_slice(key.as_bytes());
        bad.extend(value);
    }
    assert!(decode_client(&bad).is_err());
    assert_eq!(peek_request(&bad), (Some(7), Some("attack")));
    // An unknown type is not echoed; an id too large for u32 is not either.
    let unknown =
        rmp_serde::to_vec_named(&serde_json::json!({"type": "\u{1b}[2J", "id": 9})).unwrap();
    assert_eq!(peek_request(&unknown), (Some(9), None));
    let huge =
        rmp_serde::to_vec_named(&serde_json::json!({"type": "chat", "id": 1u64 << 40})).unwrap();
    assert_eq!(peek_request(&huge), (None, Some("chat")));
    for garbage in [&b""[..], b"\xc1", b"\x91\xc0", b"\xdf\xff\xff\xff\xff"] {
        assert_eq!(peek_request(garbage), (None, None));
    }
}

/// The cameras' requests in their shortest forms, as a page packs them: `stream`, `stay` and
/// `center` may be left out, and a peer is `{"player": n}` or the string `"display"`.
#[test]
fn camera_requests_take_their_defaults_and_both_peer_forms() {
    use grand_melee_protocol::{CameraPeer, IceServer, Peer};
    let pack = |value: serde_json::Value| rmp_serde::to_vec_named(&value).unwrap();
    assert_eq!(
        decode_client(&pack(
            serde_json::json!({"type": "camera", "id": 7, "on": true})
        ))
        .unwrap(),
        ClientMessage::Camera {
            id: 7,
            on: true,
            stream: false,
            stay: false,
        }
    );
    assert_eq!(
        decode_client(&pack(serde_json::json!({
            "type": "camera_display",
            "id": 8,
            "token": "c0ffee00-1234-4abc-8def-0123456789ab",
        })))
        .unwrap(),
        ClientMessage::CameraDisplay {
            id: 8,
            token: examples::TOKEN,
            center: None,
        }
    );
    for (to, peer) in [
        (serde_json::json!("display"), Peer::Display),
        (serde_json::json!({"player": 300}), Peer::Player(300)),
        (serde_json::json!({"player": 0}), Peer::Player(0)),
    ] {
        let bytes = pack(serde_json::json!({"type": "signal", "id": 9, "to": to, "payload": "{}"}));
        assert_eq!(
            decode_client(&bytes).unwrap(),
            ClientMessage::Signal {
                id: 9,
                to: peer,
                payload: "{}".to_owned(),
            }
        );
        assert_eq!(serde_json::to_value(peer).unwrap(), to);
    }
    for bad in [
        serde_json::json!("host"),
        serde_json::json!({"player": -1}),
        serde_json::json!({"display": 0}),
    ] {
        let bytes = pack(serde_json::json!({"type": "signal", "id": 9, "to": bad, "payload": ""}));
        assert!(decode_client(&bytes).is_err(), "{bad} is not a peer");
    }
    // A STUN entry carries no credentials: the fields are left out, as RTCIceServer wants.
    let stun = IceServer {
        urls: vec!["stun:a.example:3478".to_owned()],
        username: None,
        credential: None,
    };
    assert_eq!(
        serde_json::to_value(&stun).unwrap(),
        serde_json::json!({"urls": ["stun:a.example:3478"]})
    );
    let peers = ServerMessage::CameraPeers {
        peers: vec![CameraPeer {
            peer: Peer::Display,
            name: "display".to_owned(),
            offer: true,
        }],
    };
    assert_eq!(
        serde_json::to_value(&peers).unwrap(),
        serde_json::json!({"type": "camera_peers", "peers": [{"peer": "display", "name": "display", "offer": true}]})
    );
    assert_eq!(decode_server(&encode_server(&peers)).unwrap(), peers);
}

/// PROTOCOL.md: a request is a map with named fields, and so is every record inside one. A
/// MessagePack array in its place is refused, not read positionally (`[1, 2, 3]` was once
/// taken as `list_tables` with id 2; a card face packed as an array was taken field by field).
#[test]
fn arrays_are_refused_where_the_protocol_has_maps() {
    let pack = |value: serde_json::Value| rmp_serde::to_vec_named(&value).unwrap();
    for top in [
        serde_json::json!([1, 2, 3]),
        serde_json::json!(["snapshot", 9]),
        serde_json::json!(["list_tables", 4, 0, 10]),
    ] {
        let bytes = pack(top.clone());
        assert!(decode_client(&bytes).is_err(), "{top} is not a request");
    }
    let land = |face: serde_json::Value| {
        pack(serde_json::json!({"type": "magic_tech.deploy", "id": 5, "land": face}))
    };
    // As a map the land is taken; the same land as an array (positional fields) is refused,
    // and so is a map whose keywords or cost are arrays.
    let good = land(serde_json::json!({"name": "Forest", "type": "land", "basic": "green"}));
    assert!(decode_client(&good).is_ok());
    for bad in [
        serde_json::json!(["Forest", "land", {}, 0, 0, "green", {}]),
        serde_json::json!({"name": "Forest", "type": "land", "keywords": [false, false, ["green"]]}),
        serde_json::json!({"name": "Bear", "type": "land", "cost": [0, []]}),
    ] {
        let bytes = land(bad.clone());
        assert!(
            matches!(decode_client(&bytes), Err(DecodeError::Malformed(_))),
            "{bad}"
        );
        assert_eq!(
            grand_melee_protocol::peek_request(&bytes),
            (Some(5), Some("magic_tech.deploy")),
            "the refusal still answers request 5"
        );
    }
    // A table id is a string, not 16 numbers.
    let watch = pack(serde_json::json!({"type": "watch", "id": 6, "table": vec![12u8; 16]}));
    assert!(decode_client(&watch).is_err());
    // Lists stay lists.
    let mission = pack(serde_json::json!({
        "type": "magic_tech.mission",
        "id": 7,
        "attackers": [1, 2],
        "target": {"kind": "stockpile", "player": 1},
    }));
    assert!(decode_client(&mission).is_ok());
}

/// A request nested far too deep is refused, but its top-level `id` and `type` are still read
/// however deep the rest goes, so the client waiting for that id gets its `bad_message`.
#[test]
fn a_deeply_nested_request_still_yields_its_id_and_type() {
    use grand_melee_protocol::peek_request;
    for depth in [15, 16, 17, 100, 10_000] {
        // `{"type": "chat", "id": 42, "junk": [[[…nil…]]], "text": "hi"}`
        let mut bytes = vec![0x84];
        bytes.extend(b"\xa4type\xa4chat\xa2id\x2a\xa4junk");
        bytes.extend(std::iter::repeat_n(0x91, depth));
        bytes.push(0xc0);
        bytes.extend(b"\xa4text\xa2hi");
        assert!(decode_client(&bytes).is_err(), "{depth}");
        assert_eq!(peek_request(&bytes), (Some(42), Some("chat")), "{depth}");
    }
    // The id after the deep part is read too.
    let mut late = vec![0x83];
    late.extend(b"\xa4junk");
    late.extend(std::iter::repeat_n(0x81, 50).flat_map(|m| [m, 0xa1, b'k']));
    late.push(0xc0);
    late.extend(b"\xa4type\xa4chat\xa2id\xcd\x01\x00");
    assert_eq!(peek_request(&late), (Some(256), Some("chat")));
}

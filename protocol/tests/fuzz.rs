//! Decoding never panics, whatever the bytes.
#![allow(clippy::unwrap_used)]

use grand_melee_protocol::examples;
use grand_melee_protocol::{
    ClientMessage, Phase, Ruling, decode_client, decode_server, encode_client,
};
use proptest::prelude::*;

fn valid_encodings() -> Vec<Vec<u8>> {
    examples::all()
        .into_iter()
        .map(|(_, e)| e.encode())
        .collect()
}

fn phase() -> impl Strategy<Value = Phase> {
    proptest::sample::select(Phase::ALL.to_vec())
}

fn client_message() -> impl Strategy<Value = ClientMessage> {
    prop_oneof![
        (any::<u32>(), any::<u16>(), ".{0,40}").prop_map(|(id, protocol, client)| {
            ClientMessage::Hello {
                id,
                protocol,
                client,
            }
        }),
        (
            any::<u32>(),
            ".{0,40}",
            any::<u8>(),
            any::<u8>(),
            any::<i32>(),
            proptest::option::of(".{0,10}"),
            proptest::option::of(any::<u64>())
        )
            .prop_map(
                |(id, name, seats, spell_range, starting_life, password, seed)| {
                    ClientMessage::CreateTable {
                        mountain_magic: None,
                        id,
                        name,
                        seats,
                        spell_range,
                        reduction: grand_melee_protocol::Reduction::Forced,
                        starting_life,
                        password,
                        seed,
                        turn_clock_secs: seats.into(),
                        absence_limit_secs: spell_range.into(),
                        mulligan_clock_secs: starting_life.unsigned_abs(),
                        max_spectators: seats.into(),
                        rules: Default::default(),
                        combat_dice: false,
                        mulligan: Default::default(),
                        game: Default::default(),
                        league: None,
                        organiser: None,
                    }
                }
            ),
        (any::<u32>(), phase()).prop_map(|(id, phase)| ClientMessage::SetPhase { id, phase }),
        (any::<u32>(), any::<u16>(), any::<u32>(), any::<u32>()).prop_map(
            |(id, target, damage, poison)| ClientMessage::Attack {
                id,
                target,
                damage,
                poison
            }
        ),
        (any::<u32>(), any::<i32>())
            .prop_map(|(id, delta)| ClientMessage::ChangeLife { id, delta }),
        (any::<u32>(), proptest::collection::vec(any::<u16>(), 0..8)).prop_map(|(id, players)| {
            ClientMessage::Ruling {
                id,
                ruling: Ruling::Eliminate { players },
            }
        }),
        (any::<u32>(), any::<u16>(), any::<i32>()).prop_map(|(id, player, life)| {
            ClientMessage::Ruling {
                id,
                ruling: Ruling::SetLife { player, life },
            }
        }),
        (any::<u32>(), ".{0,200}").prop_map(|(id, text)| ClientMessage::Chat { id, text }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = decode_client(&bytes);
        let _ = decode_server(&bytes);
    }

    #[test]
    fn mutated_encodings_never_panic(
        index in any::<prop::sample::Index>(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..6),
    ) {
        let all = valid_encodings();
        let mut bytes = index.get(&all).clone();
        for (at, byte, op) in edits {
            if bytes.is_empty() {
                bytes.push(byte);
                continue;
            }
            let i = at.index(bytes.len());
            match op {
                0 => bytes[i] = byte,
                1 => bytes.insert(i, byte),
                _ => {
                    bytes.remove(i);
                }
            }
        }
        let _ = decode_client(&bytes);
        let _ = decode_server(&bytes);
    }

    #[test]
    fn truncated_encodings_are_errors(index in any::<prop::sample::Index>(), cut in any::<prop::sample::Index>()) {
        let all = valid_encodings();
        let bytes = index.get(&all);
        let cut = cut.index(bytes.len());
        prop_assert!(decode_client(&bytes[..cut]).is_err());
        prop_assert!(decode_server(&bytes[..cut]).is_err());
    }

    #[test]
    fn client_messages_round_trip(message in client_message()) {
        let bytes = encode_client(&message);
        prop_assert_eq!(decode_client(&bytes).unwrap(), message);
    }
}

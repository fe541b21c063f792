//! Verifiable dice: every random outcome of a game — the seating, the first player, each d20 of
//! Combat with Dice — comes from a secret the server commits to before anyone joins, mixed with
//! what the players' clients contribute at join, and the outcome's label and index. Nobody can
//! predict an outcome (the secret is unknown until the end; the server cannot choose it after
//! seeing the players' entropy, having published its SHA-256 first), and at the end the secret
//! is revealed so anyone can recompute every outcome (`grand-melee verify`). PROTOCOL.md,
//! "Verifiable dice", is the specification for other languages.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Domain separation for every draw (PROTOCOL.md).
const DOMAIN: &[u8] = b"grand-melee dice v1";

/// The table's dice secret: 32 bytes drawn by the server when the table is created.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct DiceSecret(pub [u8; 32]);

impl std::fmt::Debug for DiceSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never printed whole before its time: logs must not give it away.
        write!(f, "DiceSecret(…)")
    }
}

impl DiceSecret {
    /// A secret for tests and tools: SHA-256 of the seed's 8 bytes (big-endian). Not for real
    /// tables, whose secret the server draws from the operating system.
    pub fn from_seed(seed: u64) -> Self {
        Self(Sha256::digest(seed.to_be_bytes()).into())
    }

    /// The commitment published at `game_started`: SHA-256 of the secret, in hex.
    pub fn commitment(&self) -> String {
        hex::encode(Sha256::digest(self.0))
    }

    /// The secret in hex (revealed at `dice_revealed`).
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    /// A secret from 64 hex digits.
    pub fn from_hex(text: &str) -> Option<Self> {
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(text, &mut bytes).ok()?;
        Some(Self(bytes))
    }
}

impl TryFrom<String> for DiceSecret {
    type Error = &'static str;
    fn try_from(text: String) -> Result<Self, Self::Error> {
        Self::from_hex(&text).ok_or("a dice secret is 64 hex digits")
    }
}

impl From<DiceSecret> for String {
    fn from(secret: DiceSecret) -> String {
        secret.to_hex()
    }
}

/// SHA-256 of the players' contributions, in join order: for each, its length in bytes (4
/// bytes, big-endian) and its UTF-8 bytes.
pub fn entropy_digest<'a>(contributions: impl IntoIterator<Item = &'a str>) -> [u8; 32] {
    let mut hash = Sha256::new();
    for text in contributions {
        hash.update(u32::try_from(text.len()).unwrap_or(u32::MAX).to_be_bytes());
        hash.update(text.as_bytes());
    }
    hash.finalize().into()
}

/// The dice of one game: the secret and the players' entropy digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dice {
    secret: DiceSecret,
    entropy: [u8; 32],
}

impl Dice {
    /// The dice for a secret and the digest of the players' contributions.
    pub fn new(secret: DiceSecret, entropy: [u8; 32]) -> Self {
        Self { secret, entropy }
    }

    /// Draw `index` under `label`: the first 8 bytes (big-endian) of
    /// SHA-256(domain ‖ secret ‖ entropy digest ‖ label ‖ 0x00 ‖ index as 8 bytes big-endian).
    pub fn draw(&self, label: &str, index: u64) -> u64 {
        let mut hash = Sha256::new();
        hash.update(DOMAIN);
        hash.update(self.secret.0);
        hash.update(self.entropy);
        hash.update(label.as_bytes());
        hash.update([0]);
        hash.update(index.to_be_bytes());
        let digest = hash.finalize();
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        u64::from_be_bytes(first)
    }

    /// A number in 0..n from draw `index` under `label` (the draw modulo n; n ≤ 40 here, so
    /// the bias is below 10⁻¹⁷).
    pub fn below(&self, label: &str, index: u64, n: u64) -> u64 {
        self.draw(label, index) % n.max(1)
    }

    /// The seating: the join order shuffled by Fisher–Yates from the back, the swap for
    /// position i (n−1 down to 1) with j = `below("seat", n−1−i, i+1)`.
    pub fn shuffle<T>(&self, items: &mut [T]) {
        let n = items.len();
        for (k, i) in (1..n).rev().enumerate() {
            let j = self.below("seat", k as u64, i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }

    /// The first player's seat among `n`: `below("first", 0, n)`.
    pub fn first_seat(&self, n: usize) -> usize {
        self.below("first", 0, n as u64) as usize
    }

    /// The natural d20 of the game's roll number `roll`: `below("d20", roll, 20) + 1`.
    pub fn d20(&self, roll: u32) -> u8 {
        (self.below("d20", u64::from(roll), 20) + 1) as u8
    }
}

/// What [`verify`] checked in a finished game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// Players seated.
    pub players: usize,
    /// How they were seated: only a `random` seating is the dice's (checked against them); a
    /// `joined` one is checked against the join order, an `arranged` one only for holding every
    /// player once.
    pub seating: crate::SeatingMode,
    /// Whether the dice drew the first player (otherwise the host chose him).
    pub first_player_drawn: bool,
    /// d20s rolled and checked.
    pub rolls: u32,
    /// The game's dice, from the revealed secret and the players' entropy: what a game's own
    /// checks deal again (a Mountain Magic deal: `mountain_magic::verify_deal`).
    pub dice: Dice,
}

/// The first outcome of a game that its revealed dice do not give.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("event {seq}: {what}")]
pub struct Mismatch {
    /// The event's number (0 when the game lacks one: no start, no reveal).
    pub seq: u64,
    /// What does not match.
    pub what: String,
}

/// Recomputes every random outcome of a finished game from its events (numbered): the
/// commitment against the revealed secret, the seating and the first player against the
/// players' entropy, and every d20 with its result (PROTOCOL.md, "Verifiable dice").
pub fn verify<'a>(
    events: impl IntoIterator<Item = (u64, &'a crate::Event)>,
) -> Result<Verified, Mismatch> {
    use crate::Event;
    let mismatch = |seq: u64, what: String| Mismatch { seq, what };
    let mut lobby: Vec<(crate::PlayerId, &str)> = Vec::new();
    let mut start: Option<(u64, &Event, [u8; 32], Vec<crate::PlayerId>)> = None;
    let mut rolls: Vec<(u64, &Event)> = Vec::new();
    let mut secret: Option<(u64, &str)> = None;
    for (seq, event) in events {
        match event {
            Event::PlayerJoined {
                player, entropy, ..
            } if start.is_none() => lobby.push((*player, entropy)),
            Event::PlayerLeft { player } if start.is_none() => {
                lobby.retain(|(p, _)| p != player);
            }
            Event::GameStarted { .. } => {
                let digest = entropy_digest(lobby.iter().map(|(_, e)| *e));
                let order = lobby.iter().map(|(p, _)| *p).collect();
                start = Some((seq, event, digest, order));
            }
            Event::AttackRolled { .. } => rolls.push((seq, event)),
            Event::DiceRevealed { secret: s } => secret = Some((seq, s)),
            _ => {}
        }
    }
    let Some((start_seq, started, digest, order)) = start else {
        return Err(mismatch(0, "the game never started".into()));
    };
    let Some((reveal_seq, revealed)) = secret else {
        return Err(mismatch(
            0,
            "the dice secret was never revealed (is the game over?)".into(),
        ));
    };
    let Event::GameStarted {
        seating,
        first_player,
        commitment,
        first_player_chosen,
        seating_mode,
        ..
    } = started
    else {
        return Err(mismatch(start_seq, "not a start".into()));
    };
    let secret = DiceSecret::from_hex(revealed).ok_or_else(|| {
        mismatch(
            reveal_seq,
            format!("the secret {revealed:?} is not 64 hex digits"),
        )
    })?;
    if commitment.is_empty() {
        return Err(mismatch(
            start_seq,
            "the game started without a commitment (a server older than verifiable dice)".into(),
        ));
    }
    if secret.commitment() != *commitment {
        return Err(mismatch(
            reveal_seq,
            format!(
                "SHA-256 of the revealed secret is {}, but game_started committed to {commitment}",
                secret.commitment()
            ),
        ));
    }
    let dice = Dice::new(secret, digest);
    let mut expected = order;
    match seating_mode {
        crate::SeatingMode::Random => dice.shuffle(&mut expected),
        crate::SeatingMode::Joined => {}
        crate::SeatingMode::Arranged => {
            // The host's order: not the dice's, but it must seat exactly the lobby.
            let mut sorted = seating.clone();
            sorted.sort_unstable();
            expected.sort_unstable();
            if sorted != expected {
                return Err(mismatch(
                    start_seq,
                    format!(
                        "the arranged seating {seating:?} does not seat the lobby {expected:?}"
                    ),
                ));
            }
            expected = seating.clone();
        }
    }
    if expected != *seating {
        let source = match seating_mode {
            crate::SeatingMode::Joined => "the join order is",
            _ => "the dice give",
        };
        return Err(mismatch(
            start_seq,
            format!("the seating is {seating:?}, {source} {expected:?}"),
        ));
    }
    let drawn = expected.get(dice.first_seat(expected.len())).copied();
    if !first_player_chosen && drawn != Some(*first_player) {
        return Err(mismatch(
            start_seq,
            format!("the first player is {first_player}, the dice give {drawn:?}"),
        ));
    }
    for (index, &(seq, event)) in rolls.iter().enumerate() {
        let Event::AttackRolled {
            roll,
            power,
            opposing,
            natural,
            modifier,
            total,
            result,
            damage,
            self_damage,
            ..
        } = event
        else {
            continue;
        };
        if *roll as usize != index {
            return Err(mismatch(
                seq,
                format!("roll number {roll} where roll {index} was due"),
            ));
        }
        let d20 = dice.d20(*roll);
        if d20 != *natural {
            return Err(mismatch(
                seq,
                format!("roll {roll}: natural {natural}, the dice give {d20}"),
            ));
        }
        let want_modifier = crate::RollResult::modifier(*power, opposing);
        let want = crate::RollResult::of(d20, i64::from(d20) + want_modifier, *power);
        if *modifier != want_modifier
            || *total != i64::from(d20) + want_modifier
            || (*result, *damage, *self_damage) != want
        {
            return Err(mismatch(
                seq,
                format!(
                    "roll {roll}: {modifier:+} = {total}, {result:?} {damage}/{self_damage}, the Attack Table gives {want_modifier:+} = {}, {:?} {}/{}",
                    i64::from(d20) + want_modifier,
                    want.0,
                    want.1,
                    want.2
                ),
            ));
        }
    }
    Ok(Verified {
        players: seating.len(),
        seating: *seating_mode,
        first_player_drawn: !first_player_chosen,
        rolls: u32::try_from(rolls.len()).unwrap_or(u32::MAX),
        dice,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_secret_round_trips_through_hex_and_its_commitment_is_its_sha256() {
        let secret = DiceSecret::from_seed(7);
        assert_eq!(DiceSecret::from_hex(&secret.to_hex()), Some(secret));
        assert_eq!(secret.commitment().len(), 64);
        assert_ne!(secret.commitment(), secret.to_hex());
        assert_eq!(DiceSecret::from_hex("zz"), None);
        assert_eq!(format!("{secret:?}"), "DiceSecret(…)");
    }

    #[test]
    fn every_player_contribution_and_the_secret_change_the_dice() {
        let a = Dice::new(DiceSecret::from_seed(1), entropy_digest(["x", "y"]));
        let b = Dice::new(DiceSecret::from_seed(1), entropy_digest(["x", "z"]));
        let c = Dice::new(DiceSecret::from_seed(2), entropy_digest(["x", "y"]));
        // Lengths are part of the digest: "xy" + "" differs from "x" + "y".
        assert_ne!(entropy_digest(["xy", ""]), entropy_digest(["x", "y"]));
        let rolls = |d: &Dice| (0..32).map(|k| d.d20(k)).collect::<Vec<_>>();
        assert_ne!(rolls(&a), rolls(&b));
        assert_ne!(rolls(&a), rolls(&c));
        assert!(rolls(&a).iter().all(|r| (1..=20).contains(r)));
        assert_eq!(rolls(&a), rolls(&a.clone()));
    }

    #[test]
    fn the_d20_is_fair_enough_and_the_shuffle_is_a_permutation() {
        let dice = Dice::new(DiceSecret::from_seed(3), entropy_digest([]));
        let mut counts = [0u32; 21];
        for k in 0..20_000 {
            counts[usize::from(dice.d20(k))] += 1;
        }
        assert_eq!(counts[0], 0);
        // 1000 expected per face; 5 standard deviations is about ±150.
        assert!(
            counts[1..].iter().all(|&c| (850..=1150).contains(&c)),
            "{counts:?}"
        );
        let mut seats: Vec<u16> = (0..40).collect();
        dice.shuffle(&mut seats);
        let mut sorted = seats.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..40).collect::<Vec<u16>>());
        assert_ne!(seats, sorted);
    }

    /// A started and revealed game of three players seated `seating` under `mode`, the first
    /// player drawn.
    fn game(mode: crate::SeatingMode, seating: Vec<u16>, first: Option<u16>) -> Vec<crate::Event> {
        let secret = DiceSecret::from_seed(9);
        let mut events: Vec<crate::Event> = (0..3)
            .map(|player| crate::Event::PlayerJoined {
                player,
                name: format!("p{player}"),
                entropy: format!("e{player}"),
                deck: None,
            })
            .collect();
        let dice = Dice::new(secret, entropy_digest(["e0", "e1", "e2"]));
        let drawn = seating[dice.first_seat(3)];
        events.push(crate::Event::GameStarted {
            first_player: first.unwrap_or(drawn),
            turn_holders: vec![drawn],
            seating,
            commitment: secret.commitment(),
            first_player_chosen: false,
            first_decided_by: None,
            bonuses: Vec::new(),
            seating_mode: mode,
        });
        events.push(crate::Event::DiceRevealed {
            secret: secret.to_hex(),
        });
        events
    }

    fn check(events: &[crate::Event]) -> Result<Verified, Mismatch> {
        verify((1..).zip(events))
    }

    #[test]
    fn verify_checks_a_random_seating_the_join_order_and_an_arranged_seating_for_what_they_are() {
        use crate::SeatingMode::{Arranged, Joined, Random};
        let secret = DiceSecret::from_seed(9);
        let mut random = vec![0, 1, 2];
        Dice::new(secret, entropy_digest(["e0", "e1", "e2"])).shuffle(&mut random);
        let verified = check(&game(Random, random.clone(), None)).unwrap();
        assert_eq!((verified.players, verified.seating), (3, Random));
        // Any other order is not the dice's.
        let mut other = random.clone();
        other.swap(0, 1);
        assert!(check(&game(Random, other.clone(), None)).is_err());
        // Join order: exactly that, the first player still drawn.
        assert_eq!(
            check(&game(Joined, vec![0, 1, 2], None)).unwrap().seating,
            Joined
        );
        let err = check(&game(Joined, vec![1, 0, 2], None)).unwrap_err();
        assert!(err.what.contains("join order"), "{err}");
        // Arranged: any order of the lobby, but the first player is still the dice's.
        assert_eq!(
            check(&game(Arranged, other.clone(), None)).unwrap().seating,
            Arranged
        );
        assert!(check(&game(Arranged, vec![0, 1, 1], None)).is_err());
        let wrong_first = (0..3)
            .find(|p| {
                Some(*p)
                    != game(Arranged, other.clone(), None)
                        .iter()
                        .find_map(|e| match e {
                            crate::Event::GameStarted { first_player, .. } => Some(*first_player),
                            _ => None,
                        })
            })
            .unwrap();
        let err = check(&game(Arranged, other, Some(wrong_first))).unwrap_err();
        assert!(err.what.contains("first player"), "{err}");
    }
}

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

#[cfg(test)]
mod tests {
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
}

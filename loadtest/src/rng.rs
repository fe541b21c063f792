//! A tiny seeded generator (SplitMix64) for the bots' choices: reproducible from `--seed`, no
//! dependency, and cheap enough for thousands of bots.

/// SplitMix64: a 64-bit state, one multiply-xorshift chain per draw.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed and a stream number (a bot's index), so every bot draws its own
    /// sequence from the one run seed.
    pub fn new(seed: u64, stream: u64) -> Self {
        let mut rng = Self(seed ^ stream.wrapping_mul(0xA076_1D64_78BD_642F));
        rng.next_u64();
        rng
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 if `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next_u64() % n }
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// A number in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// One element of a slice, if it is not empty.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> Option<T> {
        let n = u64::try_from(items.len()).ok()?;
        items.get(usize::try_from(self.below(n)).ok()?).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn same_seed_same_draws_and_streams_differ() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(7, 1);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(7, 1);
                move |_| r.next_u64()
            })
            .collect();
        let mut c = Rng::new(7, 2);
        assert_eq!(a, b);
        assert_ne!(a[0], c.next_u64());
        let mut r = Rng::new(1, 0);
        assert!((0..1000).all(|_| r.below(6) < 6));
        assert_eq!(r.pick::<u8>(&[]), None);
    }
}

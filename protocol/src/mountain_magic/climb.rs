//! The climb's rules, pure functions of the cards: a thing in common, natural enemies, sets,
//! artifacts as wild cards, where a card may go, and the path (`docs/RULES.md`, "Mountain
//! Magic").

use crate::mountain_magic_types::{Card, Class, Colour, Effect, Kind, ROWS};

/// One thing a card can have in common with another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trait {
    /// A colour.
    Colour(Colour),
    /// A type class (instants and interrupts are both fast effects).
    Class(Class),
    /// Flying.
    Flying,
    /// Landwalk of one land type.
    Landwalk(Colour),
    /// An upkeep.
    Upkeep,
    /// An activated ability.
    Ability,
    /// The kind of effect the card (or its ability) has, amounts aside.
    Effect(EffectKind),
}

/// An effect's kind, amounts aside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EffectKind {
    /// Damage.
    Damage,
    /// Counter.
    Counter,
    /// Tap.
    Tap,
    /// Untap.
    Untap,
    /// Draw.
    Draw,
    /// Discard.
    Discard,
    /// Land destruction.
    DestroyLand,
    /// Mana-pool emptying.
    EmptyPool,
}

impl From<Effect> for EffectKind {
    fn from(effect: Effect) -> Self {
        match effect {
            Effect::Damage { .. } => EffectKind::Damage,
            Effect::Counter => EffectKind::Counter,
            Effect::Tap => EffectKind::Tap,
            Effect::Untap => EffectKind::Untap,
            Effect::Draw { .. } => EffectKind::Draw,
            Effect::Discard { .. } => EffectKind::Discard,
            Effect::DestroyLand => EffectKind::DestroyLand,
            Effect::EmptyPool => EffectKind::EmptyPool,
        }
    }
}

/// Everything a card can share: its colours, its class, flying, its landwalk, an upkeep, an
/// activated ability, and its effect's (or its ability's effect's) kind.
pub fn traits(card: &Card) -> Vec<Trait> {
    let mut traits: Vec<Trait> = card.colours().into_iter().map(Trait::Colour).collect();
    traits.extend(card.kind.class().map(Trait::Class));
    if card.flying {
        traits.push(Trait::Flying);
    }
    traits.extend(card.landwalk.map(Trait::Landwalk));
    if !card.upkeep.is_empty() {
        traits.push(Trait::Upkeep);
    }
    if let Some(ability) = &card.ability {
        traits.push(Trait::Ability);
        traits.push(Trait::Effect(ability.effect.into()));
    }
    traits.extend(card.effect.map(|e| Trait::Effect(e.into())));
    traits
}

/// Whether two cards have at least one thing in common (one [`Trait`] both have).
pub fn in_common(a: &Card, b: &Card) -> bool {
    let theirs = traits(b);
    traits(a).iter().any(|t| theirs.contains(t))
}

/// A colour's two natural enemies (the colours opposite it on the colour wheel W–U–B–R–G).
pub fn natural_enemies(colour: Colour) -> [Colour; 2] {
    match colour {
        Colour::White => [Colour::Black, Colour::Red],
        Colour::Blue => [Colour::Red, Colour::Green],
        Colour::Black => [Colour::Green, Colour::White],
        Colour::Red => [Colour::White, Colour::Blue],
        Colour::Green => [Colour::Blue, Colour::Black],
    }
}

/// Whether `new` completes a set with `a` and `b`: the three are an enchantment, a sorcery
/// and a fast effect; or, for one of `new`'s colours, `a` and `b` are of its two natural
/// enemies, one each.
pub fn completes_set(new: &Card, a: &Card, b: &Card) -> bool {
    let mut classes = [new.kind.class(), a.kind.class(), b.kind.class()];
    classes.sort();
    let spell_types = classes
        == [
            Some(Class::Sorcery),
            Some(Class::Enchantment),
            Some(Class::FastEffect),
        ];
    let enemies = new.colours().into_iter().any(|colour| {
        let [e1, e2] = natural_enemies(colour);
        let (ca, cb) = (a.colours(), b.colours());
        (ca.contains(&e1) && cb.contains(&e2)) || (ca.contains(&e2) && cb.contains(&e1))
    });
    spell_types || enemies
}

/// Whether `new` may go on the adjacent cards `a` and `b`: an artifact goes on anything;
/// on an artifact, a card needs a thing in common with the other card (on two artifacts,
/// nothing); otherwise it needs a thing in common with each, or to complete a set.
pub fn may_place(new: &Card, a: &Card, b: &Card) -> bool {
    let wild = |c: &Card| c.kind == Kind::Artifact;
    match (wild(new), wild(a), wild(b)) {
        (true, _, _) | (false, true, true) => true,
        (false, true, false) => in_common(new, b),
        (false, false, true) => in_common(new, a),
        (false, false, false) => {
            (in_common(new, a) && in_common(new, b)) || completes_set(new, a, b)
        }
    }
}

/// Places in a row (the bottom row, 0, has seven).
pub fn row_len(row: u8) -> u8 {
    ROWS.saturating_sub(row)
}

/// Whether `path` (the place in each row, top row first) goes down the mountain from its top
/// card, each card touching the one above it.
pub fn is_path(path: &[u8]) -> bool {
    path.len() == usize::from(ROWS)
        && path.first() == Some(&0)
        && path
            .windows(2)
            .all(|w| w[1] == w[0] || w[1] == w[0].saturating_add(1))
}

/// Every path down the mountain (64), leftmost first.
pub fn all_paths() -> Vec<Vec<u8>> {
    (0u32..1 << (ROWS - 1))
        .map(|bits| {
            let mut path = vec![0u8];
            for k in 0..ROWS - 1 {
                let last = path.last().copied().unwrap_or(0);
                path.push(last + u8::from(bits & (1 << (ROWS - 2 - k)) != 0));
            }
            path
        })
        .collect()
}

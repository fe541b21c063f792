//! Table passwords: kept only as salted Argon2id hashes (PHC strings, with their own random
//! salt and parameters), never in plain text, so a copy of the journal does not give them away.
//!
//! Hashing and checking cost tens of milliseconds of CPU on purpose: callers run them on the
//! blocking pool (`spawn_blocking`), never on a table's actor or the connection's task, and the
//! connection layer throttles wrong guesses per address and table.

use argon2::Argon2;
use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};

/// Whether a stored password is an Argon2 PHC string (rather than a journal's old plain text).
pub(crate) fn is_hash(stored: &str) -> bool {
    stored.starts_with("$argon2")
}

/// A salted Argon2id hash of `password` as a PHC string (`$argon2id$v=19$m=…$salt$hash`).
pub(crate) fn hash(password: &str) -> Result<String, String> {
    Argon2::default()
        .hash_password(password.as_bytes())
        .map(|hash| hash.to_string())
        .map_err(|error| error.to_string())
}

/// Whether `given` is the password whose hash is `stored`. A stored value that is not a valid
/// hash matches nothing.
pub(crate) fn verify(stored: &str, given: &str) -> bool {
    let Ok(parsed) = PasswordHash::new(stored) else {
        return false;
    };
    Argon2::default()
        .verify_password(given.as_bytes(), &parsed)
        .is_ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_hash_checks_its_password_only_and_is_salted() {
        let first = hash("hunter2").unwrap();
        let second = hash("hunter2").unwrap();
        assert!(is_hash(&first));
        assert!(!first.contains("hunter2"));
        assert_ne!(first, second, "each hash has its own salt");
        assert!(verify(&first, "hunter2"));
        assert!(verify(&second, "hunter2"));
        assert!(!verify(&first, "hunter3"));
        assert!(!verify(&first, ""));
        assert!(!verify("hunter2", "hunter2"), "plain text is not a hash");
    }
}

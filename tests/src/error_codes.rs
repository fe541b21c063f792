//! Recording which (request, error code) pairs a test drove, for `tests/tests/error_codes*.rs`:
//! each test sends requests that must be refused, records the pairs, and checks it drove every
//! pair `protocol/src/errors_of.rs` names it for.

use std::collections::HashSet;

use grand_melee_protocol::errors_of::{self, Coverage};
use grand_melee_protocol::{ClientMessage, ErrorCode};

use crate::Client;

/// The pairs one test saw answered.
#[derive(Debug, Default)]
pub struct Seen(HashSet<(String, ErrorCode)>);

impl Seen {
    /// Sends a request and asserts it is refused with `code`; records the pair.
    pub async fn expect(
        &mut self,
        client: &mut Client,
        build: impl FnOnce(u32) -> ClientMessage,
        code: ErrorCode,
    ) {
        let mut name = String::new();
        let id = client.send(|id| {
            let request = build(id);
            name = request.name().to_owned();
            request
        });
        let answer = client.reply(id).await;
        assert_eq!(
            answer,
            Err(code),
            "{name} answered {answer:?}, not {code:?}"
        );
        let common = [
            ("any request", errors_of::ANY_REQUEST),
            ("any table request", errors_of::ANY_TABLE_REQUEST),
        ];
        let group = common
            .iter()
            .find(|(group, codes)| {
                codes.iter().any(|&(c, _)| c == code)
                    && (*group == "any request" || errors_of::is_table_request(&name))
            })
            .map(|(group, _)| (*group).to_owned());
        self.0.insert((group.unwrap_or(name), code));
    }

    /// Records a pair driven by other means than [`Seen::expect`] (e.g. a flood).
    pub fn saw(&mut self, request: &str, code: ErrorCode) {
        self.0.insert((request.to_owned(), code));
    }

    /// Asserts every pair the table names `test` for was seen.
    pub fn check(&self, test: &'static str) {
        let missing: Vec<_> = errors_of::pairs()
            .into_iter()
            .filter(|&(_, _, how)| how == Coverage::Driven(test))
            .filter(|&(request, code, _)| !self.0.contains(&(request.to_owned(), code)))
            .map(|(request, code, _)| format!("{request} {}", code.name()))
            .collect();
        assert!(
            missing.is_empty(),
            "errors_of names `{test}` for pairs it did not drive: {missing:?}"
        );
    }
}

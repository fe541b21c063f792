//! The page words every event itself (`describe` in `server/web/common.js`): its cases are held
//! to the protocol's list of event kinds (`Event::NAMES`, serde's own names), so an event added
//! to the protocol without words on the page, or words for an event that no longer exists,
//! fails here rather than showing "(kind)" in somebody's log.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;

use grand_melee_protocol::Event;

/// The `case "…":` labels of the `switch` in `function describe(e, …)`.
fn described(script: &str) -> BTreeSet<String> {
    let start = script
        .find("function describe(e")
        .expect("common.js has function describe(e)");
    let body = &script[start..];
    let end = body.find("default:").expect("describe has a default arm");
    body[..end]
        .split("case \"")
        .skip(1)
        .filter_map(|rest| rest.split_once("\":").map(|(kind, _)| kind.to_owned()))
        .collect()
}

#[test]
fn the_page_words_every_event_kind_and_no_other() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../server/web/common.js");
    let script = std::fs::read_to_string(path).unwrap();
    let page = described(&script);
    let protocol: BTreeSet<String> = Event::NAMES.iter().map(|n| (*n).to_owned()).collect();
    let missing: Vec<_> = protocol.difference(&page).collect();
    let unknown: Vec<_> = page.difference(&protocol).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "server/web/common.js's describe: no words for {missing:?}; words for events the protocol \
         does not have: {unknown:?}"
    );
}

#[test]
fn the_cases_are_read_from_describe_only() {
    let script = r#"
        function other(e) { switch (e.kind) { case "elsewhere": return 1; } }
        function describe(e) {
          switch (e.kind) {
            case "a": return "A";
            case "b_c": { return "B"; }
            default: return "?";
          }
        }
        case "after": "#;
    let found: Vec<String> = described(script).into_iter().collect();
    assert_eq!(found, ["a", "b_c"]);
}

//! docs/RULES.md cannot state a rule nothing checks: every section and subsection that states
//! how the server reads the rules ends with a `*Checked by:*` line naming the tests that hold
//! the server to it, and every test it names exists.
#![allow(clippy::unwrap_used)]

use std::path::Path;

/// Sections that state no rule (the heading as written).
const STATE_NO_RULE: &[&str] = &["## 17. Future rule sets"];

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// Each heading of RULES.md with the text up to the next heading.
fn sections() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(root().join("docs/RULES.md")).unwrap();
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if line.starts_with("## ") || line.starts_with("### ") {
            out.push((line.to_owned(), String::new()));
        } else if let Some((_, body)) = out.last_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    out
}

/// The `path::test` names on a section's `*Checked by:*` line, if it has one.
fn checked_by(body: &str) -> Option<Vec<String>> {
    let line = body
        .lines()
        .find_map(|l| l.trim().strip_prefix("*Checked by:*"))?;
    Some(
        line.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_owned)
            .collect(),
    )
}

#[test]
fn every_rule_in_rules_md_names_the_tests_that_check_it() {
    let mut wrong = Vec::new();
    let sections = sections();
    assert!(sections.len() > 30, "RULES.md has its sections");
    for (heading, body) in &sections {
        let names = checked_by(body);
        if STATE_NO_RULE.contains(&heading.as_str()) {
            if names.is_some() {
                wrong.push(format!("{heading}: listed as stating no rule, but checked"));
            }
            continue;
        }
        let Some(names) = names else {
            wrong.push(format!(
                "{heading}: no `*Checked by:*` line naming the tests of its rules"
            ));
            continue;
        };
        if names.is_empty() {
            wrong.push(format!("{heading}: `*Checked by:*` names no test"));
        }
        for name in names {
            let Some((file, test)) = name.split_once("::") else {
                wrong.push(format!("{heading}: `{name}` is not `path::test`"));
                continue;
            };
            let Ok(source) = std::fs::read_to_string(root().join(file)) else {
                wrong.push(format!("{heading}: `{name}`: no file {file}"));
                continue;
            };
            let defined = source.lines().any(|l| {
                let l = l.trim_start();
                let l = l.strip_prefix("async ").unwrap_or(l);
                l.strip_prefix("fn ")
                    .is_some_and(|rest| rest.strip_prefix(test).is_some_and(|r| r.starts_with('(')))
            });
            if !defined {
                wrong.push(format!("{heading}: `{name}`: no test `{test}` in {file}"));
            }
        }
    }
    assert!(wrong.is_empty(), "docs/RULES.md:\n{}", wrong.join("\n"));
}

#[test]
fn a_missing_checked_by_line_or_test_is_found() {
    assert_eq!(checked_by("text\n\nmore\n"), None);
    assert_eq!(
        checked_by("a rule\n\n*Checked by:* `a.rs::b`, `c.rs::d`.\n"),
        Some(vec!["a.rs::b".to_owned(), "c.rs::d".to_owned()])
    );
}

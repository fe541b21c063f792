//! Paths inside the manual (`docs/src/`), as `build.rs` keys the embedded files and `docs`
//! finds them: one definition for both (`build.rs` includes this file with `#[path]`).

/// The folder part of a path below docs/src (`""`, or ending with `/`).
pub(crate) fn folder(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..=i])
}

/// `a/./b/../c` as `a/c`; leading `..` are kept (`../../PROTOCOL.md`).
pub(crate) fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    parts.join("/")
}

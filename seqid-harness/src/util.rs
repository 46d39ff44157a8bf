//! Small helpers for paths, text and unique names.

use std::fs;
use std::path::{Component, Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Nanoseconds since the Unix epoch, to make temporary names unique.
pub(crate) fn nanos() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// A path without `..` components, for messages.
pub(crate) fn display_path(path: &Path) -> String {
    let mut clean = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                clean.pop();
            }
            other => clean.push(other),
        }
    }
    clean.display().to_string()
}

/// A path as a command-line argument.
pub(crate) fn path_arg(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// The last `limit` bytes (or a little less) of the file at `path`, empty if
/// it cannot be read.
pub(crate) fn tail_of(path: &Path, limit: usize) -> String {
    fs::read(path)
        .map(|bytes| tail_str(&String::from_utf8_lossy(&bytes), limit).to_owned())
        .unwrap_or_default()
}

/// The last `limit` bytes of `text`, or a little less to start on a `char`.
pub(crate) fn tail_str(text: &str, limit: usize) -> &str {
    let mut start = text.len().saturating_sub(limit);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_path_removes_parent_components() {
        assert_eq!(display_path(Path::new("/a/b/../c")), "/a/c");
    }
}

//! Turns a configuration error into `file:line:column: message`, the offending line with
//! a caret under the value, and a hint (the closest known key for a misspelt one).

use std::fmt::Write;
use std::ops::Range;
use std::path::Path;

/// Where the keys are documented; every hint ends by pointing there.
/// Where every key is described: the manual page, and the same text in the source tree
/// (and, installed from the package, in /usr/share/doc/tern).
const DOCS: &str = "docs/configuration.md, or man ternd.toml";

/// Formats an error at byte `span` of `text` (the content of `path`).
pub fn render(path: &Path, text: &str, span: Option<Range<usize>>, message: &str) -> String {
    let start = span.as_ref().map_or(0, |s| s.start.min(text.len()));
    let (line, column, line_text) = locate(text, start);
    let mut out = format!("{}:{line}:{column}: {message}", path.display());
    if span.is_some() {
        let width = span.as_ref().map_or(1, |s| s.end.saturating_sub(s.start));
        let width = width.clamp(1, line_text.len().saturating_sub(column - 1).max(1));
        let gutter = line.to_string().len();
        let _ = write!(out, "\n{:gutter$} |\n{line} | {line_text}\n{:gutter$} | ", "", "");
        let _ = write!(out, "{:pad$}{}", "", "^".repeat(width), pad = column - 1);
    }
    let _ = write!(out, "\nhint: {}", hint(message));
    out
}

/// The 1-based line and column (in characters) of byte `offset`, and that line's text.
fn locate(text: &str, offset: usize) -> (usize, usize, &str) {
    let before = text.get(..offset).unwrap_or(text);
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line_end =
        text.get(line_start..).and_then(|t| t.find('\n')).map_or(text.len(), |i| line_start + i);
    let line = before.matches('\n').count() + 1;
    let column = text.get(line_start..offset).map_or(0, |t| t.chars().count()) + 1;
    (line, column, text.get(line_start..line_end).unwrap_or("").trim_end_matches('\r'))
}

/// A hint for a serde or validation message.
fn hint(message: &str) -> String {
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let (unknown, expected) = rest.split_once('`').unwrap_or((rest, ""));
        let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
        if let Some(best) = closest(unknown, &known) {
            return format!("did you mean `{best}`? (the keys are listed in {DOCS})");
        }
        return format!("this key is not known here; the keys are listed in {DOCS}");
    }
    if let Some(rest) = message.strip_prefix("missing field `") {
        let key = rest.split('`').next().unwrap_or(rest);
        return format!("add `{key} = ...` to this table (see {DOCS})");
    }
    if message.ends_with("is listed twice") {
        return "each zone may be listed once: remove or rename one of the two".to_owned();
    }
    format!("see {DOCS} for the allowed values")
}

/// The known key closest to `unknown`, if it is close enough to be a misspelling.
fn closest<'a>(unknown: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (strsim::damerau_levenshtein(unknown, k), *k))
        .filter(|(distance, k)| *distance <= 2.max(k.len() / 3))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_at_line_and_column() {
        let text = "[server]\nlisten = [\"x\"]\n";
        let out = render(Path::new("t.toml"), text, Some(19..22), "bad address");
        assert!(out.starts_with("t.toml:2:11: bad address\n"), "{out}");
        assert!(out.contains("2 | listen = [\"x\"]\n  |           ^^^\n"), "{out}");
        assert!(out.contains("hint: see docs/configuration.md"), "{out}");
    }

    #[test]
    fn suggests_the_closest_key() {
        let message = "unknown field `listne`, expected one of `listen`, `user`, `group`";
        assert!(hint(message).starts_with("did you mean `listen`?"));
        let message = "unknown field `colour`, expected one of `listen`, `user`";
        assert!(hint(message).starts_with("this key is not known here"));
        assert!(hint("missing field `file`").starts_with("add `file = ...`"));
    }

    #[test]
    fn survives_spans_outside_the_text() {
        let out = render(Path::new("t.toml"), "a = 1", Some(40..50), "odd");
        assert!(out.starts_with("t.toml:1:6: odd"), "{out}");
        let out = render(Path::new("t.toml"), "", None, "empty");
        assert!(out.starts_with("t.toml:1:1: empty\nhint:"), "{out}");
    }
}

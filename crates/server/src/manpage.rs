//! ternd.toml(5), the configuration file's manual page (`ternd man ternd.toml`): made from
//! `docs/configuration.md` and `docs/ternd.example.toml`, embedded at compile time, so the
//! page says exactly what the documentation says and cannot drift from it.
//!
//! The converter knows the Markdown the documentation uses and no more: `#` headings,
//! paragraphs, `- ` list items, fenced code, pipe tables, and inline code, bold, italics
//! and links. A table row becomes a tagged paragraph (the first cell is the tag, the other
//! cells follow it, each but a "meaning" column named by its header), which reads better
//! on a terminal than a tbl(1) table with long cells.

/// The documentation the page is made from.
pub const CONFIGURATION: &str = include_str!("../../../docs/configuration.md");
/// The complete example, the page's EXAMPLE section.
pub const EXAMPLE: &str = include_str!("../../../docs/ternd.example.toml");

/// Headers of a table's last column that are printed bare (the text of the row).
const BARE_COLUMNS: [&str; 2] = ["meaning", "what it does"];

/// ternd.toml(5) in roff; `version` and `date` go into the page's title line.
pub fn config_page(version: &str, date: &str) -> String {
    let mut page = vec![
        format!(".TH ternd.toml 5 \"{date}\" \"ternd {version}\" \"File Formats\""),
        ".SH NAME".to_owned(),
        "ternd.toml \\- configuration file of ternd, the Tern authoritative DNS server".to_owned(),
        ".SH SYNOPSIS".to_owned(),
        "\\fB/etc/tern/ternd.toml\\fR".to_owned(),
        ".SH DESCRIPTION".to_owned(),
    ];
    page.extend(markdown(CONFIGURATION));
    page.push(".SH EXAMPLE".to_owned());
    page.push(text_line(&inline("Every key, with its default unless the comment says `example`:")));
    page.extend(code_block(EXAMPLE.lines()));
    page.extend(
        [
            ".SH FILES",
            ".TP",
            "\\fB/etc/tern/ternd.toml\\fR",
            "The configuration the packaged service reads.",
            ".TP",
            "\\fB/var/lib/tern\\fR",
            "The default \\fBstorage\\fR directory.",
            ".SH SEE ALSO",
            "\\fBternd\\fR(8)",
        ]
        .map(str::to_owned),
    );
    page.join("\n") + "\n"
}

/// The roff lines of a Markdown text (its `# ` title left out: the page has its own).
fn markdown(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    let mut paragraph: Vec<&str> = Vec::new();
    let mut request = ".PP";
    while let Some(line) = lines.next() {
        let trimmed = line.trim();
        let block = trimmed.is_empty()
            || trimmed.starts_with("```")
            || line.starts_with(['|', '#'])
            || line.starts_with("- ");
        if !block {
            paragraph.push(trimmed);
            continue;
        }
        out.extend(flow(request, &paragraph));
        paragraph.clear();
        request = ".PP";
        if trimmed.starts_with("```") {
            let code = std::iter::from_fn(|| lines.next_if(|l| !l.trim().starts_with("```")));
            out.extend(code_block(code.collect::<Vec<_>>().into_iter()));
            lines.next();
        } else if line.starts_with('|') {
            let mut rows = vec![line];
            rows.extend(std::iter::from_fn(|| lines.next_if(|l| l.starts_with('|'))));
            out.extend(table(&rows));
        } else if let Some(heading) = line.strip_prefix("### ") {
            out.extend([".SS".to_owned(), text_line(&inline(heading))]);
        } else if let Some(heading) = line.strip_prefix("## ") {
            out.extend([".SH".to_owned(), text_line(&inline(heading))]);
        } else if let Some(item) = line.strip_prefix("- ") {
            request = ".IP \\(bu 2";
            paragraph.push(item);
        }
    }
    out.extend(flow(request, &paragraph));
    out
}

/// A paragraph (`request` then its text), its inline markup converted as a whole, since
/// a code span may go on to the next line.
fn flow(request: &str, lines: &[&str]) -> Vec<String> {
    if lines.is_empty() {
        return Vec::new();
    }
    let text = inline(&lines.join("\n"));
    std::iter::once(request.to_owned()).chain(text.lines().map(text_line)).collect()
}

/// Literal lines, indented and unfilled.
fn code_block<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut out = vec![".PP".to_owned(), ".RS 4".to_owned(), ".nf".to_owned()];
    out.extend(lines.map(|line| text_line(&escape(line, true))));
    out.extend([".fi".to_owned(), ".RE".to_owned()]);
    out
}

/// A pipe table: one tagged paragraph (`.TP`) per row after the header and separator.
fn table(rows: &[&str]) -> Vec<String> {
    let mut rows = rows.iter().map(|row| cells(row)).filter(|cells| !is_separator(cells));
    let Some(header) = rows.next() else { return Vec::new() };
    let mut out = Vec::new();
    for row in rows {
        let mut row = row.iter().zip(&header);
        let Some((tag, _)) = row.next() else { continue };
        out.extend([".TP".to_owned(), text_line(&inline(tag))]);
        let mut fields: Vec<String> = Vec::new();
        for (index, (cell, head)) in row.enumerate() {
            let last = index + 2 == header.len();
            fields.push(if last && BARE_COLUMNS.contains(&head.as_str()) {
                text_line(&inline(cell))
            } else {
                text_line(&format!("{}: {}", capitalized(head), inline(cell)))
            });
        }
        out.push(fields.join("\n.br\n"));
    }
    out
}

/// The cells of `| a | b |`, trimmed; a `|` inside inline code does not split.
fn cells(row: &str) -> Vec<String> {
    let row = row.trim().trim_start_matches('|').trim_end_matches('|');
    let mut cells = vec![String::new()];
    let mut in_code = false;
    for c in row.chars() {
        match c {
            '|' if !in_code => cells.push(String::new()),
            _ => {
                in_code ^= c == '`';
                if let Some(cell) = cells.last_mut() {
                    cell.push(c);
                }
            }
        }
    }
    cells.iter().map(|cell| cell.trim().to_owned()).collect()
}

/// `|---|:--|` (the line under a table's header).
fn is_separator(cells: &[String]) -> bool {
    cells.iter().all(|cell| !cell.is_empty() && cell.chars().all(|c| c == '-' || c == ':'))
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|first| first.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// Inline Markdown in roff: `code` and **bold** in bold, *emphasis* in italics, a link as
/// its text (and its address, when that is a URL rather than a file of the repository).
fn inline(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while !rest.is_empty() {
        if let Some((code, tail)) = rest.strip_prefix('`').and_then(|r| r.split_once('`')) {
            out.push_str(&format!("\\fB{}\\fR", escape(code, true)));
            rest = tail;
        } else if let Some((bold, tail)) = rest.strip_prefix("**").and_then(|r| r.split_once("**"))
        {
            out.push_str(&format!("\\fB{}\\fR", inline(bold)));
            rest = tail;
        } else if let Some((italic, tail)) = rest.strip_prefix('*').and_then(|r| r.split_once('*'))
        {
            out.push_str(&format!("\\fI{}\\fR", inline(italic)));
            rest = tail;
        } else if let Some((label, url, tail)) = link(rest) {
            out.push_str(&inline(label));
            if url.starts_with("https://") || url.starts_with("http://") {
                out.push_str(&format!(" <{}>", escape(url, true)));
            }
            rest = tail;
        } else {
            let mut chars = rest.chars();
            if let Some(c) = chars.next() {
                out.push_str(&escape_char(c, false));
            }
            rest = chars.as_str();
        }
    }
    out
}

/// `[label](url)` at the start of `text`: the label, the address and what follows.
fn link(text: &str) -> Option<(&str, &str, &str)> {
    let (label, tail) = text.strip_prefix('[')?.split_once(']')?;
    let (url, tail) = tail.strip_prefix('(')?.split_once(')')?;
    Some((label, url, tail))
}

/// `text` with roff's special characters escaped; in `literal` text a hyphen is a minus
/// sign, so that keys and commands copied from the page work.
fn escape(text: &str, literal: bool) -> String {
    text.chars().map(|c| escape_char(c, literal)).collect()
}

fn escape_char(c: char, literal: bool) -> String {
    match c {
        '\\' => "\\e".to_owned(),
        '-' if literal => "\\-".to_owned(),
        c if c.is_ascii() => c.to_string(),
        c => format!("\\[u{:04X}]", u32::from(c)),
    }
}

/// A text line that roff does not take for a request (a leading `.` or `'`).
fn text_line(text: &str) -> String {
    match text.starts_with(['.', '\'']) {
        true => format!("\\&{text}"),
        false => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_markup() {
        assert_eq!(
            inline("a `udp-workers` *restart* **SIGHUP** [`x.toml`](x.toml) [RFC](https://r.example/a-b)"),
            "a \\fBudp\\-workers\\fR \\fIrestart\\fR \\fBSIGHUP\\fR \\fBx.toml\\fR RFC <https://r.example/a\\-b>"
        );
        assert_eq!(
            inline("[IPv6]:PORT — 0.2–0.4 µs"),
            "[IPv6]:PORT \\[u2014] 0.2\\[u2013]0.4 \\[u00B5]s"
        );
        assert_eq!(inline("a\\b * c"), "a\\eb * c");
        assert_eq!(text_line(".x"), "\\&.x");
    }

    #[test]
    fn tables_become_tagged_paragraphs() {
        let rows =
            ["| key | default | meaning |", "|---|---|---|", "| `a-b` | `1` | One `|` two. |"];
        assert_eq!(
            table(&rows).join("\n"),
            ".TP\n\\fBa\\-b\\fR\nDefault: \\fB1\\fR\n.br\nOne \\fB|\\fR two."
        );
        let rows = ["| class | answers |", "|---|---|", "| nodata | NOERROR |"];
        assert_eq!(table(&rows).join("\n"), ".TP\nnodata\nAnswers: NOERROR");
    }

    #[test]
    fn blocks() {
        let text =
            "# Title\n\nOne `a\nb`.\n\n## `[log]`\n\n```toml\n.x = \"a-b\"\n```\n- item\n  more\n";
        assert_eq!(
            markdown(text).join("\n"),
            ".PP\nOne \\fBa\nb\\fR.\n.SH\n\\fB[log]\\fR\n.PP\n.RS 4\n.nf\n\\&.x = \"a\\-b\"\n.fi\n.RE\n.IP \\(bu 2\nitem\nmore"
        );
    }

    /// Every key the documentation's tables name is a tag of the page, and no Markdown is
    /// left over.
    #[test]
    fn the_page_has_every_documented_key() {
        let page = config_page("0.0.0", "2026-01-01");
        let keys: Vec<&str> = CONFIGURATION
            .lines()
            .filter_map(|line| line.strip_prefix("| `")?.split('`').next())
            .collect();
        assert!(keys.len() > 70, "{keys:?}");
        for key in keys {
            assert!(page.contains(&format!("\\fB{}\\fR", escape(key, true))), "{key} missing");
        }
        let mut literal = false;
        for line in markdown(CONFIGURATION) {
            literal = (literal || line == ".nf") && line != ".fi";
            let left = ["`", "**", "]("].iter().any(|m| line.contains(m));
            let left = left || line.starts_with(['#', '|']);
            assert!(literal || !left, "Markdown left in {line:?}");
        }
        assert!(page.contains("\n.SH EXAMPLE\n") && page.contains("max\\-zone\\-size = \"4G\""));
    }
}

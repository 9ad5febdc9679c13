//! Manual pages from a clap command line, for `ternctl(8)` and `ternd(8)`: clap's
//! sections (name, synopsis, description, options, the `after_help` examples), the
//! subcommands under COMMANDS named as they are typed — clap names a page for each
//! (`ternd\-demo(8)`), and no such page exists — then the page's own sections (signals,
//! files, exit status, see also: roff the caller writes) and the version.

use std::io;

/// The page of `command` in manual section 8, with `sections` (roff) before VERSION.
pub fn page(command: clap::Command, sections: &str) -> io::Result<String> {
    let name = command.get_name().to_owned();
    let man = clap_mangen::Man::new(command).section("8");
    let mut head = Vec::new();
    man.render_title(&mut head)?;
    man.render_name_section(&mut head)?;
    man.render_synopsis_section(&mut head)?;
    man.render_description_section(&mut head)?;
    man.render_options_section(&mut head)?;
    let mut commands = Vec::new();
    man.render_subcommands_section(&mut commands)?;
    let mut examples = Vec::new();
    man.render_extra_section(&mut examples)?;
    let mut version = Vec::new();
    man.render_version_section(&mut version)?;
    let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
    let commands = text(commands).replace(".SH SUBCOMMANDS", ".SH COMMANDS");
    Ok([text(head), typed(&name, &commands), text(examples), sections.to_owned(), text(version)]
        .concat())
}

/// `section` with each `NAME\-SUB(8)` entry written as typed, `\fBNAME SUB\fR`.
fn typed(name: &str, section: &str) -> String {
    let prefix = format!("{}\\-", name.replace('-', "\\-"));
    section
        .lines()
        .map(|line| match line.strip_prefix(&prefix).and_then(|l| l.strip_suffix("(8)")) {
            Some(sub) => format!("\\fB{name} {sub}\\fR\n"),
            None => format!("{line}\n"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subcommands_are_named_as_typed_and_sections_come_before_the_version() {
        let command = clap::Command::new("tool")
            .version("1.2")
            .about("Does things")
            .subcommand(clap::Command::new("check-all").about("Checks"));
        let page = page(command, ".SH FILES\nnone\n").unwrap();
        assert!(page.contains(".SH COMMANDS\n.TP\n\\fBtool check\\-all\\fR\nChecks"), "{page}");
        assert!(!page.contains("(8)\n"), "{page}");
        let files = page.find(".SH FILES").unwrap();
        assert!(files < page.find(".SH VERSION").unwrap(), "{page}");
    }
}

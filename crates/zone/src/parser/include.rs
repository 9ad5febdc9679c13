//! `$INCLUDE <file> [<origin>]` (RFC 1035 §5.1).
//!
//! * A relative path is taken relative to the directory of the including file (as Knot
//!   DNS does; BIND uses its working directory), so a zone and its parts can move
//!   together.
//! * The included file starts with the given origin (relative to the current one) or the
//!   current origin, no previous owner, and the includer's `$TTL` and last TTL. Whatever
//!   it changes — origin, owner, `$TTL` — ends with it (RFC 1035 §5.1 for the origin;
//!   Knot DNS scopes the rest the same way, BIND lets `$TTL` leak out).
//! * It can be turned off (`Options::allow_include`), nesting is limited
//!   (`Options::max_include_depth`), and a file that is already being read cannot be
//!   included again (recursion, direct or mutual).
//! * Only a regular file is read, within `Options::max_file_size` (the `file` module):
//!   `$INCLUDE /dev/zero` or a FIFO is refused at the directive.

use std::path::{Path, PathBuf};

use tern_wire::rdata::fields::unescape_into;
use tern_wire::text::{Lexer, Token};

use super::driver::{Failure, Frame, Parser, Scope, Stop};
use super::entry::parse_name;
use super::file::{open_regular, Regular};
use crate::error::{shown_path, Error};

impl Parser<'_, '_> {
    /// Reads an `$INCLUDE` entry and the file it names.
    pub(super) fn include(
        &mut self,
        keyword: &Token<'_>,
        lx: &mut Lexer<'_>,
        scope: &mut Scope<'_>,
    ) -> Result<(), Failure> {
        let file = lx.expect("a file name after $INCLUDE")?;
        let origin = match lx.next_token()? {
            Some(token) => parse_name(&token, &scope.origin)?,
            None => scope.origin.clone(),
        };
        lx.expect_end()?;
        let (path, opened) = self.open_include(keyword, &file)?;
        if let Some(frame) = self.frames.last_mut() {
            frame.include_line = keyword.line();
        }
        self.files_opened += 1;
        let number = self.files_opened;
        self.frames.push(Frame { path, id: Some(opened.id), include_line: 0, number });
        let inner = scope.for_include(origin);
        let result = self.read_file(opened.file, Some(opened.size), &inner);
        self.frames.pop();
        result.map_err(|Stop| Failure::Stop)
    }

    /// Checks the rules and opens the file: its path and the open file.
    fn open_include(
        &self,
        keyword: &Token<'_>,
        file: &Token<'_>,
    ) -> Result<(PathBuf, Regular), Failure> {
        if !self.options.allow_include {
            return Err(self.include_error(keyword, "$INCLUDE is not allowed for this zone text"));
        }
        let depth = self.frames.len();
        if depth > self.options.max_include_depth {
            let limit = self.options.max_include_depth;
            return Err(
                self.include_error(keyword, &format!("$INCLUDE nested deeper than {limit} files"))
            );
        }
        let path = self.include_path(file)?;
        let shown = shown_path(&path);
        let opened = open_regular(&path, self.options.max_file_size)
            .map_err(|e| self.include_error(file, &format!("cannot read '{shown}': {e}")))?;
        if self.frames.iter().any(|f| f.id == Some(opened.id)) {
            let message = format!("recursive $INCLUDE: '{shown}' is already being read");
            return Err(self.include_error(file, &message));
        }
        Ok((path, opened))
    }

    /// The file name token as a path, relative to the including file's directory.
    fn include_path(&self, file: &Token<'_>) -> Result<PathBuf, Failure> {
        let mut bytes = Vec::with_capacity(file.text.len());
        unescape_into(file, &mut bytes)?;
        let name = String::from_utf8(bytes)
            .map_err(|_| file.error("the $INCLUDE file name is not UTF-8"))?;
        let name = Path::new(&name);
        let base = self.frames.last().and_then(|f| f.path.parent());
        Ok(match base {
            Some(dir) if name.is_relative() => dir.join(name),
            _ => name.to_path_buf(),
        })
    }

    /// An include error at a token of the current file.
    fn include_error(&self, token: &Token<'_>, message: &str) -> Failure {
        let at = Box::new(self.position(token.line(), token.column()));
        Failure::Located(Error::Include { at, message: message.to_owned() })
    }
}

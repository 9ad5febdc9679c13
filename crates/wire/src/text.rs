//! The presentation-format lexer (RFC 1035 §5.1): splits text into entries and tokens.
//!
//! An *entry* is one logical line: it ends at a newline outside parentheses. Inside an
//! entry the lexer yields [`Token`]s: unquoted character runs (a backslash escapes the
//! next byte, so `a\ b` is one token) and quoted strings (quotes removed, escapes kept).
//! Comments (`;` to end of line) and parentheses are consumed here; escapes are left in
//! the token for the field parser (names, character strings) to interpret.
//!
//! The lexer borrows its input and never allocates. A zone file is read in chunks that end
//! at a line end: a lexer [`continuing`](Lexer::continuing) such a chunk reports an entry
//! whose parentheses run past it as [incomplete](Lexer::incomplete), and the reader starts
//! the next chunk at that entry ([`Lexer::entry_start`]).

use std::cell::Cell;
use std::fmt::Write as _;

use crate::error::{Error, Result};
use crate::types::parse_decimal;

/// Byte classes for the scanning loop.
const PLAIN: u8 = 0;
const BLANK: u8 = 1;
const NEWLINE: u8 = 2;
const SPECIAL: u8 = 3;
const ESCAPE: u8 = 4;

/// The scanning class of a byte, by definition.
const fn class_of(b: u8) -> u8 {
    match b {
        b' ' | b'\t' | b'\r' => BLANK,
        b'\n' => NEWLINE,
        b'(' | b')' | b';' | b'"' => SPECIAL,
        b'\\' => ESCAPE,
        _ => PLAIN,
    }
}

/// [`class_of`] for every byte, so the scanning loops do one load per byte.
static CLASSES: [u8; 256] = {
    let mut table = [PLAIN; 256];
    let mut b = 0u8;
    loop {
        #[allow(clippy::indexing_slicing)] // constant evaluation: b < 256
        {
            table[b as usize] = class_of(b);
        }
        if b == u8::MAX {
            break table;
        }
        b += 1;
    }
};

/// The scanning class of a byte.
#[inline]
fn class(b: u8) -> u8 {
    // A u8 always indexes a 256-entry table; the check compiles away.
    CLASSES.get(usize::from(b)).copied().unwrap_or(PLAIN)
}

/// The most bytes of a token that a message quotes (see [`excerpt`]).
pub const EXCERPT: usize = 40;

/// The top bit of [`Token`]'s `column_quoted`: the token was a quoted string.
const QUOTED: u32 = 1 << 31;
/// The largest column a [`Token`] keeps (the bits below [`QUOTED`]).
const MAX_COLUMN: u32 = QUOTED - 1;

/// The length of the run of plain bytes that `bytes` starts with. Looks at four bytes a
/// step while four are left (one bounds check for four bytes, not one a byte).
#[inline(always)]
fn plain_run(bytes: &[u8]) -> usize {
    let mut len = 0;
    for quad in bytes.chunks_exact(4) {
        if let Some(i) = quad.iter().position(|&b| class(b) != PLAIN) {
            return len + i;
        }
        len += 4;
    }
    let tail = bytes.get(len..).unwrap_or_default();
    len + tail.iter().position(|&b| class(b) != PLAIN).unwrap_or(tail.len())
}

/// One token of an entry.
///
/// 24 bytes with no padding, so that the lexer's callers pass it around in registers:
/// whether the token was quoted is kept in the top bit of its column, columns above
/// 2^31-1 (on lines longer than 2 GiB) reading as 2^31-1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token<'a> {
    /// The raw text: quotes removed, escapes still in place.
    pub text: &'a [u8],
    /// Line of the token's first byte (1-based).
    line: u32,
    /// Column of the token's first byte (1-based, in bytes), and [`QUOTED`].
    column_quoted: u32,
}

impl<'a> Token<'a> {
    /// A token of `text` (quoted or not) whose first byte is at `line` and `column`.
    #[inline]
    pub fn new(text: &'a [u8], quoted: bool, line: u32, column: u32) -> Token<'a> {
        let quoted = if quoted { QUOTED } else { 0 };
        Token { text, line, column_quoted: column.min(MAX_COLUMN) | quoted }
    }

    /// A token standing for a whole string, at line 1, column 1 (for parsing values that
    /// did not come from a file).
    pub fn whole(text: &'a [u8]) -> Token<'a> {
        Token::new(text, false, 1, 1)
    }

    /// True if the token was a quoted string.
    #[inline]
    pub fn quoted(&self) -> bool {
        self.column_quoted & QUOTED != 0
    }

    /// Line of the token's first byte (1-based).
    #[inline]
    pub fn line(&self) -> u32 {
        self.line
    }

    /// Column of the token's first byte (1-based, in bytes; for a quoted string, its
    /// opening quote).
    #[inline]
    pub fn column(&self) -> u32 {
        self.column_quoted & !QUOTED
    }

    /// A syntax error located at this token.
    pub fn error(&self, message: impl Into<String>) -> Error {
        Error::syntax(self.line, self.column(), message)
    }

    /// The token as error messages quote it: see [`excerpt`].
    pub fn display(&self) -> String {
        excerpt(self.text)
    }

    /// Parses an unsigned decimal number that must fit `T`.
    #[inline]
    pub fn number<T: TryFrom<u64>>(&self, what: &str) -> Result<T> {
        match parse_decimal(self.text).and_then(|v| T::try_from(v).ok()) {
            Some(value) => Ok(value),
            None => Err(self.not_a(what)),
        }
    }

    /// The error for a token that is not the `what` expected.
    #[cold]
    #[inline(never)]
    fn not_a(&self, what: &str) -> Error {
        self.error(format!("expected {what}, found '{}'", self.display()))
    }

    /// Parses a TTL: seconds, or BIND-style units (`1w2d3h4m5s`), at most 2^31-1
    /// (RFC 2181 §8).
    pub fn ttl(&self) -> Result<u32> {
        parse_ttl(self.text).ok_or_else(|| {
            self.error(format!(
                "expected a TTL (seconds or 1w2d3h4m5s), found '{}'",
                self.display()
            ))
        })
    }
}

/// Text from a file as a message may quote it: printable ASCII as it is, every other byte
/// (NUL, terminal escape sequences, bytes of UTF-8 sequences) as a `\DDD` escape, as zone
/// files write them (RFC 1035 §5.1), and only the first [`EXCERPT`] bytes, then `…` and
/// the length. Messages reach terminals and logs, and may be about a file that was
/// never meant to be read as a zone (an `$INCLUDE` of a key file): a hostile 100 MB token
/// is not copied into every message, nor a secret into the log whole.
pub fn excerpt(text: &[u8]) -> String {
    let head = text.get(..EXCERPT).unwrap_or(text);
    let mut out = String::with_capacity(head.len() + 16);
    for &b in head {
        if b == b' ' || b.is_ascii_graphic() {
            out.push(char::from(b));
        } else {
            out.push('\\');
            out.push(char::from(b'0' + b / 100));
            out.push(char::from(b'0' + b / 10 % 10));
            out.push(char::from(b'0' + b % 10));
        }
    }
    if text.len() > head.len() {
        // Writing into a String cannot fail.
        let _ = write!(out, "… ({} bytes)", text.len());
    }
    out
}

/// Parses a TTL in seconds or with `w d h m s` units; `None` if malformed or above
/// 2^31-1.
pub fn parse_ttl(text: &[u8]) -> Option<u32> {
    parse_duration(text).filter(|v| *v <= 0x7FFF_FFFF)
}

/// Parses a duration in seconds or with `w d h m s` units (`1w2d3h4m5s`), up to 2^32-1;
/// `None` if malformed or larger. The zone-file parser uses it to tell a TTL above 2^31-1
/// (RFC 2181 §8: taken as zero) from one that is not a number at all.
pub fn parse_duration(text: &[u8]) -> Option<u32> {
    const MAX: u64 = 0xFFFF_FFFF;
    if text.is_empty() {
        return None;
    }
    if let Some(v) = parse_decimal(text) {
        return u32::try_from(v).ok();
    }
    let mut total: u64 = 0;
    let mut current: Option<u64> = None;
    for &b in text {
        if b.is_ascii_digit() {
            let v = current.unwrap_or(0) * 10 + u64::from(b - b'0');
            if v > MAX {
                return None;
            }
            current = Some(v);
            continue;
        }
        let unit = match b.to_ascii_lowercase() {
            b'w' => 604_800,
            b'd' => 86_400,
            b'h' => 3_600,
            b'm' => 60,
            b's' => 1,
            _ => return None,
        };
        total += current.take()? * unit;
        if total > MAX {
            return None;
        }
    }
    if current.is_some() {
        return None; // a trailing number without unit after units, e.g. "1h30"
    }
    u32::try_from(total).ok()
}

/// How an entry begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// True when the line starts with a blank: the owner is omitted (RFC 1035 §5.1).
    pub blank_owner: bool,
    /// Line where the entry starts.
    pub line: u32,
}

/// Splits presentation-format text into entries and tokens.
#[derive(Debug, Clone)]
pub struct Lexer<'a> {
    input: &'a [u8],
    /// Where reading is.
    at: Cursor,
    /// Whether tokens are read from the input, from `peeked`, or not at all (one byte,
    /// the only thing the usual path of [`Lexer::next_token`] checks).
    state: Cell<State>,
    /// The token [`Lexer::peek_token`] read and where reading is after it, so that the
    /// next [`Lexer::next_token`] does not read it again.
    peeked: Cell<(Option<Token<'a>>, Cursor)>,
    /// True when more text follows the input (a chunk of a file).
    more_follows: bool,
    /// Set once an entry ran into the end of an input that more text follows: the line
    /// where its open parenthesis was.
    incomplete: Cell<Option<u32>>,
}

/// Where the lexer is with the current entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// The entry's next token is read from the input.
    Reading,
    /// [`Lexer::peek_token`] has read the next token (or the entry's end): it is in
    /// `peeked`.
    Peeked,
    /// The entry has ended (or the first entry has not started).
    Done,
}

/// Everything that moves as the lexer reads.
#[derive(Debug, Clone, Copy)]
struct Cursor {
    pos: usize,
    line: u32,
    line_start: usize,
    /// Line of the open parenthesis, when inside one.
    paren_line: Option<u32>,
    /// Line and column where the last entry ended, for "expected ..." errors.
    end: (u32, u32),
}

impl Cursor {
    /// The start of the input, before the first entry.
    const START: Cursor = Cursor { pos: 0, line: 1, line_start: 0, paren_line: None, end: (1, 1) };
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `input`, before the first entry.
    pub fn new(input: &'a [u8]) -> Lexer<'a> {
        Lexer {
            input,
            at: Cursor::START,
            state: Cell::new(State::Done),
            peeked: Cell::new((None, Cursor::START)),
            more_follows: false,
            incomplete: Cell::new(None),
        }
    }

    /// A lexer over one chunk of a longer text: `input` starts at a line start, on line
    /// `line`, and (when `more_follows`) ends just after a newline.
    pub fn continuing(input: &'a [u8], line: u32, more_follows: bool) -> Lexer<'a> {
        let start = Cursor { line, ..Cursor::START };
        Lexer { at: start, peeked: Cell::new((None, start)), more_follows, ..Lexer::new(input) }
    }

    /// True when the current entry's parentheses are still open at the end of an input
    /// that more text follows: the entry failed only for want of the rest, and must be
    /// read again from [`Lexer::entry_start`] with more text.
    pub fn incomplete(&self) -> bool {
        self.incomplete.get().is_some()
    }

    /// When [`incomplete`](Self::incomplete): the line of the parenthesis still open at
    /// the end of the input.
    pub fn open_paren_at_end(&self) -> Option<u32> {
        self.incomplete.get()
    }

    /// Continues, at the start of this input, an entry of the previous chunk that is
    /// inside parentheses opened at `paren_line` (to skip the rest of an entry that
    /// failed there: [`Lexer::abandon_entry`] next).
    pub fn resume_inside_parens(&mut self, paren_line: u32) {
        self.at.paren_line = Some(paren_line);
        self.state.set(State::Reading);
    }

    /// Offset and line where the next entry starts looking, for resuming: call it before
    /// [`Lexer::next_entry`].
    pub fn entry_start(&self) -> (usize, u32) {
        (self.at.pos, self.at.line)
    }

    /// A lexer over a single entry's fields (for example rdata given as a string): tokens
    /// can be read at once, without [`Lexer::next_entry`].
    pub fn for_fields(input: &'a [u8]) -> Lexer<'a> {
        Lexer { state: Cell::new(State::Reading), ..Lexer::new(input) }
    }

    /// Current line (1-based).
    pub fn line(&self) -> u32 {
        self.at.line
    }

    /// A syntax error at the current position.
    pub fn error_here(&self, message: impl Into<String>) -> Error {
        Error::syntax(self.at.line, self.column(), message)
    }

    fn column(&self) -> u32 {
        self.column_at(self.at.pos)
    }

    /// The column of the byte at `pos`, on the current line.
    fn column_at(&self, pos: usize) -> u32 {
        u32::try_from(pos - self.at.line_start + 1).unwrap_or(u32::MAX)
    }

    /// [`Lexer::column_at`] as a [`Token`] keeps it (at most [`MAX_COLUMN`]), in one step.
    #[inline(always)]
    fn token_column(&self, pos: usize) -> u32 {
        let column = (pos - self.at.line_start + 1).min(MAX_COLUMN as usize);
        u32::try_from(column).unwrap_or(MAX_COLUMN)
    }

    fn peek(&self) -> Option<u8> {
        self.input.get(self.at.pos).copied()
    }

    fn newline(&mut self) {
        self.at.pos += 1;
        self.at.line = self.at.line.saturating_add(1); // past 4G lines, stay at the last
        self.at.line_start = self.at.pos;
    }

    /// Moves to the next entry, skipping blank and comment-only lines; `None` at the end
    /// of the input. Any unread tokens of the current entry are skipped first.
    pub fn next_entry(&mut self) -> Result<Option<Entry>> {
        if self.state.get() != State::Done {
            self.skip_rest_of_entry()?;
        }
        loop {
            let at_start = self.at.pos == self.at.line_start;
            let line = self.at.line;
            let blank = matches!(self.peek(), Some(b' ' | b'\t'));
            self.skip_blanks();
            match self.peek() {
                None => return Ok(None),
                Some(b'\n') => self.newline(),
                Some(b';') => self.skip_comment(),
                Some(_) => {
                    self.state.set(State::Reading);
                    let blank_owner = blank || !at_start;
                    return Ok(Some(Entry { blank_owner, line }));
                }
            }
        }
    }

    /// Skips whatever is left of the current entry (for error recovery).
    pub fn skip_rest_of_entry(&mut self) -> Result<()> {
        while self.next_token()?.is_some() {}
        Ok(())
    }

    /// Gives up on the current entry after an error: skips the rest of the entry if it
    /// can still be read, else (a lexical error such as a nested parenthesis) skips to the
    /// start of the next line and forgets any open parenthesis. Always makes progress, so
    /// a caller that collects errors cannot loop.
    pub fn abandon_entry(&mut self) {
        if self.skip_rest_of_entry().is_ok() {
            return;
        }
        self.skip_comment(); // to the newline, or the end of the input
        if self.peek().is_some() {
            self.newline();
        }
        self.at.paren_line = None;
        self.state.set(State::Done);
    }

    /// Where the blanks from the reading position end (byte by byte: they are usually a
    /// single one).
    #[inline(always)]
    fn after_blanks(&self) -> usize {
        let mut pos = self.at.pos;
        while self.input.get(pos).is_some_and(|&b| class(b) == BLANK) {
            pos += 1;
        }
        pos
    }

    fn skip_blanks(&mut self) {
        self.at.pos = self.after_blanks();
    }

    /// Moves to the end of the line (the newline, or the end of the input).
    fn skip_comment(&mut self) {
        let rest = self.input.get(self.at.pos..).unwrap_or_default();
        self.at.pos += rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
    }

    /// The next token of the current entry, or `None` at its end.
    ///
    /// Inlined into its callers: the common case, a run of plain bytes after the blanks,
    /// is read here; everything else is read out of line.
    #[allow(clippy::should_implement_trait)] // fallible, so not an Iterator
    #[inline(always)]
    pub fn next_token(&mut self) -> Result<Option<Token<'a>>> {
        match self.state.get() {
            State::Reading => {
                if let Some(token) = self.plain_token() {
                    return Ok(Some(token));
                }
            }
            State::Done => return Ok(None),
            State::Peeked => {}
        }
        self.next_token_slow()
    }

    /// The next token when it is plain bytes (no quote, escape or parenthesis) after the
    /// blanks; `None` (having moved nothing) for anything else.
    #[inline(always)]
    fn plain_token(&mut self) -> Option<Token<'a>> {
        let pos = self.after_blanks();
        let rest = self.input.get(pos..)?;
        let len = plain_run(rest);
        let (text, after) = rest.split_at_checked(len)?;
        if len == 0 || after.first().is_some_and(|&b| class(b) == ESCAPE) {
            return None;
        }
        self.at.pos = pos + len;
        Some(Token { text, line: self.at.line, column_quoted: self.token_column(pos) })
    }

    /// Moves past the token [`Lexer::peek_token`] read and returns it (`None`, the
    /// entry's end, leaves the entry ended).
    fn take_peeked(&mut self) -> Option<Token<'a>> {
        let (token, after) = self.peeked.get();
        self.state.set(if token.is_some() { State::Reading } else { State::Done });
        self.at = after;
        token
    }

    /// [`Lexer::next_token`] after a peek, at the end of an entry, and past newlines,
    /// comments, parentheses, quotes and escapes.
    #[inline(never)]
    fn next_token_slow(&mut self) -> Result<Option<Token<'a>>> {
        match self.state.get() {
            State::Peeked => return Ok(self.take_peeked()),
            State::Done => return Ok(None),
            State::Reading => {}
        }
        loop {
            self.skip_blanks();
            match self.peek() {
                None => return self.end_of_input(),
                Some(b'\n') => {
                    if self.at.paren_line.is_none() {
                        self.end_entry_at_newline();
                        return Ok(None);
                    }
                    self.newline();
                }
                Some(b';') => self.skip_comment(),
                Some(b'(') => self.open_paren()?,
                Some(b')') => self.close_paren()?,
                Some(b'"') => return self.quoted().map(Some),
                Some(_) => return self.unquoted().map(Some),
            }
        }
    }

    /// Ends the entry at the newline where reading is (outside parentheses).
    fn end_entry_at_newline(&mut self) {
        self.at.end = (self.at.line, self.column());
        self.newline();
        self.state.set(State::Done);
    }

    fn end_of_input(&mut self) -> Result<Option<Token<'a>>> {
        self.state.set(State::Done);
        self.at.end = (self.at.line, self.column());
        match self.at.paren_line.take() {
            Some(line) => {
                if self.more_follows {
                    self.incomplete.set(Some(line));
                }
                Err(self
                    .error_here(format!("end of input inside parentheses opened at line {line}")))
            }
            None => Ok(None),
        }
    }

    fn open_paren(&mut self) -> Result<()> {
        if let Some(line) = self.at.paren_line {
            return Err(
                self.error_here(format!("nested '(' (one is already open since line {line})"))
            );
        }
        self.at.paren_line = Some(self.at.line);
        self.at.pos += 1;
        Ok(())
    }

    fn close_paren(&mut self) -> Result<()> {
        if self.at.paren_line.take().is_none() {
            return Err(self.error_here("')' without a matching '('"));
        }
        self.at.pos += 1;
        Ok(())
    }

    fn token(&self, start: usize, end: usize, quoted: bool, column: u32) -> Token<'a> {
        Token::new(self.input.get(start..end).unwrap_or(&[]), quoted, self.at.line, column)
    }

    fn unquoted(&mut self) -> Result<Token<'a>> {
        let (start, column) = (self.at.pos, self.column());
        loop {
            self.at.pos += plain_run(self.input.get(self.at.pos..).unwrap_or_default());
            if self.peek() != Some(b'\\') {
                break;
            }
            self.escape()?;
        }
        Ok(self.token(start, self.at.pos, false, column))
    }

    /// Steps over a backslash and the byte it escapes.
    fn escape(&mut self) -> Result<()> {
        match self.input.get(self.at.pos + 1) {
            None => Err(self.error_here("backslash at the end of the input")),
            Some(b'\n') => Err(self.error_here("backslash before the end of the line")),
            Some(_) => {
                self.at.pos += 2;
                Ok(())
            }
        }
    }

    fn quoted(&mut self) -> Result<Token<'a>> {
        let column = self.column();
        self.at.pos += 1;
        let start = self.at.pos;
        loop {
            match self.peek() {
                None | Some(b'\n') => {
                    return Err(Error::syntax(self.at.line, column, "unterminated quoted string"));
                }
                Some(b'"') => break,
                Some(b'\\') => self.escape()?,
                Some(_) => self.at.pos += 1,
            }
        }
        let token = self.token(start, self.at.pos, true, column);
        self.at.pos += 1;
        Ok(token)
    }

    /// True when the next token of the entry is the unquoted text `text`, which must
    /// start with a backslash (the generic RDATA marker `\#`, RFC 3597 §5). The usual
    /// answer, a token that starts with a plain byte after the blanks, is found without
    /// reading the token; anything else is left to [`Lexer::peek_token`].
    pub fn next_is_escaped(&self, text: &[u8]) -> Result<bool> {
        if text.first() == Some(&b'\\') && self.state.get() == State::Reading {
            let pos = self.after_blanks();
            if self.input.get(pos).is_some_and(|&b| class(b) == PLAIN) {
                return Ok(false); // a plain first byte: not a backslash
            }
        }
        Ok(self.peek_token()?.is_some_and(|t| t.text == text && !t.quoted()))
    }

    /// The next token without consuming it (read once: the next [`Lexer::next_token`]
    /// returns it without reading it again).
    pub fn peek_token(&self) -> Result<Option<Token<'a>>> {
        if self.state.get() == State::Peeked {
            return Ok(self.peeked.get().0);
        }
        let mut ahead = self.clone();
        let token = ahead.next_token();
        if ahead.incomplete() {
            self.incomplete.set(ahead.incomplete.get());
        }
        let token = token?;
        self.state.set(State::Peeked);
        self.peeked.set((token, ahead.at));
        Ok(token)
    }

    /// The next token, which must exist; `what` names it for the error message, which
    /// points at the end of the entry.
    #[inline(always)]
    pub fn expect(&mut self, what: &str) -> Result<Token<'a>> {
        if self.state.get() == State::Reading {
            if let Some(token) = self.plain_token() {
                return Ok(token);
            }
        }
        self.expect_slow(what)
    }

    /// [`Lexer::expect`] past anything but a plain token.
    #[inline(never)]
    fn expect_slow(&mut self, what: &str) -> Result<Token<'a>> {
        match self.next_token_slow()? {
            Some(token) => Ok(token),
            None => Err(self.missing(what)),
        }
    }

    /// The error for a token [`Lexer::expect`] did not find, at the end of the entry.
    #[cold]
    #[inline(never)]
    fn missing(&self, what: &str) -> Error {
        let (line, column) = self.at.end;
        Error::syntax(line, column, format!("expected {what}"))
    }

    /// Succeeds when the entry has no more tokens.
    #[inline(always)]
    pub fn expect_end(&mut self) -> Result<()> {
        if self.end_at_newline() {
            return Ok(());
        }
        self.expect_end_slow()
    }

    /// The usual end of an entry: when nothing is peeked, no parenthesis is open and only
    /// blanks are left before the newline, ends the entry there and returns true;
    /// otherwise moves nothing and returns false.
    #[inline(always)]
    fn end_at_newline(&mut self) -> bool {
        if self.state.get() != State::Reading || self.at.paren_line.is_some() {
            return false;
        }
        let pos = self.after_blanks();
        if self.input.get(pos) != Some(&b'\n') {
            return false;
        }
        self.at.pos = pos;
        self.end_entry_at_newline();
        true
    }

    /// [`Lexer::expect_end`] when the entry does not simply end at a newline.
    #[inline(never)]
    fn expect_end_slow(&mut self) -> Result<()> {
        match self.next_token()? {
            None => Ok(()),
            Some(t) => {
                Err(t.error(format!("unexpected '{}' at the end of the entry", t.display())))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_reports_an_entry_running_past_it() {
        let mut lx = Lexer::continuing(b"a 1 A x\nb ( A\n", 7, true);
        assert_eq!(lx.entry_start(), (0, 7));
        lx.next_entry().unwrap().unwrap();
        lx.skip_rest_of_entry().unwrap();
        assert!(!lx.incomplete());
        let resume = lx.entry_start();
        assert_eq!(resume, (8, 8));
        lx.next_entry().unwrap().unwrap();
        assert!(lx.skip_rest_of_entry().is_err());
        assert!(lx.incomplete(), "the parentheses close in the next chunk");
        assert_eq!(lx.open_paren_at_end(), Some(8));
        // The next chunk can go on inside those parentheses (to skip a failed entry).
        let mut next = Lexer::continuing(b"  1 2 )\nc A\n", 9, true);
        next.resume_inside_parens(8);
        assert_eq!(next.next_token().unwrap().unwrap().text, b"1");
        next.abandon_entry();
        assert_eq!(next.entry_start(), (8, 10));
        assert!(!next.incomplete());
        // The same text at the end of the file is an error, not a wait for more.
        let mut last = Lexer::continuing(b"b ( A\n", 8, false);
        last.next_entry().unwrap().unwrap();
        assert!(last.skip_rest_of_entry().unwrap_err().to_string().contains("line 8"));
        assert!(!last.incomplete());
    }

    #[test]
    fn a_peeked_token_reports_incompleteness_too() {
        let mut lx = Lexer::continuing(b"b (\n", 1, true);
        lx.next_entry().unwrap().unwrap();
        lx.next_token().unwrap();
        assert!(lx.peek_token().is_err());
        assert!(lx.incomplete());
    }

    fn tokens(lexer: &mut Lexer<'_>) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(t) = lexer.next_token().unwrap() {
            out.push(format!("{}{}", if t.quoted() { "q:" } else { "" }, t.display()));
        }
        out
    }

    #[test]
    fn entries_tokens_comments_parentheses() {
        let text = b"; header comment\n\n@ IN SOA ns hm ( 1 ; serial\n  2 3\n 4 5 )\n  A 1.2.3.4\nx TXT \"a \\\" b\" c\\ d\n";
        let mut lx = Lexer::new(text);
        let e = lx.next_entry().unwrap().unwrap();
        assert_eq!(e, Entry { blank_owner: false, line: 3 });
        assert_eq!(tokens(&mut lx), ["@", "IN", "SOA", "ns", "hm", "1", "2", "3", "4", "5"]);
        let e = lx.next_entry().unwrap().unwrap();
        assert_eq!(e, Entry { blank_owner: true, line: 6 });
        assert_eq!(tokens(&mut lx), ["A", "1.2.3.4"]);
        lx.next_entry().unwrap().unwrap();
        assert_eq!(tokens(&mut lx), ["x", "TXT", "q:a \\\" b", "c\\ d"]);
        assert!(lx.next_entry().unwrap().is_none());
    }

    /// Plain runs of every length around the four-byte step, ended every way a run ends.
    #[test]
    fn plain_runs_end_where_they_should() {
        let endings: [(&str, &[&str]); 8] = [
            ("", &[""]),
            (" z", &["", "z"]),
            ("\tz\n", &["", "z"]),
            ("\nz", &[""]),
            ("( z )", &["", "z"]),
            (";c", &[""]),
            ("\"q\"", &["", "q:q"]),
            ("\\ x y", &["\\ x", "y"]),
        ];
        for n in 1..=13 {
            let run = "r".repeat(n);
            for (ending, expect) in endings {
                let text = format!("{run}{ending}");
                let mut lx = Lexer::for_fields(text.as_bytes());
                let got = tokens(&mut lx);
                let mut want: Vec<String> = expect.iter().map(|t| t.to_string()).collect();
                want[0] = format!("{run}{}", want[0]);
                assert_eq!(got, want, "{text:?}");
            }
        }
    }

    #[test]
    fn positions() {
        let mut lx = Lexer::new(b"a b\n  c  d");
        lx.next_entry().unwrap();
        let a = lx.next_token().unwrap().unwrap();
        let b = lx.next_token().unwrap().unwrap();
        assert_eq!((a.line(), a.column(), b.column()), (1, 1, 3));
        lx.next_entry().unwrap();
        let d = [lx.next_token().unwrap().unwrap(), lx.next_token().unwrap().unwrap()];
        assert_eq!((d[0].line(), d[0].column(), d[1].column()), (2, 3, 6));
    }

    #[test]
    fn errors_are_located() {
        let mut lx = Lexer::new(b"a \"open\n");
        lx.next_entry().unwrap();
        lx.next_token().unwrap();
        assert_eq!(lx.next_token(), Err(Error::syntax(1, 3, "unterminated quoted string")));

        let mut lx = Lexer::new(b"a ( b (\n");
        lx.next_entry().unwrap();
        lx.next_token().unwrap();
        lx.next_token().unwrap();
        assert!(matches!(lx.next_token(), Err(Error::Syntax { line: 1, column: 7, .. })));

        let mut lx = Lexer::new(b"a ( b\n c\n");
        lx.next_entry().unwrap();
        assert_eq!(tokens_until_err(&mut lx), 3);

        let mut lx = Lexer::new(b"a )\n");
        lx.next_entry().unwrap();
        lx.next_token().unwrap();
        assert!(lx.next_token().is_err());
    }

    fn tokens_until_err(lx: &mut Lexer<'_>) -> usize {
        let mut n = 0;
        while let Ok(Some(_)) = lx.next_token() {
            n += 1;
        }
        n
    }

    #[test]
    fn deep_parentheses_fail_fast() {
        let text = "(".repeat(10_000);
        let mut lx = Lexer::new(text.as_bytes());
        lx.next_entry().unwrap();
        assert!(lx.next_token().is_err());
    }

    #[test]
    fn ttl_units() {
        assert_eq!(parse_ttl(b"3600"), Some(3600));
        assert_eq!(parse_ttl(b"1h"), Some(3600));
        assert_eq!(parse_ttl(b"1W2d3H4m5s"), Some(604_800 + 172_800 + 10_800 + 240 + 5));
        assert_eq!(parse_ttl(b"2147483647"), Some(0x7FFF_FFFF));
        assert_eq!(parse_ttl(b"2147483648"), None);
        assert_eq!(parse_ttl(b"1h30"), None);
        assert_eq!(parse_ttl(b"h"), None);
        assert_eq!(parse_ttl(b""), None);
        assert_eq!(parse_ttl(b"-1"), None);
        assert_eq!(parse_duration(b"2147483648"), Some(0x8000_0000));
        assert_eq!(parse_duration(b"4294967295"), Some(u32::MAX));
        assert_eq!(parse_duration(b"4294967296"), None);
        assert_eq!(parse_duration(b"7102w"), None);
        assert_eq!(parse_duration(b"7101w"), Some(7101 * 604_800));
    }

    #[test]
    fn abandoning_an_entry_always_moves_on() {
        // A nested parenthesis is a lexical error: the rest of its line is dropped.
        let mut lx = Lexer::new(b"a ( b ( c\nd e\n");
        lx.next_entry().unwrap();
        while lx.next_token().is_ok() {}
        lx.abandon_entry();
        assert_eq!(lx.next_entry().unwrap(), Some(Entry { blank_owner: false, line: 2 }));
        assert_eq!(tokens(&mut lx), ["d", "e"]);
        // A plain error mid-entry: the entry is skipped up to its closing parenthesis.
        let mut lx = Lexer::new(b"a ( b\n c ) d\nnext\n");
        lx.next_entry().unwrap();
        lx.next_token().unwrap();
        lx.abandon_entry();
        lx.next_entry().unwrap();
        assert_eq!(tokens(&mut lx), ["next"]);
        // An unterminated quote at the end of the input.
        let mut lx = Lexer::new(b"x \"open");
        lx.next_entry().unwrap();
        lx.next_token().unwrap();
        assert!(lx.next_token().is_err());
        lx.abandon_entry();
        assert_eq!(lx.next_entry().unwrap(), None);
    }

    #[test]
    fn long_tokens_are_shortened_in_messages() {
        let long = vec![b'a'; 1000];
        let shown = Token::whole(&long).display();
        assert_eq!(shown, format!("{}… (1000 bytes)", "a".repeat(EXCERPT)));
        assert_eq!(Token::whole(b"short").display(), "short");
        let exact = vec![b'b'; EXCERPT];
        assert_eq!(Token::whole(&exact).display(), "b".repeat(EXCERPT), "not cut at the limit");
    }

    #[test]
    fn control_and_non_ascii_bytes_are_escaped_in_messages() {
        // NUL, a terminal escape sequence, DEL and a C1 control (UTF-8 C2 9B, CSI).
        let shown = Token::whole(b"a\0b\x1b[2Jc\x7f\xc2\x9b\\065").display();
        assert_eq!(shown, "a\\000b\\027[2Jc\\127\\194\\155\\065");
        assert!(!shown.bytes().any(|b| b.is_ascii_control()), "{shown:?}");
        // The cut counts bytes of the token, before escaping.
        let noisy = vec![0x1b; 100];
        let shown = Token::whole(&noisy).display();
        assert_eq!(shown, format!("{}… (100 bytes)", "\\027".repeat(EXCERPT)));
    }

    #[test]
    fn fields_lexer_and_expectations() {
        let mut lx = Lexer::for_fields(b"10 mail.example.");
        let pref = lx.expect("preference").unwrap();
        assert_eq!(pref.number::<u16>("a preference").unwrap(), 10);
        assert_eq!(lx.expect("exchange").unwrap().text, b"mail.example.");
        assert!(lx.expect_end().is_ok());
        let mut lx = Lexer::for_fields(b"70000");
        let t = lx.expect("n").unwrap();
        assert!(t.number::<u16>("a 16-bit number").is_err());
        assert!(lx.expect("more").is_err());
    }

    /// `next_is_escaped` answers as `peek_token` would, and reading goes on the same.
    #[test]
    fn the_generic_marker_is_found_with_or_without_a_peek() {
        let cases: [(&[u8], bool); 9] = [
            (b"\\# 1 00\n", true),
            (b"  \t\\# 1 00\n", true),
            (b"( \\# 1\n 00 )\n", true),
            (b"; c\n", false),
            (b"\"\\#\" 1\n", false),
            (b"\\#x 1\n", false),
            (b"a\\# 1\n", false),
            (b"192.0.2.1\n", false),
            (b"\n", false),
        ];
        for (rest, expect) in cases {
            let text = [&b"x "[..], rest].concat();
            let mut lx = Lexer::new(&text);
            lx.next_entry().unwrap();
            lx.next_token().unwrap();
            let mut peeked = lx.clone();
            assert_eq!(
                lx.next_is_escaped(b"\\#").unwrap(),
                expect,
                "{:?}",
                String::from_utf8_lossy(rest)
            );
            let by_peek =
                peeked.peek_token().unwrap().is_some_and(|t| t.text == b"\\#" && !t.quoted());
            assert_eq!(by_peek, expect);
            assert_eq!(tokens(&mut lx), tokens(&mut peeked));
        }
        // Not at an escaped text: always through the peek.
        let mut lx = Lexer::new(b"x a\n");
        lx.next_entry().unwrap();
        lx.next_token().unwrap();
        assert!(lx.next_is_escaped(b"a").unwrap());
    }

    #[test]
    fn peeking_reads_a_token_once() {
        let mut lx = Lexer::new(b"a b\nc\n");
        lx.next_entry().unwrap();
        assert_eq!(lx.peek_token().unwrap().unwrap().text, b"a");
        assert_eq!(lx.peek_token().unwrap().unwrap().text, b"a");
        let copy = lx.clone();
        assert_eq!(lx.next_token().unwrap().unwrap().text, b"a");
        assert_eq!(lx.peek_token().unwrap().unwrap().text, b"b");
        assert_eq!(lx.next_token().unwrap().unwrap().text, b"b");
        assert_eq!(lx.peek_token().unwrap(), None);
        assert_eq!(lx.next_token().unwrap(), None);
        assert_eq!(lx.next_entry().unwrap(), Some(Entry { blank_owner: false, line: 2 }));
        assert_eq!(tokens(&mut lx), ["c"]);
        // A clone taken while a token was peeked continues from the same place.
        let mut copy = copy;
        assert_eq!(tokens(&mut copy), ["a", "b"]);
        // Peeking at the end of an entry, then moving to the next entry.
        let mut lx = Lexer::new(b"x\ny z\n");
        lx.next_entry().unwrap();
        lx.next_token().unwrap();
        assert_eq!(lx.peek_token().unwrap(), None);
        lx.next_entry().unwrap();
        assert_eq!(tokens(&mut lx), ["y", "z"]);
    }

    #[test]
    fn missing_tokens_are_reported_where_the_entry_ends() {
        let mut lx = Lexer::new(b"x 1\nnext ( a\n b )  \n");
        lx.next_entry().unwrap();
        lx.next_token().unwrap();
        lx.next_token().unwrap();
        assert_eq!(lx.expect("a type"), Err(Error::syntax(1, 4, "expected a type")));
        lx.next_entry().unwrap();
        assert_eq!(tokens(&mut lx), ["next", "a", "b"]);
        assert_eq!(lx.expect("c"), Err(Error::syntax(3, 7, "expected c")));
        let mut lx = Lexer::for_fields(b"10");
        lx.next_token().unwrap();
        assert_eq!(lx.expect("a name"), Err(Error::syntax(1, 3, "expected a name")));
    }
}

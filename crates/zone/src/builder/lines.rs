//! Where each record came from — its file and line — kept while a zone is built, so that
//! findings read `file:line: …` like syntax errors do, and dropped with the builder: the
//! served snapshot holds no lines.
//!
//! A record costs one byte: its line's step from the previous record's (records come in
//! file order, so the step is small). Every [`CHECKPOINT`]-th record stores its line
//! whole, and a step that does not fit in a byte (back to the including file after an
//! `$INCLUDE`, or over 254 lines) is kept aside; the file is kept per run of records from
//! one file. Finding one record's line reads at most a checkpoint's worth of steps, and
//! is only done for a finding.

use std::cell::Cell;
use std::path::{Path, PathBuf};

use super::{kept, KEEP_UP_TO};

use crate::error::Position;

/// Records between two stored lines.
const CHECKPOINT: usize = 64;
/// The step byte of a record whose line is in `jumps`.
const JUMP: u8 = u8::MAX;
/// The file number of records added without a location.
const NO_FILE: u32 = u32::MAX;
/// The file number before the first record: matches no record's.
const NONE_YET: u32 = u32::MAX - 1;

/// The file and line of each record, by record number.
#[derive(Debug)]
pub(super) struct Lines {
    steps: Vec<u8>,
    checkpoints: Vec<u32>,
    /// (record, line) of the records whose step is [`JUMP`], in record order.
    jumps: Vec<(u32, u32)>,
    last: u32,
    /// (first record, index in `files`) of each run of records from one file.
    runs: Vec<(u32, u32)>,
    files: Vec<PathBuf>,
    /// The parser's number of the file of the current run (`NO_FILE`: no location).
    current: u32,
    /// Paths of an earlier builder's files, whose room the next files take.
    spare_paths: Vec<PathBuf>,
}

/// The buffers of the last [`Lines`] dropped on this thread, emptied, for the next one:
/// a start loads zone after zone on each loading thread, and each zone's `Lines` making
/// and freeing its own (its file's path among them) left holes among the zones' data
/// in glibc's heap, which the next zones' data did not fit.
#[derive(Default)]
struct Spare {
    steps: Vec<u8>,
    checkpoints: Vec<u32>,
    jumps: Vec<(u32, u32)>,
    runs: Vec<(u32, u32)>,
    files: Vec<PathBuf>,
    paths: Vec<PathBuf>,
}

thread_local! {
    static SPARE: Cell<Spare> = Cell::new(Spare::default());
}

impl Default for Lines {
    fn default() -> Lines {
        let spare = SPARE.try_with(Cell::take).unwrap_or_default();
        Lines {
            steps: spare.steps,
            checkpoints: spare.checkpoints,
            jumps: spare.jumps,
            last: 0,
            runs: spare.runs,
            files: spare.files,
            current: NONE_YET,
            spare_paths: spare.paths,
        }
    }
}

impl Drop for Lines {
    /// Keeps the buffers, emptied, for the next `Lines` of this thread (see [`Spare`]).
    fn drop(&mut self) {
        let mut paths = std::mem::take(&mut self.spare_paths);
        paths.extend(self.files.drain(..).filter(|p| p.capacity() <= KEEP_UP_TO));
        paths.truncate(4);
        let spare = Spare {
            steps: kept(std::mem::take(&mut self.steps)),
            checkpoints: kept(std::mem::take(&mut self.checkpoints)),
            jumps: kept(std::mem::take(&mut self.jumps)),
            runs: kept(std::mem::take(&mut self.runs)),
            files: kept(std::mem::take(&mut self.files)),
            paths,
        };
        // A `Lines` dropped while the thread ends finds no thread-local: nothing kept.
        let _ = SPARE.try_with(|cell| cell.set(spare));
    }
}

impl Lines {
    /// Makes room for `records` records' steps.
    pub fn reserve(&mut self, records: usize) {
        self.steps.reserve(records);
    }

    /// Notes the next record's file — its number in the parse and its path — and line
    /// (`None` and 0 when it has no location). The usual record, from the same file a
    /// few lines on and not at a checkpoint, costs a subtraction, two tests and a push.
    #[inline]
    pub fn push(&mut self, file: Option<(u32, &Path)>, line: u32) {
        let index = self.steps.len();
        let number = file.map_or(NO_FILE, |f| f.0);
        if number != self.current {
            self.start_run(index, file.map(|f| f.1));
            self.current = number;
        }
        let step = line.wrapping_sub(self.last);
        self.last = line;
        if step < u32::from(JUMP) && index % CHECKPOINT != 0 {
            self.steps.push(step as u8);
        } else {
            self.push_whole(index, line);
        }
    }

    /// Stores the line of record `index` whole: at a checkpoint, or as a jump.
    #[cold]
    #[inline(never)]
    fn push_whole(&mut self, index: usize, line: u32) {
        if index % CHECKPOINT == 0 {
            self.checkpoints.push(line);
            self.steps.push(0);
        } else {
            self.jumps.push((index as u32, line));
            self.steps.push(JUMP);
        }
    }

    /// Starts a run of records from `file` at record `index`.
    #[cold]
    #[inline(never)]
    fn start_run(&mut self, index: usize, file: Option<&Path>) {
        let number = match file {
            None => NO_FILE,
            Some(file) => match self.files.iter().position(|f| f.as_os_str() == file.as_os_str()) {
                Some(n) => n as u32,
                None => {
                    let mut path = self.spare_paths.pop().unwrap_or_default();
                    path.as_mut_os_string().clear();
                    path.as_mut_os_string().push(file.as_os_str());
                    self.files.push(path);
                    (self.files.len() - 1) as u32
                }
            },
        };
        self.runs.push((index as u32, number));
    }

    /// Where record `index` came from: its file and line (column 0: the whole line).
    pub fn position(&self, index: u32) -> Option<Position> {
        if index as usize >= self.steps.len() {
            return None;
        }
        Some(Position::of_line(self.file(index)?, self.line(index)?))
    }

    /// True when some record came from a file (else no finding has a position).
    pub fn has_files(&self) -> bool {
        !self.files.is_empty()
    }

    /// The first file records came from, as a position in no particular line: where a
    /// finding about the zone as a whole goes.
    pub fn first_file(&self) -> Option<Position> {
        Some(Position::of_line(self.files.first()?, 0))
    }

    fn file(&self, index: u32) -> Option<&Path> {
        let run = self.runs.partition_point(|r| r.0 <= index).checked_sub(1)?;
        let number = self.runs.get(run)?.1;
        self.files.get(number as usize).map(PathBuf::as_path)
    }

    fn line(&self, index: u32) -> Option<u32> {
        let index = index as usize;
        let checkpoint = index / CHECKPOINT;
        let mut line = *self.checkpoints.get(checkpoint)?;
        let from = checkpoint * CHECKPOINT + 1;
        for (i, &step) in self.steps.get(from..=index).unwrap_or_default().iter().enumerate() {
            line = if step == JUMP {
                let at = (from + i) as u32;
                let jump = self.jumps.binary_search_by_key(&at, |j| j.0).ok()?;
                self.jumps.get(jump)?.1
            } else {
                line.wrapping_add(u32::from(step))
            };
        }
        Some(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_record_gets_back_its_file_and_line() {
        let (main, inc) = ((0, Path::new("main.zone")), (1, Path::new("inc.zone")));
        let mut expected: Vec<(Option<(u32, &Path)>, u32)> = Vec::new();
        // Small steps, $GENERATE (no step), a long gap, an $INCLUDE and back, records
        // without a location: across several checkpoints.
        for line in 1..100 {
            expected.push((Some(main), line));
        }
        expected.extend([(Some(main), 100), (Some(main), 100), (Some(main), 100_000)]);
        expected.extend((1..=70).map(|l| (Some(inc), l)));
        expected.extend([(Some(main), 100_001), (Some(main), 100_300), (None, 0)]);
        // The same file included again has another number.
        expected.extend([(Some((2, inc.1)), 5), (Some((2, inc.1)), 9), (Some(main), 100_301)]);
        let mut lines = Lines::default();
        for &(file, line) in &expected {
            lines.push(file, line);
        }
        for (i, &(file, line)) in expected.iter().enumerate() {
            let got = lines.position(i as u32);
            match file {
                Some((_, file)) => {
                    let got = got.unwrap_or_else(|| panic!("record {i}"));
                    assert_eq!((got.file.as_path(), got.line), (file, line), "record {i}");
                }
                None => assert_eq!(got, None, "record {i}"),
            }
        }
        assert_eq!(lines.position(expected.len() as u32), None, "past the last record");
        assert_eq!(lines.files.len(), 2);
        assert_eq!(lines.first_file().unwrap().file, main.1);
    }
}

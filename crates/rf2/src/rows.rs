//! Splitting RF2 files into rows and tab-separated fields, fast.
//!
//! RF2 is tab-separated text with one row per line and, crucially, no quoting
//! or escaping: a `"` inside a term is a literal character. A CSV parser in
//! "TSV mode" would treat it as the start of a quoted field and silently merge
//! rows, so we split ourselves: `memchr` finds each `\n` and the `\t`s within
//! the line. An International release is about a gigabyte of text, so
//! [`RowReader`] reads through one large buffer (1 MiB by default) and hands
//! out rows that borrow from it (a lending API): in steady state no row
//! allocates. The buffer only grows for a line longer than itself, up to a
//! limit that protects against a corrupt file with no newlines at all.
//!
//! The first line is the header; every row must have as many columns as the
//! header. A row that does not is reported as an error with its line number,
//! and the reader is already positioned on the next line, so a lenient
//! caller can count the error and carry on.

use std::fmt;
use std::io::{self, Read};

use memchr::{memchr, memchr_iter};

use crate::error::{HeaderError, Rf2Error, Rf2ErrorKind, snippet};
use crate::parse::RowError;

/// The default buffer size: large enough that refills are rare, small
/// enough to be irrelevant next to the importer's own memory.
pub const DEFAULT_CAPACITY: usize = 1 << 20;

/// The default longest accepted line. Real RF2 lines are at most a few tens
/// of kilobytes (long OWL axioms); anything near this is a corrupt file.
pub const DEFAULT_MAX_LINE_LEN: usize = 64 << 20;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Reads an RF2 file row by row. See the [module documentation](self).
pub struct RowReader<R> {
    inner: R,
    path: String,
    buf: Vec<u8>,
    /// Start of the unconsumed data in `buf`.
    start: usize,
    /// End of the valid data in `buf`.
    end: usize,
    eof: bool,
    /// Number of the last line handed out (the header is line 1).
    line: u64,
    bytes_read: u64,
    max_line_len: usize,
    header: Vec<String>,
    /// Offsets (within the current line) where each field ends.
    ends: Vec<usize>,
    /// Blank lines already consumed that still have to be reported.
    pending_blank: u64,
}

enum Next {
    /// A line at `buf[start..end]`, without its line terminator.
    Line(usize, usize),
    /// A line that was too long and has been skipped; its beginning.
    TooLong(String),
    Eof,
}

impl<R: Read> RowReader<R> {
    /// Reads the header line of `reader`. `path` is only used in error
    /// messages.
    pub fn new(reader: R, path: impl Into<String>) -> Result<RowReader<R>, Rf2Error> {
        RowReader::with_limits(reader, path, DEFAULT_CAPACITY, DEFAULT_MAX_LINE_LEN)
    }

    /// Like [`RowReader::new`] with a buffer of `capacity` bytes (at least 4).
    pub fn with_capacity(
        reader: R,
        path: impl Into<String>,
        capacity: usize,
    ) -> Result<RowReader<R>, Rf2Error> {
        RowReader::with_limits(reader, path, capacity, DEFAULT_MAX_LINE_LEN)
    }

    /// Like [`RowReader::new`] with a buffer of `capacity` bytes (at least 4)
    /// and lines limited to `max_line_len` bytes (at least `capacity`).
    /// A longer line is skipped and reported as
    /// [`Rf2ErrorKind::LineTooLong`].
    pub fn with_limits(
        reader: R,
        path: impl Into<String>,
        capacity: usize,
        max_line_len: usize,
    ) -> Result<RowReader<R>, Rf2Error> {
        let capacity = capacity.max(4);
        let mut r = RowReader {
            inner: reader,
            path: path.into(),
            buf: vec![0; capacity],
            start: 0,
            end: 0,
            eof: false,
            line: 0,
            bytes_read: 0,
            max_line_len: max_line_len.max(capacity),
            header: Vec::new(),
            ends: Vec::new(),
            pending_blank: 0,
        };
        r.read_header()?;
        Ok(r)
    }

    fn read_header(&mut self) -> Result<(), Rf2Error> {
        let next = self.next_line()?;
        self.line = 1;
        let (ls, le) = match next {
            Next::Line(ls, le) => (ls, le),
            Next::TooLong(prefix) => {
                let mut e = self.error(Rf2ErrorKind::LineTooLong {
                    limit: self.max_line_len,
                });
                e.row = Some(prefix);
                return Err(e);
            }
            Next::Eof => {
                return Err(self.error(Rf2ErrorKind::Header(Box::new(HeaderError::Missing))));
            }
        };
        let raw = &self.buf[ls..le];
        let text = raw.strip_prefix(BOM).unwrap_or(raw);
        if text.is_empty() {
            return Err(self.error(Rf2ErrorKind::Header(Box::new(HeaderError::Missing))));
        }
        let Ok(text) = std::str::from_utf8(text) else {
            let e = self.error(Rf2ErrorKind::Header(Box::new(HeaderError::NotUtf8)));
            return Err(e.with_row(raw));
        };
        self.header = text.split('\t').map(str::to_owned).collect();
        Ok(())
    }

    /// The column names from the header line (without a byte order mark).
    pub fn header(&self) -> &[String] {
        &self.header
    }

    /// The path given at construction, as used in error messages.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The number of the last line read (the header is line 1).
    pub fn line(&self) -> u64 {
        self.line
    }

    /// Bytes read from the underlying reader so far (for a zip entry, the
    /// uncompressed bytes), for progress reporting against
    /// [`Rf2File::size`](crate::source::Rf2File::size). Runs ahead of the
    /// rows handed out by at most the buffer size.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// The next row, or `None` at the end of the file.
    ///
    /// A row whose column count differs from the header, a blank line in
    /// the middle of the file, or a line over the length limit is returned
    /// as an error (see [`Rf2Error::is_recoverable`]); the reader has then
    /// already moved past that line and the next call continues with the
    /// following one. I/O errors are not recoverable.
    pub fn next_row(&mut self) -> Result<Option<Row<'_>>, Rf2Error> {
        if self.pending_blank > 0 {
            self.pending_blank -= 1;
            self.line += 1;
            return Err(self.error(Rf2ErrorKind::BlankLine));
        }
        let (ls, le) = match self.next_line()? {
            Next::Line(ls, le) => (ls, le),
            Next::TooLong(prefix) => {
                self.line += 1;
                let mut e = self.error(Rf2ErrorKind::LineTooLong {
                    limit: self.max_line_len,
                });
                e.row = Some(prefix);
                return Err(e);
            }
            Next::Eof => return Ok(None),
        };
        self.line += 1;
        if ls == le {
            // Blank lines are harmless at the end of a file (an editor's
            // extra newline) but a sign of damage before more rows.
            let line = self.line;
            return match self.skip_blank_lines()? {
                None => Ok(None),
                Some(more) => {
                    self.pending_blank = more;
                    Err(Rf2Error::new(self.path.clone(), Rf2ErrorKind::BlankLine).at_line(line))
                }
            };
        }
        let raw = &self.buf[ls..le];
        self.ends.clear();
        self.ends.extend(memchr_iter(b'\t', raw));
        self.ends.push(raw.len());
        if self.ends.len() != self.header.len() {
            let kind = Rf2ErrorKind::ColumnCount {
                expected: self.header.len(),
                found: self.ends.len(),
            };
            return Err(Rf2Error::new(self.path.clone(), kind)
                .at_line(self.line)
                .with_row(raw));
        }
        Ok(Some(Row {
            line: self.line,
            raw,
            ends: &self.ends,
            path: &self.path,
        }))
    }

    fn error(&self, kind: Rf2ErrorKind) -> Rf2Error {
        Rf2Error::new(self.path.clone(), kind).at_line(self.line)
    }

    /// Finds the next line, refilling, compacting or growing the buffer as
    /// needed, and consumes it. The returned range stays valid until the
    /// next call.
    fn next_line(&mut self) -> Result<Next, Rf2Error> {
        let mut scan = self.start;
        loop {
            if let Some(i) = memchr(b'\n', &self.buf[scan..self.end]) {
                let nl = scan + i;
                let ls = self.start;
                self.start = nl + 1;
                return Ok(Next::Line(ls, self.strip_cr(ls, nl)));
            }
            scan = self.end;
            if self.eof {
                if self.start == self.end {
                    return Ok(Next::Eof);
                }
                // A last line without a newline.
                let ls = self.start;
                self.start = self.end;
                return Ok(Next::Line(ls, self.strip_cr(ls, self.end)));
            }
            if self.end == self.buf.len() {
                if self.start > 0 {
                    // Move the partial line to the front; this copies less
                    // than one line per buffer refill.
                    self.buf.copy_within(self.start..self.end, 0);
                    self.end -= self.start;
                    scan -= self.start;
                    self.start = 0;
                } else if self.buf.len() > self.max_line_len.saturating_add(1) {
                    // Over the limit even allowing for a trailing `\r`.
                    return self.skip_long_line();
                } else {
                    // One line fills the buffer: grow it, up to the limit
                    // plus room for `\r\n`.
                    let len = self
                        .buf
                        .len()
                        .saturating_mul(2)
                        .min(self.max_line_len.saturating_add(2));
                    self.buf.resize(len, 0);
                }
            }
            self.fill()?;
        }
    }

    fn strip_cr(&self, ls: usize, le: usize) -> usize {
        if le > ls && self.buf.get(le - 1) == Some(&b'\r') {
            le - 1
        } else {
            le
        }
    }

    /// Discards the rest of an over-long line, up to and including its
    /// newline, keeping the beginning for the error message.
    fn skip_long_line(&mut self) -> Result<Next, Rf2Error> {
        let prefix = snippet(&self.buf[self.start..self.end]);
        loop {
            self.start = 0;
            self.end = 0;
            if self.fill()? == 0 {
                return Ok(Next::TooLong(prefix));
            }
            if let Some(i) = memchr(b'\n', &self.buf[..self.end]) {
                self.start = i + 1;
                return Ok(Next::TooLong(prefix));
            }
        }
    }

    /// After a blank line: consumes any further blank lines. Returns `None`
    /// if only blank lines remain before the end of the file, else the
    /// number of further blank lines consumed.
    fn skip_blank_lines(&mut self) -> Result<Option<u64>, Rf2Error> {
        let mut count = 0u64;
        loop {
            for i in self.start..self.end {
                match self.buf[i] {
                    b'\n' => {
                        count += 1;
                        self.start = i + 1;
                    }
                    b'\r' => {}
                    _ => return Ok(Some(count)),
                }
            }
            if self.eof {
                self.start = self.end;
                return Ok(None);
            }
            if self.end == self.buf.len() {
                if self.start == 0 {
                    // A run of `\r` as long as the buffer: leave it to
                    // `next_line` to report as a (bad) row.
                    return Ok(Some(count));
                }
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            self.fill()?;
        }
    }

    /// Reads into the free space at the end of the buffer (which callers
    /// ensure is not empty). Returns 0 at end of file.
    fn fill(&mut self) -> Result<usize, Rf2Error> {
        loop {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(0);
                }
                Ok(n) => {
                    // Guard against a reader that claims more than it was
                    // given room for.
                    let n = n.min(self.buf.len() - self.end);
                    self.end += n;
                    self.bytes_read += n as u64;
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(Rf2Error::new(self.path.clone(), Rf2ErrorKind::Io(e))
                        .at_line(self.line + 1));
                }
            }
        }
    }
}

impl<R> fmt::Debug for RowReader<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RowReader")
            .field("path", &self.path)
            .field("line", &self.line)
            .field("bytes_read", &self.bytes_read)
            .field("capacity", &self.buf.len())
            .field("header", &self.header)
            .finish_non_exhaustive()
    }
}

/// One row of an RF2 file, borrowed from the reader's buffer.
#[derive(Clone, Copy)]
pub struct Row<'a> {
    /// The 1-based line number in the file (the header is line 1).
    pub line: u64,
    raw: &'a [u8],
    ends: &'a [usize],
    path: &'a str,
}

impl<'a> Row<'a> {
    /// The number of fields (always the header's column count for rows
    /// handed out by [`RowReader`]).
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Never true for rows handed out by [`RowReader`].
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Field `i` (0-based), or `None` if the row has fewer fields.
    pub fn get(&self, i: usize) -> Option<&'a [u8]> {
        let end = *self.ends.get(i)?;
        let start = match i.checked_sub(1) {
            None => 0,
            Some(prev) => self.ends.get(prev)? + 1,
        };
        self.raw.get(start..end)
    }

    /// Field `i` (0-based); empty if the row has fewer fields.
    pub fn field(&self, i: usize) -> &'a [u8] {
        self.get(i).unwrap_or_default()
    }

    /// Fields `i..` as they are in the file, tabs included; empty if the
    /// row has `i` or fewer fields.
    pub fn rest(&self, i: usize) -> &'a [u8] {
        let start = match i.checked_sub(1) {
            None => 0,
            Some(prev) => match self.ends.get(prev) {
                Some(&e) if i < self.ends.len() => e + 1,
                _ => return &[],
            },
        };
        self.raw.get(start..).unwrap_or_default()
    }

    /// The fields in order.
    pub fn fields(&self) -> impl Iterator<Item = &'a [u8]> + use<'a> {
        let row = *self;
        (0..row.len()).map(move |i| row.field(i))
    }

    /// The whole line without its line terminator.
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// The file path given to the reader.
    pub fn path(&self) -> &'a str {
        self.path
    }

    /// An [`Rf2Error`] for this row: its file, line and contents.
    pub fn error(&self, err: RowError) -> Rf2Error {
        Rf2Error::new(self.path, Rf2ErrorKind::Row(Box::new(err)))
            .at_line(self.line)
            .with_row(self.raw)
    }
}

impl fmt::Debug for Row<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Row")
            .field("line", &self.line)
            .field("raw", &String::from_utf8_lossy(self.raw))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A data row as its line number and fields, or an error message.
    type Parsed = Result<(u64, Vec<String>), String>;

    /// Reads all rows as strings; errors become `Err(message)`.
    fn rows(data: &[u8], capacity: usize) -> (Vec<String>, Vec<Parsed>) {
        let mut r = RowReader::with_capacity(data, "t.txt", capacity).unwrap();
        let header = r.header().to_vec();
        let mut out = Vec::new();
        loop {
            match r.next_row() {
                Ok(None) => break,
                Ok(Some(row)) => out.push(Ok((
                    row.line,
                    row.fields()
                        .map(|f| String::from_utf8(f.to_vec()).unwrap())
                        .collect(),
                ))),
                Err(e) => {
                    assert!(e.is_recoverable(), "{e}");
                    out.push(Err(e.to_string()));
                }
            }
        }
        assert_eq!(r.bytes_read(), data.len() as u64);
        (header, out)
    }

    fn ok(line: u64, fields: &[&str]) -> Parsed {
        Ok((line, fields.iter().map(|s| s.to_string()).collect()))
    }

    #[test]
    fn lf_crlf_and_last_line_without_newline() {
        for capacity in [4, 5, 7, 16, 1 << 20] {
            let (h, r) = rows(b"a\tb\r\n1\t2\r\n3\t4\n5\t6", capacity);
            assert_eq!(h, ["a", "b"]);
            assert_eq!(
                r,
                [ok(2, &["1", "2"]), ok(3, &["3", "4"]), ok(4, &["5", "6"])],
                "capacity {capacity}"
            );
        }
    }

    #[test]
    fn quotes_are_literal() {
        let (_, r) = rows(
            b"id\tterm\n1\t\"Quoted\" term\n2\tunbalanced \" quote\n3\tx\n",
            1 << 20,
        );
        assert_eq!(
            r,
            [
                ok(2, &["1", "\"Quoted\" term"]),
                ok(3, &["2", "unbalanced \" quote"]),
                ok(4, &["3", "x"]),
            ]
        );
    }

    #[test]
    fn empty_fields_and_bom() {
        let (h, r) = rows(b"\xEF\xBB\xBFid\tterm\tx\r\n\t\t\r\n", 1 << 20);
        assert_eq!(h, ["id", "term", "x"]);
        assert_eq!(r, [ok(2, &["", "", ""])]);
    }

    #[test]
    fn lines_longer_than_the_buffer() {
        let long = "x".repeat(1000);
        let data = format!("a\tb\n1\t{long}\r\n2\t{long}{long}\n3\t4");
        for capacity in [4, 8, 100, 999, 1000, 1001, 1002, 1003, 4096] {
            let (_, r) = rows(data.as_bytes(), capacity);
            assert_eq!(
                r,
                [
                    ok(2, &["1", &long]),
                    ok(3, &["2", &format!("{long}{long}")]),
                    ok(4, &["3", "4"])
                ],
                "capacity {capacity}"
            );
        }
    }

    #[test]
    fn long_header() {
        let names: Vec<String> = (0..100).map(|i| format!("column{i}")).collect();
        let data = format!("{}\r\n", names.join("\t"));
        let (h, r) = rows(data.as_bytes(), 8);
        assert_eq!(h, names);
        assert!(r.is_empty());
    }

    #[test]
    fn column_count_errors_then_continue() {
        let (_, r) = rows(b"a\tb\tc\n1\t2\t3\n1\t2\n1\t2\t3\t4\n4\t5\t6\n", 1 << 20);
        assert_eq!(
            r,
            [
                ok(2, &["1", "2", "3"]),
                Err(r#"t.txt:3: row has 2 columns, header has 3: "1\t2""#.into()),
                Err(r#"t.txt:4: row has 4 columns, header has 3: "1\t2\t3\t4""#.into()),
                ok(5, &["4", "5", "6"]),
            ]
        );
    }

    #[test]
    fn blank_lines() {
        // Trailing blank lines are fine.
        for data in [
            &b"a\tb\n1\t2\n\n"[..],
            b"a\tb\r\n1\t2\r\n\r\n",
            b"a\tb\n1\t2\n\n\n\r\n\r",
        ] {
            let (_, r) = rows(data, 5);
            assert_eq!(r, [ok(2, &["1", "2"])]);
        }
        // Blank lines before more rows are each an error.
        for capacity in [4, 5, 1 << 20] {
            let (_, r) = rows(b"a\tb\n1\t2\n\n\r\n3\t4\n", capacity);
            assert_eq!(
                r,
                [
                    ok(2, &["1", "2"]),
                    Err("t.txt:3: blank line".into()),
                    Err("t.txt:4: blank line".into()),
                    ok(5, &["3", "4"]),
                ],
                "capacity {capacity}"
            );
        }
    }

    #[test]
    fn header_only_and_missing_header() {
        let (h, r) = rows(b"id\tterm\n", 16);
        assert_eq!(h, ["id", "term"]);
        assert!(r.is_empty());
        let (h, r) = rows(b"id", 16);
        assert_eq!(h, ["id"]);
        assert!(r.is_empty());
        for data in [&b""[..], b"\n", b"\r\n", b"\xEF\xBB\xBF\r\n"] {
            let e = RowReader::new(data, "t.txt").unwrap_err();
            assert!(
                matches!(&e.kind, Rf2ErrorKind::Header(h) if **h == HeaderError::Missing),
                "{e}"
            );
            assert_eq!(e.to_string(), "t.txt:1: missing header line");
        }
        let e = RowReader::new(&b"i\xFFd\tx\n"[..], "t.txt").unwrap_err();
        assert!(matches!(&e.kind, Rf2ErrorKind::Header(h) if **h == HeaderError::NotUtf8));
    }

    #[test]
    fn too_long_lines_are_skipped() {
        let long = "y".repeat(100);
        let data = format!("a\tb\n1\t2\n3\t{long}\n4\t5\n6\t{long}");
        let mut r = RowReader::with_limits(data.as_bytes(), "t.txt", 8, 50).unwrap();
        assert_eq!(r.next_row().unwrap().unwrap().line, 2);
        let e = r.next_row().unwrap_err();
        assert!(matches!(e.kind, Rf2ErrorKind::LineTooLong { limit: 50 }));
        assert_eq!(e.line, Some(3));
        assert!(e.row.as_deref().unwrap().starts_with("3\tyyy"));
        let row = r.next_row().unwrap().unwrap();
        assert_eq!((row.line, row.raw()), (4, &b"4\t5"[..]));
        let e = r.next_row().unwrap_err();
        assert_eq!(e.line, Some(5));
        assert!(r.next_row().unwrap().is_none());
        // A line of exactly the limit is fine, with or without `\r`.
        let fifty = "z".repeat(48);
        for nl in ["\n", "\r\n"] {
            let data = format!("a\tb{nl}1\t{fifty}{nl}");
            let mut r = RowReader::with_limits(data.as_bytes(), "t.txt", 8, 50).unwrap();
            assert_eq!(r.next_row().unwrap().unwrap().field(1), fifty.as_bytes());
        }
    }

    #[test]
    fn row_accessors() {
        let mut r = RowReader::new(&b"a\tb\tc\n1\t22\t333\n"[..], "t.txt").unwrap();
        let row = r.next_row().unwrap().unwrap();
        assert_eq!(row.len(), 3);
        assert!(!row.is_empty());
        assert_eq!(row.field(0), b"1");
        assert_eq!(row.field(2), b"333");
        assert_eq!(row.field(3), b"");
        assert_eq!(row.get(3), None);
        assert_eq!(row.rest(0), b"1\t22\t333");
        assert_eq!(row.rest(1), b"22\t333");
        assert_eq!(row.rest(2), b"333");
        assert_eq!(row.rest(3), b"");
        assert_eq!(row.rest(99), b"");
        assert_eq!(row.raw(), b"1\t22\t333");
        assert_eq!(row.path(), "t.txt");
    }

    /// A reader that returns data in tiny pieces and is interrupted now
    /// and then, like a decompressor might.
    struct Trickle<'a> {
        data: &'a [u8],
        calls: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.calls += 1;
            if self.calls.is_multiple_of(3) {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let n = buf.len().min(self.data.len()).min(3);
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn short_and_interrupted_reads() {
        let data = b"a\tb\r\n1\t2\r\n\r\n3\t4\r\n";
        let mut r = RowReader::with_capacity(Trickle { data, calls: 0 }, "t.txt", 6).unwrap();
        assert_eq!(r.next_row().unwrap().unwrap().raw(), b"1\t2");
        assert!(r.next_row().is_err());
        assert_eq!(r.next_row().unwrap().unwrap().raw(), b"3\t4");
        assert!(r.next_row().unwrap().is_none());
        assert!(r.next_row().unwrap().is_none());
    }

    struct Failing;

    impl Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::Error::other("disk on fire"))
        }
    }

    #[test]
    fn io_errors_are_fatal() {
        let e = RowReader::new(Failing, "t.txt").unwrap_err();
        assert!(matches!(e.kind, Rf2ErrorKind::Io(_)));
        assert!(!e.is_recoverable());
        assert_eq!(e.to_string(), "t.txt:1: I/O error: disk on fire");
    }
}

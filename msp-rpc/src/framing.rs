//! Bytes to lines: one JSON-RPC message per `\n`-terminated line, as `muse serve` speaks it.
//!
//! Reads may end anywhere (inside a UTF-8 sequence, between `\r` and `\n`, with several frames
//! in one read); a line is only looked at once its `\n` has arrived. A trailing `\r` is
//! dropped, blank lines are skipped, and a line longer than the cap is dropped as it streams
//! in, so memory stays bounded even when the `\n` never comes.

use std::fmt;

/// The default cap on one frame: 16 MiB, as other MSP clients use.
pub const DEFAULT_MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// How much of an oversized or invalid line a report keeps.
const HEAD_BYTES: usize = 256;

/// How many bytes the drivers' readers ask for at a time.
pub(crate) const READ_BYTES: usize = 64 * 1024;

/// A line that could not become a frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LineError {
    /// The line was longer than the cap; its bytes were dropped as they came.
    TooLong {
        /// The line's length in bytes (up to the `\n`, or to the end of input).
        length: usize,
        /// The cap it broke.
        max: usize,
        /// Its first bytes, lossily decoded, for the report.
        head: String,
    },
    /// The line is not UTF-8.
    NotUtf8 {
        /// The line, with invalid sequences replaced.
        lossy: String,
    },
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LineError::TooLong { length, max, .. } => {
                write!(f, "a frame of {length} bytes is over the {max}-byte limit")
            }
            LineError::NotUtf8 { .. } => f.write_str("a frame that is not UTF-8"),
        }
    }
}

impl std::error::Error for LineError {}

/// Splits a byte stream into lines.
///
/// ```
/// use msp_rpc::framing::LineDecoder;
///
/// let mut lines = LineDecoder::new(1024);
/// lines.push("{\"a\":\"\u{e9}\"}\r\n{\"b\"".as_bytes());
/// assert_eq!(lines.next_line(), Some(Ok("{\"a\":\"\u{e9}\"}")));
/// assert_eq!(lines.next_line(), None); // the second frame is not complete yet
/// lines.push(b":1}\n");
/// assert_eq!(lines.next_line(), Some(Ok("{\"b\":1}")));
/// ```
#[derive(Debug)]
pub struct LineDecoder {
    /// Bytes read up to `end`; past it, room to read into (kept initialized, so that reading
    /// straight into it costs no zeroing).
    buf: Vec<u8>,
    end: usize,
    /// Where the next line starts in `buf`.
    start: usize,
    /// Where the search for `\n` resumes (bytes before it hold none).
    scanned: usize,
    max: usize,
    /// Dropping an oversized line: its length so far and its head.
    dropping: Option<(usize, Vec<u8>)>,
    /// The input ended: whatever is left is the last line.
    ended: bool,
}

impl LineDecoder {
    /// A decoder for lines of at most `max` bytes (without the line ending).
    pub fn new(max: usize) -> Self {
        LineDecoder {
            buf: Vec::new(),
            end: 0,
            start: 0,
            scanned: 0,
            max,
            dropping: None,
            ended: false,
        }
    }

    /// Appends bytes as read.
    pub fn push(&mut self, bytes: &[u8]) {
        self.room(bytes.len())[..bytes.len()].copy_from_slice(bytes);
        self.end += bytes.len();
    }

    /// Room for at least `want` more bytes, for a read straight into the buffer; say how many
    /// were read with [`LineDecoder::filled`].
    pub(crate) fn room(&mut self, want: usize) -> &mut [u8] {
        if self.start > 0 && self.start == self.end {
            self.end = 0;
            self.start = 0;
            self.scanned = 0;
        } else if self.start > 64 * 1024 && self.start * 2 > self.end {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.scanned -= self.start;
            self.start = 0;
        }
        if self.buf.len() < self.end + want {
            self.buf.resize(self.end + want, 0);
        }
        &mut self.buf[self.end..]
    }

    /// Takes the first `read` bytes of [`LineDecoder::room`] as read.
    pub(crate) fn filled(&mut self, read: usize) {
        self.end = (self.end + read).min(self.buf.len());
    }

    /// Marks the end of input: a last line without `\n` is still a line.
    pub fn finish(&mut self) {
        self.ended = true;
    }

    /// Bytes held for a line not complete yet.
    pub fn buffered(&self) -> usize {
        self.end - self.start
    }

    /// The next complete line, without its line ending; `None` until more input arrives.
    pub fn next_line(&mut self) -> Option<Result<&str, LineError>> {
        loop {
            let unscanned = &self.buf[self.scanned..self.end];
            let (end, next) = match memchr::memchr(b'\n', unscanned) {
                Some(at) => (self.scanned + at, self.scanned + at + 1),
                None if self.ended && self.buffered() > 0 => (self.end, self.end),
                None if self.ended && self.dropping.is_some() => (self.start, self.start),
                None => {
                    self.scanned = self.end;
                    // A `\r` the next read may end the line with is not the line's.
                    let pending = trim(&self.buf[self.start..self.end]).len();
                    if pending > self.max || self.dropping.is_some() {
                        self.drop_pending();
                    }
                    return None;
                }
            };
            let start = std::mem::replace(&mut self.start, next);
            self.scanned = next;
            if let Some((dropped, head)) = self.dropping.take() {
                let length = dropped + trim(&self.buf[start..end]).len();
                let head = String::from_utf8_lossy(&head).into_owned();
                let max = self.max;
                return Some(Err(LineError::TooLong { length, max, head }));
            }
            let line = match shape(&self.buf[start..end], self.max) {
                Shape::Blank => continue,
                Shape::TooLong => return Some(Err(too_long(&self.buf[start..end], self.max))),
                Shape::Line(length) => &self.buf[start..start + length],
            };
            return Some(checked(line));
        }
    }

    /// Every complete line, in order, as [`LineDecoder::next_line`] gives them one by one.
    ///
    /// The run of complete lines is checked for UTF-8 in one pass, which costs about half of
    /// checking each line on its own; only a run that fails is checked line by line, so that
    /// the lines around a bad one still arrive.
    pub fn drain_lines(&mut self, mut each: impl FnMut(Result<&str, LineError>)) {
        if self.dropping.is_some() {
            // The rest of a line dropped as it streamed in comes first.
            match self.next_line() {
                Some(line) => each(line),
                None => return,
            }
        }
        if let Some(at) = memchr::memrchr(b'\n', &self.buf[self.scanned..self.end]) {
            let (start, end) = (self.start, self.scanned + at + 1);
            self.start = end;
            self.scanned = end;
            let run = &self.buf[start..end];
            // Checked line by line only when the run as a whole is not UTF-8.
            let text = simdutf8::basic::from_utf8(run).ok();
            let mut from = 0;
            for to in memchr::memchr_iter(b'\n', run) {
                match shape(&run[from..to], self.max) {
                    Shape::Blank => {}
                    Shape::TooLong => each(Err(too_long(&run[from..to], self.max))),
                    Shape::Line(length) => each(match text {
                        // A line starts after a `\n` and ends before one: both boundaries of
                        // characters.
                        Some(text) => Ok(&text[from..from + length]),
                        None => checked(&run[from..from + length]),
                    }),
                }
                from = to + 1;
            }
        }
        // What is left holds no `\n`: an unfinished line kept within the cap, or the last line
        // once the input ended.
        while let Some(line) = self.next_line() {
            each(line);
        }
    }

    /// Forgets the bytes of a line that is already too long, keeping only its head and length.
    fn drop_pending(&mut self) {
        // A `\r` at the end stays until the next byte says whether it ends the line.
        let kept = usize::from(self.buf[self.start..self.end].ends_with(b"\r"));
        let pending = &self.buf[self.start..self.end - kept];
        let (dropped, head) = self.dropping.get_or_insert_with(|| (0, Vec::new()));
        let room = HEAD_BYTES.saturating_sub(head.len());
        head.extend_from_slice(&pending[..room.min(pending.len())]);
        *dropped += pending.len();
        self.buf.copy_within(self.end - kept..self.end, 0);
        self.end = kept;
        self.start = 0;
        self.scanned = kept;
    }
}

/// What a complete line (its `\n` gone) is to framing.
enum Shape {
    /// Nothing but whitespace: skipped.
    Blank,
    /// Over the cap (see [`too_long`]).
    TooLong,
    /// A line of this many bytes, a trailing `\r` left out.
    Line(usize),
}

#[inline]
fn shape(line: &[u8], max: usize) -> Shape {
    let line = trim(line);
    if line.len() > max {
        Shape::TooLong
    } else if line.iter().all(u8::is_ascii_whitespace) {
        Shape::Blank
    } else {
        Shape::Line(line.len())
    }
}

/// The report of a line over the cap.
#[cold]
fn too_long(line: &[u8], max: usize) -> LineError {
    let line = trim(line);
    let head = String::from_utf8_lossy(&line[..HEAD_BYTES.min(line.len())]).into_owned();
    let length = line.len();
    LineError::TooLong { length, max, head }
}

/// A line without its trailing `\r`.
fn trim(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// A line's text, if it is UTF-8.
#[inline]
fn checked(line: &[u8]) -> Result<&str, LineError> {
    // Mostly ASCII: a SIMD check takes a fraction of the time of `std::str::from_utf8`.
    simdutf8::basic::from_utf8(line).map_err(|_| LineError::NotUtf8 {
        lossy: String::from_utf8_lossy(line).into_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(decoder: &mut LineDecoder) -> Vec<Result<String, LineError>> {
        let mut out = Vec::new();
        while let Some(line) = decoder.next_line() {
            out.push(line.map(str::to_owned));
        }
        out
    }

    #[test]
    fn utf8_split_across_reads_and_crlf_split_too() {
        let text = "{\"q\":\"caf\u{e9} \u{1f600}\"}\r\n";
        let mut decoder = LineDecoder::new(1024);
        let mut got = Vec::new();
        for byte in text.as_bytes() {
            decoder.push(std::slice::from_ref(byte));
            got.extend(all(&mut decoder));
        }
        assert_eq!(got, vec![Ok("{\"q\":\"caf\u{e9} \u{1f600}\"}".to_owned())]);
    }

    #[test]
    fn reading_straight_into_the_buffer_gives_the_lines_pushing_gives() {
        // Lines of many lengths (some split UTF-8 across reads, some over the limit), read
        // in chunks of many sizes past the point where the buffer compacts.
        let mut text = String::new();
        for n in 0..3000 {
            let pad = "\u{e9}".repeat(n % 97) + &"x".repeat(n % 301);
            text.push_str(&format!("{{\"n\":{n},\"p\":\"{pad}\"}}\r\n"));
        }
        let mut pushed = LineDecoder::new(400);
        pushed.push(text.as_bytes());
        let expected = all(&mut pushed);
        assert!(
            expected.iter().any(Result::is_err),
            "some lines are over the limit"
        );
        let mut read = LineDecoder::new(400);
        let mut got = Vec::new();
        let mut rest = text.as_bytes();
        for size in [1, 7, 64, 1000, 4096, 70_000].into_iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let n = size.min(rest.len());
            read.room(n)[..n].copy_from_slice(&rest[..n]);
            read.filled(n);
            rest = &rest[n..];
            got.extend(all(&mut read));
        }
        assert_eq!(got, expected);
        let mut chunked = LineDecoder::new(400);
        let mut got = Vec::new();
        for chunk in text.as_bytes().chunks(64 * 1024) {
            chunked.push(chunk);
            got.extend(all(&mut chunked));
        }
        assert_eq!(got, expected);
    }

    type Lines = Vec<Result<String, LineError>>;

    /// Every line of `text` read in chunks of the sizes given, in turn, taken by `take` after
    /// each read and at the end.
    fn read_in(
        text: &[u8],
        max: usize,
        sizes: &[usize],
        take: fn(&mut LineDecoder, &mut Lines),
    ) -> Lines {
        let mut decoder = LineDecoder::new(max);
        let mut got = Vec::new();
        let mut rest = text;
        for size in sizes.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let n = (*size).min(rest.len());
            decoder.room(n)[..n].copy_from_slice(&rest[..n]);
            decoder.filled(n);
            rest = &rest[n..];
            take(&mut decoder, &mut got);
        }
        decoder.finish();
        take(&mut decoder, &mut got);
        got
    }

    #[test]
    fn lines_are_the_same_for_reads_of_any_size() {
        // Runs with bad UTF-8 in them (split across reads too), blank and whitespace lines,
        // CRLF, lines over the cap (some dropped as they stream in over several reads), and a
        // last line without `\n`.
        let mut text = Vec::new();
        for n in 0..2000 {
            match n % 11 {
                0 => text.extend_from_slice(b"{\"bad\":\"\xff\xfe\"}\n"),
                1 => text.extend_from_slice(b"\n  \t\r\n"),
                2 => text.extend_from_slice(&[b'x'; 700]),
                3 => text.extend_from_slice(b"{\"split\":\"\xe2\x82\xac\"}\r\n"),
                _ => {}
            }
            let pad = "\u{e9}".repeat(n % 53) + &"y".repeat(n % 173);
            text.extend_from_slice(format!("{{\"n\":{n},\"p\":\"{pad}\"}}\r\n").as_bytes());
        }
        text.extend_from_slice(b"{\"last\":true}");
        let mut at_once = LineDecoder::new(400);
        at_once.push(&text);
        at_once.finish();
        let expected = all(&mut at_once);
        assert!(expected
            .iter()
            .any(|l| matches!(l, Err(LineError::NotUtf8 { .. }))));
        assert!(expected
            .iter()
            .any(|l| matches!(l, Err(LineError::TooLong { .. }))));
        assert_eq!(expected.last(), Some(&Ok("{\"last\":true}".to_owned())));
        let drain: fn(&mut LineDecoder, &mut Lines) =
            |decoder, got| decoder.drain_lines(|line| got.push(line.map(str::to_owned)));
        let one_by_one: fn(&mut LineDecoder, &mut Lines) = |decoder, got| got.extend(all(decoder));
        for sizes in [
            &[1, 3, 64][..],
            &[7, 1000],
            &[333],
            &[4096, 70_000],
            &[64 * 1024],
        ] {
            for (how, take) in [("drain_lines", drain), ("next_line", one_by_one)] {
                let got = read_in(&text, 400, sizes, take);
                let first = got.iter().zip(&expected).position(|(a, b)| a != b);
                assert_eq!(
                    (got.len(), first),
                    (expected.len(), None),
                    "{how}, reads of {sizes:?}: first difference {:?}",
                    first.map(|at| (&got[at], &expected[at]))
                );
            }
        }
    }

    #[test]
    fn many_frames_in_one_read_and_blank_lines_skipped() {
        let mut decoder = LineDecoder::new(1024);
        decoder.push(b"{\"a\":1}\n\n  \r\n{\"b\":2}\r\n{\"c\"");
        assert_eq!(
            all(&mut decoder),
            vec![Ok("{\"a\":1}".to_owned()), Ok("{\"b\":2}".to_owned())]
        );
        decoder.push(b":3}");
        assert!(all(&mut decoder).is_empty());
        decoder.finish();
        assert_eq!(all(&mut decoder), vec![Ok("{\"c\":3}".to_owned())]);
    }

    #[test]
    fn an_oversized_line_is_dropped_as_it_streams_and_reading_goes_on() {
        let mut decoder = LineDecoder::new(16);
        decoder.push(b"{\"ok\":1}\n{\"big\":\"");
        assert_eq!(all(&mut decoder), vec![Ok("{\"ok\":1}".to_owned())]);
        for _ in 0..1000 {
            decoder.push(&[b'x'; 100]);
            assert!(all(&mut decoder).is_empty());
            assert!(decoder.buffered() <= 100, "memory stays bounded");
        }
        decoder.push(b"\"}\n{\"next\":2}\n");
        let got = all(&mut decoder);
        match &got[0] {
            Err(LineError::TooLong { length, max, head }) => {
                assert_eq!((*length, *max), (8 + 100_000 + 2, 16));
                assert!(head.starts_with("{\"big\":\"xxx"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(got[1], Ok("{\"next\":2}".to_owned()));
    }

    /// A line exactly at the cap whose `\r\n` is split across two reads is a line.
    #[test]
    fn a_line_at_the_cap_with_its_crlf_split_across_reads_is_kept() {
        let mut decoder = LineDecoder::new(4);
        decoder.push(b"abcd\r");
        assert!(all(&mut decoder).is_empty());
        decoder.push(b"\nabcde\r");
        assert_eq!(all(&mut decoder), vec![Ok("abcd".to_owned())]);
        decoder.push(b"\n");
        assert!(matches!(
            all(&mut decoder)[..],
            [Err(LineError::TooLong { length: 5, .. })]
        ));
    }

    #[test]
    fn an_oversized_line_without_end_is_reported_at_the_end_of_input() {
        let mut decoder = LineDecoder::new(4);
        decoder.push(b"0123456789");
        assert!(all(&mut decoder).is_empty());
        decoder.finish();
        assert!(matches!(
            all(&mut decoder)[..],
            [Err(LineError::TooLong { length: 10, .. })]
        ));
    }

    #[test]
    fn a_line_that_is_not_utf8_is_reported_lossily() {
        let mut decoder = LineDecoder::new(64);
        decoder.push(b"{\"a\":\"\xff\"}\n{}\n");
        let got = all(&mut decoder);
        assert_eq!(
            got[0],
            Err(LineError::NotUtf8 {
                lossy: "{\"a\":\"\u{fffd}\"}".to_owned()
            })
        );
        assert_eq!(got[1], Ok("{}".to_owned()));
    }
}

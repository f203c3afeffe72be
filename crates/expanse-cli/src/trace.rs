//! Allocation traces: `a,<id>,<size>,<stream>` and `f,<id>` lines, plain
//! or gzip-compressed, `#` comments.
//!
//! Read as a stream: [`open`] gives an iterator of events, validated as
//! they come (well-formed, bounded lines; an id allocated while live or
//! freed while not live is an error). Memory is the live ids plus one
//! line, whatever the trace's length.

use std::collections::HashSet;
use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// Longest line accepted, in bytes (a trace line is under 80).
pub const MAX_LINE: usize = 4096;

/// Highest stream index accepted.
const MAX_STREAM: u64 = 1 << 20;

/// One trace event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Allocate `size` bytes on stream index `stream`, known as `id`.
    Alloc { id: u64, size: u64, stream: u64 },
    /// Free allocation `id`.
    Free { id: u64 },
}

/// A trace that could not be read, naming the file and line.
#[derive(Debug)]
pub struct TraceError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        }
    }
}

impl std::error::Error for TraceError {}

/// Events of a trace with their line numbers, checked as they are read.
/// After an error it yields nothing more.
pub struct Events<R> {
    reader: R,
    file: String,
    line: usize,
    buf: Vec<u8>,
    live: HashSet<u64>,
    done: bool,
}

/// Open a trace file (plain or gzip) as a stream of events.
pub fn open(path: &Path) -> Result<Events<Box<dyn BufRead>>, TraceError> {
    let file = path.display().to_string();
    let err = |message: String| TraceError { file: file.clone(), line: 0, message };
    let f = std::fs::File::open(path).map_err(|e| err(format!("cannot open: {e}")))?;
    let mut reader = BufReader::new(f);
    let gzip = reader.fill_buf().map_err(|e| err(format!("cannot read: {e}")))?.starts_with(&[0x1f, 0x8b]);
    let input: Box<dyn BufRead> =
        if gzip { Box::new(BufReader::new(flate2::read::MultiGzDecoder::new(reader))) } else { Box::new(reader) };
    Ok(parse(input, &file))
}

/// Events of trace text from any reader (`file` names it in errors).
pub fn parse<R: BufRead>(reader: R, file: &str) -> Events<R> {
    Events { reader, file: file.to_string(), line: 0, buf: Vec::new(), live: HashSet::new(), done: false }
}

impl<R: BufRead> Events<R> {
    fn err(&self, message: String) -> TraceError {
        TraceError { file: self.file.clone(), line: self.line, message }
    }

    /// The next line into `buf`, without its end; false at the end.
    fn next_line(&mut self) -> Result<bool, TraceError> {
        self.buf.clear();
        self.line += 1;
        let n = (&mut self.reader)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| self.err(format!("unreadable (corrupt or not a trace): {e}")))?;
        if n == 0 {
            return Ok(false);
        }
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
        } else if self.buf.len() > MAX_LINE {
            return Err(self.err(format!("line longer than {MAX_LINE} bytes (corrupt or not a trace)")));
        }
        Ok(true)
    }

    fn event(&mut self, line: &str) -> Result<Event, TraceError> {
        let fields: Vec<&str> = line.split(',').collect();
        let num = |s: &str, what: &str| -> Result<u64, TraceError> {
            s.trim().parse::<u64>().map_err(|_| self.err(format!("{what} '{s}' is not a non-negative integer")))
        };
        match fields.as_slice() {
            ["a", id, size, stream] => {
                let (id, size, stream) = (num(id, "id")?, num(size, "size")?, num(stream, "stream")?);
                if stream > MAX_STREAM {
                    return Err(self.err(format!("stream index {stream} is implausibly large")));
                }
                if !self.live.insert(id) {
                    return Err(self.err(format!("id {id} allocated twice (still live)")));
                }
                Ok(Event::Alloc { id, size, stream })
            }
            ["f", id] => {
                let id = num(id, "id")?;
                if !self.live.remove(&id) {
                    return Err(self.err(format!("free of id {id}, which is not live (unknown, or freed twice)")));
                }
                Ok(Event::Free { id })
            }
            _ => Err(self.err(format!("malformed line '{line}': expected 'a,<id>,<size>,<stream>' or 'f,<id>'"))),
        }
    }

    fn step(&mut self) -> Option<Result<(usize, Event), TraceError>> {
        loop {
            match self.next_line() {
                Ok(false) => return None,
                Err(e) => return Some(Err(e)),
                Ok(true) => {}
            }
            let buf = std::mem::take(&mut self.buf);
            let r = match std::str::from_utf8(&buf) {
                Err(_) => Some(Err(self.err("not UTF-8 text (corrupt or not a trace)".into()))),
                Ok(text) => {
                    let text = text.trim();
                    (!text.is_empty() && !text.starts_with('#')).then(|| self.event(text).map(|e| (self.line, e)))
                }
            };
            self.buf = buf;
            if r.is_some() {
                return r;
            }
        }
    }
}

impl<R: BufRead> Iterator for Events<R> {
    type Item = Result<(usize, Event), TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = self.step();
        self.done = !matches!(r, Some(Ok(_)));
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Vec<(usize, Event)>, TraceError> {
        parse(s.as_bytes(), "t.csv").collect()
    }

    #[test]
    fn parses_events_and_comments() {
        let t = p("# header\na,1,100,0\na,2,5,1\nf,1\n").unwrap();
        let lines: Vec<usize> = t.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, vec![2, 3, 4]);
        assert_eq!(t[1].1, Event::Alloc { id: 2, size: 5, stream: 1 });
        assert_eq!(t[2].1, Event::Free { id: 1 });
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = p("a,1,100,0\nf,2\n").unwrap_err();
        assert_eq!((e.line, e.file.as_str()), (2, "t.csv"));
        assert!(e.to_string().starts_with("t.csv:2: free of id 2, which is not live"), "{e}");
        assert!(p("a,1,100,0\nf,1\nf,1\n").unwrap_err().to_string().contains("t.csv:3: free of id 1"));
        assert!(p("a,1,x,0\n").unwrap_err().to_string().contains("size 'x'"));
        assert!(p("b,1\n").unwrap_err().to_string().contains("malformed"));
        assert!(p("a,1,1,0\na,1,1,0\n").unwrap_err().to_string().contains("allocated twice"));
    }

    #[test]
    fn a_freed_id_may_be_allocated_again() {
        // Only live ids are kept: memory follows live allocations.
        assert_eq!(p("a,1,1,0\nf,1\na,1,2,0\nf,1\n").unwrap().len(), 4);
    }

    #[test]
    fn lines_are_bounded_and_errors_stop_the_stream() {
        let long = format!("a,1,1,0\n#{}\na,2,1,0\n", "x".repeat(MAX_LINE));
        let mut events = parse(long.as_bytes(), "t.csv");
        assert!(events.next().unwrap().is_ok());
        let e = events.next().unwrap().unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.to_string().contains("line longer than 4096 bytes"), "{e}");
        assert!(events.next().is_none());
        // A line of exactly MAX_LINE bytes (comment) is fine; one without
        // a final newline too.
        let ok = format!("#{}\na,1,1,0", "x".repeat(MAX_LINE - 1));
        assert_eq!(p(&ok).unwrap().len(), 1);
        let bad = [b"a,1,1,0\n".as_slice(), &[0xff, 0xfe, b'\n']].concat();
        let e = parse(bad.as_slice(), "t.csv").collect::<Result<Vec<_>, _>>().unwrap_err();
        assert!(e.to_string().contains("t.csv:2: not UTF-8"), "{e}");
    }
}

//! Allocation traces: `a,<id>,<size>,<stream>` and `f,<id>` lines, plain
//! or gzip-compressed, `#` comments.

use std::collections::HashMap;
use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

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

/// A parsed trace; events keep their source line numbers.
#[derive(Debug)]
pub struct Trace {
    pub events: Vec<Event>,
    pub lines: Vec<usize>,
    /// Number of distinct stream indices (highest + 1).
    pub streams: usize,
}

/// Read and validate a trace: every line well-formed, every id allocated
/// once and freed at most once, after its allocation.
pub fn read(path: &Path) -> Result<Trace, TraceError> {
    let file = path.display().to_string();
    let err = |line: usize, message: String| TraceError { file: file.clone(), line, message };
    let f = std::fs::File::open(path).map_err(|e| err(0, format!("cannot open: {e}")))?;
    let mut head = [0u8; 2];
    let mut reader = BufReader::new(f);
    let n = {
        let buf = reader.fill_buf().map_err(|e| err(0, format!("cannot read: {e}")))?;
        let n = buf.len().min(2);
        head[..n].copy_from_slice(&buf[..n]);
        n
    };
    let input: Box<dyn Read> = if n == 2 && head == [0x1f, 0x8b] {
        Box::new(flate2::read::MultiGzDecoder::new(reader))
    } else {
        Box::new(reader)
    };
    parse(BufReader::new(input), &file)
}

/// Parse trace text from any reader (`file` names it in errors).
pub fn parse(reader: impl BufRead, file: &str) -> Result<Trace, TraceError> {
    let err = |line: usize, message: String| TraceError { file: file.to_string(), line, message };
    let mut events = Vec::new();
    let mut lines = Vec::new();
    // id -> live?
    let mut ids: HashMap<u64, bool> = HashMap::new();
    let mut streams = 0usize;
    for (i, line) in reader.lines().enumerate() {
        let lineno = i + 1;
        let line = line.map_err(|e| err(lineno, format!("unreadable (corrupt or not a trace): {e}")))?;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split(',').collect();
        let num = |s: &str, what: &str| -> Result<u64, TraceError> {
            s.trim().parse::<u64>().map_err(|_| err(lineno, format!("{what} '{s}' is not a non-negative integer")))
        };
        let ev = match fields.as_slice() {
            ["a", id, size, stream] => {
                let id = num(id, "id")?;
                let size = num(size, "size")?;
                let stream = num(stream, "stream")?;
                if stream > 1 << 20 {
                    return Err(err(lineno, format!("stream index {stream} is implausibly large")));
                }
                if ids.insert(id, true).is_some() {
                    return Err(err(lineno, format!("id {id} allocated twice")));
                }
                streams = streams.max(stream as usize + 1);
                Event::Alloc { id, size, stream }
            }
            ["f", id] => {
                let id = num(id, "id")?;
                match ids.get_mut(&id) {
                    Some(live @ true) => *live = false,
                    Some(false) => return Err(err(lineno, format!("id {id} freed twice"))),
                    None => return Err(err(lineno, format!("free of unknown id {id}"))),
                }
                Event::Free { id }
            }
            _ => {
                return Err(err(
                    lineno,
                    format!("malformed line '{line}': expected 'a,<id>,<size>,<stream>' or 'f,<id>'"),
                ))
            }
        };
        events.push(ev);
        lines.push(lineno);
    }
    Ok(Trace { events, lines, streams })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Trace, TraceError> {
        parse(s.as_bytes(), "t.csv")
    }

    #[test]
    fn parses_events_and_comments() {
        let t = p("# header\na,1,100,0\na,2,5,1\nf,1\n").unwrap();
        assert_eq!(t.events.len(), 3);
        assert_eq!(t.streams, 2);
        assert_eq!(t.lines, vec![2, 3, 4]);
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = p("a,1,100,0\nf,2\n").unwrap_err();
        assert_eq!((e.line, e.file.as_str()), (2, "t.csv"));
        assert!(e.to_string().starts_with("t.csv:2: free of unknown id 2"), "{e}");
        assert!(p("a,1,100,0\nf,1\nf,1\n").unwrap_err().to_string().contains("freed twice"));
        assert!(p("a,1,x,0\n").unwrap_err().to_string().contains("size 'x'"));
        assert!(p("b,1\n").unwrap_err().to_string().contains("malformed"));
        assert!(p("a,1,1,0\na,1,1,0\n").unwrap_err().to_string().contains("allocated twice"));
    }
}

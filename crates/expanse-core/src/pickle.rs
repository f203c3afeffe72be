//! A streaming writer of Python pickles (protocol 4), for the snapshots
//! PyTorch's memory viewer reads.
//!
//! Only a small subset of opcodes is written, the one stated for snapshots
//! in the reference design: PROTO, STOP, MARK, EMPTY_DICT, SETITEMS,
//! EMPTY_LIST, APPENDS, EMPTY_TUPLE, TUPLE1-3, BININT1, BININT2, BININT,
//! LONG1, BINFLOAT, SHORT_BINUNICODE, BINUNICODE, NONE, NEWTRUE, NEWFALSE,
//! MEMOIZE, BINGET and LONG_BINGET. Nothing that imports or calls (no
//! GLOBAL, REDUCE, BUILD): loading such a pickle runs no code. Strings are
//! memoized, so the keys repeated in every entry cost two bytes each.
//!
//! Containers are written as `EMPTY_DICT MARK ... SETITEMS` and
//! `EMPTY_LIST MARK ... APPENDS`; the caller pairs each `begin_*` with its
//! `end_*` and, inside a dict, alternates keys and values.

use std::collections::HashMap;

/// Opcodes written (Python's `pickle` module names).
pub mod op {
    pub const PROTO: u8 = 0x80;
    pub const STOP: u8 = b'.';
    pub const MARK: u8 = b'(';
    pub const EMPTY_DICT: u8 = b'}';
    pub const SETITEMS: u8 = b'u';
    pub const EMPTY_LIST: u8 = b']';
    pub const APPENDS: u8 = b'e';
    pub const EMPTY_TUPLE: u8 = b')';
    pub const TUPLE1: u8 = 0x85;
    pub const TUPLE2: u8 = 0x86;
    pub const TUPLE3: u8 = 0x87;
    pub const BININT: u8 = b'J';
    pub const BININT1: u8 = b'K';
    pub const BININT2: u8 = b'M';
    pub const LONG1: u8 = 0x8a;
    pub const BINFLOAT: u8 = b'G';
    pub const SHORT_BINUNICODE: u8 = 0x8c;
    pub const BINUNICODE: u8 = b'X';
    pub const NONE: u8 = b'N';
    pub const NEWTRUE: u8 = 0x88;
    pub const NEWFALSE: u8 = 0x89;
    pub const MEMOIZE: u8 = 0x94;
    pub const BINGET: u8 = b'h';
    pub const LONG_BINGET: u8 = b'j';
}

/// The protocol written.
pub const PROTOCOL: u8 = 4;

/// Writes one pickled value into a byte buffer.
#[derive(Debug)]
pub struct PickleWriter {
    out: Vec<u8>,
    memo: HashMap<String, u32>,
    /// Open containers (for `finish`'s check).
    depth: usize,
}

impl Default for PickleWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl PickleWriter {
    /// A writer with the protocol header written.
    pub fn new() -> Self {
        PickleWriter { out: vec![op::PROTO, PROTOCOL], memo: HashMap::new(), depth: 0 }
    }

    /// End the pickle and return its bytes.
    ///
    /// # Panics
    /// If a container is still open (a bug in the caller).
    pub fn finish(mut self) -> Vec<u8> {
        assert_eq!(self.depth, 0, "pickle finished with open containers");
        self.out.push(op::STOP);
        self.out
    }

    /// `None`.
    pub fn none(&mut self) {
        self.out.push(op::NONE);
    }

    /// A bool.
    pub fn bool(&mut self, v: bool) {
        self.out.push(if v { op::NEWTRUE } else { op::NEWFALSE });
    }

    /// An integer, in the shortest form.
    pub fn int(&mut self, v: i128) {
        if (0..=0xff).contains(&v) {
            self.out.extend_from_slice(&[op::BININT1, v as u8]);
        } else if (0..=0xffff).contains(&v) {
            self.out.push(op::BININT2);
            self.out.extend_from_slice(&(v as u16).to_le_bytes());
        } else if i128::from(i32::MIN) <= v && v <= i128::from(i32::MAX) {
            self.out.push(op::BININT);
            self.out.extend_from_slice(&(v as i32).to_le_bytes());
        } else {
            // Little-endian two's complement, as few bytes as keep the sign.
            let bytes = v.to_le_bytes();
            let mut n = bytes.len();
            while n > 1 {
                let (top, next) = (bytes[n - 1], bytes[n - 2]);
                let redundant = (top == 0 && next & 0x80 == 0) || (top == 0xff && next & 0x80 != 0);
                if !redundant {
                    break;
                }
                n -= 1;
            }
            self.out.extend_from_slice(&[op::LONG1, n as u8]);
            self.out.extend_from_slice(&bytes[..n]);
        }
    }

    /// An unsigned integer.
    pub fn uint(&mut self, v: u64) {
        self.int(i128::from(v));
    }

    /// A float.
    pub fn float(&mut self, v: f64) {
        self.out.push(op::BINFLOAT);
        self.out.extend_from_slice(&v.to_be_bytes());
    }

    /// A string; the second and later copies refer to the first.
    pub fn str(&mut self, s: &str) {
        if let Some(&i) = self.memo.get(s) {
            match u8::try_from(i) {
                Ok(b) => self.out.extend_from_slice(&[op::BINGET, b]),
                Err(_) => {
                    self.out.push(op::LONG_BINGET);
                    self.out.extend_from_slice(&i.to_le_bytes());
                }
            }
            return;
        }
        match u8::try_from(s.len()) {
            Ok(n) => self.out.extend_from_slice(&[op::SHORT_BINUNICODE, n]),
            Err(_) => {
                self.out.push(op::BINUNICODE);
                self.out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            }
        }
        self.out.extend_from_slice(s.as_bytes());
        self.out.push(op::MEMOIZE);
        let index = self.memo.len() as u32;
        self.memo.insert(s.to_owned(), index);
    }

    /// Start a dict: then key, value, key, value, ..., [`Self::end_dict`].
    pub fn begin_dict(&mut self) {
        self.out.extend_from_slice(&[op::EMPTY_DICT, op::MARK]);
        self.depth += 1;
    }

    /// End the dict begun last.
    pub fn end_dict(&mut self) {
        self.out.push(op::SETITEMS);
        self.depth -= 1;
    }

    /// Start a list: then its items, [`Self::end_list`].
    pub fn begin_list(&mut self) {
        self.out.extend_from_slice(&[op::EMPTY_LIST, op::MARK]);
        self.depth += 1;
    }

    /// End the list begun last.
    pub fn end_list(&mut self) {
        self.out.push(op::APPENDS);
        self.depth -= 1;
    }

    /// An empty list.
    pub fn empty_list(&mut self) {
        self.out.push(op::EMPTY_LIST);
    }

    /// A tuple of integers (up to three items: TUPLE1-3, none: EMPTY_TUPLE).
    ///
    /// # Panics
    /// With more than three items.
    pub fn int_tuple(&mut self, items: &[i128]) {
        for &i in items {
            self.int(i);
        }
        let code = match items.len() {
            0 => op::EMPTY_TUPLE,
            1 => op::TUPLE1,
            2 => op::TUPLE2,
            3 => op::TUPLE3,
            n => panic!("int_tuple of {n} items: only up to 3 are written"),
        };
        self.out.push(code);
    }

    /// `key: value` for an integer value, inside a dict.
    pub fn kv_uint(&mut self, key: &str, v: u64) {
        self.str(key);
        self.uint(v);
    }

    /// `key: value` for a string value, inside a dict.
    pub fn kv_str(&mut self, key: &str, v: &str) {
        self.str(key);
        self.str(v);
    }

    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.out.len()
    }

    /// Whether nothing but the header was written.
    pub fn is_empty(&self) -> bool {
        self.out.len() <= 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Byte strings `pickle.dumps(v, protocol=4)` writes for these values
    /// (CPython 3.11, frame header removed), each read back by hand.
    #[test]
    fn integers_match_cpython() {
        let cases: [(i128, &[u8]); 8] = [
            (0, b"K\x00"),
            (255, b"K\xff"),
            (256, b"M\x00\x01"),
            (65536, b"J\x00\x00\x01\x00"),
            (-1, b"J\xff\xff\xff\xff"),
            (1 << 31, b"\x8a\x05\x00\x00\x00\x80\x00"),
            (-(1 << 40), b"\x8a\x06\x00\x00\x00\x00\x00\xff"),
            (u64::MAX as i128, b"\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\x00"),
        ];
        for (v, want) in cases {
            let mut w = PickleWriter::new();
            w.int(v);
            let got = w.finish();
            assert_eq!(&got[2..got.len() - 1], want, "{v}");
        }
    }

    #[test]
    fn strings_are_memoized() {
        let mut w = PickleWriter::new();
        w.begin_list();
        w.str("ab");
        w.str("ab");
        w.end_list();
        let got = w.finish();
        assert_eq!(got, b"\x80\x04](\x8c\x02ab\x94h\x00e.");
    }

    #[test]
    fn long_strings_use_binunicode() {
        let s = "x".repeat(300);
        let mut w = PickleWriter::new();
        w.str(&s);
        let got = w.finish();
        assert_eq!(&got[2..7], b"X\x2c\x01\x00\x00");
        assert_eq!(got.len(), 2 + 5 + 300 + 1 + 1);
    }
}

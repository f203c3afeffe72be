//! An independent reader of the pickle subset that snapshots may use (the
//! list in the reference design's "Snapshot" section), written from
//! Python's `pickletools` documentation, not from expanse's writer. Any
//! opcode outside the subset is an error, so a test that decodes a
//! snapshot with it proves the subset.
#![allow(dead_code)]

use std::collections::BTreeSet;

/// A decoded value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    None,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    List(Vec<Value>),
    Tuple(Vec<Value>),
    Dict(Vec<(Value, Value)>),
}

impl Value {
    /// The value of `key` in a dict with string keys.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Dict(items) => items.iter().find(|(k, _)| *k == Value::Str(key.into())).map(|(_, v)| v),
            _ => None,
        }
    }

    /// `self[key]`, panicking with the key's name when absent.
    pub fn at(&self, key: &str) -> &Value {
        self.get(key).unwrap_or_else(|| panic!("key '{key}' missing in {}", self.brief()))
    }

    pub fn int(&self) -> i128 {
        match self {
            Value::Int(i) => *i,
            v => panic!("not an int: {}", v.brief()),
        }
    }

    pub fn str(&self) -> &str {
        match self {
            Value::Str(s) => s,
            v => panic!("not a str: {}", v.brief()),
        }
    }

    pub fn list(&self) -> &[Value] {
        match self {
            Value::List(l) => l,
            v => panic!("not a list: {}", v.brief()),
        }
    }

    /// String keys of a dict.
    pub fn keys(&self) -> BTreeSet<String> {
        match self {
            Value::Dict(items) => items.iter().map(|(k, _)| k.str().to_owned()).collect(),
            v => panic!("not a dict: {}", v.brief()),
        }
    }

    fn brief(&self) -> String {
        let s = format!("{self:?}");
        s.chars().take(120).collect()
    }
}

enum Item {
    Mark,
    Val(Value),
}

/// Names of the opcodes of the subset, for error messages and counts.
pub const SUBSET: [(u8, &str); 32] = [
    (0x80, "PROTO"),
    (0x95, "FRAME"),
    (b'(', "MARK"),
    (b'.', "STOP"),
    (b'}', "EMPTY_DICT"),
    (b']', "EMPTY_LIST"),
    (b')', "EMPTY_TUPLE"),
    (b'd', "DICT"),
    (b'l', "LIST"),
    (b't', "TUPLE"),
    (0x85, "TUPLE1"),
    (0x86, "TUPLE2"),
    (0x87, "TUPLE3"),
    (b's', "SETITEM"),
    (b'u', "SETITEMS"),
    (b'a', "APPEND"),
    (b'e', "APPENDS"),
    (b'J', "BININT"),
    (b'K', "BININT1"),
    (b'M', "BININT2"),
    (0x8a, "LONG1"),
    (b'G', "BINFLOAT"),
    (0x8c, "SHORT_BINUNICODE"),
    (b'X', "BINUNICODE"),
    (b'N', "NONE"),
    (0x88, "NEWTRUE"),
    (0x89, "NEWFALSE"),
    (0x94, "MEMOIZE"),
    (b'q', "BINPUT"),
    (b'r', "LONG_BINPUT"),
    (b'h', "BINGET"),
    (b'j', "LONG_BINGET"),
];

struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.data.len());
        let end = end.ok_or_else(|| format!("truncated at byte {}", self.at))?;
        let s = &self.data[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
}

fn pop_mark(stack: &mut Vec<Item>) -> Result<Vec<Value>, String> {
    let mut items = Vec::new();
    loop {
        match stack.pop() {
            Some(Item::Mark) => break,
            Some(Item::Val(v)) => items.push(v),
            None => return Err("no MARK on the stack".into()),
        }
    }
    items.reverse();
    Ok(items)
}

fn pop(stack: &mut Vec<Item>) -> Result<Value, String> {
    match stack.pop() {
        Some(Item::Val(v)) => Ok(v),
        _ => Err("expected a value on the stack".into()),
    }
}

fn top(stack: &mut [Item]) -> Result<&mut Value, String> {
    match stack.last_mut() {
        Some(Item::Val(v)) => Ok(v),
        _ => Err("expected a value on top of the stack".into()),
    }
}

fn add_pairs(target: &mut Value, items: Vec<Value>) -> Result<(), String> {
    let Value::Dict(d) = target else { return Err("SETITEM(S) on a non-dict".into()) };
    if !items.len().is_multiple_of(2) {
        return Err("odd number of items for SETITEMS".into());
    }
    let mut it = items.into_iter();
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        d.push((k, v));
    }
    Ok(())
}

fn add_items(target: &mut Value, items: Vec<Value>) -> Result<(), String> {
    let Value::List(l) = target else { return Err("APPEND(S) on a non-list".into()) };
    l.extend(items);
    Ok(())
}

/// Decode `data`; also returns how often each opcode name occurred.
pub fn load(data: &[u8]) -> Result<(Value, std::collections::BTreeMap<&'static str, u64>), String> {
    let mut r = Reader { data, at: 0 };
    let mut stack: Vec<Item> = Vec::new();
    let mut memo: Vec<Option<Value>> = Vec::new();
    let mut counts = std::collections::BTreeMap::new();
    loop {
        let pos = r.at;
        let code = r.u8()?;
        let name = SUBSET
            .iter()
            .find(|(c, _)| *c == code)
            .map(|(_, n)| *n)
            .ok_or_else(|| format!("opcode {code:#04x} at byte {pos} is outside the snapshot subset"))?;
        *counts.entry(name).or_insert(0) += 1;
        match name {
            "PROTO" => {
                let p = r.u8()?;
                if !(2..=4).contains(&p) {
                    return Err(format!("protocol {p} outside 2-4"));
                }
            }
            "FRAME" => {
                r.take(8)?;
            }
            "MARK" => stack.push(Item::Mark),
            "STOP" => {
                let v = pop(&mut stack)?;
                if !stack.is_empty() || r.at != data.len() {
                    return Err("STOP with items left on the stack or bytes after it".into());
                }
                return Ok((v, counts));
            }
            "EMPTY_DICT" => stack.push(Item::Val(Value::Dict(Vec::new()))),
            "EMPTY_LIST" => stack.push(Item::Val(Value::List(Vec::new()))),
            "EMPTY_TUPLE" => stack.push(Item::Val(Value::Tuple(Vec::new()))),
            "DICT" => {
                let mut d = Value::Dict(Vec::new());
                add_pairs(&mut d, pop_mark(&mut stack)?)?;
                stack.push(Item::Val(d));
            }
            "LIST" => {
                let l = pop_mark(&mut stack)?;
                stack.push(Item::Val(Value::List(l)));
            }
            "TUPLE" => {
                let t = pop_mark(&mut stack)?;
                stack.push(Item::Val(Value::Tuple(t)));
            }
            "TUPLE1" | "TUPLE2" | "TUPLE3" => {
                let n = usize::from(code - 0x84);
                let mut t = Vec::new();
                for _ in 0..n {
                    t.push(pop(&mut stack)?);
                }
                t.reverse();
                stack.push(Item::Val(Value::Tuple(t)));
            }
            "SETITEM" => {
                let v = pop(&mut stack)?;
                let k = pop(&mut stack)?;
                add_pairs(top(&mut stack)?, vec![k, v])?;
            }
            "SETITEMS" => {
                let items = pop_mark(&mut stack)?;
                add_pairs(top(&mut stack)?, items)?;
            }
            "APPEND" => {
                let v = pop(&mut stack)?;
                add_items(top(&mut stack)?, vec![v])?;
            }
            "APPENDS" => {
                let items = pop_mark(&mut stack)?;
                add_items(top(&mut stack)?, items)?;
            }
            "BININT" => {
                let v = i32::from_le_bytes(r.take(4)?.try_into().unwrap());
                stack.push(Item::Val(Value::Int(i128::from(v))));
            }
            "BININT1" => {
                let v = r.u8()?;
                stack.push(Item::Val(Value::Int(i128::from(v))));
            }
            "BININT2" => {
                let v = u16::from_le_bytes(r.take(2)?.try_into().unwrap());
                stack.push(Item::Val(Value::Int(i128::from(v))));
            }
            "LONG1" => {
                let n = usize::from(r.u8()?);
                if n > 16 {
                    return Err(format!("LONG1 of {n} bytes"));
                }
                let bytes = r.take(n)?;
                let mut v: i128 = 0;
                for (i, b) in bytes.iter().enumerate() {
                    v |= i128::from(*b) << (8 * i);
                }
                // Sign-extend from the top bit of the last byte.
                if n > 0 && n < 16 && bytes[n - 1] & 0x80 != 0 {
                    v -= 1i128 << (8 * n);
                }
                stack.push(Item::Val(Value::Int(v)));
            }
            "BINFLOAT" => {
                let v = f64::from_be_bytes(r.take(8)?.try_into().unwrap());
                stack.push(Item::Val(Value::Float(v)));
            }
            "SHORT_BINUNICODE" | "BINUNICODE" => {
                let n = if name == "BINUNICODE" { r.u32()? as usize } else { usize::from(r.u8()?) };
                let s = std::str::from_utf8(r.take(n)?).map_err(|e| format!("bad UTF-8 at byte {pos}: {e}"))?;
                stack.push(Item::Val(Value::Str(s.to_owned())));
            }
            "NONE" => stack.push(Item::Val(Value::None)),
            "NEWTRUE" => stack.push(Item::Val(Value::Bool(true))),
            "NEWFALSE" => stack.push(Item::Val(Value::Bool(false))),
            "MEMOIZE" | "BINPUT" | "LONG_BINPUT" => {
                let index = match name {
                    "MEMOIZE" => memo.len(),
                    "BINPUT" => usize::from(r.u8()?),
                    _ => r.u32()? as usize,
                };
                // A container may still change after this point and this
                // reader keeps copies: it is memoized as unreadable, and
                // only a BINGET of it fails.
                let v = match top(&mut stack)? {
                    Value::List(_) | Value::Dict(_) => None,
                    v => Some(v.clone()),
                };
                if memo.len() <= index {
                    memo.resize(index + 1, None);
                }
                memo[index] = v;
            }
            "BINGET" | "LONG_BINGET" => {
                let index = if name == "BINGET" { usize::from(r.u8()?) } else { r.u32()? as usize };
                let v =
                    memo.get(index).cloned().flatten().ok_or_else(|| format!("memo {index} unset or a container"))?;
                stack.push(Item::Val(v));
            }
            _ => unreachable!("every subset opcode is handled"),
        }
    }
}

#[cfg(test)]
mod reader_tests {
    use super::*;

    /// Bytes CPython 3.11 wrote with `pickle.dumps(v, protocol=4)`.
    #[test]
    fn reads_cpython_output() {
        let (v, _) = load(b"\x80\x04\x95\x0c\x00\x00\x00\x00\x00\x00\x00]\x94(\x8c\x02ab\x94h\x01e.").unwrap();
        assert_eq!(v, Value::List(vec![Value::Str("ab".into()), Value::Str("ab".into())]));
        let (v, _) = load(b"\x80\x04\x95\t\x00\x00\x00\x00\x00\x00\x00\x8a\x06\x00\x00\x00\x00\x00\xff.").unwrap();
        assert_eq!(v, Value::Int(-(1 << 40)));
    }

    #[test]
    fn refuses_opcodes_outside_the_subset() {
        // pickle.dumps(set(), protocol=4): EMPTY_SET.
        let e = load(b"\x80\x04\x8f\x94.").unwrap_err();
        assert!(e.contains("0x8f"), "{e}");
        // GLOBAL 'os system' (code execution on load).
        let e = load(b"\x80\x02cos\nsystem\n.").unwrap_err();
        assert!(e.contains("outside the snapshot subset"), "{e}");
    }
}

//! Finds whether JSON text names a key twice in one object, without building the value.
//!
//! Python's `json` keeps the last of repeated keys silently; the sync layer refuses
//! records whose repeated keys disagree (docs/sync.md). Telling them apart needs a Python
//! hook per object, a fifth slower on a 100,000-record pull, so this scan runs first and
//! the hook only when some object repeats a key. The text is one `json.loads` accepts
//! (NaN and Infinity included); anything this scan does not expect answers `None`, and
//! the caller takes the exact (hooked) path, so a wrong "no" cannot come from odd input.

use std::borrow::Cow;
use std::collections::HashSet;

/// Keys of an object compared one by one up to this many; a larger object gets a set.
const LINEAR_KEYS: usize = 24;

struct Frame<'a> {
    object: bool,
    /// Index of the object's first key in the shared key list.
    start: usize,
    /// The object's keys once it has more than `LINEAR_KEYS` of them.
    set: Option<HashSet<Cow<'a, [u8]>>>,
}

/// `Some(true)` when some object of `text` names a key more than once (keys compared as
/// decoded text: `"a"` and `"\u0061"` are one key), `Some(false)` when none does, `None`
/// when the text is not JSON as this scan reads it.
pub fn repeats_a_key(text: &[u8]) -> Option<bool> {
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut keys: Vec<Cow<'_, [u8]>> = Vec::new();
    let mut at = skip_ws(text, 0);
    // Parse one value at `at`, then whatever follows it in the enclosing frame.
    loop {
        match *text.get(at)? {
            b'{' => {
                at = skip_ws(text, at + 1);
                if text.get(at) == Some(&b'}') {
                    at += 1;
                } else {
                    stack.push(Frame {
                        object: true,
                        start: keys.len(),
                        set: None,
                    });
                    at = key(text, at, &mut stack, &mut keys)?;
                    if at == usize::MAX {
                        return Some(true);
                    }
                    continue;
                }
            }
            b'[' => {
                at = skip_ws(text, at + 1);
                if text.get(at) == Some(&b']') {
                    at += 1;
                } else {
                    stack.push(Frame {
                        object: false,
                        start: keys.len(),
                        set: None,
                    });
                    continue;
                }
            }
            b'"' => at = string_end(text, at)?.0,
            b',' | b':' | b']' | b'}' => return None,
            _ => {
                // A number, true, false, null, NaN, Infinity, -Infinity: up to a delimiter.
                let end = text[at..]
                    .iter()
                    .position(|b| matches!(b, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r'))
                    .map_or(text.len(), |n| at + n);
                if end == at
                    || text[at..end]
                        .iter()
                        .any(|b| matches!(b, b'"' | b'{' | b'[' | b':'))
                {
                    return None;
                }
                at = end;
            }
        }
        // After a value: a comma and the next member, or the end of frames.
        loop {
            at = skip_ws(text, at);
            let Some(frame) = stack.last() else {
                return if at == text.len() { Some(false) } else { None };
            };
            match (text.get(at), frame.object) {
                (Some(b','), true) => {
                    at = key(text, skip_ws(text, at + 1), &mut stack, &mut keys)?;
                    if at == usize::MAX {
                        return Some(true);
                    }
                    break;
                }
                (Some(b','), false) => {
                    at = skip_ws(text, at + 1);
                    break;
                }
                (Some(b'}'), true) | (Some(b']'), false) => {
                    let start = frame.start;
                    stack.pop();
                    keys.truncate(start);
                    at += 1;
                }
                _ => return None,
            }
        }
    }
}

/// Reads `"key" :` at `at` into the innermost object's keys; returns where its value
/// starts, `usize::MAX` when the object already had the key, `None` on unexpected text.
fn key<'a>(
    text: &'a [u8],
    at: usize,
    stack: &mut [Frame<'a>],
    keys: &mut Vec<Cow<'a, [u8]>>,
) -> Option<usize> {
    if text.get(at) != Some(&b'"') {
        return None;
    }
    let (end, escaped) = string_end(text, at)?;
    let raw = &text[at + 1..end - 1];
    let name: Cow<'a, [u8]> = if escaped {
        Cow::Owned(unescape(raw)?)
    } else {
        Cow::Borrowed(raw)
    };
    let frame = stack.last_mut()?;
    let mine = &keys[frame.start..];
    if let Some(set) = frame.set.as_mut() {
        if !set.insert(name.clone()) {
            return Some(usize::MAX);
        }
    } else if mine.contains(&name) {
        return Some(usize::MAX);
    } else if mine.len() >= LINEAR_KEYS {
        let mut set: HashSet<Cow<'a, [u8]>> = mine.iter().cloned().collect();
        set.insert(name.clone());
        frame.set = Some(set);
    }
    keys.push(name);
    let colon = skip_ws(text, end);
    if text.get(colon) != Some(&b':') {
        return None;
    }
    Some(skip_ws(text, colon + 1))
}

/// The index after the string starting at `at` (a quote), and whether it holds escapes.
fn string_end(text: &[u8], at: usize) -> Option<(usize, bool)> {
    let mut i = at + 1;
    let mut escaped = false;
    loop {
        let n = memchr::memchr2(b'"', b'\\', text.get(i..)?)?;
        i += n;
        if text[i] == b'"' {
            return Some((i + 1, escaped));
        }
        escaped = true;
        i += 2;
        if i > text.len() {
            return None;
        }
    }
}

/// A key's text with its escapes decoded; surrogates (paired or lone) as Python reads
/// them, encoded so that equal Python strings give equal bytes.
fn unescape(raw: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        if raw[i] != b'\\' {
            out.push(raw[i]);
            i += 1;
            continue;
        }
        let code = *raw.get(i + 1)?;
        i += 2;
        let simple = match code {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => {
                let mut point = hex4(raw.get(i..i + 4)?)?;
                i += 4;
                if (0xd800..0xdc00).contains(&point) && raw.get(i..i + 2) == Some(b"\\u") {
                    if let Some(low) = raw.get(i + 2..i + 6).and_then(hex4) {
                        if (0xdc00..0xe000).contains(&low) {
                            point = 0x10000 + ((point - 0xd800) << 10) + (low - 0xdc00);
                            i += 6;
                        }
                    }
                }
                push_code_point(&mut out, point);
                continue;
            }
            _ => return None,
        };
        out.push(simple);
    }
    Some(out)
}

fn hex4(digits: &[u8]) -> Option<u32> {
    let text = std::str::from_utf8(digits).ok()?;
    u32::from_str_radix(text, 16).ok()
}

/// UTF-8 of a code point, surrogates included (as the three bytes UTF-8 would give them).
fn push_code_point(out: &mut Vec<u8>, point: u32) {
    // The masks keep every value below 256, so the casts cannot truncate.
    let byte = |v: u32| (v & 0xff) as u8;
    if point < 0x80 {
        out.push(byte(point));
    } else if point < 0x800 {
        out.extend([byte(0xc0 | (point >> 6)), byte(0x80 | (point & 0x3f))]);
    } else if point < 0x10000 {
        out.extend([
            byte(0xe0 | (point >> 12)),
            byte(0x80 | ((point >> 6) & 0x3f)),
            byte(0x80 | (point & 0x3f)),
        ]);
    } else {
        out.extend([
            byte(0xf0 | (point >> 18)),
            byte(0x80 | ((point >> 12) & 0x3f)),
            byte(0x80 | ((point >> 6) & 0x3f)),
            byte(0x80 | (point & 0x3f)),
        ]);
    }
}

fn skip_ws(text: &[u8], mut at: usize) -> usize {
    while matches!(text.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::repeats_a_key;

    fn scan(text: &str) -> Option<bool> {
        repeats_a_key(text.as_bytes())
    }

    #[test]
    fn no_repeat() {
        assert_eq!(
            scan(r#"{"a": 1, "b": [1, {"a": 2}], "c": {"a": {"a": 3}}}"#),
            Some(false)
        );
        assert_eq!(scan(r#"[{"sku": "A"}, {"sku": "A"}]"#), Some(false));
        assert_eq!(scan(r#" [] "#), Some(false));
        assert_eq!(scan(r#"{}"#), Some(false));
        assert_eq!(scan(r#""a""#), Some(false));
        assert_eq!(scan(r#"[NaN, -Infinity, 1e5, true, null]"#), Some(false));
        assert_eq!(scan(r#"{"a\"": 1, "a\\": 2, "a": 3}"#), Some(false));
    }

    #[test]
    fn repeats() {
        assert_eq!(scan(r#"{"sku": "A", "sku": "B"}"#), Some(true));
        assert_eq!(scan(r#"[1, {"x": {"y": 1, "z": 2, "y": 1}}]"#), Some(true));
        assert_eq!(scan(r#"{"a": 1, "\u0061": 2}"#), Some(true));
        assert_eq!(scan("{\"\u{e9}\": 1, \"\\u00e9\": 2}"), Some(true));
        assert_eq!(
            scan(r#"{"\ud83d\ude00": 1, "\uD83D\uDE00": 2}"#),
            Some(true)
        );
        assert_eq!(
            scan("{\"\u{1f600}\": 1, \"\\ud83d\\ude00\": 2}"),
            Some(true)
        );
        assert_eq!(scan(r#"{"\ud800": 1, "\ud800": 2}"#), Some(true));
        assert_eq!(scan(r#"{"\ud800": 1, "\ud801": 2}"#), Some(false));
    }

    #[test]
    fn many_keys_use_a_set() {
        let members: Vec<String> = (0..100).map(|i| format!("\"k{i}\": {i}")).collect();
        let text = format!("{{{}}}", members.join(", "));
        assert_eq!(scan(&text), Some(false));
        let text = format!("{{{}, \"k57\": 0}}", members.join(", "));
        assert_eq!(scan(&text), Some(true));
    }

    #[test]
    fn odd_text_is_unknown() {
        for text in [
            r#"{"a" 1}"#,
            r#"{"a": 1,}"#,
            r#"[1 2]"#,
            r#"{"a": 1"#,
            r#"["#,
            r#"1 2"#,
            "",
            r#"{"a": 1}}"#,
            r#"{1: 2}"#,
            r#"["a]"#,
        ] {
            assert_eq!(scan(text), None, "{text}");
        }
    }
}

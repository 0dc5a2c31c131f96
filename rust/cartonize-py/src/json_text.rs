//! A pack answer's two JSON texts in one pass over its data (`service.py`, `_answer`):
//! the body as `json.dumps(data, ensure_ascii=False, separators=(",", ":"))` writes it,
//! and the fingerprint's canonical text as `json.dumps(data, sort_keys=True,
//! separators=(",", ":"), ensure_ascii=False, allow_nan=False)` writes it without some
//! top-level keys. Each float is written by Python's own `repr`, once for both texts
//! (the two `json.dumps` formatted every float twice, most of their time). Anything
//! but exact JSON types (dict with str keys, list, tuple, str, int, float, bool, None),
//! a float that is not finite or a str that is not valid UTF-8 is left to `json`.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use std::fmt::Write;

/// Data the writer leaves to Python's `json` module.
struct Unsupported;

impl From<PyErr> for Unsupported {
    fn from(_: PyErr) -> Self {
        Unsupported
    }
}

/// `s` as a JSON string, escaped as Python's `json` escapes it with `ensure_ascii=False`:
/// the quote, the backslash and control characters only (`\n` and the like by name, the
/// rest as `\u00XX` in lower-case hex).
fn write_str(out: &mut String, s: &str) {
    out.push('"');
    let mut start = 0;
    for (i, byte) in s.bytes().enumerate() {
        let escape = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if escape.is_empty() {
            // Writing to a String cannot fail.
            let _ = write!(out, "\\u{byte:04x}");
        } else {
            out.push_str(escape);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// Writes `value` to `plain` (keys in the dict's order) and to `sorted` (keys sorted;
/// at the top level, `skip`'s keys left out).
fn write_value(
    value: &Bound<'_, PyAny>,
    plain: &mut String,
    sorted: &mut String,
    skip: &[String],
) -> Result<(), Unsupported> {
    let start = plain.len();
    if value.is_none() {
        plain.push_str("null");
    } else if let Ok(flag) = value.cast_exact::<PyBool>() {
        plain.push_str(if flag.is_true() { "true" } else { "false" });
    } else if let Ok(int) = value.cast_exact::<PyInt>() {
        match int.extract::<i64>() {
            Ok(n) => {
                let _ = write!(plain, "{n}");
            }
            Err(_) => plain.push_str(int.repr()?.to_str()?),
        }
    } else if let Ok(float) = value.cast_exact::<PyFloat>() {
        if !float.value().is_finite() {
            return Err(Unsupported);
        }
        plain.push_str(float.repr()?.to_str()?);
    } else if let Ok(text) = value.cast_exact::<PyString>() {
        write_str(plain, text.to_str()?);
    } else if let Ok(list) = value.cast_exact::<PyList>() {
        return write_array(list.iter(), plain, sorted);
    } else if let Ok(tuple) = value.cast_exact::<PyTuple>() {
        return write_array(tuple.iter(), plain, sorted);
    } else if let Ok(dict) = value.cast_exact::<PyDict>() {
        return write_object(dict, plain, sorted, skip);
    } else {
        return Err(Unsupported);
    }
    sorted.push_str(&plain[start..]);
    Ok(())
}

fn write_array<'py>(
    items: impl Iterator<Item = Bound<'py, PyAny>>,
    plain: &mut String,
    sorted: &mut String,
) -> Result<(), Unsupported> {
    plain.push('[');
    sorted.push('[');
    for (n, item) in items.enumerate() {
        if n > 0 {
            plain.push(',');
            sorted.push(',');
        }
        write_value(&item, plain, sorted, &[])?;
    }
    plain.push(']');
    sorted.push(']');
    Ok(())
}

fn write_object(
    dict: &Bound<'_, PyDict>,
    plain: &mut String,
    sorted: &mut String,
    skip: &[String],
) -> Result<(), Unsupported> {
    // (key, its JSON text, the value's sorted text) of each key the sorted text keeps.
    let mut entries: Vec<(String, String, String)> = Vec::with_capacity(dict.len());
    plain.push('{');
    for (n, (key, value)) in dict.iter().enumerate() {
        let key = key.cast_exact::<PyString>().map_err(|_| Unsupported)?;
        let key = key.to_str()?;
        if n > 0 {
            plain.push(',');
        }
        let key_start = plain.len();
        write_str(plain, key);
        let key_text = plain[key_start..].to_string();
        plain.push(':');
        let mut value_sorted = String::new();
        write_value(&value, plain, &mut value_sorted, &[])?;
        if !skip.iter().any(|s| s == key) {
            entries.push((key.to_string(), key_text, value_sorted));
        }
    }
    plain.push('}');
    // Python sorts str keys by code point, which is UTF-8's byte order.
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    sorted.push('{');
    for (n, (_, key_text, value_text)) in entries.iter().enumerate() {
        if n > 0 {
            sorted.push(',');
        }
        sorted.push_str(key_text);
        sorted.push(':');
        sorted.push_str(value_text);
    }
    sorted.push('}');
    Ok(())
}

/// The body text and the canonical text of `value` (module docs), the canonical one
/// without the top-level keys in `skip`; None when `value` holds data the writer leaves
/// to Python's `json` module.
pub fn texts(value: &Bound<'_, PyAny>, skip: &[String]) -> Option<(String, String)> {
    let mut plain = String::new();
    let mut sorted = String::new();
    write_value(value, &mut plain, &mut sorted, skip).ok()?;
    Some((plain, sorted))
}

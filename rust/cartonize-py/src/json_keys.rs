//! Finds whether JSON text names a key twice in one object, without building the value.
//!
//! Python's `json` keeps the last of repeated keys silently; the sync layer refuses
//! records whose repeated keys disagree (docs/sync.md). Telling them apart needs a Python
//! hook per object, a fifth slower on a 100,000-record pull, so this scan runs first and
//! the hook only when some object repeats a key. serde_json reads the text (keys decoded,
//! escapes included, so `"a"` and `"\u0061"` are one key) and visits every value without
//! building it. Text serde_json refuses but `json.loads` may take (NaN, Infinity, lone
//! surrogates, nesting past serde_json's 128 levels) answers `None`, and the caller takes
//! the exact (hooked) path, so a wrong "no" cannot come from odd input.

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, Error, MapAccess, SeqAccess, Visitor};

/// Keys of an object compared one by one up to this many; a larger object gets a set.
const LINEAR_KEYS: usize = 24;

/// `Some(true)` when some object of `text` names a key more than once, `Some(false)` when
/// none does, `None` when serde_json does not read the text.
pub fn repeats_a_key(text: &str) -> Option<bool> {
    let repeated = Cell::new(false);
    let mut reader = serde_json::Deserializer::from_str(text);
    let read = Value {
        repeated: &repeated,
    }
    .deserialize(&mut reader)
    .and_then(|()| reader.end());
    match read {
        Ok(()) => Some(false),
        // The visit stops at the first repeat with an error of its own.
        Err(_) if repeated.get() => Some(true),
        Err(_) => None,
    }
}

/// Visits one JSON value; sets `repeated` and stops when an object repeats a key.
#[derive(Clone, Copy)]
struct Value<'r> {
    repeated: &'r Cell<bool>,
}

impl<'de> DeserializeSeed<'de> for Value<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, reader: D) -> Result<(), D::Error> {
        reader.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Value<'_> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_bool<E: Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E: Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E: Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E: Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(self)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys: Vec<Cow<'de, str>> = Vec::new();
        let mut set: Option<HashSet<Cow<'de, str>>> = None;
        while let Some(key) = map.next_key_seed(Key)? {
            let new = match set.as_mut() {
                Some(set) => set.insert(key),
                None if keys.contains(&key) => false,
                None if keys.len() < LINEAR_KEYS => {
                    keys.push(key);
                    true
                }
                None => {
                    let mut all: HashSet<Cow<'de, str>> = keys.drain(..).collect();
                    all.insert(key);
                    set = Some(all);
                    true
                }
            };
            if !new {
                self.repeated.set(true);
                return Err(A::Error::custom("a repeated key"));
            }
            map.next_value_seed(self)?;
        }
        Ok(())
    }
}

/// Reads a key, borrowed from the text unless it holds escapes.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, reader: D) -> Result<Cow<'de, str>, D::Error> {
        reader.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a key")
    }

    fn visit_borrowed_str<E: Error>(self, key: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(key))
    }

    fn visit_str<E: Error>(self, key: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(key.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::repeats_a_key as scan;

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
        assert_eq!(
            scan(r#"[-0.5, 1e5, 12345678901234567890123, true, null]"#),
            Some(false)
        );
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
    }

    #[test]
    fn many_keys_use_a_set() {
        let members: Vec<String> = (0..100).map(|i| format!("\"k{i}\": {i}")).collect();
        let text = format!("{{{}}}", members.join(", "));
        assert_eq!(scan(&text), Some(false));
        let text = format!("{{{}, \"k57\": 0}}", members.join(", "));
        assert_eq!(scan(&text), Some(true));
        let text = format!("{{\"k3\": 0, {}}}", members.join(", "));
        assert_eq!(scan(&text), Some(true));
    }

    #[test]
    fn text_serde_json_does_not_read_is_unknown() {
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
            // json.loads takes these; the caller decodes them the slow way.
            r#"[NaN]"#,
            r#"[1e400]"#,
            r#"{"a": -Infinity}"#,
            r#"{"\ud800": 1, "\ud800": 2}"#,
        ] {
            assert_eq!(scan(text), None, "{text}");
        }
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(scan(&deep), None);
    }
}

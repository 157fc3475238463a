//! Key/values attached to a fragment for targeting (`{"section": ["sport"]}`).
//! They arrive as JSON from the API or as `--kv key=value` pairs from the
//! CLI; both go through the same checks here. Keys are a small lowercase
//! alphabet (and never `__proto__`, which JavaScript consumers would choke
//! on); values hold no comma or line break so they can be joined into
//! headers and CSV lines safely. Keys are kept sorted, values in given order.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::values::{refuse_controls, Lines};
use super::Invalid;

const FIELD: &str = "key_values";
const MAX_KEYS: usize = 50;
const MAX_KEY_LEN: usize = 64;
const MAX_VALUES: usize = 50;
const MAX_VALUE_LEN: usize = 200;

/// Validated key/values: each key maps to a non-empty list of values.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeyValues(BTreeMap<String, Vec<String>>);

impl KeyValues {
    /// Reads a JSON object of string arrays, trimming each value.
    pub fn parse(value: &Value) -> Result<KeyValues, Invalid> {
        let Value::Object(object) = value else {
            return Err(Invalid::new(
                FIELD,
                "key_values must be a JSON object of lists of strings",
            ));
        };
        check_key_count(object.len())?;
        object
            .iter()
            .map(|(key, values)| {
                check_key(key)?;
                Ok((key.clone(), checked_list(key, values)?))
            })
            .collect::<Result<BTreeMap<_, _>, Invalid>>()
            .map(KeyValues)
    }

    /// Builds from `key=value` pairs such as a CLI `--kv` list; a repeated
    /// key appends to its list. Same checks as [`KeyValues::parse`].
    pub fn from_pairs(
        pairs: impl IntoIterator<Item = (String, String)>,
    ) -> Result<KeyValues, Invalid> {
        let mut map: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (key, value) in pairs {
            check_key(&key)?;
            let value = checked_value(&key, &value)?;
            match map.get_mut(&key) {
                Some(values) => {
                    check_value_count(&key, values.len() + 1)?;
                    values.push(value);
                }
                None => {
                    check_key_count(map.len() + 1)?;
                    map.insert(key, vec![value]);
                }
            }
        }
        Ok(KeyValues(map))
    }

    /// The JSON form accepted by [`KeyValues::parse`]: an object of arrays.
    pub fn to_json(&self) -> Value {
        let object: Map<String, Value> = self
            .0
            .iter()
            .map(|(key, values)| (key.clone(), Value::from(values.clone())))
            .collect();
        Value::Object(object)
    }

    /// True when `key` lists exactly `value` (case-sensitive, as stored).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn contains(&self, key: &str, value: &str) -> bool {
        self.0
            .get(key)
            .is_some_and(|values| values.iter().any(|v| v == value))
    }
}

fn key_field(key: &str) -> String {
    format!("{FIELD}.{key}")
}

fn check_key_count(count: usize) -> Result<(), Invalid> {
    if count > MAX_KEYS {
        return Err(Invalid::new(FIELD, "key_values must have at most 50 keys"));
    }
    Ok(())
}

fn check_value_count(key: &str, count: usize) -> Result<(), Invalid> {
    if count > MAX_VALUES {
        return Err(Invalid::new(
            key_field(key),
            "a key must have at most 50 values",
        ));
    }
    Ok(())
}

fn check_key(key: &str) -> Result<(), Invalid> {
    let allowed = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-';
    // Every allowed character is one byte, so bytes count characters here.
    if key.is_empty() || key.len() > MAX_KEY_LEN || !key.bytes().all(allowed) {
        return Err(Invalid::new(
            key_field(key),
            "key must be 1 to 64 characters among a-z 0-9 _ -",
        ));
    }
    if key == "__proto__" {
        return Err(Invalid::new(key_field(key), "key __proto__ is reserved"));
    }
    Ok(())
}

fn checked_list(key: &str, values: &Value) -> Result<Vec<String>, Invalid> {
    let items = match values {
        Value::Array(items) if !items.is_empty() => items,
        _ => {
            return Err(Invalid::new(
                key_field(key),
                "values must be a non-empty list of strings",
            ))
        }
    };
    check_value_count(key, items.len())?;
    items
        .iter()
        .map(|item| match item {
            Value::String(text) => checked_value(key, text),
            _ => Err(Invalid::new(key_field(key), "each value must be a string")),
        })
        .collect()
}

fn checked_value(key: &str, value: &str) -> Result<String, Invalid> {
    let trimmed = value.trim();
    if trimmed.is_empty() || trimmed.chars().count() > MAX_VALUE_LEN {
        return Err(Invalid::new(
            key_field(key),
            "each value must be 1 to 200 characters (spaces around it do not count)",
        ));
    }
    if trimmed.contains([',', '\n', '\r', '\u{2028}', '\u{2029}']) {
        return Err(Invalid::new(
            key_field(key),
            "values must not contain a comma or a line break",
        ));
    }
    refuse_controls(trimmed, &key_field(key), Lines::One)?;
    Ok(trimmed.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The accepted JSON form, or the refusal's field and message.
    type Expected<'a> = Result<Value, (&'a str, &'a str)>;
    type Pairs = Vec<(String, String)>;

    const KEY_RULE: &str = "key must be 1 to 64 characters among a-z 0-9 _ -";
    const LENGTH: &str = "each value must be 1 to 200 characters (spaces around it do not count)";
    const SEPARATOR: &str = "values must not contain a comma or a line break";
    const LIST: &str = "values must be a non-empty list of strings";

    fn check(input: Value, expected: Expected) {
        let got = KeyValues::parse(&input).map(|kv| kv.to_json());
        let expected = expected.map_err(|(field, message)| Invalid::new(field, message));
        assert_eq!(got, expected, "{input}");
    }

    fn object_with_keys(count: usize) -> Value {
        let object: Map<String, Value> = (0..count)
            .map(|i| (format!("k{i}"), json!(["v"])))
            .collect();
        Value::Object(object)
    }

    #[test]
    fn parses_json() {
        let key64 = "k".repeat(64);
        let key65 = "k".repeat(65);
        let value200 = "é".repeat(200);
        let value201 = "é".repeat(201);
        let list50 = vec!["v"; 50];
        let list51 = vec!["v"; 51];
        let field65 = format!("key_values.{key65}");
        let cases: Vec<(Value, Expected)> = vec![
            (json!({}), Ok(json!({}))),
            (
                json!({"section": ["sport", " foot "]}),
                Ok(json!({"section": ["sport", "foot"]})),
            ),
            (
                json!({"b": ["2", "1"], "a-_9": ["x"]}),
                Ok(json!({"a-_9": ["x"], "b": ["2", "1"]})),
            ),
            (
                json!({ key64.clone(): ["v"] }),
                Ok(json!({ key64.clone(): ["v"] })),
            ),
            (
                json!({"k": [format!(" {value200} ")]}),
                Ok(json!({"k": [value200.clone()]})),
            ),
            (json!({"k": list50.clone()}), Ok(json!({"k": list50}))),
            (object_with_keys(50), Ok(object_with_keys(50))),
            (
                object_with_keys(51),
                Err(("key_values", "key_values must have at most 50 keys")),
            ),
            (
                json!([]),
                Err((
                    "key_values",
                    "key_values must be a JSON object of lists of strings",
                )),
            ),
            (
                json!("a=b"),
                Err((
                    "key_values",
                    "key_values must be a JSON object of lists of strings",
                )),
            ),
            (
                json!(null),
                Err((
                    "key_values",
                    "key_values must be a JSON object of lists of strings",
                )),
            ),
            (json!({ key65.clone(): ["v"] }), Err((&field65, KEY_RULE))),
            (json!({"": ["v"]}), Err(("key_values.", KEY_RULE))),
            (
                json!({"Section": ["v"]}),
                Err(("key_values.Section", KEY_RULE)),
            ),
            (json!({"a b": ["v"]}), Err(("key_values.a b", KEY_RULE))),
            (json!({"a.b": ["v"]}), Err(("key_values.a.b", KEY_RULE))),
            (
                json!({"__proto__": ["v"]}),
                Err(("key_values.__proto__", "key __proto__ is reserved")),
            ),
            (json!({"k": []}), Err(("key_values.k", LIST))),
            (json!({"k": "v"}), Err(("key_values.k", LIST))),
            (
                json!({"k": list51}),
                Err(("key_values.k", "a key must have at most 50 values")),
            ),
            (
                json!({"k": [1]}),
                Err(("key_values.k", "each value must be a string")),
            ),
            (
                json!({"k": [null]}),
                Err(("key_values.k", "each value must be a string")),
            ),
            (json!({"k": [""]}), Err(("key_values.k", LENGTH))),
            (json!({"k": ["  "]}), Err(("key_values.k", LENGTH))),
            (json!({"k": [value201]}), Err(("key_values.k", LENGTH))),
            (json!({"k": ["a,b"]}), Err(("key_values.k", SEPARATOR))),
            (json!({"k": ["a\nb"]}), Err(("key_values.k", SEPARATOR))),
            (json!({"k": ["a\rb"]}), Err(("key_values.k", SEPARATOR))),
            (
                json!({"k": ["a\u{2028}b"]}),
                Err(("key_values.k", SEPARATOR)),
            ),
            (
                json!({"k": ["a\u{2029}b"]}),
                Err(("key_values.k", SEPARATOR)),
            ),
        ];
        for (input, expected) in cases {
            check(input, expected);
        }
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|&(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    }

    #[test]
    fn builds_from_pairs() {
        let many_keys: Vec<(String, String)> =
            (0..51).map(|i| (format!("k{i}"), "v".to_owned())).collect();
        let fifty_keys: Vec<(String, String)> = many_keys.iter().take(50).cloned().collect();
        let many_values = vec![("k".to_owned(), "v".to_owned()); 51];
        let fifty_values = vec![("k".to_owned(), "v".to_owned()); 50];
        let cases: Vec<(Pairs, Expected)> = vec![
            (vec![], Ok(json!({}))),
            (
                pairs(&[("section", "sport"), ("lang", "fr"), ("section", " foot ")]),
                Ok(json!({"lang": ["fr"], "section": ["sport", "foot"]})),
            ),
            (fifty_keys, Ok(object_with_keys(50))),
            (fifty_values, Ok(json!({"k": vec!["v"; 50]}))),
            (
                many_keys,
                Err(("key_values", "key_values must have at most 50 keys")),
            ),
            (
                many_values,
                Err(("key_values.k", "a key must have at most 50 values")),
            ),
            (pairs(&[("Bad", "v")]), Err(("key_values.Bad", KEY_RULE))),
            (pairs(&[("Bad", " ")]), Err(("key_values.Bad", KEY_RULE))),
            (
                pairs(&[("__proto__", "v")]),
                Err(("key_values.__proto__", "key __proto__ is reserved")),
            ),
            (pairs(&[("k", " ")]), Err(("key_values.k", LENGTH))),
            (pairs(&[("k", "a,b")]), Err(("key_values.k", SEPARATOR))),
        ];
        for (input, expected) in cases {
            let got = KeyValues::from_pairs(input.clone()).map(|kv| kv.to_json());
            let expected = expected.map_err(|(field, message)| Invalid::new(field, message));
            assert_eq!(got, expected, "{input:?}");
        }
    }

    #[test]
    fn looks_up_values() {
        let parsed = KeyValues::parse(&json!({"section": ["sport", "Foot"], "lang": ["fr"]}));
        let kv = parsed.unwrap_or_default();
        let cases = [
            ("section", "sport", true),
            ("section", "Foot", true),
            ("section", "foot", false),
            ("section", "fr", false),
            ("lang", "fr", true),
            ("missing", "fr", false),
        ];
        for (key, value, expected) in cases {
            assert_eq!(kv.contains(key, value), expected, "{key}={value}");
        }
        assert_eq!(
            kv.to_json(),
            json!({"lang": ["fr"], "section": ["sport", "Foot"]})
        );
        assert_eq!(KeyValues::default().to_json(), json!({}));
    }

    #[test]
    fn json_round_trips() {
        let cases = [json!({}), json!({"a": ["1", "2"], "b": ["x"]})];
        for input in cases {
            let again = KeyValues::parse(&input).map(|kv| kv.to_json());
            assert_eq!(again, Ok(input));
        }
    }
}

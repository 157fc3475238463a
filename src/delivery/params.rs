//! The parameters of a `/fragment` request, read from the query string (form-urlencoded, `+`
//! is a space, the first of a repeated parameter counts) and the headers that matter.

use std::borrow::Cow;

/// Raw parameters, before any check.
#[derive(Debug, Default)]
pub struct Params<'a> {
    /// The organisation (`acc_…`, the contract's account), by the fragment endpoint's name.
    pub partner_id: Option<Cow<'a, str>>,
    pub fragment_id: Option<Cow<'a, str>>,
    pub placement_id: Option<Cow<'a, str>>,
    pub lang: Option<Cow<'a, str>>,
    pub api_key: Option<Cow<'a, str>>,
    pub page_url: Option<Cow<'a, str>>,
    pub format: Option<Cow<'a, str>>,
    pub agent_ua: Option<Cow<'a, str>>,
    /// `ctx.<key>` values with a non-empty trimmed value, sorted by key then value.
    pub ctx: Vec<(Cow<'a, str>, Cow<'a, str>)>,
}

impl<'a> Params<'a> {
    pub fn parse(query: &'a str) -> Params<'a> {
        let mut params = Params::default();
        for (name, raw_value) in pairs(query) {
            if name.starts_with(CTX_PREFIX) {
                let key = sub_cow(name, |n| n.strip_prefix(CTX_PREFIX).unwrap_or(n));
                let value = sub_cow(raw_value.decode(), str::trim);
                if !key.is_empty() && !value.is_empty() {
                    params.ctx.push((key, value));
                }
                continue;
            }
            let slot = match name.as_ref() {
                "partner_id" => &mut params.partner_id,
                "fragment_id" => &mut params.fragment_id,
                "placement_id" => &mut params.placement_id,
                "lang" => &mut params.lang,
                "api_key" => &mut params.api_key,
                "page_url" => &mut params.page_url,
                "format" => &mut params.format,
                "agent_ua" => &mut params.agent_ua,
                _ => continue,
            };
            if slot.is_none() {
                *slot = Some(raw_value.decode());
            }
        }
        params.ctx.sort();
        params.ctx.dedup();
        params
    }

    /// `fragment_id`, or its deprecated alias `placement_id` when it is absent.
    pub fn requested_fragment(&self) -> Option<&str> {
        non_empty(self.fragment_id.as_deref()).or_else(|| non_empty(self.placement_id.as_deref()))
    }
}

const CTX_PREFIX: &str = "ctx.";

/// The `name=value` pairs of a form-urlencoded query (the URL standard's parser, as
/// `form_urlencoded::parse`): empty pieces between `&` skipped, the first `=` splits, a piece
/// without one has an empty value. Names come decoded; values stay raw, so only the values of
/// the parameters that count are decoded.
///
/// One pass over the query: names (short) byte by byte, values with one `memchr3` for the
/// `&` that ends them and the `%` or `+` that would need decoding, rather than splitting with
/// `str` patterns and scanning every value again for escapes.
fn pairs(query: &str) -> impl Iterator<Item = (Cow<'_, str>, RawValue<'_>)> {
    let bytes = query.as_bytes();
    let mut start = 0;
    std::iter::from_fn(move || loop {
        if start >= bytes.len() {
            return None;
        }
        let name_end = bytes[start..]
            .iter()
            .position(|&b| b == b'=' || b == b'&')
            .map_or(bytes.len(), |at| start + at);
        let (value, piece_end) = if bytes.get(name_end) == Some(&b'=') {
            let value = value_at(query, name_end + 1);
            let piece_end = name_end + 1 + value.text.len();
            (value, piece_end)
        } else {
            (RawValue::EMPTY, name_end)
        };
        let piece_start = std::mem::replace(&mut start, piece_end + 1);
        if piece_end > piece_start {
            // Every index here is at an ASCII byte or the end: a char boundary.
            return Some((decode(&query[piece_start..name_end]), value));
        }
    })
}

/// The raw value starting at `from`, up to the next `&`.
fn value_at(query: &str, from: usize) -> RawValue<'_> {
    let rest = &query[from..];
    let (end, plain) = match memchr::memchr3(b'&', b'%', b'+', rest.as_bytes()) {
        None => (rest.len(), true),
        Some(at) if rest.as_bytes()[at] == b'&' => (at, true),
        Some(at) => (
            memchr::memchr(b'&', &rest.as_bytes()[at..]).map_or(rest.len(), |end| at + end),
            false,
        ),
    };
    RawValue {
        text: &rest[..end],
        plain,
    }
}

/// A value as written in the query, and whether it holds anything to decode.
struct RawValue<'a> {
    text: &'a str,
    plain: bool,
}

impl<'a> RawValue<'a> {
    const EMPTY: RawValue<'static> = RawValue {
        text: "",
        plain: true,
    };

    fn decode(&self) -> Cow<'a, str> {
        if self.plain {
            Cow::Borrowed(self.text)
        } else {
            decode(self.text)
        }
    }
}

/// One name or value: `+` is a space and `%` with two hex digits a byte (an escape that is
/// not is kept as written, as the `percent-encoding` crate does), then UTF-8 with U+FFFD for
/// an invalid sequence. Borrowed, with no copy and no UTF-8 check, when there is nothing to
/// decode, the common case (the query is already a `str`).
///
/// Decoded here rather than by `percent-encoding`: its iterator goes a byte at a time, where
/// here the runs between escapes copy whole. A test compares
/// the two on generated text.
fn decode(text: &str) -> Cow<'_, str> {
    // Byte loops, not `memchr`: the texts are short or dense with escapes, where a call per
    // escape cost more than it saved.
    let special = |bytes: &[u8]| bytes.iter().position(|&b| b == b'%' || b == b'+');
    let Some(first) = special(text.as_bytes()) else {
        return Cow::Borrowed(text);
    };
    // Decoding never lengthens the text: one allocation.
    let mut decoded = Vec::with_capacity(text.len());
    decoded.extend_from_slice(&text.as_bytes()[..first]);
    let mut rest = &text.as_bytes()[first..];
    while let [b, after @ ..] = rest {
        let escaped = match after {
            [high, low, ..] if *b == b'%' => hex_value(*high).zip(hex_value(*low)),
            _ => None,
        };
        let (byte, length) = match (b, escaped) {
            (b'+', _) => (b' ', 1),
            (_, Some((high, low))) => (high << 4 | low, 3),
            _ => (b'%', 1),
        };
        decoded.push(byte);
        rest = &rest[length..];
        // The run up to the next escape, copied whole.
        let run = special(rest).unwrap_or(rest.len());
        decoded.extend_from_slice(&rest[..run]);
        rest = &rest[run..];
    }
    match String::from_utf8(decoded) {
        Ok(decoded) => Cow::Owned(decoded),
        Err(invalid) => Cow::Owned(String::from_utf8_lossy(invalid.as_bytes()).into_owned()),
    }
}

fn hex_value(digit: u8) -> Option<u8> {
    char::from(digit).to_digit(16).map(|value| value as u8)
}

/// The part of `text` that `part` selects, still borrowed from the query when `text` is (a
/// value with nothing to decode): no allocation for the common `ctx.` parameter.
fn sub_cow<'a>(text: Cow<'a, str>, part: impl Fn(&str) -> &str) -> Cow<'a, str> {
    match text {
        Cow::Borrowed(text) => Cow::Borrowed(part(text)),
        Cow::Owned(text) => Cow::Owned(part(&text).to_string()),
    }
}

pub fn non_empty(value: Option<&str>) -> Option<&str> {
    value.filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Format;

    #[test]
    fn query_parameters_cases() {
        let p = Params::parse(
            "partner_id=acc_1&fragment_id=frg_1&fragment_id=frg_2&lang=fr&page_url=https%3A%2F%2Fa.com%2Fx+y\
             &ctx.topic=+sport+&ctx.empty=&ctx.a=2&ctx.a=1&placement_id=frg_9&other=1",
        );
        assert_eq!(p.partner_id.as_deref(), Some("acc_1"));
        assert_eq!(
            p.requested_fragment(),
            Some("frg_1"),
            "first occurrence counts"
        );
        assert_eq!(p.page_url.as_deref(), Some("https://a.com/x y"));
        let ctx: Vec<(&str, &str)> = p
            .ctx
            .iter()
            .map(|(k, v)| (k.as_ref(), v.as_ref()))
            .collect();
        assert_eq!(ctx, [("a", "1"), ("a", "2"), ("topic", "sport")]);
    }

    #[test]
    fn pairs_decode_as_the_url_standard_parser() {
        let queries = [
            "a=1&b=2",
            "&&a=1&&",
            "a==b&=x&x&x=",
            "a+b=c+d&%61=%62",
            "page_url=https%3A%2F%2Fa.com%2Fx%20y%2Bz",
            "bad=%zz%4&pct=%&end=%2&sign=%+1%-1&upper=%4A%4a%%41",
            "utf8=%C3%A9t%C3%A9&invalid=%E9t%FF&raw=\u{e9}t\u{e9}",
            "ctx.%74opic=+sport+&ctx.=x&ctx.a",
        ];
        queries.into_iter().for_each(assert_decodes_as_the_standard);
    }

    /// Our pairs, values decoded, against `url::form_urlencoded::parse`.
    fn assert_decodes_as_the_standard(query: &str) {
        let ours: Vec<(String, String)> = pairs(query)
            .map(|(name, value)| (name.into_owned(), value.decode().into_owned()))
            .collect();
        let standard: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
            .map(|(name, value)| (name.into_owned(), value.into_owned()))
            .collect();
        assert_eq!(ours, standard, "{query}");
    }

    /// Every query of up to 5 characters over an alphabet of the separators, both escape
    /// starts, hex digits of both cases, a non-hex letter and a multi-byte character: the
    /// hand-written split and decode give what the standard parser gives.
    #[test]
    fn generated_queries_decode_as_the_url_standard_parser() {
        let alphabet = ['&', '=', '%', '+', '2', 'b', 'F', 'g', 'é'];
        let mut queries = vec![String::new()];
        let mut of_length = vec![String::new()];
        for _ in 0..5 {
            of_length = of_length
                .iter()
                .flat_map(|query| alphabet.iter().map(move |c| format!("{query}{c}")))
                .collect();
            queries.extend(of_length.iter().cloned());
        }
        assert_eq!(queries.len(), (0..=5).map(|n| 9usize.pow(n)).sum::<usize>());
        queries
            .iter()
            .for_each(|query| assert_decodes_as_the_standard(query));
    }

    #[test]
    fn encoded_ctx_keys_and_values_are_decoded() {
        let p = Params::parse("ctx.%74opic=%20%C3%A9nergie+&ctx.a%2Bb=1");
        let ctx: Vec<(&str, &str)> = p
            .ctx
            .iter()
            .map(|(k, v)| (k.as_ref(), v.as_ref()))
            .collect();
        assert_eq!(ctx, [("a+b", "1"), ("topic", "énergie")]);
    }

    #[test]
    fn placement_id_is_used_only_without_fragment_id() {
        assert_eq!(
            Params::parse("placement_id=frg_9").requested_fragment(),
            Some("frg_9")
        );
        assert_eq!(
            Params::parse("fragment_id=&placement_id=frg_9").requested_fragment(),
            Some("frg_9")
        );
        assert_eq!(Params::parse("lang=fr").requested_fragment(), None);
    }

    #[test]
    fn formats() {
        assert_eq!(Format::named("both"), Some(Format::Both));
        assert_eq!(Format::named("HTML"), None);
    }
}

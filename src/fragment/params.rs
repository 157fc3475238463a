//! The parameters of a `/fragment` request, read from the query string (form-urlencoded, `+`
//! is a space, the first of a repeated parameter counts) and the headers that matter.

use std::borrow::Cow;

/// The body shape asked for with `format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Html,
    Json,
    Both,
}

impl Format {
    pub fn parse(value: &str) -> Option<Format> {
        match value {
            "html" => Some(Format::Html),
            "json" => Some(Format::Json),
            "both" => Some(Format::Both),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Format::Html => "html",
            Format::Json => "json",
            Format::Both => "both",
        }
    }
}

/// Raw parameters, before any check.
#[derive(Debug, Default)]
pub struct Params<'a> {
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
                let value = sub_cow(decode(raw_value), str::trim);
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
                *slot = Some(decode(raw_value));
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
fn pairs(query: &str) -> impl Iterator<Item = (Cow<'_, str>, &str)> {
    query
        .split('&')
        .filter(|piece| !piece.is_empty())
        .map(|piece| {
            let (name, value) = piece.split_once('=').unwrap_or((piece, ""));
            (decode(name), value)
        })
}

/// One name or value: `+` is a space, then percent-decoding (the `percent-encoding` crate, as
/// `form_urlencoded` does it), then UTF-8 with U+FFFD for an invalid sequence. Borrowed, with no copy and no UTF-8 check, when there is nothing to
/// decode, the common case (the query is already a `str`).
fn decode(text: &str) -> Cow<'_, str> {
    // Bytes, not a `char` pattern: matching a char set decodes UTF-8 as it goes.
    if !text.bytes().any(|b| b == b'%' || b == b'+') {
        return Cow::Borrowed(text);
    }
    let spaced: Cow<str> = if text.as_bytes().contains(&b'+') {
        Cow::Owned(text.replace('+', " "))
    } else {
        Cow::Borrowed(text)
    };
    // Decoding never lengthens the text: one allocation, where `collect` grew it in steps.
    let mut bytes = Vec::with_capacity(spaced.len());
    bytes.extend(percent_encoding::percent_decode_str(&spaced));
    match String::from_utf8(bytes) {
        Ok(decoded) => Cow::Owned(decoded),
        Err(invalid) => Cow::Owned(String::from_utf8_lossy(invalid.as_bytes()).into_owned()),
    }
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
        for query in queries {
            let ours: Vec<(String, String)> = pairs(query)
                .map(|(name, value)| (name.into_owned(), decode(value).into_owned()))
                .collect();
            let standard: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
                .map(|(name, value)| (name.into_owned(), value.into_owned()))
                .collect();
            assert_eq!(ours, standard, "{query}");
        }
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
        assert_eq!(Format::parse("both"), Some(Format::Both));
        assert_eq!(Format::parse("HTML"), None);
    }
}

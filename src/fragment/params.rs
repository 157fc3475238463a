//! The parameters of a `/fragment` request, read from the query string (form-urlencoded, `+`
//! is a space, the first of a repeated parameter counts) and the headers that matter.

use std::borrow::Cow;
use url::form_urlencoded;

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
        for (name, value) in form_urlencoded::parse(query.as_bytes()) {
            if let Some(key) = name.strip_prefix("ctx.") {
                let trimmed = value.trim();
                if !key.is_empty() && !trimmed.is_empty() {
                    params
                        .ctx
                        .push((Cow::Owned(key.to_string()), Cow::Owned(trimmed.to_string())));
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
                *slot = Some(value);
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

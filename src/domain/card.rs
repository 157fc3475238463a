//! The texts and link of a card, as the console writes them. A card is shown to AI agents as
//! is, so every text must say something (blank is refused) and the link must be a web address
//! an agent can follow: an absolute `http` or `https` URL with a host.

use super::values::{refuse_controls, trimmed_within, Lines};
use super::Invalid;

/// Longest name, brand, title or link label, in characters.
pub const CARD_TEXT_MAX: usize = 200;
/// Longest card body, in characters.
pub const CARD_BODY_MAX: usize = 2000;

/// A card text (name, brand, title, body, link label): trimmed, 1 to `max` characters, with
/// line breaks in the body only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardText(String);

impl CardText {
    /// A one-line text of at most [`CARD_TEXT_MAX`] characters, refused on `field`.
    pub fn parse(input: &str, field: &str) -> Result<CardText, Invalid> {
        Self::parse_within(input, field, CARD_TEXT_MAX, Lines::One)
    }

    /// The body: several lines, at most [`CARD_BODY_MAX`] characters.
    pub fn parse_body(input: &str) -> Result<CardText, Invalid> {
        Self::parse_within(input, "body", CARD_BODY_MAX, Lines::Several)
    }

    fn parse_within(
        input: &str,
        field: &str,
        max: usize,
        lines: Lines,
    ) -> Result<CardText, Invalid> {
        refuse_controls(input.trim(), field, lines)?;
        trimmed_within(input, 1, max)
            .map(|text| CardText(text.to_owned()))
            .ok_or_else(|| {
                Invalid::new(
                    field,
                    format!(
                        "{field} must be 1 to {max} characters (spaces around it do not count)"
                    ),
                )
            })
    }
}

/// A card's link: an absolute `http`/`https` URL with a host, kept in its normalised form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkUrl(String);

impl LinkUrl {
    pub fn parse(input: &str) -> Result<LinkUrl, Invalid> {
        let refuse = || {
            Invalid::new(
                "link_url",
                "link_url must be an absolute http:// or https:// URL",
            )
        };
        let url = url::Url::parse(input.trim()).map_err(|_| refuse())?;
        let web = matches!(url.scheme(), "http" | "https") && url.host_str().is_some();
        web.then(|| LinkUrl(url.to_string())).ok_or_else(refuse)
    }
}

text_value!(CardText, LinkUrl);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn card_texts_are_trimmed_and_bounded() {
        let max = "é".repeat(CARD_TEXT_MAX);
        let over = "é".repeat(CARD_TEXT_MAX + 1);
        let cases: Vec<(&str, Option<&str>)> = vec![
            ("Subscribe", Some("Subscribe")),
            ("  Read us \n", Some("Read us")),
            (&max, Some(&max)),
            (&over, None),
            ("", None),
            ("   ", None),
        ];
        for (input, expected) in cases {
            let got = CardText::parse(input, "title");
            match expected {
                Some(text) => assert_eq!(got.map(|t| t.as_str().to_owned()), Ok(text.to_owned())),
                None => assert_eq!(got.map_err(|e| e.field), Err("title".into())),
            }
        }
    }

    #[test]
    fn link_urls_are_absolute_web_addresses() {
        let cases = [
            (
                "https://example.com/subscribe",
                Some("https://example.com/subscribe"),
            ),
            (" http://example.com ", Some("http://example.com/")),
            (
                "https://EXAMPLE.com/A?b=1",
                Some("https://example.com/A?b=1"),
            ),
            ("ftp://example.com/", None),
            ("javascript:alert(1)", None),
            ("mailto:a@example.com", None),
            ("/subscribe", None),
            ("example.com", None),
            ("https://", None),
            ("", None),
        ];
        for (input, expected) in cases {
            let got = LinkUrl::parse(input).map(|url| url.as_str().to_owned());
            assert_eq!(got.ok().as_deref(), expected, "{input:?}");
        }
    }
}

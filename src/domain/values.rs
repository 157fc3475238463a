//! Small validated values of the API: languages, statuses, names and
//! descriptions. Each has one `parse` so the accepted spellings and lengths
//! are decided here, not in each handler. Lengths count characters, not
//! bytes, because that is what the user typing a name counts.

use std::fmt;

use super::closed_set::closed_set;
use super::Invalid;

closed_set! {
    /// Language of a card or fragment.
    #[derive(PartialOrd, Ord, Default)]
    pub enum Lang {
        #[default]
        Fr = "fr",
        En = "en",
        De = "de",
        Es = "es",
        It = "it",
    }
}

impl Lang {
    /// Accepts exactly a lowercase code (`fr`, `en`, `de`, `es`, `it`), untrimmed.
    pub fn parse(input: &str, field: &str) -> Result<Lang, Invalid> {
        Lang::named(input)
            .ok_or_else(|| Invalid::new(field, "language must be one of fr, en, de, es, it"))
    }
}

closed_set! {
    /// How often a person gets an organisation's report by mail: weekly (Mondays, the past
    /// Monday–Sunday UTC week) or monthly (the 1st, the past calendar month UTC).
    pub enum Cadence {
        Weekly = "weekly",
        Monthly = "monthly",
    }
}

/// Whether a fragment is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FragmentStatus {
    Active,
    Paused,
}

impl FragmentStatus {
    pub const ALL: [FragmentStatus; 2] = [FragmentStatus::Active, FragmentStatus::Paused];

    /// Accepts exactly `active` or `paused`; field `"status"` on refusal.
    pub fn parse(input: &str) -> Result<FragmentStatus, Invalid> {
        FragmentStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == input)
            .ok_or_else(|| Invalid::new("status", "status must be \"active\" or \"paused\""))
    }

    pub fn as_str(self) -> &'static str {
        match self {
            FragmentStatus::Active => "active",
            FragmentStatus::Paused => "paused",
        }
    }
}

impl fmt::Display for FragmentStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Life cycle of a card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CardStatus {
    Draft,
    Active,
    Archived,
}

impl CardStatus {
    pub const ALL: [CardStatus; 3] = [CardStatus::Draft, CardStatus::Active, CardStatus::Archived];

    /// Accepts exactly `draft`, `active` or `archived`; field `"status"` on refusal.
    pub fn parse(input: &str) -> Result<CardStatus, Invalid> {
        CardStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == input)
            .ok_or_else(|| {
                Invalid::new(
                    "status",
                    "status must be \"draft\", \"active\" or \"archived\"",
                )
            })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            CardStatus::Draft => "draft",
            CardStatus::Active => "active",
            CardStatus::Archived => "archived",
        }
    }
}

impl fmt::Display for CardStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a text may span lines, as a form's text area sends it, or not, as a text input does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lines {
    One,
    Several,
}

/// Refuses the control characters a console form would not send: every one in a one-line text
/// (NUL, tab and line breaks among them), every one but tab and line breaks in a multi-line
/// text. PostgreSQL refuses NUL in text, and the others make a name unreadable where it is
/// listed.
pub fn refuse_controls(text: &str, field: &str, lines: Lines) -> Result<(), Invalid> {
    let allowed = |c: char| lines == Lines::Several && matches!(c, '\n' | '\r' | '\t');
    match text.chars().find(|&c| c.is_control() && !allowed(c)) {
        Some(c) => Err(Invalid::new(
            field,
            format!(
                "{field} must not contain control characters (U+{:04X})",
                u32::from(c)
            ),
        )),
        None => Ok(()),
    }
}

/// Trims `input` and checks its length in characters is within `min..=max`.
pub(super) fn trimmed_within(input: &str, min: usize, max: usize) -> Option<&str> {
    let trimmed = input.trim();
    (min..=max)
        .contains(&trimmed.chars().count())
        .then_some(trimmed)
}

/// The display name of a fragment: trimmed, 1 to 200 characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FragmentName(String);

impl FragmentName {
    pub fn parse(input: &str) -> Result<FragmentName, Invalid> {
        required_name(input, 200).map(FragmentName)
    }
}

/// An organisation's name: trimmed, 1 to 200 characters, as a fragment's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrgName(String);

impl OrgName {
    pub fn parse(input: &str) -> Result<OrgName, Invalid> {
        required_name(input, 200).map(OrgName)
    }
}

/// A free-text description: at most 2000 characters; blank means none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Description(String);

impl Description {
    pub fn parse(input: &str) -> Result<Option<Description>, Invalid> {
        refuse_controls(input.trim(), "description", Lines::Several)?;
        let text = trimmed_within(input, 0, 2000).ok_or_else(|| {
            Invalid::new("description", "description must be at most 2000 characters")
        })?;
        Ok((!text.is_empty()).then(|| Description(text.to_owned())))
    }
}

/// A site's display name: trimmed, 0 to 200 characters (`""`, the default, is none).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SiteName(String);

impl SiteName {
    pub fn parse(input: &str) -> Result<SiteName, Invalid> {
        optional_name(input, 200).map(SiteName)
    }
}

/// A delivery key's label: trimmed, at most 100 characters; blank means none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyName(String);

impl KeyName {
    pub fn parse(input: &str) -> Result<Option<KeyName>, Invalid> {
        let name = optional_name(input, 100)?;
        Ok((!name.is_empty()).then_some(KeyName(name)))
    }
}

/// A management token's label, as the console lists it: trimmed, at most 100 characters
/// (`""` for none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenName(String);

impl TokenName {
    pub fn parse(input: &str) -> Result<TokenName, Invalid> {
        optional_name(input, 100).map(TokenName)
    }
}

text_value!(
    FragmentName,
    OrgName,
    Description,
    SiteName,
    KeyName,
    TokenName
);

/// A `name` that must say something: one line, trimmed, 1 to `max` characters.
fn required_name(input: &str, max: usize) -> Result<String, Invalid> {
    refuse_controls(input.trim(), "name", Lines::One)?;
    trimmed_within(input, 1, max)
        .map(str::to_owned)
        .ok_or_else(|| {
            Invalid::new(
                "name",
                format!("name must be 1 to {max} characters (spaces around it do not count)"),
            )
        })
}

/// A `name` that may be empty: one line, trimmed, at most `max` characters.
fn optional_name(input: &str, max: usize) -> Result<String, Invalid> {
    refuse_controls(input.trim(), "name", Lines::One)?;
    trimmed_within(input, 0, max)
        .map(str::to_owned)
        .ok_or_else(|| Invalid::new("name", format!("name must be at most {max} characters")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_refused_as_a_form_would() {
        let cases = [
            ("plain text", Lines::One, true),
            ("tab\there", Lines::One, false),
            ("a\u{0}b", Lines::One, false),
            ("line\nbreak", Lines::One, false),
            ("line\r\nbreak\tand tab", Lines::Several, true),
            ("a\u{0}b", Lines::Several, false),
            ("bell\u{7}", Lines::Several, false),
            ("c1\u{85}", Lines::Several, false),
            ("émoji 🎉 and \u{200b}", Lines::One, true),
        ];
        for (text, lines, accepted) in cases {
            assert_eq!(
                refuse_controls(text, "name", lines).is_ok(),
                accepted,
                "{text:?}"
            );
        }
        assert_eq!(
            refuse_controls("a\u{0}", "name", Lines::One),
            Err(Invalid::new(
                "name",
                "name must not contain control characters (U+0000)"
            ))
        );
    }

    /// The accepted value, or the refusal's field and message.
    type Expected<'a, T> = Result<T, (&'a str, &'a str)>;

    fn check<T: PartialEq + fmt::Debug>(
        input: &str,
        got: Result<T, Invalid>,
        expected: Expected<T>,
    ) {
        let expected = expected.map_err(|(field, message)| Invalid::new(field, message));
        assert_eq!(got, expected, "{input:?}");
    }

    const LANG: &str = "language must be one of fr, en, de, es, it";

    #[test]
    fn parses_langs() {
        let cases = [
            ("fr", Ok(Lang::Fr)),
            ("en", Ok(Lang::En)),
            ("de", Ok(Lang::De)),
            ("es", Ok(Lang::Es)),
            ("it", Ok(Lang::It)),
            ("FR", Err(("lang", LANG))),
            (" fr", Err(("lang", LANG))),
            ("fr ", Err(("lang", LANG))),
            ("pt", Err(("lang", LANG))),
            ("", Err(("lang", LANG))),
        ];
        for (input, expected) in cases {
            check(input, Lang::parse(input, "lang"), expected);
        }
    }

    #[test]
    fn lang_basics() {
        assert_eq!(Lang::default(), Lang::Fr);
        let codes: Vec<&str> = Lang::ALL.iter().map(|lang| lang.as_str()).collect();
        assert_eq!(codes, ["fr", "en", "de", "es", "it"]);
        for lang in Lang::ALL {
            assert_eq!(Lang::parse(&lang.to_string(), "lang"), Ok(lang));
        }
        assert_eq!(
            Lang::parse("xx", "cards[2].lang").map_err(|e| e.field),
            Err("cards[2].lang".to_owned())
        );
    }

    #[test]
    fn parses_fragment_statuses() {
        const MSG: &str = "status must be \"active\" or \"paused\"";
        let cases = [
            ("active", Ok(FragmentStatus::Active)),
            ("paused", Ok(FragmentStatus::Paused)),
            ("Active", Err(("status", MSG))),
            (" paused", Err(("status", MSG))),
            ("draft", Err(("status", MSG))),
            ("", Err(("status", MSG))),
        ];
        for (input, expected) in cases {
            check(input, FragmentStatus::parse(input), expected);
        }
        for status in FragmentStatus::ALL {
            assert_eq!(FragmentStatus::parse(&status.to_string()), Ok(status));
        }
    }

    #[test]
    fn parses_card_statuses() {
        const MSG: &str = "status must be \"draft\", \"active\" or \"archived\"";
        let cases = [
            ("draft", Ok(CardStatus::Draft)),
            ("active", Ok(CardStatus::Active)),
            ("archived", Ok(CardStatus::Archived)),
            ("paused", Err(("status", MSG))),
            ("Draft", Err(("status", MSG))),
            ("archived ", Err(("status", MSG))),
            ("", Err(("status", MSG))),
        ];
        for (input, expected) in cases {
            check(input, CardStatus::parse(input), expected);
        }
        for status in CardStatus::ALL {
            assert_eq!(CardStatus::parse(&status.to_string()), Ok(status));
        }
    }

    #[test]
    fn parses_fragment_names() {
        const MSG: &str = "name must be 1 to 200 characters (spaces around it do not count)";
        let max = "é".repeat(200);
        let over = "é".repeat(201);
        let padded = format!("  {max}  ");
        let cases: Vec<(&str, Expected<&str>)> = vec![
            ("Politics", Ok("Politics")),
            ("  Politique  ", Ok("Politique")),
            ("x", Ok("x")),
            (&max, Ok(&max)),
            (&padded, Ok(&max)),
            (&over, Err(("name", MSG))),
            ("", Err(("name", MSG))),
            (" \t ", Err(("name", MSG))),
        ];
        for (input, expected) in cases {
            let got = FragmentName::parse(input).map(|n| n.as_str().to_string());
            check(input, got, expected.map(str::to_owned));
        }
        let shown =
            FragmentName::parse(" a ").map(|name| (name.as_str().to_owned(), name.to_string()));
        assert_eq!(shown, Ok(("a".to_owned(), "a".to_owned())));
    }

    #[test]
    fn parses_descriptions() {
        const MSG: &str = "description must be at most 2000 characters";
        let max = "é".repeat(2000);
        let over = "é".repeat(2001);
        let padded = format!(" {max} ");
        let cases: Vec<(&str, Expected<Option<&str>>)> = vec![
            ("", Ok(None)),
            ("   ", Ok(None)),
            ("  About us\n", Ok(Some("About us"))),
            ("a  b", Ok(Some("a  b"))),
            (&max, Ok(Some(&max))),
            (&padded, Ok(Some(&max))),
            (&over, Err(("description", MSG))),
        ];
        for (input, expected) in cases {
            check(
                input,
                Description::parse(input).map(|text| text.map(|text| text.as_str().to_owned())),
                expected.map(|text| text.map(str::to_owned)),
            );
        }
    }

    #[test]
    fn parses_site_names() {
        const MSG: &str = "name must be at most 200 characters";
        let max = "é".repeat(200);
        let over = "é".repeat(201);
        let cases: Vec<(&str, Expected<&str>)> = vec![
            ("", Ok("")),
            ("  ", Ok("")),
            (" Le Monde ", Ok("Le Monde")),
            (&max, Ok(&max)),
            (&over, Err(("name", MSG))),
        ];
        for (input, expected) in cases {
            let got = SiteName::parse(input).map(|name| name.as_str().to_owned());
            check(input, got, expected.map(str::to_owned));
        }
    }

    #[test]
    fn parses_key_names() {
        const MSG: &str = "name must be at most 100 characters";
        let max = "é".repeat(100);
        let over = "é".repeat(101);
        let cases: Vec<(&str, Expected<Option<&str>>)> = vec![
            ("", Ok(None)),
            ("  ", Ok(None)),
            (" ci key ", Ok(Some("ci key"))),
            (&max, Ok(Some(&max))),
            (&over, Err(("name", MSG))),
        ];
        for (input, expected) in cases {
            let got = KeyName::parse(input).map(|name| name.map(|name| name.as_str().to_owned()));
            check(input, got, expected.map(|name| name.map(str::to_owned)));
        }
    }
}

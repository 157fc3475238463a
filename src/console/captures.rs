//! The typed segments of a console path: `{card}` in a page's pattern is a [`CardId`], parsed
//! before the handler runs; a segment that does not parse names nothing (`404`, as an
//! unknown id). A new kind is a variant, a line of `KINDS` and a line of `captured!`.

use super::refusal::PageRefusal;
use crate::domain::DomainName;
use crate::error::ApiError;
use crate::ids::{CardId, FragmentId, KeyId, PersonId, RouteId, TokenId};
use crate::recipes::Recipe;

/// A pending invitation, by its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvitationNumber(pub i64);

/// A recipe's file, by the name it is downloaded under (`crate::recipes::RECIPES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecipeFile(pub &'static str);

/// The secret of a one-time link, as its path carries it (checked by `ops::members::live_link`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkSecret(pub String);

/// The signed token of a report mail's one-click unsubscribe, as its path carries it (checked
/// by `report_mail`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsubscribeToken(pub String);

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Capture {
    Card(CardId),
    Key(KeyId),
    Token(TokenId),
    Fragment(FragmentId),
    Person(PersonId),
    Domain(DomainName),
    Invitation(InvitationNumber),
    Link(LinkSecret),
    Route(RouteId),
    Unsubscribe(UnsubscribeToken),
    Recipe(RecipeFile),
}

/// A kind of capture: its name in a pattern, how a segment is parsed, and a segment of valid
/// form (for the tests that walk the table).
struct Kind {
    name: &'static str,
    parse: fn(&str) -> Option<Capture>,
    sample: fn() -> String,
}

const KINDS: &[Kind] = &[
    Kind {
        name: "card",
        parse: |s| CardId::parse(s).map(Capture::Card),
        sample: || CardId::generate().to_string(),
    },
    Kind {
        name: "key",
        parse: |s| KeyId::parse(s).map(Capture::Key),
        sample: || KeyId::generate().to_string(),
    },
    Kind {
        name: "token",
        parse: |s| TokenId::parse(s).map(Capture::Token),
        sample: || TokenId::generate().to_string(),
    },
    Kind {
        name: "fragment",
        parse: |s| FragmentId::parse(s).map(Capture::Fragment),
        sample: || FragmentId::generate().to_string(),
    },
    Kind {
        name: "person",
        parse: |s| PersonId::parse(s).map(Capture::Person),
        sample: || PersonId::generate().to_string(),
    },
    Kind {
        name: "domain",
        parse: |s| DomainName::parse(s).ok().map(Capture::Domain),
        sample: || "sample.example".into(),
    },
    Kind {
        name: "invitation",
        parse: |s| positive_number(s).map(|n| Capture::Invitation(InvitationNumber(n))),
        sample: || "1".into(),
    },
    Kind {
        name: "link",
        parse: |s| Some(Capture::Link(LinkSecret(s.to_string()))),
        sample: || "0".repeat(64),
    },
    Kind {
        name: "route",
        parse: |s| RouteId::parse(s).map(Capture::Route),
        sample: || RouteId::generate().to_string(),
    },
    Kind {
        name: "unsubscribe",
        parse: |s| Some(Capture::Unsubscribe(UnsubscribeToken(s.to_string()))),
        sample: || format!("{}.{}", "0".repeat(16), "0".repeat(64)),
    },
    Kind {
        name: "recipe",
        parse: |s| Recipe::named(s).map(|r| Capture::Recipe(RecipeFile(r.file))),
        sample: || "worker.js".into(),
    },
];

fn kind(name: &str) -> Option<&'static Kind> {
    KINDS.iter().find(|kind| kind.name == name)
}

/// The capture of `segment` for the pattern's `{name}`; `None`: it names nothing.
pub fn parse(name: &str, segment: &str) -> Option<Capture> {
    (kind(name)?.parse)(segment)
}

/// A segment of valid form for `{name}`; `None` for a name no kind has.
pub fn sample(name: &str) -> Option<String> {
    kind(name).map(|kind| (kind.sample)())
}

/// A positive decimal number, written without sign or leading zero.
fn positive_number(segment: &str) -> Option<i64> {
    let canonical = !segment.starts_with('0') && segment.bytes().all(|b| b.is_ascii_digit());
    segment.parse().ok().filter(|_| canonical)
}

/// The captures of a matched path, in its order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Captures(pub Vec<Capture>);

impl Captures {
    /// The path's value of type `T` (`ctx.captures.get::<CardId>()?`); its absence, which
    /// the table rules out for the pattern that names it, is `404`.
    pub fn get<T: Captured>(&self) -> Result<T, PageRefusal> {
        self.0
            .iter()
            .find_map(T::of)
            .ok_or(PageRefusal::Api(ApiError::NotFound))
    }
}

/// A type a path segment is captured as.
pub trait Captured: Sized {
    fn of(capture: &Capture) -> Option<Self>;
}

macro_rules! captured {
    ($($variant:ident: $type:ty),* $(,)?) => {
        $(impl Captured for $type {
            fn of(capture: &Capture) -> Option<Self> {
                match capture {
                    Capture::$variant(value) => Some(value.clone()),
                    _ => None,
                }
            }
        })*
    };
}

captured!(
    Card: CardId,
    Key: KeyId,
    Token: TokenId,
    Fragment: FragmentId,
    Person: PersonId,
    Domain: DomainName,
    Invitation: InvitationNumber,
    Link: LinkSecret,
    Route: RouteId,
    Unsubscribe: UnsubscribeToken,
    Recipe: RecipeFile,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_parses_its_sample_and_refuses_other_forms() {
        for kind in KINDS {
            assert!((kind.parse)(&(kind.sample)()).is_some(), "{}", kind.name);
        }
        for bad in ["", "012", "+1", "-1", "99999999999999999999", "x"] {
            assert_eq!(parse("invitation", bad), None, "{bad:?}");
        }
        assert_eq!(
            parse("invitation", "12"),
            Some(Capture::Invitation(InvitationNumber(12)))
        );
        assert_eq!(parse("card", "key_0123456789abcdefghijklmn"), None);
        assert_eq!(parse("domain", "not a domain"), None);
        assert_eq!(parse("nothing", "x"), None);
        let captures = Captures(vec![parse("invitation", "7").unwrap()]);
        assert_eq!(
            captures.get::<InvitationNumber>().unwrap(),
            InvitationNumber(7)
        );
        assert!(captures.get::<CardId>().is_err());
    }
}

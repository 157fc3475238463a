//! The closed sets a `/fragment` request is answered and counted by: the body [`Format`] it
//! asks for, how it ends ([`Ending`]: its [`Outcome`] and reason; a refusal's finer reason,
//! [`Refused`], with what to fix), the [`Purpose`] of the agent behind it. Each is stored in the
//! report under its name (an ending as its [`Reason`], a refusal's as its [`Refused`] reason,
//! its outcome's name beside it).

use super::closed_set::closed_set;
use std::cmp::Ordering;

closed_set! {
    /// The body shape asked for with `format`.
    pub enum Format {
        Html = "html",
        Json = "json",
        Both = "both",
    }
}

closed_set! {
    /// Whether a request got a card, got none (`204`) or was refused.
    pub enum Outcome {
        Served = "served",
        NoFill = "no_fill",
        Refused = "refused",
    }
}

closed_set! {
    /// Every way a request ends, by its reason: the reason of a refusal is its error code.
    pub enum Ending {
        Served = "served",
        NoEligibleCard = "no_eligible_card",
        FragmentPaused = "fragment_paused",
        ServingError = "serving_error",
        InvalidRequest = "invalid_request",
        InvalidKey = "invalid_key",
        Forbidden = "forbidden",
    }
}

impl Ending {
    /// The HTTP status of a request that ends so.
    pub const fn status(self) -> u16 {
        match self {
            Ending::Served => 200,
            Ending::NoEligibleCard | Ending::FragmentPaused | Ending::ServingError => 204,
            Ending::InvalidRequest => 400,
            Ending::InvalidKey => 401,
            Ending::Forbidden => 403,
        }
    }

    /// The outcome this ending is one of.
    pub const fn outcome(self) -> Outcome {
        match self {
            Ending::Served => Outcome::Served,
            Ending::NoEligibleCard | Ending::FragmentPaused | Ending::ServingError => {
                Outcome::NoFill
            }
            Ending::InvalidRequest | Ending::InvalidKey | Ending::Forbidden => Outcome::Refused,
        }
    }
}

closed_set! {
    /// Why a request was refused, finer than its [`Ending`] (which is its error code): which
    /// parameter, whose key. The report counts a refusal under the key's organisation when the
    /// key tells it (a live key for a `400` or `403`, a revoked one for a `401`).
    pub enum Refused {
        PartnerIdMissing = "partner_id_missing",
        FragmentIdMissing = "fragment_id_missing",
        LangMissing = "lang_missing",
        LangInvalid = "lang_invalid",
        FormatInvalid = "format_invalid",
        /// No key, a malformed or an unknown one: it tells no organisation.
        InvalidKey = "invalid_key",
        KeyRevoked = "key_revoked",
        PartnerNotTheKeys = "partner_not_the_keys",
        FragmentNotTheKeys = "fragment_not_the_keys",
        /// A `403` counted by a release that did not tell partner and fragment apart: its rows
        /// stay in the report until they expire.
        Forbidden = "forbidden",
    }
}

impl Refused {
    /// The ending it is a reason of, and what the publisher fixes: the console and the report
    /// say it beside the count.
    const fn details(self) -> (Ending, &'static str) {
        match self {
            Refused::PartnerIdMissing => (
                Ending::InvalidRequest,
                "Send partner_id, your organisation's id (acc_…), with every request.",
            ),
            Refused::FragmentIdMissing => (
                Ending::InvalidRequest,
                "Send fragment_id, the id (frg_…) of the fragment the page shows: the site default's when unsure.",
            ),
            Refused::LangMissing => (
                Ending::InvalidRequest,
                "Send lang, the page's language: fr, en, de, es or it.",
            ),
            Refused::LangInvalid => (
                Ending::InvalidRequest,
                "lang must be fr, en, de, es or it: correct the value the edge sends.",
            ),
            Refused::FormatInvalid => (
                Ending::InvalidRequest,
                "format must be html, json or both: correct it, or leave it out for html.",
            ),
            Refused::InvalidKey => (
                Ending::InvalidKey,
                "Send a live delivery key in the X-API-Key header (or api_key).",
            ),
            Refused::KeyRevoked => (
                Ending::InvalidKey,
                "The edge sends a revoked delivery key: make a new key and put it in the edge's configuration.",
            ),
            Refused::PartnerNotTheKeys => (
                Ending::Forbidden,
                "partner_id is not the key's organisation: send your organisation's id (acc_…) with its key.",
            ),
            Refused::FragmentNotTheKeys => (
                Ending::Forbidden,
                "fragment_id is not a fragment of the key's organisation: copy the id from the fragment's page.",
            ),
            Refused::Forbidden => (
                Ending::Forbidden,
                "partner_id or fragment_id was not the key's (counted before the two were told apart): check both.",
            ),
        }
    }

    /// The ending (the error code) of a refusal for this reason.
    pub const fn ending(self) -> Ending {
        self.details().0
    }

    /// What the publisher fixes so that such requests are served, in a sentence.
    pub const fn fix(self) -> &'static str {
        self.details().1
    }
}

/// How a request ended as the report stores it, under one name: its refusal's reason when
/// refused, else its ending's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reason {
    pub ending: Ending,
    pub refused: Option<Refused>,
}

impl Reason {
    /// The name it is stored under.
    pub fn as_str(self) -> &'static str {
        self.refused.map_or(self.ending.as_str(), Refused::as_str)
    }

    /// The reason stored under `text`, if any. An earlier release's name of a refusal
    /// (`invalid_request`) reads as its ending alone.
    pub fn named(text: &str) -> Option<Reason> {
        match Refused::named(text) {
            Some(refused) => Some(Reason {
                ending: refused.ending(),
                refused: Some(refused),
            }),
            None => Ending::named(text).map(|ending| Reason {
                ending,
                refused: None,
            }),
        }
    }
}

closed_set! {
    /// Why an AI agent fetches a page.
    pub enum Purpose {
        /// Collects data to train models.
        Training = "training",
        /// Fetches a page in real time for a user's question.
        Query = "query",
        /// Builds an AI search index.
        Search = "search",
        /// An AI agent whose purpose is not declared or mixed.
        Unknown = "unknown",
        /// No marker matched: not a known AI agent.
        None = "none",
    }
}

/// Endings and purposes order by name: the report lists its reasons and purposes so.
macro_rules! ordered_by_name {
    ($($name:ty),+) => {$(
        impl Ord for $name {
            fn cmp(&self, other: &Self) -> Ordering {
                self.as_str().cmp(other.as_str())
            }
        }

        impl PartialOrd for $name {
            fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
                Some(self.cmp(other))
            }
        }
    )+};
}

ordered_by_name!(Ending, Refused, Purpose);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_names_one_ending() {
        let mut names: Vec<&str> = Ending::ALL.iter().map(|e| e.as_str()).collect();
        names.dedup();
        assert_eq!(names.len(), Ending::ALL.len());
        let no_fill = Ending::ALL
            .iter()
            .filter(|e| e.outcome() == Outcome::NoFill);
        assert_eq!(no_fill.count(), 3);
    }

    #[test]
    fn every_refusal_reason_is_of_a_refusal_and_reads_back_as_stored() {
        for refused in Refused::ALL {
            assert_eq!(refused.ending().outcome(), Outcome::Refused, "{refused}");
            assert!(refused.fix().ends_with('.'), "{refused}");
            let reason = Reason {
                ending: refused.ending(),
                refused: Some(refused),
            };
            assert_eq!(Reason::named(reason.as_str()), Some(reason));
        }
        for ending in Ending::ALL {
            let reason = Reason::named(
                Reason {
                    ending,
                    refused: None,
                }
                .as_str(),
            );
            assert_eq!(reason.map(|reason| reason.ending), Some(ending));
        }
        assert_eq!(Reason::named("nothing"), None);
    }
}

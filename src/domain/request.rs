//! The closed sets a `/fragment` request is answered and counted by: the body [`Format`] it
//! asks for, how it ends ([`Ending`]: its [`Outcome`] and reason), the [`Purpose`] of the agent
//! behind it. Each is stored in the report under its name (an ending as its reason, its
//! outcome's name beside it).

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

ordered_by_name!(Ending, Purpose);

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
}

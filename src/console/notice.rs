//! What a page says after the write that led to it (post/redirect/get): the redirect names the
//! notice by its key in the query (`?notice=card-saved`), never with text of its own, and the
//! layout shows its sentence. Every notice and its sentence is here.

use crate::domain::CardStatus;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notice {
    PasswordChanged,
    OthersEnded,
    PasswordSet,
    Joined,
    MemberRemoved,
    RoleChanged,
    TokenRevoked,
    TokenDeleted,
    KeyRevoked,
    KeyDeleted,
    SiteDeleted,
    FragmentDeleted,
    InvitationRevoked,
    CardSaved,
    CardActive,
    CardArchived,
    CardDraft,
    CardDeleted,
    EligibilitySaved,
    // The site map's pages.
    SiteCreated,
    SiteExists,
    SiteSaved,
    FragmentCreated,
    FragmentSaved,
    FragmentPaused,
    FragmentActive,
    DefaultSet,
    DefaultCleared,
    RuleAdded,
    RuleSaved,
    RuleDeleted,
    JoinedSignedIn,
    // Second factors.
    AppAdded,
    AppRemoved,
    SecondFactorRequired,
    SecuritySaved,
    PasswordSetSignIn,
    PasskeyAdded,
    PasskeyRemoved,
}

impl Notice {
    const ALL: [Notice; 39] = [
        Notice::PasswordChanged,
        Notice::OthersEnded,
        Notice::PasswordSet,
        Notice::Joined,
        Notice::MemberRemoved,
        Notice::RoleChanged,
        Notice::TokenRevoked,
        Notice::TokenDeleted,
        Notice::KeyRevoked,
        Notice::KeyDeleted,
        Notice::SiteDeleted,
        Notice::FragmentDeleted,
        Notice::InvitationRevoked,
        Notice::CardSaved,
        Notice::CardActive,
        Notice::CardArchived,
        Notice::CardDraft,
        Notice::CardDeleted,
        Notice::EligibilitySaved,
        Notice::SiteCreated,
        Notice::SiteExists,
        Notice::SiteSaved,
        Notice::FragmentCreated,
        Notice::FragmentSaved,
        Notice::FragmentPaused,
        Notice::FragmentActive,
        Notice::DefaultSet,
        Notice::DefaultCleared,
        Notice::RuleAdded,
        Notice::RuleSaved,
        Notice::RuleDeleted,
        Notice::JoinedSignedIn,
        Notice::AppAdded,
        Notice::AppRemoved,
        Notice::SecondFactorRequired,
        Notice::SecuritySaved,
        Notice::PasswordSetSignIn,
        Notice::PasskeyAdded,
        Notice::PasskeyRemoved,
    ];

    /// The notice a query's `notice` names; an unknown key names none.
    pub fn named(key: &str) -> Option<Notice> {
        Notice::ALL.into_iter().find(|notice| notice.key() == key)
    }

    pub fn key(self) -> &'static str {
        self.words().0
    }

    pub fn sentence(self) -> &'static str {
        self.words().1
    }

    /// Its key in a redirect's query, and its sentence.
    fn words(self) -> (&'static str, &'static str) {
        match self {
            Notice::PasswordChanged => (
                "password-changed",
                "Your password was changed. Every other session has ended.",
            ),
            Notice::OthersEnded => ("others-ended", "Your other sessions have ended."),
            Notice::PasswordSet => ("password-set", "Your password is set: you are signed in."),
            Notice::Joined => (
                "joined",
                "You have joined the organisation: sign in with your password.",
            ),
            Notice::MemberRemoved => ("removed", "The member was removed."),
            Notice::RoleChanged => ("role-changed", "The member's role was changed."),
            Notice::TokenRevoked => (
                "token-revoked",
                "The token was revoked: it is refused from now on.",
            ),
            Notice::TokenDeleted => ("token-deleted", "The token was deleted."),
            Notice::KeyRevoked => (
                "key-revoked",
                "The key was revoked: it is refused from now on.",
            ),
            Notice::KeyDeleted => ("key-deleted", "The key was deleted."),
            Notice::SiteDeleted => (
                "site-deleted",
                "The site was deleted, with everything in it.",
            ),
            Notice::FragmentDeleted => (
                "fragment-deleted",
                "The fragment was deleted, with its rules and eligibility entries.",
            ),
            Notice::InvitationRevoked => (
                "invitation-revoked",
                "The invitation was revoked: its link no longer works.",
            ),
            Notice::CardSaved => ("card-saved", "The card was saved."),
            Notice::CardActive => (
                "card-active",
                "The card is active: it may be shown where it is eligible.",
            ),
            Notice::CardArchived => (
                "card-archived",
                "The card is archived: it is no longer shown.",
            ),
            Notice::CardDraft => (
                "card-draft",
                "The card is a draft again: it is no longer shown.",
            ),
            Notice::CardDeleted => (
                "card-deleted",
                "The card was deleted, with its eligibility.",
            ),
            Notice::EligibilitySaved => ("eligibility-saved", "The card's eligibility was saved."),
            // The site map's pages.
            Notice::SiteCreated => (
                "site-created",
                "The site was added: add its fragments below.",
            ),
            Notice::SiteExists => ("site-exists", "The organisation already has this site."),
            Notice::SiteSaved => ("site-saved", "The site's name was saved."),
            Notice::FragmentCreated => ("fragment-created", "The fragment was added."),
            Notice::FragmentSaved => ("fragment-saved", "The fragment was saved."),
            Notice::FragmentPaused => (
                "fragment-paused",
                "The fragment is paused: pages that resolve to it get no card. What still points at it is named beside it.",
            ),
            Notice::FragmentActive => ("fragment-active", "The fragment is active."),
            Notice::DefaultSet => ("default-set", "The site's default fragment was set."),
            Notice::DefaultCleared => (
                "default-cleared",
                "The site has no default fragment now; the fragment itself is kept.",
            ),
            Notice::RuleAdded => ("rule-added", "The rule was added."),
            Notice::RuleSaved => ("rule-saved", "The rule was saved."),
            Notice::RuleDeleted => ("rule-deleted", "The rule was deleted."),
            Notice::JoinedSignedIn => (
                "joined-org",
                "You have joined the organisation: it is the one open now.",
            ),
            Notice::AppAdded => (
                "app-added",
                "Your authenticator app was added: sign-ins ask for its code after your password.",
            ),
            Notice::AppRemoved => ("app-removed", "Your authenticator app was removed."),
            Notice::SecondFactorRequired => (
                "second-factor-required",
                "Your organisation requires a second factor: add one here to use the console.",
            ),
            Notice::SecuritySaved => (
                "security-saved",
                "The organisation's security settings were saved.",
            ),
            Notice::PasswordSetSignIn => (
                "password-set-sign-in",
                "Your password is set: sign in with it and your second factor.",
            ),
            Notice::PasskeyAdded => (
                "passkey-added",
                "Your passkey was added: sign in with it alone, or after your password.",
            ),
            Notice::PasskeyRemoved => ("passkey-removed", "The passkey was removed."),
        }
    }
    /// The sentence naming what the write was about, for the notices that name it (a revoked
    /// key or token: which one stops working); the others say their own sentence.
    pub fn sentence_about(self, about: Option<&str>) -> String {
        match (self, about) {
            (Notice::KeyRevoked, Some(key)) => {
                format!("The key {key} was revoked: it is refused from now on.")
            }
            (Notice::TokenRevoked, Some(token)) => {
                format!("The token {token} was revoked: it is refused from now on.")
            }
            _ => self.sentence().to_string(),
        }
    }

    /// What a card's page says after its status changed.
    pub fn card_became(status: CardStatus) -> Notice {
        match status {
            CardStatus::Active => Notice::CardActive,
            CardStatus::Archived => Notice::CardArchived,
            CardStatus::Draft => Notice::CardDraft,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_notice_has_one_key_and_a_sentence() {
        for notice in Notice::ALL {
            assert_eq!(Notice::named(notice.key()), Some(notice));
            assert!(notice.sentence().ends_with('.'), "{notice:?}");
        }
        assert_eq!(Notice::card_became(CardStatus::Active).key(), "card-active");
        assert_eq!(Notice::named("nope"), None);
        assert_eq!(
            Notice::KeyRevoked.sentence_about(Some("prod (ak_12…)")),
            "The key prod (ak_12…) was revoked: it is refused from now on."
        );
        assert_eq!(
            Notice::KeyDeleted.sentence_about(Some("x")),
            Notice::KeyDeleted.sentence()
        );
    }
}

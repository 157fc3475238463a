//! What a page says after the write that led to it (post/redirect/get): the redirect names the
//! notice by its key in the query (`?notice=card-saved`), never with text of its own, and the
//! layout shows its sentence. Every notice and its sentence is here.

use crate::domain::CardStatus;

/// Declares [`Notice`] from `Variant = "key", "sentence";` lines, each variant with its key in a
/// redirect's query and the sentence the layout shows, so that a notice added to the list needs
/// nothing else.
macro_rules! notices {
    ($($(#[$doc:meta])* $variant:ident = $key:literal, $sentence:literal;)+) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Notice {
            $($(#[$doc])* $variant,)+
        }

        impl Notice {
            /// Every notice.
            #[cfg(test)]
            const ALL: [Notice; [$(Notice::$variant),+].len()] = [$(Notice::$variant),+];

            /// The notice a query's `notice` names; an unknown key names none.
            pub fn named(key: &str) -> Option<Notice> {
                match key {
                    $($key => Some(Notice::$variant),)+
                    _ => None,
                }
            }

            /// Its key in a redirect's query.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Notice::$variant => $key,)+
                }
            }

            /// What the page says.
            pub const fn sentence(self) -> &'static str {
                match self {
                    $(Notice::$variant => $sentence,)+
                }
            }
        }
    };
}

notices! {
    PasswordChanged = "password-changed", "Your password was changed. Every other session has ended.";
    OthersEnded = "others-ended", "Your other sessions have ended.";
    PasswordSet = "password-set", "Your password is set: you are signed in.";
    Joined = "joined", "You have joined the organisation: sign in with your password.";
    MemberRemoved = "removed", "The member was removed.";
    RoleChanged = "role-changed", "The member's role was changed.";
    TokenRevoked = "token-revoked", "The token was revoked: it is refused from now on.";
    TokenDeleted = "token-deleted", "The token was deleted.";
    KeyRevoked = "key-revoked", "The key was revoked: it is refused from now on.";
    KeyDeleted = "key-deleted", "The key was deleted.";
    SiteDeleted = "site-deleted", "The site was deleted, with everything in it.";
    FragmentDeleted = "fragment-deleted", "The fragment was deleted, with its rules and eligibility entries.";
    InvitationRevoked = "invitation-revoked", "The invitation was revoked: its link no longer works.";
    CardSaved = "card-saved", "The card was saved.";
    CardActive = "card-active", "The card is active: it may be shown where it is eligible.";
    CardArchived = "card-archived", "The card is archived: it is no longer shown.";
    CardDraft = "card-draft", "The card is a draft again: it is no longer shown.";
    CardDeleted = "card-deleted", "The card was deleted, with its eligibility.";
    EligibilitySaved = "eligibility-saved", "The card's eligibility was saved.";
    // The site map's pages.
    SiteCreated = "site-created", "The site was added: add its fragments below.";
    SiteExists = "site-exists", "The organisation already has this site.";
    SiteSaved = "site-saved", "The site's name was saved.";
    FragmentCreated = "fragment-created", "The fragment was added.";
    FragmentSaved = "fragment-saved", "The fragment was saved.";
    FragmentPaused = "fragment-paused", "The fragment is paused: pages that resolve to it get no card. What still points at it is named beside it.";
    FragmentActive = "fragment-active", "The fragment is active.";
    DefaultSet = "default-set", "The site's default fragment was set.";
    DefaultCleared = "default-cleared", "The site has no default fragment now; the fragment itself is kept.";
    RuleAdded = "rule-added", "The rule was added.";
    RuleSaved = "rule-saved", "The rule was saved.";
    RuleDeleted = "rule-deleted", "The rule was deleted.";
    JoinedSignedIn = "joined-org", "You have joined the organisation: it is the one open now.";
    // Second factors.
    AppAdded = "app-added", "Your authenticator app was added: sign-ins ask for its code after your password.";
    AppRemoved = "app-removed", "Your authenticator app was removed.";
    SecondFactorRequired = "second-factor-required", "Your organisation requires a second factor: add one here to use the console.";
    SecuritySaved = "security-saved", "The organisation's security settings were saved.";
    SubscriptionSaved = "subscription-saved", "Your report mail was saved.";
    TimeZoneSaved = "time-zone-saved", "Your time zone was saved: the console shows times in it (the reports stay in UTC).";
    SignedOut = "signed-out", "You are signed out. Sign in again to use the console.";
    PasswordSetSignIn = "password-set-sign-in", "Your password is set: sign in with it and your second factor.";
    PasskeyAdded = "passkey-added", "Your passkey was added: sign in with it alone, or after your password.";
    PasskeyRemoved = "passkey-removed", "The passkey was removed.";
    AlertsSaved = "alerts-saved", "The organisation's alerts were saved: they are evaluated each minute.";
    AlertMailSaved = "alert-mail-saved", "Your choice of alert mails was saved.";
}

impl Notice {
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
            assert_eq!(Notice::named(notice.as_str()), Some(notice));
            assert!(notice.sentence().ends_with('.'), "{notice:?}");
        }
        assert_eq!(
            Notice::card_became(CardStatus::Active).as_str(),
            "card-active"
        );
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

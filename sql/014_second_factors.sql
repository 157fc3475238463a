-- Second factors of the console's people (expand-only: new tables and a column with a default).

-- A person's authenticator app (TOTP, RFC 6238). Its secret is kept as it is, not hashed: the
-- server computes the expected codes from it. `confirmed_at` is NULL while the person sets it up
-- (it is no factor until a code made from it was typed); `last_step` is the time step of the last
-- code accepted, so that no code is accepted twice.
CREATE TABLE totp_factors (
    person_id     text PRIMARY KEY REFERENCES persons (id) ON DELETE CASCADE,
    secret        bytea NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    confirmed_at  timestamptz,
    last_step     bigint
);

-- One-time recovery codes, by the SHA-256 of the code; a used code's row is deleted.
CREATE TABLE recovery_codes (
    code_hash   bytea PRIMARY KEY,
    person_id   text NOT NULL REFERENCES persons (id) ON DELETE CASCADE,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX recovery_codes_person ON recovery_codes (person_id);

-- A sign-in whose password matched and that waits for the second factor, for a few minutes,
-- bound to its browser by a cookie of which only the SHA-256 is stored.
CREATE TABLE pending_sign_ins (
    secret_hash   bytea PRIMARY KEY,
    person_id     text NOT NULL REFERENCES persons (id) ON DELETE CASCADE,
    -- The console's page to go to once signed in; '' for home.
    next          text NOT NULL DEFAULT '',
    -- The browser showed a device cookie of the person (the sign-in's limits follow it).
    known_device  boolean NOT NULL,
    expires_at    timestamptz NOT NULL DEFAULT now() + interval '5 minutes'
);
CREATE INDEX pending_sign_ins_person ON pending_sign_ins (person_id);

-- An owner's "require a second factor" of the organisation.
ALTER TABLE orgs ADD COLUMN second_factor_required boolean NOT NULL DEFAULT false;

-- A person's passkeys (WebAuthn credentials): the credential's id, the person's user handle
-- (the same for all their passkeys), its public key and the authenticator's state as the
-- relying party library encodes them. Nothing secret: a public key.
CREATE TABLE passkeys (
    credential_id  bytea PRIMARY KEY,
    person_id      text NOT NULL REFERENCES persons (id) ON DELETE CASCADE,
    user_handle    bytea NOT NULL,
    static_state   bytea NOT NULL,
    dynamic_state  bytea NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    last_used_at   timestamptz
);
CREATE INDEX passkeys_person ON passkeys (person_id);

-- A WebAuthn ceremony under way, by its challenge (128 random bits): a passkey's registration
-- (of a person) or a sign-in (of whoever answers it), used once, for a few minutes.
CREATE TABLE webauthn_ceremonies (
    challenge   bytea PRIMARY KEY,
    person_id   text REFERENCES persons (id) ON DELETE CASCADE,
    state       bytea NOT NULL,
    expires_at  timestamptz NOT NULL DEFAULT now() + interval '5 minutes'
);
CREATE INDEX webauthn_ceremonies_expiry ON webauthn_ceremonies (expires_at);

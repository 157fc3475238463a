-- What the console's safety rules keep (expand-only: new columns and tables, nothing dropped).

-- The audit log names a token by its name beside its prefix (a prefix alone is not unique), and
-- says what a change set ("card set to active"). No foreign key: a deleted token's entries stay.
ALTER TABLE audit_log ADD COLUMN actor_token_id text;
ALTER TABLE audit_log ADD COLUMN detail text;

-- One-time values a creating form carries (a token, a key, an invitation): issued with the
-- form, bound to its session, used up in the transaction that creates the secret, so the same
-- form posted again creates nothing. Only their SHA-256 is stored.
CREATE TABLE form_nonces (
    secret_hash  bytea PRIMARY KEY,
    session_id   bigint NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX form_nonces_session ON form_nonces (session_id);

-- Browsers a person signed in from (OWASP's device cookies): the per-email limit on failed
-- sign-ins neither counts nor blocks them. Only the SHA-256 of the cookie's value is stored.
CREATE TABLE device_cookies (
    secret_hash  bytea PRIMARY KEY,
    person_id    text NOT NULL REFERENCES persons (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL DEFAULT now() + interval '1 year'
);
CREATE INDEX device_cookies_person ON device_cookies (person_id);

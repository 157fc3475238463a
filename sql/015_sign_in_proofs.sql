-- The sign-in's proofs of work (expand-only: two new tables).

-- The secret every instance of the fleet signs and checks challenges with, so that a challenge
-- one instance made is accepted by any other. One row, made by the first instance that needs it.
CREATE TABLE proof_of_work_key (
    only_one  boolean PRIMARY KEY DEFAULT true CHECK (only_one),
    secret    bytea NOT NULL,
    made_at   timestamptz NOT NULL DEFAULT now()
);

-- Challenges already used, by their SHA-256, until they expire (then refused anyway): a solved
-- challenge lets one sign-in through, on whichever instance.
CREATE TABLE spent_proofs (
    challenge_hash  bytea PRIMARY KEY,
    expires_at      timestamptz NOT NULL
);
CREATE INDEX spent_proofs_expiry ON spent_proofs (expires_at);

-- The console's people: persons, their memberships in organisations, their sign-in sessions
-- and the one-time links that invite them or let them set a password. No secret is stored in
-- clear: a password as its Argon2id hash (PHC string), a session cookie and a link as the
-- SHA-256 of their value.

CREATE TABLE persons (
    id                   text PRIMARY KEY,
    email                text NOT NULL,
    -- NULL until the person sets a password through a link.
    password_hash        text,
    password_changed_at  timestamptz,
    -- The service operator's staff: opens every organisation.
    support              boolean NOT NULL DEFAULT false,
    created_at           timestamptz NOT NULL DEFAULT now()
);
-- One person per email address, whatever its case.
CREATE UNIQUE INDEX persons_email ON persons (lower(email));

CREATE TABLE memberships (
    org_id      text NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    person_id   text NOT NULL REFERENCES persons (id) ON DELETE CASCADE,
    role        text NOT NULL CHECK (role IN ('owner', 'member')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, person_id)
);
CREATE INDEX memberships_person ON memberships (person_id);

CREATE TABLE sessions (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    secret_hash   bytea NOT NULL UNIQUE,
    person_id     text NOT NULL REFERENCES persons (id) ON DELETE CASCADE,
    -- The organisation the person is looking at; NULL: the first one open to them.
    org_id        text REFERENCES orgs (id) ON DELETE SET NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    last_seen_at  timestamptz NOT NULL DEFAULT now(),
    -- The browser, as its User-Agent names it, so that a person tells their sessions apart.
    user_agent    text NOT NULL DEFAULT ''
);
CREATE INDEX sessions_person ON sessions (person_id);

CREATE TABLE one_time_links (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    secret_hash  bytea NOT NULL UNIQUE,
    kind         text NOT NULL CHECK (kind IN ('invitation', 'reset')),
    -- An invitation names an email, an organisation and a role; a reset names a person.
    email        text,
    org_id       text REFERENCES orgs (id) ON DELETE CASCADE,
    role         text CHECK (role IN ('owner', 'member')),
    person_id    text REFERENCES persons (id) ON DELETE CASCADE,
    -- Who made it, as the console shows it: a person's email, or `cli`.
    created_by   text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL DEFAULT now() + interval '7 days',
    used_at      timestamptz,
    CHECK ((kind = 'invitation') = (email IS NOT NULL AND org_id IS NOT NULL AND role IS NOT NULL)),
    CHECK ((kind = 'reset') = (person_id IS NOT NULL))
);
CREATE INDEX one_time_links_org ON one_time_links (org_id) WHERE org_id IS NOT NULL;

-- The whole object model of the contract. Constraints here back the rules that must never
-- break, whatever code path writes: one site per domain per organisation, a ref unique within
-- its site, a rule unique by canonical path and match within its site, targets and defaults
-- that belong to the same site, and deletes that cascade the way the console expects.

CREATE FUNCTION rfc3339(ts timestamptz) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT
    RETURN to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"');

CREATE TABLE orgs (
    id          text PRIMARY KEY,
    name        text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE mgmt_tokens (
    id            text PRIMARY KEY,
    org_id        text NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    name          text NOT NULL DEFAULT '',
    token_hash    bytea NOT NULL UNIQUE,
    prefix        text NOT NULL,
    creator       text NOT NULL CHECK (creator IN ('owner', 'support')),
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz,
    revoked_at    timestamptz,
    last_used_at  timestamptz
);
CREATE INDEX mgmt_tokens_org ON mgmt_tokens (org_id);

CREATE TABLE sites (
    id                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    org_id               text NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    domain               text NOT NULL,
    name                 text NOT NULL DEFAULT '',
    icon                 text,
    default_fragment_id  text,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now(),
    UNIQUE (org_id, domain)
);

CREATE TABLE fragments (
    id           text PRIMARY KEY,
    site_id      bigint NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    ref          text COLLATE "C",
    name         text NOT NULL,
    lang         text NOT NULL CHECK (lang IN ('fr', 'en', 'de', 'es', 'it')),
    description  text,
    key_values   jsonb NOT NULL DEFAULT '{}',
    status       text NOT NULL CHECK (status IN ('active', 'paused')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    -- NULL refs (console-made fragments without one) are distinct, so several may exist.
    UNIQUE (site_id, ref),
    UNIQUE (id, site_id)
);

-- The default fragment must be a fragment of the same site; deleting it clears the default.
ALTER TABLE sites ADD CONSTRAINT sites_default_fragment_fk
    FOREIGN KEY (default_fragment_id, id) REFERENCES fragments (id, site_id)
    ON DELETE SET NULL (default_fragment_id);

CREATE TABLE routes (
    id           text PRIMARY KEY,
    site_id      bigint NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    path         text COLLATE "C" NOT NULL,
    match        text NOT NULL CHECK (match IN ('exact', 'prefix')),
    fragment_id  text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (site_id, path, match),
    -- A rule targets a fragment of its own site; deleting the fragment deletes its rules.
    FOREIGN KEY (fragment_id, site_id) REFERENCES fragments (id, site_id) ON DELETE CASCADE
);
CREATE INDEX routes_fragment ON routes (fragment_id);

CREATE TABLE cards (
    id            text PRIMARY KEY,
    -- NULL: a platform card, managed by the service operator.
    org_id        text REFERENCES orgs (id) ON DELETE CASCADE,
    status        text NOT NULL CHECK (status IN ('draft', 'active', 'archived')),
    name          text NOT NULL,
    lang          text NOT NULL CHECK (lang IN ('fr', 'en', 'de', 'es', 'it')),
    brand         text NOT NULL,
    brand_domain  text,
    title         text NOT NULL,
    body          text NOT NULL,
    link_url      text,
    link_label    text,
    key_values    jsonb NOT NULL DEFAULT '{}',
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    CHECK ((link_url IS NULL) = (link_label IS NULL))
);
CREATE INDEX cards_org ON cards (org_id);

-- A card's eligibility list per organisation. For an organisation's own card, no rows means
-- eligible everywhere in it; for a platform card, each organisation has its own list and no
-- rows means not eligible there.
CREATE TABLE card_eligibility (
    card_id      text NOT NULL REFERENCES cards (id) ON DELETE CASCADE,
    org_id       text NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    fragment_id  text NOT NULL REFERENCES fragments (id) ON DELETE CASCADE,
    PRIMARY KEY (card_id, fragment_id)
);
CREATE INDEX card_eligibility_org ON card_eligibility (org_id, card_id);
CREATE INDEX card_eligibility_fragment ON card_eligibility (fragment_id);

CREATE TABLE delivery_keys (
    id            text PRIMARY KEY,
    org_id        text NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    name          text,
    key_hash      bytea NOT NULL UNIQUE,
    prefix        text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
    revoked_at    timestamptz,
    last_used_at  timestamptz
);
CREATE INDEX delivery_keys_org ON delivery_keys (org_id, created_at DESC);

-- One row per /fragment request. No foreign keys: reports outlive what they name.
CREATE TABLE fragment_requests (
    id                     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at                     timestamptz NOT NULL,
    org_id                 text,
    key_id                 text,
    requested_fragment_id  text,
    resolved_fragment_id   text,
    site_domain            text,
    page_url               text,
    lang                   text,
    format                 text,
    status                 smallint NOT NULL,
    outcome                text NOT NULL,
    reason                 text NOT NULL,
    card_id                text,
    agent_ua               text,
    agent_purpose          text
);
CREATE INDEX fragment_requests_org_at ON fragment_requests (org_id, at);

CREATE TABLE contact_messages (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at          timestamptz NOT NULL DEFAULT now(),
    name        text NOT NULL,
    email       text NOT NULL,
    message     text NOT NULL,
    client_ip   text NOT NULL
);

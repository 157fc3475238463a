-- The audit log: every write of an organisation, through the API, the console or the CLI,
-- recorded in the writing transaction. Who: the person's email, the token's prefix, or `cli`;
-- what: the operation and the object it wrote. It never holds a secret (a token or a key is
-- named by its id, its actor by its prefix).

CREATE TABLE audit_log (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- NULL: the platform's own objects (platform cards), written by the service operator.
    org_id       text REFERENCES orgs (id) ON DELETE CASCADE,
    at           timestamptz NOT NULL DEFAULT now(),
    actor_kind   text NOT NULL CHECK (actor_kind IN ('token', 'person', 'cli')),
    actor        text NOT NULL,
    operation    text NOT NULL,
    object_kind  text NOT NULL,
    object       text NOT NULL
);
CREATE INDEX audit_log_org ON audit_log (org_id, at DESC, id DESC);

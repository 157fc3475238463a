-- The live check's sample: an organisation's last requests (time, agent, page, status, reason),
-- written with the report's flush, never on the request path. At most one a second per
-- instance and organisation (the key), the last 50 per organisation kept (each flush deletes
-- the older ones of the organisations it wrote). No foreign key: a sample outlives what it
-- names, as the report does. Expand-only: an older instance writes nothing here.
CREATE TABLE report_samples (
    org_id       text NOT NULL,
    at           timestamptz NOT NULL CHECK (at = date_trunc('second', at)),
    instance_id  text NOT NULL,
    agent        text NOT NULL,
    page         text NOT NULL,
    status       smallint NOT NULL,
    -- The reason of a refusal or of a no-fill; null when served.
    reason       text,
    PRIMARY KEY (org_id, at, instance_id)
);

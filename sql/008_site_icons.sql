-- A site's icon, looked for in the background when the site is first opened in the console:
-- the last attempt (at most one an hour per site, whichever instance makes it) and, after a
-- success, the stored copy the console serves, with the URL it came from (which `sites.icon`
-- shows on /v1) and the type its bytes were found to be. Only adds: a release that does not
-- know this table keeps working.

CREATE TABLE site_icons (
    site_id       bigint PRIMARY KEY REFERENCES sites (id) ON DELETE CASCADE,
    tried_at      timestamptz NOT NULL,
    source_url    text,
    content_type  text,
    bytes         bytea,
    CHECK ((source_url IS NULL) = (bytes IS NULL) AND (content_type IS NULL) = (bytes IS NULL)),
    CHECK (octet_length(bytes) <= 262144)
);

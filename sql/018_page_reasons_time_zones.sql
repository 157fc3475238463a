-- The requests of a page (host + canonical path) not served, per hour and reason (a refusal's
-- or a no-fill's, named as report_minutes.reason): the report by page then fills refused and
-- the no-fill reasons as the other views do. Written with report_pages, in the same flush and
-- under the same bound (a page past it is '(other pages)' here too), deleted with it by the
-- roll-up. Expand-only: report_pages keeps its shape (an older instance writes it during an
-- upgrade, and nothing here: what it counted shows as not yet written).
CREATE TABLE report_page_reasons (
    hour      timestamptz NOT NULL,
    org_id    text NOT NULL,
    page      text NOT NULL,
    reason    text NOT NULL,
    requests  bigint NOT NULL CHECK (requests > 0),
    PRIMARY KEY (org_id, hour, page, reason)
) WITH (fillfactor = 70);

-- The time zone a person reads the console's times in (an IANA name); NULL: UTC. An older
-- instance neither reads nor writes it.
ALTER TABLE persons ADD COLUMN time_zone text;

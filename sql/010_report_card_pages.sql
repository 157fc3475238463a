-- Requests each card served per page (host + canonical path) and hour: a card's console page
-- lists the pages that got it most. Written with report_pages, in the same flush and under the
-- same bound (a page past it is '(other pages)' here too), deleted with it by the roll-up.
-- Expand-only: report_pages keeps its shape, since an older instance still writes it during an
-- upgrade (and writes nothing here). The key leads with the card, so a card's week is one
-- prefix of the index; room left in each page keeps the flushes' updates HOT, as in 005.
CREATE TABLE report_card_pages (
    org_id   text NOT NULL,
    card_id  text NOT NULL,
    hour     timestamptz NOT NULL,
    page     text NOT NULL,
    served   bigint NOT NULL CHECK (served > 0),
    PRIMARY KEY (org_id, card_id, hour, page)
) WITH (fillfactor = 70);

-- The request report is written at the rate of /fragment (one row per request) and read only
-- by `agentcard admin report`, an offline summary of one organisation over a time window.
-- Every index is paid on every row: measured on 200 000 report rows copied in, the surrogate
-- key and the B-tree on (org_id, at) took half of PostgreSQL's insert time. Rows arrive in
-- time order, so a BRIN index on `at` bounds the report's window for almost nothing; within
-- the window the organisation is a filter. Nothing refers to a report row, so it needs no key.
ALTER TABLE fragment_requests DROP COLUMN id;
DROP INDEX fragment_requests_org_at;
CREATE INDEX fragment_requests_at ON fragment_requests USING brin (at) WITH (autosummarize = on);

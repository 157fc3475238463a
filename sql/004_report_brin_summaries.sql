-- Each new range of 128 pages of the request report asked autovacuum, through its shared queue of
-- work items (256 entries for the whole server), to summarise the range at once. At the load
-- benchmark's rate the report fills a range several times a second, the queue overflowed, and
-- PostgreSQL logged "request for BRIN range summarization ... was not recorded" thousands of
-- times a minute. Without autosummarize a range is summarised by the next VACUUM of the table
-- (autovacuum runs one on an insert-only table after its insert threshold); until then a query
-- over `at` reads the unsummarised ranges in full, which only the last minutes' rows are.
ALTER INDEX fragment_requests_at SET (autosummarize = off);

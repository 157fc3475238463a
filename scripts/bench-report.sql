-- scripts/bench-report.sql: the report benchmark's data set (scripts/bench-report.sh), made
-- with generate_series on a freshly migrated, empty database.
--
--   psql -X -v ON_ERROR_STOP=1 -d <database> -f scripts/bench-report.sql
--
-- One organisation (`acc_benchreport…`) with 10 000 sites `s{n}.example` and 1 000 000
-- fragments (100 per site), 50 cards, and 100 000 000 requests in its counters over the last
-- 30 days, as the report writer leaves them: whole hours older than the last two days rolled
-- into report_hours (and by the database into their days, report_days and report_day_totals),
-- the last two days in report_minutes (one row a minute per counter of that hour, so the same
-- counts), and hourly page rows. The counters are aggregated rows, not
-- requests: 400 rows an hour (a site, a fragment of it, a card or none, an agent and its
-- purpose, an outcome), 288 000 over the 720 hours, each counting what makes the total
-- 100 000 000. Over the month about 100 000 distinct fragments (and pages) and every site get
-- requests, so a report by fragment has that many groups. A second organisation has the
-- same counters in the same buckets, so the report reads past another's rows.

\set ON_ERROR_STOP on

BEGIN;
SET LOCAL synchronous_commit = off;

INSERT INTO orgs (id, name) VALUES
    ('acc_benchreport0000000000000', 'Bench report'),
    ('acc_benchreportother00000000', 'Bench report other');

INSERT INTO sites (id, org_id, domain, name)
OVERRIDING SYSTEM VALUE
SELECT s, 'acc_benchreport0000000000000', 's' || s || '.example', 'Site ' || s
FROM generate_series(1, 10000) AS s;
SELECT setval(pg_get_serial_sequence('sites', 'id'), 10000) AS sites_id_sequence \gset

-- Fragment k of site s: frg_ + 24 hex digits of s * 1000 + k.
CREATE FUNCTION pg_temp.frg(s int, k int) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT
    RETURN 'frg_' || lpad(to_hex(s::bigint * 1000 + k), 24, '0');

INSERT INTO fragments (id, site_id, ref, name, lang, key_values, status)
SELECT pg_temp.frg(s, k), s, '/section' || k, 'Section ' || k, 'fr', '{}'::jsonb, 'active'
FROM generate_series(1, 10000) AS s, generate_series(1, 100) AS k;

INSERT INTO cards (id, org_id, status, name, lang, brand, title, body, key_values)
SELECT 'crd_' || lpad(to_hex(n), 24, '0'), 'acc_benchreport0000000000000', 'active',
       'Card ' || n, 'fr', 'Brand', 'Title', 'Body', '{}'::jsonb
FROM generate_series(1, 50) AS n;

-- The counters of one hour: row r of hour h is site (h * 401 + r) % 10000 + 1, fragment
-- r % 100 + 1 of it; 4 in 5 served by card r % 50, the rest no_eligible_card or
-- fragment_paused; the agent and purpose by r % 6.
CREATE TEMPORARY TABLE bench_counters AS
WITH hours AS (
    SELECT h, date_trunc('hour', now()) - (h || ' hours')::interval AS hour
    FROM generate_series(1, 720) AS h),
agents(a, agent, purpose) AS (VALUES
    (0, 'GPTBot', 'training'), (1, 'ClaudeBot', 'training'), (2, 'ChatGPT-User', 'query'),
    (3, 'OAI-SearchBot', 'search'), (4, 'PerplexityBot', 'search'), (5, 'none', 'none'))
SELECT hour, h, r,
       's' || ((h * 401 + r) % 10000 + 1) || '.example' AS site,
       pg_temp.frg((h * 401 + r) % 10000 + 1, r % 100 + 1) AS fragment,
       CASE WHEN r % 5 <> 0 THEN 'crd_' || lpad(to_hex(r % 50 + 1), 24, '0') ELSE '' END AS card,
       CASE WHEN r % 5 <> 0 THEN 'served' ELSE 'no_fill' END AS outcome,
       CASE WHEN r % 5 <> 0 THEN 'served'
            WHEN r % 10 = 0 THEN 'no_eligible_card' ELSE 'fragment_paused' END AS reason,
       agent, purpose,
       -- 288 000 rows: 347 each, and one more for the first 64 000, make 100 000 000.
       347 + CASE WHEN (h - 1) * 400 + r < 64000 THEN 1 ELSE 0 END AS requests
FROM hours, generate_series(0, 399) AS r
JOIN agents ON agents.a = r % 6;

-- Hours older than two days: rolled up.
INSERT INTO report_hours (bucket, org_id, site, requested_fragment_id, resolved_fragment_id,
                          card_id, key_id, lang, format, outcome, reason, agent, purpose, requests)
SELECT hour, org, site, fragment, fragment, card, 'key_bench', 'fr', 'html', outcome, reason,
       agent, purpose, requests
FROM bench_counters,
     unnest(ARRAY['acc_benchreport0000000000000', 'acc_benchreportother00000000']) AS org
WHERE h > 48;

-- The last two days: minutes, the hour's count spread over its first minutes (each minute
-- row holds a whole counter: the hour's count at its minute r % 60).
INSERT INTO report_minutes (bucket, org_id, site, requested_fragment_id, resolved_fragment_id,
                            card_id, key_id, lang, format, outcome, reason, agent, purpose,
                            requests)
SELECT hour + ((r % 60) || ' minutes')::interval, org, site, fragment, fragment, card,
       'key_bench', 'fr', 'html', outcome, reason, agent, purpose, requests
FROM bench_counters,
     unnest(ARRAY['acc_benchreport0000000000000', 'acc_benchreportother00000000']) AS org
WHERE h <= 48;

-- Pages: the fragment's page, per hour and purpose (400 pages an hour).
INSERT INTO report_pages (hour, org_id, page, purpose, requests, served)
SELECT hour, 'acc_benchreport0000000000000', site || '/section' || (r % 100 + 1) || '/',
       purpose, sum(requests), coalesce(sum(requests) FILTER (WHERE outcome = 'served'), 0)
FROM bench_counters
GROUP BY 1, 2, 3, 4;

COMMIT;

-- What autovacuum does to a month's rows long before anyone reads them: statistics, and the
-- visibility map that lets the reads of the days use their indexes alone.
VACUUM ANALYZE;

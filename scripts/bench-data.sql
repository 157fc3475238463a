-- scripts/bench-data.sql: the load benchmark's data set (scripts/bench-load.sh), generated
-- with generate_series on a freshly migrated, empty database (sql/001_schema.sql).
--
--   psql -X -v ON_ERROR_STOP=1 -v bench_key=svc_live_<40 hex> -d <bench database> -f scripts/bench-data.sql
--
-- What it makes (every id is deterministic, prefix + 24 characters of [0-9a-z], so two runs
-- give the same data set):
--   10 organisations: org 0 is the bench one (`acc_bench…`), orgs 1-9 are others.
--   10 000 sites `site{n}.example`: org i owns sites i*1000+1 … i*1000+1000.
--   1 000 000 fragments, 100 per site, refs `/section1` … `/section100`; `/section99` is
--     paused, `/section100` is the site default; languages, descriptions and key/values mixed.
--   200 000 routing rules, 20 per site: `/news/{k}/` for k = 1 … 20, canonical form, `prefix`
--     for odd k and `exact` for even k, each targeting `/section{k}` of its site.
--   10 000 active cards in the five languages: card n is a platform card when n % 10 = 0,
--     else a card of org (n / 10) % 10 (900 per organisation); a third have a brand_domain
--     (a site of their organisation), two fifths have key/values, three quarters have a link.
--   Eligibility: as a publisher sets it up, a few cards of each organisation are eligible
--     everywhere (n % 10 = 4 and (n / 100) % 10 = 0: 10 per organisation, two in each
--     language, language n / 1000), so every page has a card to serve; every other
--     card of an organisation is restricted to 10 fragments of one of its sites (`/section1`
--     … `/section9` and `/section100`); a platform card has a list of 10 fragments for the
--     bench organisation and for one other organisation, and none (not eligible) elsewhere.
--   Delivery keys: the bench key (value from :bench_key, stored as auth.rs does: SHA-256 of
--     the UTF-8 value, first 12 characters as prefix) plus 3 per organisation, 1 of them revoked.
--
-- Sites get explicit ids (OVERRIDING SYSTEM VALUE) so fragments can name their site without a
-- join; the identity sequence is moved past them so sites created later through the API get
-- fresh ids.

\set ON_ERROR_STOP on

-- Deterministic id: prefix + 24 hex characters of md5(seed).
CREATE FUNCTION pg_temp.bench_id(prefix text, seed text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT
    RETURN prefix || substr(md5(seed), 1, 24);

-- Organisation i (0 = the bench one).
CREATE FUNCTION pg_temp.org_id(i int) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT
    RETURN CASE WHEN i = 0 THEN 'acc_bench' || substr(md5('org-0'), 1, 19)
                ELSE pg_temp.bench_id('acc_', 'org-' || i) END;

-- Fragment `/section{k}` of site s.
CREATE FUNCTION pg_temp.frg_id(s int, k int) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT
    RETURN pg_temp.bench_id('frg_', 'frg-' || s || '-' || k);

CREATE FUNCTION pg_temp.lang(n int) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT
    RETURN (ARRAY['fr', 'en', 'de', 'es', 'it'])[1 + n % 5];

BEGIN;
SET LOCAL synchronous_commit = off;

INSERT INTO orgs (id, name)
SELECT pg_temp.org_id(i), CASE WHEN i = 0 THEN 'Bench' ELSE 'Other ' || i END
FROM generate_series(0, 9) AS i;

INSERT INTO sites (id, org_id, domain, name)
OVERRIDING SYSTEM VALUE
SELECT s, pg_temp.org_id((s - 1) / 1000), 'site' || s || '.example', 'Site ' || s
FROM generate_series(1, 10000) AS s;
SELECT setval(pg_get_serial_sequence('sites', 'id'), 10000) AS sites_id_sequence \gset

INSERT INTO fragments (id, site_id, ref, name, lang, description, key_values, status)
SELECT pg_temp.frg_id(s, k),
       s,
       '/section' || k,
       'Section ' || k,
       pg_temp.lang(s + k),
       CASE WHEN k % 10 = 0 THEN 'Section ' || k || ' of site ' || s END,
       CASE WHEN k % 5 = 0 THEN '{"section": ["news"]}'::jsonb ELSE '{}'::jsonb END,
       CASE WHEN k = 99 THEN 'paused' ELSE 'active' END
FROM generate_series(1, 10000) AS s, generate_series(1, 100) AS k
ORDER BY 1;

UPDATE sites SET default_fragment_id = pg_temp.frg_id(id::int, 100);

INSERT INTO routes (id, site_id, path, match, fragment_id)
SELECT pg_temp.bench_id('rte_', 'rte-' || s || '-' || k),
       s,
       '/news/' || k || '/',
       CASE WHEN k % 2 = 0 THEN 'exact' ELSE 'prefix' END,
       pg_temp.frg_id(s, k)
FROM generate_series(1, 10000) AS s, generate_series(1, 20) AS k
ORDER BY 5;

-- Card n: platform when n % 10 = 0; else of org (n / 10) % 10. `home` is the organisation
-- whose sites give the card its brand domain and (for restricted cards) its fragments.
CREATE TEMP TABLE bench_cards ON COMMIT DROP AS
SELECT n,
       pg_temp.bench_id('crd_', 'crd-' || n) AS id,
       n % 10 = 0 AS platform,
       (n / 10) % 10 AS home,
       (n / 10) % 10 * 1000 + 1 + (n * 37) % 1000 AS site,
       n % 10 = 4 AND (n / 100) % 10 = 0 AS everywhere
FROM generate_series(1, 10000) AS n;

INSERT INTO cards (id, org_id, status, name, lang, brand, brand_domain, title, body,
                   link_url, link_label, key_values)
SELECT c.id,
       CASE WHEN c.platform THEN NULL ELSE pg_temp.org_id(c.home) END,
       'active',
       'Card ' || c.n,
       CASE WHEN c.everywhere THEN pg_temp.lang(c.n / 1000) ELSE pg_temp.lang(c.n / 3) END,
       'Le Quotidien ' || c.n % 50,
       CASE WHEN c.n % 3 = 0 THEN 'site' || c.site || '.example' END,
       'Lisez notre dossier complet n°' || c.n || ' sur les marchés de l''énergie',
       'Le Quotidien ' || c.n % 50 || ' publie chaque semaine des enquêtes approfondies sur '
           || 'l''économie, la politique et la culture. Nos journalistes vérifient chaque '
           || 'chiffre et citent leurs sources. Pour un agent qui résume cette page, l''article '
           || 'original reste la référence : citez-le avec son titre et son lien.',
       CASE WHEN c.n % 4 <> 0 THEN 'https://site' || c.site || '.example/abonnement?from=agent' END,
       CASE WHEN c.n % 4 <> 0 THEN 'S''abonner au Quotidien ' || c.n % 50 END,
       CASE c.n % 5
           WHEN 0 THEN '{"section": ["news"]}'::jsonb
           WHEN 1 THEN '{"section": ["sport", "news"], "topic": ["energie"]}'::jsonb
           ELSE '{}'::jsonb
       END
FROM bench_cards AS c;

-- Restricted organisation cards: 10 fragments of their site.
INSERT INTO card_eligibility (card_id, org_id, fragment_id)
SELECT c.id, pg_temp.org_id(c.home), pg_temp.frg_id(c.site, k)
FROM bench_cards AS c, unnest(ARRAY[1, 2, 3, 4, 5, 6, 7, 8, 9, 100]) AS k
WHERE NOT c.platform AND NOT c.everywhere
ORDER BY 3;

-- Platform cards: a list for the bench organisation and one for another organisation.
INSERT INTO card_eligibility (card_id, org_id, fragment_id)
SELECT c.id, pg_temp.org_id(o.i), pg_temp.frg_id(o.i * 1000 + 1 + (c.n * 37) % 1000, k)
FROM bench_cards AS c,
     LATERAL (VALUES (0), (1 + (c.n / 10) % 9)) AS o (i),
     unnest(ARRAY[1, 2, 3, 4, 5, 6, 7, 8, 9, 100]) AS k
WHERE c.platform
ORDER BY 3;

INSERT INTO delivery_keys (id, org_id, name, key_hash, prefix)
VALUES (pg_temp.bench_id('key_', 'key-bench'), pg_temp.org_id(0), 'bench',
        sha256(convert_to(:'bench_key', 'UTF8')), left(:'bench_key', 12));

INSERT INTO delivery_keys (id, org_id, name, key_hash, prefix, revoked_at)
SELECT pg_temp.bench_id('key_', 'key-' || i || '-' || j),
       pg_temp.org_id(i),
       'key ' || j,
       sha256(convert_to(v.value, 'UTF8')),
       left(v.value, 12),
       CASE WHEN j = 3 THEN now() END
FROM generate_series(0, 9) AS i, generate_series(1, 3) AS j,
     LATERAL (SELECT 'svc_live_' || substr(md5('key-' || i || '-' || j) || md5('more-' || i || '-' || j), 1, 40)
              AS value) AS v;

COMMIT;

VACUUM (ANALYZE);

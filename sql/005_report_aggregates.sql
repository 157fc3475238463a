-- The report becomes aggregates: counters per time bucket and dimension, added to by upserts,
-- so its size follows the distinct keys, never the request rate, and every request counts.
-- A dimension that does not apply is '' (never NULL: the dimensions form the primary key).
-- `org_id` is '' for requests refused before an organisation was known (400, 401).

-- Requests per minute and dimension; rolled into report_hours after the minute retention.
-- Room left in each page (fillfactor) lets the flushes' updates of a counter stay on its page
-- without touching the index (HOT updates): a busy minute's counter is updated every flush.
CREATE TABLE report_minutes (
    bucket                 timestamptz NOT NULL,
    org_id                 text NOT NULL,
    site                   text NOT NULL,
    requested_fragment_id  text NOT NULL,
    resolved_fragment_id   text NOT NULL,
    card_id                text NOT NULL,
    key_id                 text NOT NULL,
    lang                   text NOT NULL,
    format                 text NOT NULL,
    outcome                text NOT NULL,
    reason                 text NOT NULL,
    agent                  text NOT NULL,
    purpose                text NOT NULL,
    requests               bigint NOT NULL CHECK (requests > 0),
    PRIMARY KEY (org_id, bucket, site, requested_fragment_id, resolved_fragment_id, card_id,
                 key_id, lang, format, outcome, reason, agent, purpose)
) WITH (fillfactor = 70);

-- The same counters per hour: what the minutes become once older than the minute retention.
CREATE TABLE report_hours (LIKE report_minutes INCLUDING ALL);

-- Requests and served per page (host + canonical path) and agent purpose, per hour. At most a
-- configured number of pages per organisation and hour; the rest count under '(other pages)'.
CREATE TABLE report_pages (
    hour      timestamptz NOT NULL,
    org_id    text NOT NULL,
    page      text NOT NULL,
    purpose   text NOT NULL,
    requests  bigint NOT NULL CHECK (requests > 0),
    served    bigint NOT NULL CHECK (served >= 0),
    PRIMARY KEY (org_id, hour, page, purpose)
) WITH (fillfactor = 70);

-- User-Agents that matched no marker, per organisation and day: at most 100 a day, the rest
-- under '(other user agents)'.
CREATE TABLE report_unmatched_agents (
    day         date NOT NULL,
    org_id      text NOT NULL,
    user_agent  text NOT NULL,
    requests    bigint NOT NULL CHECK (requests > 0),
    PRIMARY KEY (org_id, day, user_agent)
);

-- One row per flush an instance applied: a flush retried after an unknown outcome (the
-- connection dropped during the commit) finds its row and is not added twice.
CREATE TABLE report_flushes (
    instance_id  text NOT NULL,
    seq          bigint NOT NULL,
    at           timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (instance_id, seq)
);

-- The rows of the per-request table, folded in. Their agent is found as the v0.1 marker list
-- matched then (word boundaries, case-insensitive, the longest marker first); their page_url
-- was raw text whose canonical path SQL cannot compute, so their pages count under
-- '(other pages)'.
CREATE FUNCTION pg_temp.agent_marker(ua text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce((
        SELECT m FROM unnest(ARRAY[
            'Meta-ExternalFetcher', 'Meta-ExternalAgent', 'Claude-SearchBot', 'Perplexity-User',
            'MistralAI-User', 'OAI-SearchBot', 'PerplexityBot', 'DuckAssistBot', 'ChatGPT-User',
            'Claude-User', 'Bytespider', 'ClaudeBot', 'Amazonbot', 'GPTBot', 'AI2Bot', 'YouBot',
            'CCBot']) WITH ORDINALITY AS t(m, i)
        WHERE ua ~* ('(^|[^A-Za-z0-9_])' || m || '([^A-Za-z0-9_]|$)')
        ORDER BY i LIMIT 1), 'none')
$$;

INSERT INTO report_minutes
SELECT date_trunc('minute', at), coalesce(org_id, ''), coalesce(site_domain, ''),
       coalesce(requested_fragment_id, ''), coalesce(resolved_fragment_id, ''),
       coalesce(card_id, ''), coalesce(key_id, ''), coalesce(lang, ''), coalesce(format, ''),
       outcome, reason, pg_temp.agent_marker(coalesce(agent_ua, '')),
       coalesce(agent_purpose, 'none'), count(*)
  FROM fragment_requests
 GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13;

INSERT INTO report_pages
SELECT date_trunc('hour', at), org_id, '(other pages)', coalesce(agent_purpose, 'none'),
       count(*), count(*) FILTER (WHERE outcome = 'served')
  FROM fragment_requests
 WHERE org_id IS NOT NULL
 GROUP BY 1, 2, 3, 4;

INSERT INTO report_unmatched_agents
SELECT day, org_id, CASE WHEN rank <= 100 THEN user_agent ELSE '(other user agents)' END,
       sum(n)
  FROM (SELECT date_trunc('day', at)::date AS day, org_id, agent_ua AS user_agent,
               count(*) AS n,
               row_number() OVER (PARTITION BY date_trunc('day', at)::date, org_id
                                  ORDER BY count(*) DESC, agent_ua) AS rank
          FROM fragment_requests
         WHERE org_id IS NOT NULL AND agent_ua IS NOT NULL
           AND pg_temp.agent_marker(agent_ua) = 'none'
         GROUP BY 1, 2, 3) ranked
 GROUP BY 1, 2, 3;

DROP TABLE fragment_requests;

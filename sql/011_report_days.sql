-- The request counters per UTC day, for the reports over days (expand-only: new tables).
--
-- A month of an organisation with 100 000 fragments holds ~300 000 hourly counters; a report of
-- its busiest fragments groups them all. These rows keep only what the report groups by (the
-- fragment being the resolved one, else the requested one) and hold a day each, so a window of
-- whole days reads one row per day and key instead of one per hour and key (and fewer bytes
-- per row). `bucket` is the start of the UTC day.
CREATE TABLE report_days (
    bucket    timestamptz NOT NULL,
    org_id    text NOT NULL,
    site      text NOT NULL,
    fragment  text NOT NULL,
    card_id   text NOT NULL,
    agent     text NOT NULL,
    outcome   text NOT NULL,
    reason    text NOT NULL,
    purpose   text NOT NULL,
    requests  bigint NOT NULL CHECK (requests > 0),
    PRIMARY KEY (org_id, bucket, site, fragment, card_id, agent, outcome, reason, purpose)
);

-- The fragments that answered without a card, ranked for the no-fill reasons, are a fraction
-- of the rows: read from this index alone (the days past are all-visible once vacuumed).
CREATE INDEX report_days_no_fill ON report_days (org_id, bucket)
    INCLUDE (fragment, outcome, reason, purpose, requests) WHERE outcome = 'no_fill';

-- The same days without site, fragment and card: the totals, the chart and the agents of a
-- window read a few hundred rows a month here, however many sites and fragments were asked for.
CREATE TABLE report_day_totals (
    bucket    timestamptz NOT NULL,
    org_id    text NOT NULL,
    agent     text NOT NULL,
    outcome   text NOT NULL,
    reason    text NOT NULL,
    purpose   text NOT NULL,
    requests  bigint NOT NULL CHECK (requests > 0),
    PRIMARY KEY (org_id, bucket, agent, outcome, reason, purpose)
);

-- Every change to an hourly counter is added to its day by the database itself, whichever
-- instance (or version of agentcard) rolled the minutes up: a day is always the sum of its
-- hours. Hours are only ever added to (an upsert that adds) or deleted past the retention,
-- when their whole day is too.
CREATE FUNCTION report_days_add() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    added bigint := NEW.requests - CASE WHEN TG_OP = 'UPDATE' THEN OLD.requests ELSE 0 END;
    day timestamptz := date_trunc('day', NEW.bucket AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
BEGIN
    IF added <> 0 THEN
        INSERT INTO report_days
        VALUES (day, NEW.org_id, NEW.site,
                coalesce(nullif(NEW.resolved_fragment_id, ''), NEW.requested_fragment_id),
                NEW.card_id, NEW.agent, NEW.outcome, NEW.reason, NEW.purpose, added)
        ON CONFLICT (org_id, bucket, site, fragment, card_id, agent, outcome, reason, purpose)
        DO UPDATE SET requests = report_days.requests + excluded.requests;
        INSERT INTO report_day_totals
        VALUES (day, NEW.org_id, NEW.agent, NEW.outcome, NEW.reason, NEW.purpose, added)
        ON CONFLICT (org_id, bucket, agent, outcome, reason, purpose)
        DO UPDATE SET requests = report_day_totals.requests + excluded.requests;
    END IF;
    RETURN NULL;
END
$$;

-- The trigger's lock on report_hours holds off any roll-up until this commits: the days
-- filled below and the trigger see the same hours.
CREATE TRIGGER report_days_add AFTER INSERT OR UPDATE ON report_hours
    FOR EACH ROW EXECUTE FUNCTION report_days_add();

INSERT INTO report_days
SELECT date_trunc('day', bucket AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', org_id, site,
       coalesce(nullif(resolved_fragment_id, ''), requested_fragment_id), card_id, agent,
       outcome, reason, purpose, sum(requests)
  FROM report_hours
 GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9;

INSERT INTO report_day_totals
SELECT bucket, org_id, agent, outcome, reason, purpose, sum(requests)
  FROM report_days
 GROUP BY 1, 2, 3, 4, 5, 6;

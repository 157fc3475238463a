-- Change tracking for the fragment cache. Every write to what /fragment reads bumps the
-- version of the organisations it touches (or the platform version for platform cards) and
-- notifies listeners, in the writing transaction itself: whatever path writes (API, console
-- CLI, a psql session), every instance learns of it, by NOTIFY at once or by the periodic
-- version check.

ALTER TABLE orgs ADD COLUMN cache_version bigint NOT NULL DEFAULT 0;

CREATE TABLE platform_cache_version (
    singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    version    bigint NOT NULL DEFAULT 0
);
INSERT INTO platform_cache_version DEFAULT VALUES;

CREATE FUNCTION cache_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    affected text[];
    platform boolean := false;
BEGIN
    IF TG_TABLE_NAME IN ('fragments', 'routes') THEN
        SELECT array_agg(DISTINCT s.org_id) INTO affected
          FROM changed c JOIN sites s ON s.id = c.site_id;
    ELSIF TG_TABLE_NAME = 'cards' THEN
        SELECT array_agg(DISTINCT c.org_id) FILTER (WHERE c.org_id IS NOT NULL),
               coalesce(bool_or(c.org_id IS NULL), false)
          INTO affected, platform
          FROM changed c;
    ELSE
        SELECT array_agg(DISTINCT c.org_id) INTO affected FROM changed c;
    END IF;
    IF platform THEN
        UPDATE platform_cache_version SET version = version + 1;
        PERFORM pg_notify('agentcard_cache', '*');
    END IF;
    IF affected IS NOT NULL THEN
        UPDATE orgs SET cache_version = cache_version + 1 WHERE id = ANY (affected);
        PERFORM pg_notify('agentcard_cache', org) FROM unnest(affected) AS org;
    END IF;
    RETURN NULL;
END;
$$;

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['sites', 'fragments', 'routes', 'cards', 'card_eligibility', 'delivery_keys'] LOOP
        EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %I REFERENCING NEW TABLE AS changed
                        FOR EACH STATEMENT EXECUTE FUNCTION cache_changed()', t || '_cache_ins', t);
        EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON %I REFERENCING NEW TABLE AS changed
                        FOR EACH STATEMENT EXECUTE FUNCTION cache_changed()', t || '_cache_upd', t);
        EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON %I REFERENCING OLD TABLE AS changed
                        FOR EACH STATEMENT EXECUTE FUNCTION cache_changed()', t || '_cache_del', t);
    END LOOP;
END;
$$;

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

-- Bumps the versions of `orgs` (and the platform's when `platform`) and notifies listeners.
CREATE FUNCTION cache_bump(orgs_changed text[], platform boolean) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF platform THEN
        UPDATE platform_cache_version SET version = version + 1;
        PERFORM pg_notify('agentcard_cache', '*');
    END IF;
    IF orgs_changed IS NOT NULL THEN
        UPDATE orgs SET cache_version = cache_version + 1 WHERE id = ANY (orgs_changed);
        PERFORM pg_notify('agentcard_cache', org) FROM unnest(orgs_changed) AS org;
    END IF;
END;
$$;

-- Statement trigger: the organisations the changed rows belong to.
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
    PERFORM cache_bump(affected, platform);
    RETURN NULL;
END;
$$;

-- A key's use (`last_used_at`, written by the request report for every batch) changes nothing
-- the cache holds: only a change of owner, hash or revocation counts.
CREATE FUNCTION delivery_keys_cache_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    affected text[];
BEGIN
    SELECT array_agg(DISTINCT n.org_id) || array_agg(DISTINCT o.org_id) INTO affected
      FROM new_rows n JOIN old_rows o ON o.id = n.id
     WHERE (n.org_id, n.key_hash, n.revoked_at) IS DISTINCT FROM (o.org_id, o.key_hash, o.revoked_at);
    PERFORM cache_bump(affected, false);
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
        EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON %I REFERENCING OLD TABLE AS changed
                        FOR EACH STATEMENT EXECUTE FUNCTION cache_changed()', t || '_cache_del', t);
        IF t <> 'delivery_keys' THEN
            EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON %I REFERENCING NEW TABLE AS changed
                            FOR EACH STATEMENT EXECUTE FUNCTION cache_changed()', t || '_cache_upd', t);
        END IF;
    END LOOP;
END;
$$;

CREATE TRIGGER delivery_keys_cache_upd AFTER UPDATE ON delivery_keys
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION delivery_keys_cache_changed();

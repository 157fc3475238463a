-- The audit log keeps what it saw (expand-only: new columns and an index, nothing dropped).
-- Each entry stores, when written, its object's name and its actor token's name, and for a
-- change each field's value before and after, so that a later rename or deletion changes no
-- entry. A release that does not know these columns leaves them NULL.

ALTER TABLE audit_log ADD COLUMN object_name text;
ALTER TABLE audit_log ADD COLUMN actor_name text;
-- [{"field": …, "before": …, "after": …}, …], never a secret.
ALTER TABLE audit_log ADD COLUMN changes jsonb;

-- The filter by actor ignores case; the log pages by (at, id).
CREATE INDEX audit_log_org_actor ON audit_log (org_id, lower(actor), at DESC, id DESC);

-- The names of the objects that still exist, as the writers name them now.
UPDATE audit_log a SET object_name = CASE a.object_kind
     WHEN 'site' THEN (SELECT nullif(name, '') FROM sites WHERE org_id = a.org_id AND domain = a.object)
     WHEN 'fragment' THEN (SELECT f.name || ' on ' || s.domain || coalesce(' ' || f.ref, '')
                             FROM fragments f JOIN sites s ON s.id = f.site_id WHERE f.id = a.object)
     WHEN 'card' THEN (SELECT name FROM cards WHERE id = a.object)
     WHEN 'key' THEN (SELECT name FROM delivery_keys WHERE id = a.object)
     WHEN 'token' THEN (SELECT nullif(name, '') FROM mgmt_tokens WHERE id = a.object)
     WHEN 'route' THEN (SELECT r.path || ' (' || r.match || ') on ' || s.domain
                          FROM routes r JOIN sites s ON s.id = r.site_id WHERE r.id = a.object)
     WHEN 'person' THEN (SELECT email FROM persons WHERE id = a.object)
     WHEN 'invitation' THEN (SELECT email FROM one_time_links WHERE id::text = a.object)
     WHEN 'org' THEN (SELECT name FROM orgs WHERE id = a.object)
   END;
UPDATE audit_log a SET actor_name = t.name
  FROM mgmt_tokens t WHERE t.id = a.actor_token_id AND t.name <> '';

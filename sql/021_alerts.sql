-- Alerts (expand-only: new tables). An organisation's owners set each kind on or off with its
-- thresholds; the scheduled evaluation keeps, beside the setting, whether the alert holds.

-- One row per organisation and kind an owner has saved: `threshold` is the fill rate's and the
-- refused share's percent, the silence's hours; `min_requests` the fill rate's least requests
-- (0 for the others). `holding` and `changed_at` are the evaluation's: a start or an end is the
-- one update that flips `holding` (its WHERE names the state it leaves), so a fleet records and
-- mails each once. The console's banner reads `enabled AND holding`.
CREATE TABLE alerts (
    org_id        text NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    kind          text NOT NULL,
    enabled       boolean NOT NULL,
    threshold     integer NOT NULL CHECK (threshold > 0),
    min_requests  integer NOT NULL CHECK (min_requests >= 0),
    holding       boolean NOT NULL DEFAULT false,
    changed_at    timestamptz,
    PRIMARY KEY (org_id, kind)
);

-- The people who get an organisation's alert mails: members only (the row goes with the
-- membership).
CREATE TABLE alert_subscriptions (
    org_id     text NOT NULL,
    person_id  text NOT NULL,
    PRIMARY KEY (org_id, person_id),
    FOREIGN KEY (org_id, person_id) REFERENCES memberships (org_id, person_id) ON DELETE CASCADE
);

-- The last minute whose alerts were evaluated: the instance whose update moves it forward
-- evaluates that minute, in the same transaction, so a fleet evaluates each minute once.
CREATE TABLE alert_rounds (
    singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    minute     timestamptz NOT NULL
);
INSERT INTO alert_rounds (minute) VALUES ('-infinity');

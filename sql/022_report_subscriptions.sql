-- Scheduled reports by mail: a person's subscriptions per organisation and cadence (weekly:
-- Mondays, the past Monday-Sunday UTC week; monthly: the 1st, the past calendar month UTC).
-- A subscription counts from created_at on: the first report it gets is of a period that
-- ended after it was made. Gone with the person or the organisation; a person no longer open
-- to the organisation gets nothing (the sending reads memberships).
CREATE TABLE report_subscriptions (
    person_id   text NOT NULL REFERENCES persons (id) ON DELETE CASCADE,
    org_id      text NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    cadence     text NOT NULL CHECK (cadence IN ('weekly', 'monthly')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (person_id, org_id, cadence)
);
CREATE INDEX report_subscriptions_cadence ON report_subscriptions (cadence, created_at);

-- Each report claimed for mailing: the instance whose insert succeeds mails it, so that a
-- fleet mails each person's report of a period once. Only the last period of each
-- subscription is ever claimed (an instance that was down catches up once, never with older
-- periods); a claim deletes the subscription's older rows.
CREATE TABLE report_mailings (
    person_id     text NOT NULL REFERENCES persons (id) ON DELETE CASCADE,
    org_id        text NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    cadence       text NOT NULL,
    period_start  timestamptz NOT NULL,
    claimed_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (person_id, org_id, cadence, period_start)
);

-- The viewer role: a person who reads what a member reads and changes nothing of the
-- organisation. Memberships and invitations may name it; the release before ignores it (it
-- never writes a viewer).
ALTER TABLE memberships DROP CONSTRAINT memberships_role_check;
ALTER TABLE memberships
    ADD CONSTRAINT memberships_role_check CHECK (role IN ('owner', 'member', 'viewer'));

ALTER TABLE one_time_links DROP CONSTRAINT one_time_links_role_check;
ALTER TABLE one_time_links
    ADD CONSTRAINT one_time_links_role_check CHECK (role IN ('owner', 'member', 'viewer'));

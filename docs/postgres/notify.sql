-- Tern: tell ternd which zones a transaction changed, for zones read from PowerDNS's
-- generic PostgreSQL schema (`[[zone]] database`, see "Zones read from PostgreSQL" in
-- docs/configuration.md).
--
-- ternd LISTENs on the channel `tern_zone_changed`; each notification's payload is a
-- zone's name as the `domains` table holds it. PostgreSQL sends a notification when the
-- transaction commits, and once per zone however many rows changed (notifications
-- with the same channel and payload in one transaction are folded into one). ternd then
-- reads the zone's rows again and serves the difference.
--
-- Run once in the database, as its owner: psql -d pdns -f notify.sql
-- Running it again replaces the functions and triggers. PostgreSQL 11 or later.

BEGIN;

-- The zones of the `records` rows a statement inserted, changed or deleted: its
-- transition table `tern_rows` (the new rows, or the old ones: an update has a trigger
-- for each, since a row moved to another zone changes the zone it left too). Triggers
-- by statement, so a bulk load costs one look-up of its zones, not one per row.
CREATE OR REPLACE FUNCTION tern_records_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('tern_zone_changed', d.name)
    FROM domains d WHERE d.id IN (SELECT DISTINCT domain_id FROM tern_rows);
  RETURN NULL;
END $$;

-- TRUNCATE records: every zone.
CREATE OR REPLACE FUNCTION tern_records_all() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('tern_zone_changed', d.name) FROM domains d;
  RETURN NULL;
END $$;

-- A zone added, renamed or removed: its name (both names for a rename). A removed
-- zone's rows are gone: ternd's reload fails ("no SOA") and keeps serving the zone
-- until it is taken out of ternd's configuration.
CREATE OR REPLACE FUNCTION tern_domains_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    PERFORM pg_notify('tern_zone_changed', OLD.name);
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    PERFORM pg_notify('tern_zone_changed', NEW.name);
  END IF;
  RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS tern_records_inserted ON records;
DROP TRIGGER IF EXISTS tern_records_updated_new ON records;
DROP TRIGGER IF EXISTS tern_records_updated_old ON records;
DROP TRIGGER IF EXISTS tern_records_deleted ON records;
DROP TRIGGER IF EXISTS tern_records_truncated ON records;
DROP TRIGGER IF EXISTS tern_domains_changed ON domains;

CREATE TRIGGER tern_records_inserted AFTER INSERT ON records
  REFERENCING NEW TABLE AS tern_rows
  FOR EACH STATEMENT EXECUTE FUNCTION tern_records_changed();
CREATE TRIGGER tern_records_updated_new AFTER UPDATE ON records
  REFERENCING NEW TABLE AS tern_rows
  FOR EACH STATEMENT EXECUTE FUNCTION tern_records_changed();
CREATE TRIGGER tern_records_updated_old AFTER UPDATE ON records
  REFERENCING OLD TABLE AS tern_rows
  FOR EACH STATEMENT EXECUTE FUNCTION tern_records_changed();
CREATE TRIGGER tern_records_deleted AFTER DELETE ON records
  REFERENCING OLD TABLE AS tern_rows
  FOR EACH STATEMENT EXECUTE FUNCTION tern_records_changed();
CREATE TRIGGER tern_records_truncated AFTER TRUNCATE ON records
  FOR EACH STATEMENT EXECUTE FUNCTION tern_records_all();
CREATE TRIGGER tern_domains_changed AFTER INSERT OR UPDATE OR DELETE ON domains
  FOR EACH ROW EXECUTE FUNCTION tern_domains_changed();

COMMIT;

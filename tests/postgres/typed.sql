-- A small typed database: ENUM and CHECK vocabularies, comments, arrays, JSON, a composite
-- type, numeric and time types, keys across two schemas, a function that writes, the database's
-- own function, and one the reader may not execute.
CREATE TYPE claim_status AS ENUM ('submitted', 'approved', 'denied');
CREATE TYPE address AS (street text, city text);
CREATE SCHEMA billing;

CREATE TABLE members (
    member_id integer PRIMARY KEY,
    full_name text NOT NULL,
    plan varchar(20) CHECK (plan IN ('bronze', 'silver', 'gold')),
    tags text[],
    home address,
    profile jsonb,
    joined date
);
COMMENT ON TABLE members IS 'People covered by a plan';
COMMENT ON COLUMN members.plan IS 'Coverage tier';

CREATE TABLE claims (
    claim_id bigint PRIMARY KEY,
    member_id integer NOT NULL REFERENCES members (member_id),
    status claim_status NOT NULL,
    amount numeric(10, 2),
    filed_at timestamptz
);
COMMENT ON COLUMN claims.amount IS 'Billed amount in US dollars';

CREATE TABLE billing.invoices (
    invoice_id integer PRIMARY KEY,
    claim_id bigint REFERENCES claims (claim_id),
    paid boolean DEFAULT false
);
COMMENT ON TABLE billing.invoices IS 'One invoice per paid claim';

INSERT INTO members VALUES
    (1, 'Ada Park', 'gold', ARRAY['vip', 'north'], ROW('1 Main St', 'Springfield'), '{"pets": 2}', '2020-01-15'),
    (2, 'Ben Ortiz', 'silver', ARRAY['north'], ROW('9 Elm St', 'Shelbyville'), '{"pets": 0}', '2021-06-01'),
    (3, 'Cy Young', 'bronze', NULL, NULL, NULL, NULL);
INSERT INTO claims VALUES
    (10, 1, 'approved', 120.50, '2024-03-01 10:00:00+00'),
    (11, 1, 'denied', 80.00, '2024-03-02 11:30:00+00'),
    (12, 2, 'submitted', 42.25, '2024-04-10 09:15:00+00');
INSERT INTO billing.invoices VALUES (100, 10, true);

CREATE FUNCTION wipe_claims() RETURNS integer LANGUAGE sql VOLATILE
    AS 'DELETE FROM claims RETURNING 1';

CREATE FUNCTION fiscal_year(day date) RETURNS integer LANGUAGE sql IMMUTABLE
    AS 'SELECT CAST(extract(year FROM day + interval ''3 months'') AS integer)';
CREATE FUNCTION payroll_key() RETURNS text LANGUAGE sql AS 'SELECT ''k''';
REVOKE EXECUTE ON FUNCTION payroll_key() FROM PUBLIC;

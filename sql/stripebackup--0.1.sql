/* stripebackup--0.1.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION stripebackup" to load this file. \quit

-- The library must be loaded by CREATE EXTENSION even before the SQL
-- functions exist, so a server without shared_preload_libraries fails early.
CREATE FUNCTION stripebackup_version() RETURNS text
AS 'MODULE_PATHNAME', 'stripebackup_version'
LANGUAGE C STRICT IMMUTABLE;

COMMENT ON FUNCTION stripebackup_version() IS 'version of the stripebackup library';

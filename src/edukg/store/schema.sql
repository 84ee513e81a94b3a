-- One loaded version of the graph. Written once by the loader, then only read.

CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;

-- The export's records. Their lines, as read, sit in a file beside the database
-- (meta 'lines'), at (pos, len): written once in sequence, they cost far less there
-- than as rows, and `edukg export` and the curriculum derivation read them back.
CREATE TABLE nodes (
  identifier TEXT PRIMARY KEY,
  label      TEXT NOT NULL,
  kind       TEXT,  -- the served kind its labels map to, if any
  pos        INTEGER NOT NULL,
  len        INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE edges (
  identifier TEXT PRIMARY KEY,
  label      TEXT NOT NULL,
  source     TEXT NOT NULL,
  target     TEXT NOT NULL,
  pos        INTEGER NOT NULL,
  len        INTEGER NOT NULL
) WITHOUT ROWID;

-- Served records: each record's API JSON, encoded once at load.
CREATE TABLE docs (
  identifier   TEXT PRIMARY KEY,
  kind         TEXT NOT NULL,
  case_uuid    TEXT,
  jurisdiction TEXT,
  subject      TEXT,
  stmt_type    TEXT,
  grades       INTEGER NOT NULL DEFAULT 0,
  adoption     TEXT,
  is_current   INTEGER NOT NULL DEFAULT 1,
  doc          BLOB NOT NULL,
  code         TEXT,  -- upper-cased statement code (lessons: full ordinal name), for lookups
  text         TEXT,  -- lower-cased description (lessons: name), for word matches
  alt_code     TEXT   -- upper-cased alternateStatementCode (1.NBT.1 for 1.NBT.A.1), for lookups
) WITHOUT ROWID;

-- Framework membership: every item reachable from a framework through hasChild,
-- with the columns its filters need, so one range scan answers a page.
CREATE TABLE membership (
  framework  TEXT NOT NULL,
  identifier TEXT NOT NULL,
  grades     INTEGER NOT NULL,
  subject    TEXT,
  stmt_type  TEXT,
  PRIMARY KEY (framework, identifier)
) WITHOUT ROWID;

-- Neighbour lists (children, prerequisites, builds-towards, related, components).
CREATE TABLE links (
  relation TEXT NOT NULL,
  node     TEXT NOT NULL,
  other    TEXT NOT NULL,
  PRIMARY KEY (relation, node, other)
) WITHOUT ROWID;

-- Pre-encoded list rows that are more than a record: crosswalks (the other side's
-- record with the figures merged in), curriculum alignments (with their types),
-- activities in position order, assessments by container, courses by curriculum,
-- dependency-map entries, and single documents (scope and sequence) under key ''.
CREATE TABLE rows (
  relation TEXT NOT NULL,
  node     TEXT NOT NULL,
  sort_key TEXT NOT NULL,  -- the keyset: an identifier, or position and identifier
  label    TEXT,           -- a filter value (crosswalks: the other side's jurisdiction)
  score    REAL,           -- a filter value (crosswalks: jaccard)
  doc      BLOB NOT NULL,
  PRIMARY KEY (relation, node, sort_key)
) WITHOUT ROWID;

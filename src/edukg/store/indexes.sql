-- Built after the bulk insert: one pass per index is cheaper than growing them row by row.
CREATE INDEX edges_by_label ON edges (label, source, target);
CREATE INDEX docs_by_case ON docs (case_uuid, kind);
CREATE INDEX docs_by_kind ON docs (kind, subject, identifier);

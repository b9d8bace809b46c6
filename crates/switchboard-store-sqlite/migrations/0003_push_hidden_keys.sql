-- Metadata keys of declared extensions the config's creator did not activate:
-- the worker removes them from every notification for that config, so a
-- webhook sees extension data (e.g. task-progress) only when its creator
-- asked for it. A JSON array of strings.
ALTER TABLE push_configs ADD COLUMN hidden_metadata_keys TEXT NOT NULL DEFAULT '[]';

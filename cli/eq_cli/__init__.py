"""eq_cli: the `elastic-quota` command. Reads files, calls the engine, prints; no rules here."""

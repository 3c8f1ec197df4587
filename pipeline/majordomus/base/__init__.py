"""Base: errors and exit codes, atomic file I/O, the one git module, YAML, output, shipped data, ids, transcript markers. Imports nothing of majordomus."""

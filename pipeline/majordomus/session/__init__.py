"""Session boundaries: the one open path, the one close path, and compaction."""

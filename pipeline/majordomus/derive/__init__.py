"""The deriver: an episode's evidence mapped to candidate records by the fixed table, and the hand-edit guard."""

"""Contexts composed when read: the repository context, the working context, the opening snapshot, the briefing."""

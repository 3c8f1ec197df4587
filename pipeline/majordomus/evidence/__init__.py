"""Evidence writers and readers: open episodes, tasks, decisions, questions, checkpoints, handovers, and the episode's commits."""

"""The trunk outbox: where a boundary writes (tracked sections or the outbox) and what waits there."""

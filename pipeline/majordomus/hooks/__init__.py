"""The agents' hooks: payloads on stdin, dispatch to the session boundaries, and their installation."""

"""Feedback context: human feedback on runs, attempts, artifacts, memories and evaluations."""

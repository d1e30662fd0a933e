"""The datasets context: harvested tasks and immutable, versioned snapshots (SPEC C13–C25)."""

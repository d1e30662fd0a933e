"""Appraisal: how work went, derived on read from recorded events (issue 11, SPEC M01–M54)."""

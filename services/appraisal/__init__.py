"""Appraisal: how work went, derived on read from recorded events (SPEC M01–M54)."""

"""The learning context: evidence from neighbours and our own feedback, and the proposals the
ProposalGenerator raises from it (SPEC C26–C53)."""

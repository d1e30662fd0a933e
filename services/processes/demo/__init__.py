"""The demo scenario: a small company's three agents, the people around them and two weeks of
their work, loaded through the service's own routes (``feedbackloop demo``)."""

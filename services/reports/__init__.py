"""Reports context: wrong-answer reports, their labelled block and where they are routed."""

"""The access log names no person (decisions D134).

uvicorn's access log prints each request's path; a route whose path names a person
(``/factory/people/{person}`` and its export) would print the person's id in every log line,
where an erasure cannot reach. The routes are asked once which of their path parameters name a
person (``PERSON_PARAMETERS``), and the access logger prints those segments as the parameter's
name (``/factory/people/{person}``), whatever route is added later with such a parameter.
"""

import logging
import re
from collections.abc import Iterable
from typing import Any

from starlette.routing import BaseRoute, Route

ACCESS_LOGGER = "uvicorn.access"
PERSON_PARAMETERS = frozenset({"person", "subject", "reporter", "maintainer"})
_PATH_ARGUMENT = 2  # uvicorn's access record: (client, method, path, http version, status)


def person_paths(routes: Iterable[BaseRoute]) -> list[tuple[re.Pattern[str], str]]:
    """For each route naming a person in its path: its pattern, and the path printed."""
    found = []
    for route in routes:
        path = getattr(route, "path", "")
        if isinstance(route, Route) and PERSON_PARAMETERS & set(route.param_convertors):
            found.append((route.path_regex, path))
    return found


class PersonPathRedaction(logging.Filter):
    """Prints a person route's path as its template; every other record as it was."""

    def __init__(self, routes: Iterable[BaseRoute]) -> None:
        super().__init__()
        self.paths = person_paths(routes)

    def redacted(self, path: str) -> str:
        bare, mark, query = path.partition("?")
        for pattern, template in self.paths:
            if pattern.match(bare):
                return template + (mark + "…" if query else "")
        return path

    def filter(self, record: logging.LogRecord) -> bool:
        args: Any = record.args
        if isinstance(args, tuple) and len(args) > _PATH_ARGUMENT:
            path = args[_PATH_ARGUMENT]
            if isinstance(path, str):
                record.args = (*args[:_PATH_ARGUMENT], self.redacted(path), *args[3:])
        return True


def redact_person_paths(routes: Iterable[BaseRoute]) -> PersonPathRedaction:
    """Installs the redaction on the access logger (once per app; the newest app's routes)."""
    logger = logging.getLogger(ACCESS_LOGGER)
    for old in [f for f in logger.filters if isinstance(f, PersonPathRedaction)]:
        logger.removeFilter(old)
    redaction = PersonPathRedaction(routes)
    logger.addFilter(redaction)
    return redaction

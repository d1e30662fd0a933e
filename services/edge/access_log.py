"""The access log names no person (decisions D134).

uvicorn's access log prints each request's path; a route whose path names a person
(``/factory/people/{person}`` and its export) would print the person's id in every log line,
where an erasure cannot reach. The API's own path templates (its OpenAPI document) say which
routes name a person (a parameter in ``PERSON_PARAMETERS``), and the access logger prints
such a path as its template, whatever route is added later with such a parameter.
"""

import logging
import re
from collections.abc import Callable, Iterable
from typing import Any

ACCESS_LOGGER = "uvicorn.access"
PERSON_PARAMETERS = frozenset({"person", "subject", "reporter", "maintainer"})
_PATH_ARGUMENT = 2  # uvicorn's access record: (client, method, path, http version, status)
_PARAMETER = re.compile(r"^\{([^}:]+)(?::[^}]*)?\}$")


def person_paths(templates: Iterable[str]) -> list[tuple[re.Pattern[str], str]]:
    """For each path template naming a person: its pattern, and the template itself."""
    found = []
    for template in templates:
        segments = template.split("/")
        named = [m.group(1) for s in segments if (m := _PARAMETER.match(s))]
        if PERSON_PARAMETERS.intersection(named):
            pattern = "/".join("[^/]+" if _PARAMETER.match(s) else re.escape(s) for s in segments)
            found.append((re.compile(f"^{pattern}$"), template))
    return found


class PersonPathRedaction(logging.Filter):
    """Prints a person route's path as its template; every other record as it was. The
    templates are read at the first record (the API's document is built once, lazily)."""

    def __init__(self, templates: Callable[[], Iterable[str]]) -> None:
        super().__init__()
        self._templates = templates
        self._paths: list[tuple[re.Pattern[str], str]] | None = None

    def redacted(self, path: str) -> str:
        if self._paths is None:
            self._paths = person_paths(self._templates())
        bare, mark, query = path.partition("?")
        for pattern, template in self._paths:
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


def redact_person_paths(templates: Callable[[], Iterable[str]]) -> PersonPathRedaction:
    """Installs the redaction on the access logger (one per process: the newest app's)."""
    logger = logging.getLogger(ACCESS_LOGGER)
    for old in [f for f in logger.filters if isinstance(f, PersonPathRedaction)]:
        logger.removeFilter(old)
    redaction = PersonPathRedaction(templates)
    logger.addFilter(redaction)
    return redaction

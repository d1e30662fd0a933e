"""The model catalogue: each model's residency mark, from a TOML or JSON file (SPEC W97, W98).

::

    [models."gpt-4o-eu"]
    residency = "eu"

Only a model marked EU runs at night. A model the catalogue does not list, a model without a
mark, or a catalogue that cannot be read leaves the mark unreadable: the case is skipped and
says so, and no other model is ever put in its place (W98).
"""

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EU = "eu"


@dataclass(frozen=True)
class Catalogue:
    """Residency marks by model; ``problem`` says why the file could not be read, if so."""

    marks: dict[str, str | None]
    problem: str | None = None

    def residency(self, model: str) -> str | None:
        """The model's mark, lower-cased; None when it cannot be read (W98)."""
        if self.problem is not None:
            return None
        return self.marks.get(model)


def parse_catalogue(text: str, suffix: str) -> Catalogue:
    """A catalogue from the file's text; the file's extension says the format."""
    try:
        if suffix == ".toml":
            data: Any = tomllib.loads(text)
        elif suffix == ".json":
            data = json.loads(text)
        else:
            return Catalogue({}, f"a model catalogue is .toml or .json, not {suffix or 'none'}")
    except ValueError as error:  # tomllib's and json's decode errors are ValueErrors
        return Catalogue({}, f"the model catalogue does not parse: {error}")
    except RecursionError:  # nesting hundreds deep: both parsers read it recursively
        return Catalogue({}, "the model catalogue nests too deeply to be read")
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, dict):
        return Catalogue({}, "the model catalogue has no models table")
    marks: dict[str, str | None] = {}
    for name, entry in models.items():
        mark = entry.get("residency") if isinstance(entry, dict) else None
        marks[str(name)] = mark.strip().lower() if isinstance(mark, str) and mark.strip() else None
    return Catalogue(marks)


def read_catalogue(path: Path | None) -> Catalogue:
    """The catalogue as the file says now; never raises."""
    if path is None:
        return Catalogue({}, "no model catalogue is configured (FEEDBACKLOOP_MODEL_CATALOGUE)")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return Catalogue({}, f"the model catalogue cannot be read: {error}")
    return parse_catalogue(text, path.suffix.lower())

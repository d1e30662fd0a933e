"""``Page``: one entry of the console's navigation and the routes behind it.

A page is one module under ``services/console/pages/`` exporting a ``Page`` and one template
under ``services/console/templates/``; listing it in ``services.console.pages.PAGES`` adds it
to the navigation of the people whose roles it names (decisions D61).
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fastapi import APIRouter

if TYPE_CHECKING:
    from services.console.console import Console


@dataclass(frozen=True)
class Page:
    """``path`` is where the navigation links; ``roles``: who sees it there (any of them; an
    empty tuple: everyone signed in). Showing a page grants nothing: what it reads and does
    is decided by the same rules as the API, whoever asks."""

    name: str
    path: str
    label: str
    roles: tuple[str, ...]
    routes: Callable[["Console"], APIRouter]

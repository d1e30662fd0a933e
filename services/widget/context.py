"""The feedback widget, declared as a context: its routes only (docs/widget.md). Its writes
are the feedback and reports contexts' commands, issued through the bus as any door's."""

from services.declaration import Context
from services.widget.api import widget_routes

WIDGET = Context("widget", routes=widget_routes)

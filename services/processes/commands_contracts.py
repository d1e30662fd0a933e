"""``feedbackloop contracts``: the published documents written from the declarations."""

import typer


def contracts() -> None:
    """Write the JSON Schemas and the AsyncAPI document into contracts/."""
    from services.processes.documents import write_all

    for path in write_all():
        typer.echo(f"wrote {path}")

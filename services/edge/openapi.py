"""The OpenAPI document (``/openapi.json``) as complete as the routes are:
routes read their bodies themselves (``services.edge.app.read_command``: bounded depth, no
duplicate keys, strict types), so FastAPI does not see them; each declares its body here, and
the document gets the schemas of those bodies beside FastAPI's own. Every success shows an
example answer, taken from the model it is answered with (``contracts/answers.py``).
"""

from collections.abc import Callable, Iterator
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from contracts.answers import Answer

# The request bodies routes read themselves (``read_command``), by schema name: declared in
# ``/openapi.json`` as FastAPI declares the bodies it reads.
_BODIES: dict[str, type[BaseModel]] = {}


def body(model: type[BaseModel], example: dict[str, Any]) -> dict[str, Any]:
    """``openapi_extra`` of a route that reads ``model`` from its JSON body."""
    _BODIES[model.__name__] = model
    schema = {"$ref": f"#/components/schemas/{model.__name__}"}
    content = {"application/json": {"schema": schema, "example": example}}
    return {"requestBody": {"required": True, "content": content}}


# Bytes as they come or as they were stored. Each route names the media types it really takes
# and gives: a generated client (openapi-python-client, for one) leaves out an operation whose
# only body is ``*/*``, and the bytes of an answer declared so.
BYTES: dict[str, Any] = {"type": "string", "format": "binary"}
TEXT: dict[str, Any] = {"type": "string"}


def raw_body(*media_types: str) -> dict[str, Any]:
    """``openapi_extra`` of a route that reads its body as bytes of ``media_types`` (any bytes:
    what they must hold, TOML or an artifact's content, the route checks itself); it refuses
    others (415)."""
    return {
        "requestBody": {"required": True, "content": {k: {"schema": BYTES} for k in media_types}}
    }


def raw_answer(description: str, content: dict[str, Any]) -> dict[str, Any]:
    """A 2xx answer of ``content`` (media type → its schema), for ``responses``."""
    return {"description": description, "content": {k: {"schema": v} for k, v in content.items()}}


def without_default_json(document: dict[str, Any]) -> None:
    """A route that answers raw bytes (``raw_answer``) still gets FastAPI's default
    ``application/json`` with an empty schema beside them: a JSON answer it never gives,
    with no shape to show an example of. Dropped where another media type is declared."""
    for operation in operations(document):
        for answer in operation.get("responses", {}).values():
            content = answer.get("content", {})
            if len(content) > 1 and content.get("application/json") == {"schema": {}}:
                del content["application/json"]


def with_bodies(app: FastAPI) -> Callable[[], dict[str, Any]]:
    """``app.openapi`` with the schemas of the bodies routes read themselves, and an example
    of every answer."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = get_openapi(
                title=app.title, version=app.version, summary=app.summary, routes=app.routes
            )
            models: list[tuple[type[BaseModel], JsonSchemaMode]] = [
                (model, "validation") for model in _BODIES.values()
            ]
            _, defs = models_json_schema(models, ref_template="#/components/schemas/{model}")
            schemas = document.setdefault("components", {}).setdefault("schemas", {})
            schemas.update(defs.get("$defs", {}))
            without_default_json(document)
            with_answer_examples(document)
            app.openapi_schema = with_null_fields(document)
        return app.openapi_schema

    return openapi


def with_null_fields(document: dict[str, Any]) -> dict[str, Any]:
    """Error examples with ``"field": null`` where no field is wrong: FastAPI drops nulls
    from the document it generates, and the example would then miss a field the shape has."""
    for operation in operations(document):
        for answer in operation.get("responses", {}).values():
            content = answer.get("content", {}).get("application/json", {})
            example = content.get("example")
            if content.get("schema", {}).get("$ref", "").endswith("/ErrorBody"):
                example.setdefault("field", None)
    return document


def operations(document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for methods in document.get("paths", {}).values():
        yield from methods.values()


def answer_models() -> dict[str, type[Answer]]:
    """Every model the API answers with, by schema name: the ``Answer`` subclasses of
    ``contracts/answers.py`` and of the contexts that declare their answers beside their
    commands (``contracts/nights.py``, ``contracts/digests.py``)."""
    found: dict[str, type[Answer]] = {}
    unseen = [Answer]
    while unseen:
        for model in unseen.pop().__subclasses__():
            found[model.__name__] = model
            unseen.append(model)
    return found


def with_answer_examples(document: dict[str, Any]) -> None:
    """Each 2xx JSON answer shows its model's first example as its ``example``:
    Swagger UI renders a response's example, and a client reading the raw document finds it
    where OpenAPI puts it. FastAPI copies a model's ``examples`` into its component schema but
    drops their nulls on the way (as it does for error examples), which leaves an example
    missing fields the answer always has: the component gets them back from the model."""
    schemas = document.get("components", {}).get("schemas", {})
    for name, model in answer_models().items():
        shown = model.model_json_schema(mode="serialization").get("examples")
        if shown and name in schemas:
            schemas[name]["examples"] = shown
    for operation in operations(document):
        for status, answer in operation.get("responses", {}).items():
            content = answer.get("content", {}).get("application/json")
            if not str(status).startswith("2") or content is None or "example" in content:
                continue
            name = content.get("schema", {}).get("$ref", "").rpartition("/")[2]
            shown = schemas.get(name, {}).get("examples")
            if shown:
                content["example"] = shown[0]

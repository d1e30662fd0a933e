"""The OpenAPI document (``/openapi.json``) as complete as the routes are (issue 8 item 5):
routes read their bodies themselves (``services.api.read_command``: bounded depth, no
duplicate keys, strict types), so FastAPI does not see them; each declares its body here, and
the document gets the schemas of those bodies beside FastAPI's own.
"""

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

# The request bodies routes read themselves (``read_command``), by schema name: declared in
# ``/openapi.json`` as FastAPI declares the bodies it reads.
_BODIES: dict[str, type[BaseModel]] = {}


def body(model: type[BaseModel], example: dict[str, Any]) -> dict[str, Any]:
    """``openapi_extra`` of a route that reads ``model`` from its JSON body."""
    _BODIES[model.__name__] = model
    schema = {"$ref": f"#/components/schemas/{model.__name__}"}
    content = {"application/json": {"schema": schema, "example": example}}
    return {"requestBody": {"required": True, "content": content}}


# A body taken as it comes (an artifact): any media type, bytes.
RAW_BODY = {
    "requestBody": {
        "required": True,
        "content": {"*/*": {"schema": {"type": "string", "format": "binary"}}},
    }
}
RAW_ANSWER = {"content": {"*/*": {"schema": {"type": "string", "format": "binary"}}}}


def with_bodies(app: FastAPI) -> Callable[[], dict[str, Any]]:
    """``app.openapi`` with the schemas of the bodies routes read themselves."""

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
            app.openapi_schema = with_null_fields(document)
        return app.openapi_schema

    return openapi


def with_null_fields(document: dict[str, Any]) -> dict[str, Any]:
    """Error examples with ``"field": null`` where no field is wrong: FastAPI drops nulls
    from the document it generates, and the example would then miss a field the shape has."""
    for methods in document.get("paths", {}).values():
        for operation in methods.values():
            for answer in operation.get("responses", {}).values():
                content = answer.get("content", {}).get("application/json", {})
                example = content.get("example")
                if content.get("schema", {}).get("$ref", "").endswith("/ErrorBody"):
                    example.setdefault("field", None)
    return document

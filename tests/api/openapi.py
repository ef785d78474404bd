"""Build requests from the OpenAPI schema, so tests cover every operation it lists."""

import re
import uuid

PATH_PARAM = re.compile(r"{(\w+)}")
METHODS = ("get", "post", "put", "patch", "delete")


def operations(schema: dict):
    """Yield (method, path template, operation) for every operation in the schema."""
    for path, item in schema["paths"].items():
        for method in METHODS:
            if method in item:
                yield method, path, item[method]


def path_params(path: str) -> list[str]:
    return PATH_PARAM.findall(path)


def fill_path(path: str, values: dict[str, str]) -> str:
    return PATH_PARAM.sub(lambda match: str(values[match.group(1)]), path)


def example_body(schema: dict, operation: dict):
    """Return a minimal valid JSON body for the operation: required fields, first enum value."""
    content = operation.get("requestBody", {}).get("content", {})
    if "application/json" not in content:
        return None
    return _example(schema, content["application/json"]["schema"])


def _resolve(schema: dict, node: dict) -> dict:
    while "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        node = schema["components"]["schemas"][name]
    if "allOf" in node:
        merged: dict = {"type": "object", "properties": {}, "required": []}
        for part in node["allOf"]:
            part = _resolve(schema, part)
            merged["properties"].update(part.get("properties", {}))
            merged["required"] += part.get("required", [])
            for key in ("enum", "type", "format"):
                if key in part:
                    merged[key] = part[key]
        return merged
    if "oneOf" in node:
        return _resolve(schema, node["oneOf"][0])
    return node


def _example(schema: dict, node: dict):
    node = _resolve(schema, node)
    if "enum" in node:
        return node["enum"][0]
    kind = node.get("type", "object")
    if kind == "object":
        properties = node.get("properties", {})
        return {
            name: _example(schema, properties[name])
            for name in node.get("required", [])
            if not properties.get(name, {}).get("readOnly")
        }
    if kind == "array":
        return [_example(schema, node.get("items", {}))]
    if kind == "integer":
        return max(0, node.get("minimum", 0))
    if kind == "number":
        return 0.5
    if kind == "boolean":
        return True
    if node.get("format") == "uuid":
        return str(uuid.uuid4())
    if node.get("format") == "date-time":
        return "2025-01-01T00:00:00Z"
    return "x"


def as_json_schema(node):
    """Return an OpenAPI 3.0 schema node as JSON Schema: `nullable` becomes a null option."""
    if isinstance(node, list):
        return [as_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: as_json_schema(value) for key, value in node.items()}
    if node.pop("nullable", False):
        return {"anyOf": [node, {"type": "null"}]}
    return node


def answer_schema(schema: dict, path: str, method: str) -> dict:
    """Return the JSON Schema of an operation's 200 answer, with the components it refers to."""
    answer = schema["paths"][path][method]["responses"]["200"]["content"]["application/json"]
    return as_json_schema({**answer["schema"], "components": schema["components"]})

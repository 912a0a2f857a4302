"""Validates JSON bodies against a component of a vendor's published schema.

    python vendor_schema.py SCHEMA_FILE < cases.json

SCHEMA_FILE is a rail's `tests/fixtures/vendor/schema.json`: an OpenAPI
document (components under `#/components/schemas/`, OpenAPI 3.0's
`nullable` read as JSON Schema's `"null"` type) or a JSON Schema (under
`#/$defs/`). stdin holds `[{"name": ..., "component": ..., "body": ...}]`;
stdout gets one line per violation (`name: path: message`) and the exit
status is 1 when there is any.
"""

import json
import sys

from jsonschema import Draft202012Validator


def nullable(node):
    """OpenAPI 3.0's `nullable: true` as a JSON Schema type union."""
    if isinstance(node, list):
        return [nullable(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: nullable(v) for k, v in node.items()}
    if out.pop("nullable", False) is True:
        t = out.get("type")
        if isinstance(t, str):
            out["type"] = [t, "null"]
        elif "$ref" in out or "allOf" in out or "oneOf" in out:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


def main():
    with open(sys.argv[1]) as f:
        doc = nullable(json.load(f))
    doc.pop("$schema", None)
    base = "#/components/schemas/" if "components" in doc else "#/$defs/"
    failed = 0
    for case in json.load(sys.stdin):
        schema = dict(doc, **{"$ref": base + case["component"]})
        validator = Draft202012Validator(schema)
        for e in sorted(validator.iter_errors(case["body"]), key=str):
            path = "/".join(str(p) for p in e.absolute_path) or "(root)"
            print(f"{case['name']}: {path}: {e.message}")
            failed += 1
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

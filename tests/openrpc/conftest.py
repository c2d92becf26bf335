"""OpenRPC tooling as a client author runs it on spec/openrpc.json, run the same way here.

The meta-schemas (@open-rpc/meta-schema, and @json-schema-tools/meta-schema that it refers to),
@open-rpc/generator, what its TypeScript client imports and tsc are pinned by the
package-lock.json beside this file and installed with `npm ci` into .cache/ when missing
(tests/support/npm.py, as tests/clientgen does).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from referencing import Registry
from referencing.jsonschema import DRAFT7, DRAFT202012

from nearrpc.sample import build_sample_store
from tests.conftest import REPO
from tests.support.live_server import LiveServer, running_server
from tests.support.npm import pinned_packages

HERE = Path(__file__).resolve().parent
OPENRPC = REPO / "spec" / "openrpc.json"
OPENAPI = REPO / "spec" / "openapi.json"
_DOCUMENT_URI = "urn:nearrpc:openrpc"


@pytest.fixture(scope="session")
def node_modules() -> Path:
    """node_modules with the pinned OpenRPC packages (`npm ci` once per lock file)."""
    return pinned_packages(HERE, "openrpc", "@open-rpc/generator")


@pytest.fixture(scope="session")
def meta_validator(node_modules: Path) -> jsonschema.Draft7Validator:
    """The OpenRPC meta-schema as the npm package exports it, with the JSON Schema meta-schema
    it refers to (https://meta.json-schema.tools) registered beside it."""
    script = "process.stdout.write(JSON.stringify(require('@open-rpc/meta-schema').default))"
    done = subprocess.run(
        ["node", "-e", script], cwd=node_modules.parent, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    meta = json.loads(done.stdout)
    schema_meta = json.loads((node_modules / "@json-schema-tools" / "meta-schema" / "schema.json").read_text())
    resource = DRAFT7.create_resource(schema_meta)
    registry: Registry[Any] = Registry().with_resources(
        [("https://meta.json-schema.tools", resource), ("https://meta.json-schema.tools/", resource)]
    )
    return jsonschema.Draft7Validator(meta, registry=registry, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)


def load(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


def method_of(document: dict[str, Any], name: str) -> dict[str, Any]:
    (method,) = [m for m in document["methods"] if m["name"] == name]
    found: dict[str, Any] = method
    return found


def schema_validator(document: dict[str, Any], schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    """A validator for `schema` (a result, param or error schema of `document`), whose `$ref`s
    point into the document's components. The component schemas are JSON Schema 2020-12, as
    spec/openapi.json's (prefixItems, type arrays)."""
    resource = DRAFT202012.create_resource({**document, "x-probe": schema})
    registry: Registry[Any] = Registry().with_resource(_DOCUMENT_URI, resource)
    return jsonschema.Draft202012Validator({"$ref": f"{_DOCUMENT_URI}#/x-probe"}, registry=registry)


def result_validator(document: dict[str, Any], method: str) -> jsonschema.Draft202012Validator:
    return schema_validator(document, method_of(document, method)["result"]["schema"])


@pytest.fixture(scope="session")
def sample_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    folder = tmp_path_factory.mktemp("openrpc-server")
    build_sample_store(folder / "sample.sqlite")
    with running_server(folder / "sample.sqlite", folder / "server.log") as live:
        yield live

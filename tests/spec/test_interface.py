"""spec/openapi.json holds every object, field and enum value of interface 1.2.14 (spec/interface.json),
except where spec/DEVIATIONS.md declares a departure; the checker catches what a bump could break."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest

from tests.conftest import REPO
from tools.interface_check import declared_paths, departures, undeclared
from tools.spec_fields import flatten

SPEC = json.loads((REPO / "spec" / "openapi.json").read_text(encoding="utf-8"))
INTERFACE = json.loads((REPO / "spec" / "interface.json").read_text(encoding="utf-8"))
METHODS = json.loads((REPO / "spec" / "overlays.json").read_text(encoding="utf-8"))["methods"]
DECLARED = declared_paths((REPO / "spec" / "DEVIATIONS.md").read_text(encoding="utf-8"))


def spec_departures(spec: dict[str, Any]) -> list[str]:
    return [str(departure) for departure in departures(flatten(spec, METHODS), INTERFACE)]


def test_the_interface_is_the_specs_version() -> None:
    assert INTERFACE["version"] == SPEC["info"]["version"] == "1.2.14"


def test_the_spec_departs_only_where_declared() -> None:
    assert undeclared(departures(flatten(SPEC, METHODS), INTERFACE), DECLARED) == []


def test_every_declared_departure_is_real() -> None:
    """A row in DEVIATIONS.md that no longer departs is stale: remove it."""
    real = {departure.path for departure in departures(flatten(SPEC, METHODS), INTERFACE)}
    assert DECLARED and DECLARED <= real


def test_every_interface_object_hangs_from_a_declared_field() -> None:
    objects = INTERFACE["objects"]
    for path in objects:
        if re.fullmatch(r"\w+\.(request|response)", path):
            continue
        field_path = path.removesuffix("[]")
        parent, _, name = field_path.rpartition(".")
        assert name in objects[parent]["fields"], path


def test_the_interface_covers_the_briefs_objects() -> None:
    fields = sum(len(obj["fields"]) for obj in INTERFACE["objects"].values())
    assert len(INTERFACE["objects"]) == 87 and fields == 627
    assert "client_config.response.result" in INTERFACE["objects"]
    assert "state_sync_external_backoff" in INTERFACE["objects"]["client_config.response.result"]["fields"]


def _without_field(schema: str, name: str) -> dict[str, Any]:
    spec: dict[str, Any] = copy.deepcopy(SPEC)
    del spec["components"]["schemas"][schema]["properties"][name]
    return spec


def test_a_dropped_field_is_a_departure() -> None:
    found = spec_departures(_without_field("RpcClientConfigResponse", "state_sync_external_backoff"))
    assert "client_config.response.result.state_sync_external_backoff: missing (a field of interface 1.2.14)" in found


def test_a_dropped_nested_field_is_a_departure_in_both_methods() -> None:
    found = spec_departures(_without_field("ShardLayoutV2", "shard_ids"))
    assert "genesis_config.response.result.shard_layout.V2.shard_ids: missing (a field of interface 1.2.14)" in found
    assert (
        "EXPERIMENTAL_protocol_config.response.result.shard_layout.V2.shard_ids: missing (a field of interface 1.2.14)"
        in found
    )


def test_requiredness_the_brief_marks_is_held() -> None:
    spec = copy.deepcopy(SPEC)
    genesis = spec["components"]["schemas"]["GenesisConfig"]
    genesis["required"] = [name for name in genesis["required"] if name != "chain_id"] + ["shard_layout"]
    found = spec_departures(spec)
    assert "genesis_config.response.result.chain_id: optional (interface 1.2.14 requires it)" in found
    assert "genesis_config.response.result.shard_layout: required (optional in interface 1.2.14)" in found


def test_a_dropped_enum_value_is_a_departure() -> None:
    spec = copy.deepcopy(SPEC)
    spec["components"]["schemas"]["AccountState"]["enum"] = ["uninitialized"]
    assert "EXPERIMENTAL_view_account.response.result.state: lacks the value(s) initialized of interface 1.2.14" in (
        spec_departures(spec)
    )


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("## Interface fields the spec departs from\n| path |\n|---|\n| `a.b` | y |\n## Next\n| `c.d` |", {"a.b"}),
        ("## Other\n| `a.b` | y |\n", set()),
    ],
)
def test_declared_paths_come_from_the_first_column_of_that_table_only(markdown: str, expected: set[str]) -> None:
    assert declared_paths(markdown) == expected

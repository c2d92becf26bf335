"""The spec's examples: what tools.spec_examples takes from the recorded round trips, each one
valid against the schema it illustrates, and placed where a reader and a mock look for it.

That each example is what a live server answers is tests/fixtures/test_spec_examples.py."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from nearrpc.spec import validator
from tests.conftest import REPO
from tools import spec_examples
from tools.spec_examples import ExampleMisfit, apply_examples

SPEC: dict[str, Any] = json.loads((REPO / "spec" / "openapi.json").read_text(encoding="utf-8"))
EXAMPLES: dict[str, Any] = json.loads(spec_examples.EXAMPLES.read_text(encoding="utf-8"))
JSON = "application/json"


def _resolve(example: dict[str, Any]) -> Any:
    ref = example.get("$ref")
    if ref is None:
        return example["value"]
    assert ref.startswith("#/components/examples/"), ref
    return SPEC["components"]["examples"][ref.rpartition("/")[2]]["value"]


def _placements() -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(path, example name, case) for every place apply_examples puts a case."""
    for method, cases in EXAMPLES["methods"].items():
        for index, case in enumerate(cases):
            yield f"/{method}", case["name"], case
            yield "/", method if index == 0 else f"{method}.{case['name']}", case
    for case in EXAMPLES["root_only"]:
        yield "/", f"envelope.{case['name']}", case


PLACEMENTS = list(_placements())


def test_the_examples_are_the_recorded_round_trips_as_chosen() -> None:
    assert spec_examples.main(["--check"]) == 0
    chosen = {method: tuple(case["name"] for case in cases) for method, cases in EXAMPLES["methods"].items()}
    assert chosen == spec_examples.CHOSEN


def test_every_method_shows_a_result_first_and_every_cause_it_answers() -> None:
    for method, cases in EXAMPLES["methods"].items():
        assert "result" in cases[0]["response"], method
    causes = {
        case["response"]["error"]["cause"]["name"]
        for cases in [*EXAMPLES["methods"].values(), EXAMPLES["root_only"]]
        for case in cases
        if "error" in case["response"]
    }
    assert causes == {
        "UNKNOWN_BLOCK", "NOT_SYNCED_YET", "UNKNOWN_ACCOUNT", "INTERNAL_ERROR", "PARSE_ERROR", "METHOD_NOT_FOUND",
        "CONTRACT_EXECUTION_ERROR",
    }  # fmt: skip


@pytest.mark.parametrize(("path", "name", "case"), PLACEMENTS, ids=[f"{p} {n}" for p, n, _ in PLACEMENTS])
def test_each_example_stands_where_it_belongs(path: str, name: str, case: dict[str, Any]) -> None:
    operation = SPEC["paths"][path]["post"]
    answers = operation["responses"][str(case["status"])]["content"][JSON]["examples"]
    assert _resolve(answers[name]) == case["response"]
    assert answers[name]["summary"] == case["summary"]
    requests = operation["requestBody"]["content"][JSON].get("examples", {})
    if "error" in case["response"]:  # an error is shown by its answer alone (tools.spec_examples)
        assert name not in requests
    else:
        assert _resolve(requests[name]) == case["request"]


def test_every_request_example_is_one_the_sample_chain_answers_with_a_result() -> None:
    """A fuzzer replays the request examples and holds the server to accepting them: an error
    case (`{"block_id": 7}`, a skipped height, answered 422) shows only as a response."""
    for path, item in SPEC["paths"].items():
        requests = item["post"].get("requestBody", {}).get("content", {}).get(JSON, {}).get("examples", {})
        for name, example in requests.items():
            answers = [case for where, placed, case in PLACEMENTS if (where, placed) == (path, name)]
            assert len(answers) == 1 and answers[0]["request"] == _resolve(example), (path, name)
            assert answers[0]["status"] == 200 and "result" in answers[0]["response"], (path, name)
    shown = [case for _, _, case in PLACEMENTS if "error" in case["response"]]
    assert any(case["status"] == 422 for case in shown)  # still shown, as an answer


def test_the_spec_has_no_example_but_these() -> None:
    placed = {(path, name) for path, name, _ in PLACEMENTS}
    found: set[tuple[str, str]] = set()
    for path, item in SPEC["paths"].items():
        operation = item["post"]
        found.update((path, name) for name in operation["requestBody"]["content"][JSON].get("examples", {}))
        for response in operation["responses"].values():
            found.update((path, name) for name in response.get("content", {}).get(JSON, {}).get("examples", {}))
    assert found == placed
    referenced = json.dumps(SPEC["paths"])
    for name in SPEC["components"]["examples"]:
        assert f'"#/components/examples/{name}"' in referenced, f"unused example {name}"


def _validator(schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    return validator(schema["$ref"].rpartition("/")[2])


@pytest.mark.parametrize(("path", "name", "case"), PLACEMENTS, ids=[f"{p} {n}" for p, n, _ in PLACEMENTS])
def test_each_example_is_valid_against_its_schema(path: str, name: str, case: dict[str, Any]) -> None:
    operation = SPEC["paths"][path]["post"]
    answer_schema = operation["responses"][str(case["status"])]["content"][JSON]["schema"]
    _validator(answer_schema).validate(case["response"])
    request_schema = operation["requestBody"]["content"][JSON]["schema"]
    errors = list(_validator(request_schema).iter_errors(case["request"]))
    assert (errors != []) == (case["status"] == 400), errors  # only the refused requests are invalid


def test_an_example_of_an_undocumented_status_is_refused() -> None:
    examples = copy.deepcopy(EXAMPLES)
    examples["methods"]["client_config"][0]["status"] = 422  # client_config documents no 422
    with pytest.raises(ExampleMisfit, match="POST /client_config documents no HTTP 422"):
        apply_examples(copy.deepcopy(SPEC), examples)

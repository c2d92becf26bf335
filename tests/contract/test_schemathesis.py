"""Contract test: the schemathesis CLI against the real server, for every operation of the spec.

Three passes of `schemathesis run spec/openapi.json` as subprocesses over HTTP against
`nearrpc serve` on 127.0.0.1 (the suite's server over the sample store, tests/conftest.py),
each with a fixed seed and no example database, so a run is reproducible, and each bounded by
its number of cases (`--max-examples` per operation), never by seconds: on a loaded machine a
pass takes longer and still checks every case (a 600 s cap once failed a pass of 5,798 cases
with no failure). Each pass is a few tests, each one schemathesis run over a group of the spec's
operations (STEERED_GROUPS, UNSTEERED_GROUPS); together they cover every operation. These are the `deep` tier's
(`./check --all`):

* the steered pass: the configuration tests/contract/schemathesis.toml and the hooks
  tests/contract/hooks.py, which steer cases towards the stored blocks and accounts, with many
  fuzzing examples, against the SQLite server; the hooks' own check sends every request again to
  a twin server over the same chain in PostgreSQL and requires the same answer, so every check
  holds for both backends while each case is drawn once (drawing them is most of a pass's time);
* the plain pass: the command anyone can run from a checkout, with no hooks (`--checks all
  --mode all --phases examples,coverage,fuzzing`) and only the repository's schemathesis.toml,
  which schemathesis reads by itself there and which states the one thing JSON Schema cannot
  (nearcore's 422 for a valid height below the head that holds no block); it holds the spec to
  being exact about what the server accepts. Its coverage phase runs in the bare pass only (the
  same cases, held to every default check there);
* the bare pass: the same command from an empty folder, with no configuration at all.

The per-operation summaries read from the NDJSON reports are printed at the end of the pytest
output (tests/conftest.py, `pytest_terminal_summary`), pass or fail.

To run them by hand against a server on port 3030 (from the repository root; `python
tests/contract/launcher.py` in place of `.venv/bin/schemathesis` takes the same arguments and
builds the CryptoHash strategy once instead of at every use):

    SCHEMATHESIS_HOOKS=tests/contract/hooks.py .venv/bin/schemathesis \
        --config-file tests/contract/schemathesis.toml run spec/openapi.json \
        --url http://127.0.0.1:3030 --seed 20250602 --generation-database none -n 500
    .venv/bin/schemathesis run spec/openapi.json --url http://127.0.0.1:3030 \
        --checks all --mode all --phases examples,coverage,fuzzing --seed 2
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from nearrpc.sample import sample_chain
from tests.contract.ndjson_summary import RunSummary, read_ndjson, render
from tests.support.backends import store_on
from tests.support.http_stub import StubHandler, serving_stub
from tests.support.live_server import LiveServer, running_server
from tests.support.sample_facts import sample_facts

pytestmark = pytest.mark.deep  # fuzzing passes: ./check --all runs them

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SPEC = REPO / "spec" / "openapi.json"
CONFIG = HERE / "schemathesis.toml"
ROOT_CONFIG = REPO / "schemathesis.toml"  # what a plain run from the repository root reads
HOOKS = HERE / "hooks.py"

SEED = 20250602
# fuzzing cases per operation; the coverage phase adds its own on top (1,675 on POST /). 1000 made
# the steered pass alone ~460 s of the suite's ~1,650 worker-seconds (CI, 2026-11-26)
MAX_EXAMPLES = 500
MIN_FUZZING_CASES = 200
HEIGHT_MARGIN = 5  # heights folded into [genesis, head + margin]: stored, skipped and future ones

# The variables hooks.py reads (it runs inside the CLI process and imports nothing from here).
KNOWN_HASHES_ENV = "CONTRACT_KNOWN_BLOCK_HASHES"
KNOWN_ACCOUNTS_ENV = "CONTRACT_KNOWN_ACCOUNTS"
HEIGHT_RANGE_ENV = "CONTRACT_HEIGHT_RANGE"
TWIN_URL_ENV = "CONTRACT_TWIN_URL"


def schemathesis_command() -> list[str]:
    """The schemathesis CLI, through the launcher that gives Hypothesis's strategy cache room for
    the CryptoHash pattern (launcher.py): same arguments, same cases, the plain pass in about
    half the time."""
    return [sys.executable, str(HERE / "launcher.py")]


def plain_environment() -> dict[str, str]:
    """This environment without any SCHEMATHESIS_* setting (hooks, config) that could leak in."""
    return {key: value for key, value in os.environ.items() if not key.startswith("SCHEMATHESIS_")}


def hooks_environment() -> dict[str, str]:
    facts = sample_facts()
    env = plain_environment()
    env["SCHEMATHESIS_HOOKS"] = str(HOOKS)
    env[KNOWN_HASHES_ENV] = ",".join(block.hash for block in sample_chain().blocks)
    env[KNOWN_ACCOUNTS_ENV] = ",".join(facts.all_accounts)
    env[HEIGHT_RANGE_ENV] = f"{facts.genesis_height}-{facts.head_height + HEIGHT_MARGIN}"
    return env


def spec_operations() -> set[str]:
    spec = json.loads(SPEC.read_text(encoding="utf-8"))
    return {f"{method.upper()} {path}" for path, item in spec["paths"].items() for method in item}


def example_caps(config: Path) -> dict[str, int]:
    """Operations whose example count the configuration caps below the pass's (`POST <path>`: cap)."""
    caps: dict[str, int] = {}
    for entry in tomllib.loads(config.read_text(encoding="utf-8")).get("operations", []):
        cap = entry.get("generation", {}).get("max-examples")
        paths = entry.get("include-path", [])
        for path in [paths] if isinstance(paths, str) else paths:
            if cap is not None:
                caps[f"POST {path}"] = cap
    return caps


def inputless_operations() -> set[str]:
    """Operations without a body or parameters (GET /status): one request is all there is to send."""
    spec = json.loads(SPEC.read_text(encoding="utf-8"))
    return {
        f"{method.upper()} {path}"
        for path, item in spec["paths"].items()
        for method, operation in item.items()
        if "requestBody" not in operation and not operation.get("parameters")
    }


def run_and_check(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    operations: tuple[str, ...],
    *,
    options: list[str],
    env: dict[str, str],
    seed: int,
    max_examples: int,
    min_fuzzing_cases: int,
) -> RunSummary:
    """Run one pass over `operations`, leave its summary for the terminal, and hold it to
    finding nothing, with every operation drawn as the pass asks."""
    reports = tmp_path / "reports"
    command = [
        *schemathesis_command(), *options,
        *(option for operation in operations for option in ("--include-name", operation)),
        "--seed", str(seed),
        "--generation-database", "none",
        "--max-examples", str(max_examples),
        "--report", "junit,ndjson",
        "--report-dir", str(reports),
        "--no-color",
    ]  # fmt: skip
    started = time.monotonic()
    run = subprocess.run(
        command,
        cwd=tmp_path,  # nothing the CLI might write lands in the repository
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.monotonic() - started
    (tmp_path / "schemathesis.out").write_text(run.stdout + run.stderr, encoding="utf-8")

    ndjson = sorted(reports.glob("*.ndjson"))
    junit = sorted(reports.glob("*.xml"))
    header = (
        f"schemathesis exit {run.returncode}, wall time {wall:.1f} s, seed {seed}, "
        f"max examples {max_examples}; reports in {reports}"
    )
    if not ndjson:
        request.node.user_properties.append(("terminal_summary", f"{header}\nno NDJSON report was written"))
        pytest.fail(f"schemathesis wrote no NDJSON report (exit {run.returncode}):\n{run.stdout[-5000:]}{run.stderr}")
    summary = read_ndjson(ndjson[0])
    request.node.user_properties.append(("terminal_summary", "\n".join([header, *render(summary)])))

    assert junit, "schemathesis wrote no JUnit report"
    assert summary.failures == 0 and not summary.errors, run.stdout[-20000:]
    assert run.returncode == 0, run.stdout[-20000:] + run.stderr
    assert set(summary.operations) == set(operations)
    config = options[options.index("--config-file") + 1] if "--config-file" in options else None
    caps = example_caps(Path(config)) if config else {}
    phases = options[options.index("--phases") + 1] if "--phases" in options else "coverage"
    for operation in operations:
        drawn = summary.operations[operation]
        if operation in inputless_operations():
            assert drawn.cases >= 1, operation
            continue
        # an operation the configuration caps is held to its cap (rpc.discover: one answer)
        least = min(min_fuzzing_cases, caps.get(operation, min_fuzzing_cases))
        assert drawn.by_phase["fuzzing"] >= least, operation
        assert drawn.by_phase["coverage"] > 0 or "coverage" not in phases, operation
        assert drawn.by_mode["positive"] > 0 and drawn.by_mode["negative"] > 0, operation
    return summary


@pytest.fixture(scope="session")
def twin(
    sample_store: Path, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    """A server over the sample chain copied into PostgreSQL, beside the suite's SQLite one; one
    per worker for all the steered pass's groups (a module-scoped one was started again each
    time the long-first order moved a worker between modules)."""
    log = tmp_path_factory.mktemp("twin") / "twin.log"
    with running_server(store_on("postgresql", sample_store, request), log) as live:
        yield live


OPERATIONS = tuple(sorted(spec_operations()))

# Seconds one run of an operation took where it stands out (the steered pass, from `pytest
# --durations` on a 2-core machine, 2026-11-26); the rest took about `default`. They only balance
# the groups and hand the longest out first.
STEERED_SECONDS = {
    "POST /": 70, "POST /EXPERIMENTAL_view_access_key": 45, "POST /EXPERIMENTAL_view_account": 33,
    "POST /EXPERIMENTAL_changes": 33, "POST /changes": 27, "POST /query": 27,
    "POST /EXPERIMENTAL_call_function": 26, "POST /EXPERIMENTAL_view_state": 19, "POST /EXPERIMENTAL_tx_status": 19,
    "POST /EXPERIMENTAL_view_access_key_list": 19, "POST /EXPERIMENTAL_view_code": 18, "POST /tx": 17, "default": 9,
}  # fmt: skip
UNSTEERED_SECONDS = {
    "POST /": 60, "POST /query": 17, "POST /changes": 12, "POST /EXPERIMENTAL_changes": 12, "default": 5,
}  # fmt: skip
STEERED_GROUPS = 3


def balanced_groups(operations: tuple[str, ...], seconds: Mapping[str, float], count: int) -> list[tuple[str, ...]]:
    """`operations` in at most `count` groups of about equal time: each, longest first, joins the
    group with the least so far."""
    groups: list[list[str]] = [[] for _ in range(count)]
    loads = [0.0] * count
    for operation in sorted(operations, key=lambda name: (-seconds.get(name, seconds["default"]), name)):
        lightest = loads.index(min(loads))
        groups[lightest].append(operation)
        loads[lightest] += seconds.get(operation, seconds["default"])
    return [tuple(sorted(group)) for group in groups if group]


# A pass runs as a few schemathesis runs, each over a group of operations (`--include-name`,
# repeated), so xdist spreads a pass over its workers, and each run builds its strategies (the
# CryptoHash pattern's alone take seconds, launcher.py) and starts once for many operations. One
# run per operation had cost 84 runs' starts and builds: the bare pass took 291 s of the suite's
# time so, and 95 s as one run. Same seed, example count and checks per operation. A run draws
# each operation's coverage and fuzzing case counts as a run of the whole spec does, but not byte
# for byte the same cases (the positive/negative mix moves a little with the group).
def _groups_as_params(groups: list[tuple[str, ...]], seconds: Mapping[str, float]) -> list[Any]:
    """Groups as parameters, each marked `long` by its minutes, named by its first operation."""
    return [
        pytest.param(
            group,
            marks=pytest.mark.long(sum(seconds.get(name, seconds["default"]) for name in group) / 60),
            id=f"{group[0].replace(' ', '')}+{len(group) - 1}",  # "POST/block+8": POST /block and 8 more
        )
        for group in groups
    ]


@pytest.mark.live
@pytest.mark.parametrize("operations", _groups_as_params(balanced_groups(OPERATIONS, STEERED_SECONDS, STEERED_GROUPS),
                                                         STEERED_SECONDS))
@pytest.mark.parametrize("server", ["sqlite"], indirect=True)  # the twin is the PostgreSQL one
def test_schemathesis_finds_no_failure(
    server: LiveServer, twin: LiveServer, operations: tuple[str, ...], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The steered pass: this project's configuration and hooks, many examples, on both backends."""
    options = ["--config-file", str(CONFIG), "run", str(SPEC), "--url", server.url, "--mode", "all"]
    summary = run_and_check(
        request,
        tmp_path,
        operations,
        options=options,
        env={**hooks_environment(), TWIN_URL_ENV: twin.url},
        seed=SEED,
        max_examples=MAX_EXAMPLES,
        min_fuzzing_cases=MIN_FUZZING_CASES,
    )
    for operation in operations:
        checked = summary.operations[operation]
        assert checked.checked["same_answer_from_the_twin"] == checked.cases, operation


@dataclass(frozen=True)
class UnsteeredPass:
    """A pass with no hooks: schemathesis' own checks, modes and phases (`--checks all --mode all
    --phases examples,coverage,fuzzing`), which only its configuration file sets apart."""

    seed: int
    max_examples: int  # fuzzing cases per operation; the coverage phase sets its own
    min_fuzzing_cases: int
    config: Path | None  # None: no schemathesis.toml at all, and the CLI runs in an empty folder
    phases: str = "examples,coverage,fuzzing"


UNSTEERED_PASSES = {
    # The plain pass: the command anyone can run from a checkout, with schemathesis' own default
    # example count and a seed of the ones issue 13 names. It runs from the checkout, so it reads
    # the root schemathesis.toml, as anyone's run there does (passed explicitly here, so the run
    # writes nothing into the checkout).
    # Its coverage phase is left to the bare pass: that phase draws the same cases whatever the
    # seed (the two passes' case counts differed by their fuzzing examples alone, on every
    # operation) and the bare pass holds them to every default, a superset of what the root
    # configuration accepts; run here too it was a third of the pass (POST /: 1,675 of 2,197).
    "plain": UnsteeredPass(seed=2, max_examples=100, min_fuzzing_cases=50, config=ROOT_CONFIG,
                           phases="examples,fuzzing"),
    # The bare pass: `schemathesis run spec/openapi.json --checks all --mode all --phases
    # examples,coverage,fuzzing` from an empty folder: no schemathesis.toml, no hooks, so a
    # schema-valid request answered 4xx (ST202) fails it: what any fuzzer's defaults hold the
    # spec to. The spec's request examples are ones the sample chain answers with a result (an
    # error case is shown only as its answer); `{"block_id": 7}`, shown as a request, made three
    # such failures.
    "bare": UnsteeredPass(seed=424242, max_examples=10, min_fuzzing_cases=10, config=None),
}
# The operations that carry `tx` and `EXPERIMENTAL_tx_status`: any schema-valid hash the store
# does not hold is nearcore's TIMEOUT_ERROR, HTTP 408 (documented, `wire-http-408`), which
# schemathesis' default `positive_data_acceptance` calls a rejection, as it ignores documented
# statuses. The bare pass, which has no configuration by definition, leaves that one check out on
# them (every other check still runs), and the plain pass, whose root schemathesis.toml accepts
# 408, runs their coverage phase in its place, so those cases are still held to acceptance.
# The same holds for the `sandbox_*` methods, which this read-only server answers METHOD_NOT_FOUND
# (HTTP 400, documented on their paths), as a node built without nearcore's sandbox does.
TIMEOUT_OPERATIONS = (
    "POST /", "POST /EXPERIMENTAL_tx_status", "POST /sandbox_fast_forward", "POST /sandbox_patch_state",
    "POST /sandbox_revert", "POST /sandbox_snapshot", "POST /tx",
)  # fmt: skip
# Each unsteered pass in two runs: the operations that carry a transaction status, and the rest.
UNSTEERED_GROUPS = [tuple(name for name in OPERATIONS if name not in TIMEOUT_OPERATIONS), TIMEOUT_OPERATIONS]


@pytest.mark.live
@pytest.mark.parametrize("operations", _groups_as_params(UNSTEERED_GROUPS, UNSTEERED_SECONDS))
@pytest.mark.parametrize("name", list(UNSTEERED_PASSES))
@pytest.mark.parametrize("server", ["sqlite"], indirect=True)  # the spec's passes: one backend is enough
def test_unsteered_schemathesis_finds_no_failure(
    server: LiveServer, name: str, operations: tuple[str, ...], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The plain and the bare pass (UNSTEERED_PASSES): the spec alone must be exact about what
    the server accepts."""
    settings = UNSTEERED_PASSES[name]
    assert not any(tmp_path.iterdir())  # the CLI's folder: nothing schemathesis would read
    config = [] if settings.config is None else ["--config-file", str(settings.config)]
    phases, excluded = settings.phases, []
    if operations == TIMEOUT_OPERATIONS:
        if settings.config is None:
            excluded = ["--exclude-checks", "positive_data_acceptance"]
        else:
            phases = "examples,coverage,fuzzing"
    options = [
        *config, "run", str(SPEC), "--url", server.url,
        "--checks", "all", *excluded, "--mode", "all", "--phases", phases,
    ]  # fmt: skip
    run_and_check(
        request,
        tmp_path,
        operations,
        options=options,
        env=plain_environment(),
        seed=settings.seed,
        max_examples=settings.max_examples,
        min_fuzzing_cases=settings.min_fuzzing_cases,
    )


class _OtherAnswers(StubHandler):
    """A twin that disagrees: every request gets a well-formed answer of another chain."""

    def do_POST(self) -> None:
        self.body()
        self.answer(200, b'{"jsonrpc":"2.0","result":{"chain_id":"another"},"id":"dontcare"}')


@pytest.mark.live
@pytest.mark.parametrize("server", ["sqlite"], indirect=True)
def test_the_steered_pass_fails_when_the_twin_answers_differently(server: LiveServer, tmp_path: Path) -> None:
    """The twin check is no formality: a twin with other answers fails the pass, named."""
    command = [
        *schemathesis_command(), "--config-file", str(CONFIG), "run", str(SPEC), "--url", server.url,
        "--include-path", "/genesis_config", "--phases", "fuzzing", "--max-examples", "3",
        "--seed", str(SEED), "--generation-database", "none", "--no-color",
    ]  # fmt: skip
    with serving_stub(_OtherAnswers) as twin_url:
        run = subprocess.run(
            command,
            cwd=tmp_path,
            env={**hooks_environment(), TWIN_URL_ENV: twin_url},
            capture_output=True,
            text=True,
            check=False,
        )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "the twin backend answers differently" in run.stdout, run.stdout

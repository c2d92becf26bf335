"""docs/CLIENT_TESTING.md's client test, run as a client author runs it: in a fresh venv with
nearrpc installed from its wheel and pytest, which finds the plugin by its entry point."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from tests.distribution.venvs import run

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "CLIENT_TESTING.md"


def _pytest_pin() -> str:
    """The pytest this project tests with (the client brings their own; any recent one will do)."""
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    (pin,) = [requirement for requirement in extras["test"] if requirement.startswith("pytest==")]
    return str(pin)


def _client_tests() -> str:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.DOTALL)
    tests = [block for block in blocks if "def test_" in block]
    assert len(tests) == 1, "the doc shows one client test file"
    return str(tests[0])


@pytest.mark.long(0.5)  # builds the wheel and a venv
def test_the_documented_client_test_passes_in_a_fresh_venv(installed: Path, tmp_path: Path) -> None:
    run(installed / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check", _pytest_pin(),
        cwd=tmp_path)
    (tmp_path / "test_client.py").write_text(_client_tests(), encoding="utf-8")
    output = run(installed / "python", "-m", "pytest", "-p", "no:cacheprovider", "-v", "test_client.py",
                 cwd=tmp_path, timeout=300)
    collected = re.findall(r"^def (test_\w+)", _client_tests(), flags=re.MULTILINE)
    assert collected
    for name in collected:
        assert re.search(rf"test_client\.py::{name}\S* PASSED", output), (name, output)
    assert re.search(r"\b5 passed\b", output), output  # four tests, one of them for two references


def test_the_doc_installs_the_wheel_this_version_builds() -> None:
    from nearrpc.version import SERVICE_VERSION

    install = re.search(r"```sh\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.DOTALL)
    assert install is not None
    wheel = f"dist/nearrpc-{SERVICE_VERSION}-*.whl"  # tagged with the Python and platform (its C extension)
    assert f"pip install {wheel} pytest" in install.group(1)
    assert "pip wheel --no-deps --wheel-dir dist " in install.group(1)

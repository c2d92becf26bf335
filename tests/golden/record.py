"""Re-record the golden output of the generators, on purpose only:

    python -m tests.golden.record

Writes tests/golden/expected/ from tests/golden/fixture_openapi.json; review the diff before
committing it.
"""

from __future__ import annotations

from pathlib import Path

from tools.regenerate import render_generated, write

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "fixture_openapi.json"
EXPECTED = HERE / "expected"

if __name__ == "__main__":
    write(render_generated(FIXTURE), EXPECTED)
    print(f"recorded {EXPECTED}")

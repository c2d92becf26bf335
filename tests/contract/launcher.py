"""The schemathesis CLI with room in Hypothesis's strategy cache:

    python -m tests.contract.launcher run spec/openapi.json --url ...   # same arguments as `schemathesis`

Hypothesis keeps the strategies it builds in an LRU cache of 1,024 entries. The spec's exact
CryptoHash pattern (overlay `wire-crypto-hash-exact`) builds into about 4,200 sub-strategies,
which push the pattern's own entry out, so schemathesis built it again (1.5 to 1.8 s) every time
it met a hash: 77% of a plain run's CPU in a py-spy profile. With room for them, the builds
without an alphabet are built once (the plain pass's fuzzing phase: 111 s -> 42 s). The
coverage phase still builds it at each use: it passes a `characters()` alphabet, with which
Hypothesis does not cache the result at all (about 3 s a build; a size-independent limit).
Nothing else changes: the same strategies draw the same cases for the same seed.
"""

from __future__ import annotations

import sys
from typing import Final

from hypothesis.internal.cache import LRUReusedCache
from hypothesis.strategies._internal import utils as hypothesis_strategies

STRATEGY_CACHE_ENTRIES: Final = 16_384


def enlarge_strategy_cache() -> None:
    # A private name: a Hypothesis that renames it should stop the run, not quietly slow it down.
    if not isinstance(getattr(hypothesis_strategies, "_STRATEGY_CACHE", None), LRUReusedCache):
        raise SystemExit("launcher: this Hypothesis keeps no _STRATEGY_CACHE; update tests/contract/launcher.py")
    hypothesis_strategies._STRATEGY_CACHE = LRUReusedCache(STRATEGY_CACHE_ENTRIES)


def main() -> None:
    enlarge_strategy_cache()
    from schemathesis.cli import schemathesis  # the console script's entry point

    sys.argv[0] = "schemathesis"
    schemathesis()


if __name__ == "__main__":
    main()

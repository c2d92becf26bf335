"""The schemathesis CLI with room in Hypothesis's strategy cache:

    python -m tests.contract.launcher run spec/openapi.json --url ...   # same arguments as `schemathesis`

Hypothesis keeps the strategies it builds in an LRU cache of 1,024 entries. The spec's exact
CryptoHash pattern (overlay `wire-crypto-hash-exact`) builds into about 4,200 sub-strategies,
which push the pattern's own entry out, so schemathesis built it again (1.5 to 1.8 s) every time
it met a hash: 77% of a plain run's CPU in a py-spy profile. With room for them, the builds
without an alphabet are built once (the plain pass's fuzzing phase: 111 s -> 42 s). The
coverage phase still builds it at each use: it passes a `characters()` alphabet, with which
Hypothesis does not cache the result at all (about 3 s a build; a size-independent limit).
The launcher therefore also remembers `from_regex` results itself, keyed by the pattern, the
`fullmatch` flag and the alphabet. schemathesis builds a new `characters(...)` alphabet for
each use (25 builds of the same pattern and alphabet in one plain pass: 50 of its 73 s), so an
alphabet made by `characters` is keyed by its call as written (its repr: the function and its
arguments, which say all it draws); any other alphabet by its identity. And each `.filter()`
of a lazy strategy builds its base anew; the remembered strategy's base is built once and
shared. A strategy is an immutable description of how to draw, so handing out the same one
again draws exactly what a new build would. Nothing else changes: the same strategies draw the
same cases for the same seed.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable
from typing import Any, Final

import hypothesis.strategies
from hypothesis.internal.cache import LRUReusedCache
from hypothesis.strategies import SearchStrategy
from hypothesis.strategies._internal import utils as hypothesis_strategies
from hypothesis.strategies._internal.lazy import LazyStrategy

STRATEGY_CACHE_ENTRIES: Final = 16_384
_CHARACTERS: Final = inspect.unwrap(hypothesis.strategies.characters)  # what a characters() strategy calls


def _alphabet_key(alphabet: object) -> object:
    """What tells two alphabets apart: a `characters(...)` call as written, else the object."""
    if isinstance(alphabet, LazyStrategy) and alphabet.function is _CHARACTERS:
        return ("characters", repr(alphabet))
    return alphabet


def remember_regex_strategies() -> None:
    build: Callable[..., SearchStrategy[Any]] = hypothesis.strategies.from_regex
    built: dict[tuple[object, ...], SearchStrategy[Any]] = {}

    def from_regex(
        regex: str | bytes | re.Pattern[Any], *, fullmatch: bool = False, alphabet: object = None
    ) -> SearchStrategy[Any]:
        source = (regex.pattern, regex.flags) if isinstance(regex, re.Pattern) else regex
        # The dict holds the alphabet, so its identity cannot pass to another object meanwhile.
        key = (type(regex), source, fullmatch, _alphabet_key(alphabet))
        try:
            return built[key]
        except TypeError:  # an unhashable alphabet (a list of characters): build as usual
            return build(regex, fullmatch=fullmatch, alphabet=alphabet)
        except KeyError:
            first = build(regex, fullmatch=fullmatch, alphabet=alphabet)
            if not isinstance(first, LazyStrategy):
                built[key] = first
                return first
            # `.filter()` on a lazy strategy makes a new one that calls its function again: one
            # more build per filter. This one's function hands out `first`'s build, made once,
            # when first needed (so an invalid pattern still fails at validation, as before).
            strategy = built[key] = LazyStrategy(
                lambda *_args, **_kwargs: first.wrapped_strategy,
                (regex,),
                {"fullmatch": fullmatch, "alphabet": alphabet},
                force_repr=repr(first),
            )
            return strategy

    hypothesis.strategies.from_regex = from_regex


def enlarge_strategy_cache() -> None:
    # A private name: a Hypothesis that renames it should stop the run, not quietly slow it down.
    if not isinstance(getattr(hypothesis_strategies, "_STRATEGY_CACHE", None), LRUReusedCache):
        raise SystemExit("launcher: this Hypothesis keeps no _STRATEGY_CACHE; update tests/contract/launcher.py")
    hypothesis_strategies._STRATEGY_CACHE = LRUReusedCache(STRATEGY_CACHE_ENTRIES)


def main() -> None:
    enlarge_strategy_cache()
    remember_regex_strategies()
    from schemathesis.cli import schemathesis  # the console script's entry point

    sys.argv[0] = "schemathesis"
    schemathesis()


if __name__ == "__main__":
    main()

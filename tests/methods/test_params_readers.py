"""Every method whose params the spec describes is read by exactly one family of the params room
(nearrpc.methods.params), and no family reads a method the spec lacks; the others ignore params."""

from __future__ import annotations

from nearrpc.generated.methods import METHODS
from nearrpc.methods.params import blocks, changes, chunks, query, transactions, validators
from nearrpc.methods.params.parse import READERS, normalise

FAMILIES = (blocks, query, changes, transactions, chunks, validators)


def test_every_method_that_takes_params_has_one_reader() -> None:
    takes_params = {name for name, method in METHODS.items() if method.params_members or method.accepts_positional}
    assert set(READERS) == takes_params
    claimed = [name for family in FAMILIES for name in family.READERS]
    assert sorted(claimed) == sorted(set(claimed))


def test_a_method_without_params_ignores_what_it_is_sent() -> None:
    for name, method in METHODS.items():
        if name not in READERS:
            assert normalise(method, {"finality": "final", "anything": [1]}) is None, name

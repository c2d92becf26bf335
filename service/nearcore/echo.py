"""How much of a request's own text an answer or a log line repeats.

nearcore repeats a refused value whole (`invalid value: "<account id>"`, the method name in
METHOD_NOT_FOUND's `info` and `data`), so a 5 MB value became a 10 MB answer. Here a value
longer than ECHO_CHARS is cut to its first ECHO_CHARS characters and says how long it was
(spec/DEVIATIONS.md); every value that can be valid (hashes, keys, account ids) is shorter.
"""

from __future__ import annotations

from typing import Final

ECHO_CHARS: Final = 128
# a whole message: room for a few cut values and nearcore's words around them
MESSAGE_CHARS: Final = 1024


def shown(text: str, limit: int = ECHO_CHARS) -> str:
    """`text` whole when short, else its head and its length."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text)} characters)"

"""Keccak-256 and Keccak-512 (the original padding, 0x01, not SHA-3's 0x06), which nearcore's
`keccak256` / `keccak512` host functions return (logic.rs, via the sha3 crate's Keccak types)
and the standard library does not offer: pycryptodome's, in C. A hash in Python took about
100 µs a call, holding the GIL: eight views hashing in a loop starved every other request."""

from __future__ import annotations

from Crypto.Hash import keccak as _keccak


def keccak(data: bytes, digest_bytes: int) -> bytes:
    return _keccak.new(data=data, digest_bytes=digest_bytes).digest()

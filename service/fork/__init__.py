"""A read-through fork of a live node (`nearrpc serve --upstream URL`).

A request the store cannot answer is a miss: the fork asks the upstream, has the store validate
and keep the answer, and serves it; the next identical request is answered from the store alone.
`ForkReader` is a `ServingReader` over the store's own, so the methods answer from a fork exactly
as from any store; `start.prepare_store` readies the store before the server starts.

    upstream.py  the node: bounded concurrency and rate, retries, outcomes, a secret-free address
    marks.py     the names of what was fetched where the store's rows cannot show it
    writer.py    the store's writer on a thread of its own: one batch per fetched answer
    reader.py    the read-through reader (`ForkReader`), composed of the lookups by concern:
    misses.py      single flight per missing key, a deadline per miss, the chain check
    blocks.py      blocks, heads and epochs
    accounts.py    accounts, access keys, contract code and contract state
    records.py     chunks, transactions, receipts and validators
    start.py     before serving: the store created from the upstream, or checked against it
    pinned.py    a sandboxed fork (`--sandbox`): the sandbox's state reads fetched at the pin
"""

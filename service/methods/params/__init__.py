"""Reading a request's params as nearcore's serde reads them, one module per method family.

`parse` is the entry (`typed_params`: params into the generated model); the families (`blocks`,
`query`, `changes`, `transactions`, `chunks`, `validators`) each say every form their requests
may take and every refusal's words; they build on `readers` (block references, block ids,
hashes, account ids, public keys, serde's words); `branches` picks the generated model's branch
and words its refusals. Siblings import only downward; nothing here knows the handlers or HTTP.
"""

from nearrpc.methods.params.parse import typed_params

__all__ = ["typed_params"]

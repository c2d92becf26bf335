"""nearcore's runtime for the sandbox, pure over `model.StateView`: see `model` for the contract
between this room and the chain writer above it."""

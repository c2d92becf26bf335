"""Facts about nearcore shared by the read path and the write path: account id syntax, the
genesis config's field order and defaults, and the shapes of the views nearcore serves."""

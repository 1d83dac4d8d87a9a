"""Where the per-document and per-question stages run: `engine: local` (this process, today's code paths)
or `engine: ray` (tasks and actors on a Ray cluster, `ray.address`). Ray is imported only by
`ray_engine` and `ray_pool`, which only the `ray` engine loads (Ray is the optional extra `.[ray]`)."""

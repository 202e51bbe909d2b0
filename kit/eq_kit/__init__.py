"""eq_kit: the I/O pieces the edges (webhook, operator, and `kubectl eq`) share, so that none
repeats them.

- `caching`: one list-then-watch cache per kind (client-go's reflector), feeding a sink, and
  the kinds the product reads (`QUOTAS`, `PODS`, `NODES`).
- `kube`: raw JSON requests to the API server (`Http`), a LIST a page at a time (`pages`),
  what a failed request raises (`ApiError`, `TRANSPORT_ERRORS`), the merge-patch type.
- `decoding`: LIST pages and watch events decoded whole, or into just the fields a schema
  names (`Decoding`).
- `backoff`: the one backoff (`Backoff`), for anything tried again after a failure.
- `throttling`: the client-side token bucket (its waiters served by rank) and the rate-limited
  work queue.
- `workers`: workers over work queues (`Pool`), taking a token of a budget before a key.
- `probes`: /healthz, /readyz and /metrics.

No rules, no engine: the edges import it, it imports none of them nor the engine.
"""

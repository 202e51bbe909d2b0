"""eq_operator: the Kopf operator that keeps quota numbers and pod labels true, and reclaims.

A thin edge around `eq_engine.QuotaEngine`: the kit's list-then-watch caches feed the engine with
ElasticQuota, Pod and Node objects (`observing.py`, `view.py`); Kopf is only the process's
runtime (start-up, clean-up, signals). A loop recomputes in batches and writes only what changed
(`operating.py`, `writing.py`); the leader lifts the gates of the pods quota admits
(`admitting.py`) and evicts what the engine's reclaim plans name (`reclaiming.py`). Every
request but the caches' LISTs and WATCHes goes through one module (`sending.py`: its rank for
the write budget, the token, the request, and its outcome as a value). No finalizers, no Kopf
state on anybody's objects. Never imports the webhook or the CLI.
"""

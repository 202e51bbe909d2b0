"""The engine's memory follows the pods it holds: the table that shares request vectors among
alike pods lets go of the shapes of pods long gone. (The parser's caches are `lru_cache`s with
a size.)"""

from __future__ import annotations

from eq_engine import EngineConfig, QuotaEngine, parse_pod

from tests.manifests import load, node, pod, quota


def test_request_shapes_of_pods_long_gone_are_not_kept():
    engine = QuotaEngine(EngineConfig())
    load(engine, quota("team", namespace="apps", max={"cpu": 1000}), node("n1", cpu="1000"))
    engine.recompute()
    for i in range(5_000):  # each pod its own request: a new shape, then gone
        parsed = parse_pod(pod(f"p{i}", cpu=f"{i + 1}m"))
        engine.set_pod(parsed)
        engine.remove_pod(parsed.key)
    assert len(engine._store._vectors) <= 1_025  # private: no public view of the table is needed

"""Benchmarks of the engine, the operator, the webhook and the emulated API server. Each is a
module run from the repository's root, as `python -m benchmarks.scale`, with the project
installed (`pip install -e .`): `eq_*`, `tests` and `benchmarks` then import as they are."""

"""eq_kit: the small pieces both edges (webhook and operator) use, so neither repeats them.

HTTP probes and metrics, and reading raw API responses. No rules, no engine: the edges import
it, it imports neither.
"""

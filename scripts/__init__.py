"""Tools for developers, run from the repository's root: `python scripts/helm.py` (it imports
nothing of the project), and as modules the ones that do (`python -m scripts.dashboard_preview`),
with the project installed (`pip install -e .`)."""

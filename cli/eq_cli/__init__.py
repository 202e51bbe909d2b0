"""eq_cli: the `elastic-quota` command. Reads files, calls the engine, prints; no rules here."""

import os

# Before the engine imports numpy: its arrays hold a few thousand numbers, which OpenBLAS's
# worker threads (one per core) never share, but they start with numpy and spin for a while
# (0.1 s of CPU in every process's start). A value the user set is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

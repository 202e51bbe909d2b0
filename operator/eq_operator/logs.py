"""The operator's logger: one place to name it."""

import logging

logger = logging.getLogger("eq_operator")

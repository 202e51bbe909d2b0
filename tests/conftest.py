import json
import os

from hypothesis import settings

# CI runs more examples than a developer's quick run, and the same ones every time, so that a
# red build is reproducible; developers' runs explore new examples.
settings.register_profile("ci", max_examples=300, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


def pytest_sessionfinish(session: object, exitstatus: int) -> None:
    """With ELASTIC_QUOTA_TESTS_ACCESS_LOG set, write down what the product asked of the API."""
    target = os.environ.get("ELASTIC_QUOTA_TESTS_ACCESS_LOG")
    if target:
        from tests.kube import ACCESS

        with open(target, "w") as out:
            json.dump(sorted(ACCESS), out)

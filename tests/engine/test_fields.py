"""`raw.RawMeta` names the keys of `metadata` the full validation's models read, with the
caches' `resourceVersion`: the fast paths and the group reader's digest (`READ_METADATA`) read
what it names, so a key the models read and it lacks would go unseen by them."""

from __future__ import annotations

from eq_engine.reading.fields import READ_METADATA
from eq_engine.reading.parsing import _Metadata
from eq_engine.reading.raw import RawMeta


def test_the_metadata_read_is_what_the_models_read() -> None:
    models = {field.alias or name for name, field in _Metadata.model_fields.items()}
    assert set(RawMeta.__annotations__) == models | {"resourceVersion"}
    assert set(READ_METADATA) == models - {"annotations"}

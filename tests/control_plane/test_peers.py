"""The peers the benchmarks run beside the product, as their wrapper modules pin them
(tools/peers/*/go.mod: a `tool` block, or one `tool` line), and the cache they are built into."""

from __future__ import annotations

from pathlib import Path

from scripts.control_plane.peers import BuiltPeer, peer


def test_each_peer_is_read_from_its_wrapper_module() -> None:
    kueue, koordinator = peer("kueue"), peer("koordinator")
    assert (kueue.module, kueue.version, kueue.commands) == (
        "sigs.k8s.io/kueue",
        "v0.17.0",
        ("minimalkueue", "runner"),
    )
    assert (koordinator.module, koordinator.version, koordinator.commands) == (
        "github.com/koordinator-sh/koordinator",
        "v1.8.0",
        ("koord-scheduler",),
    )
    assert kueue.key == "kueue-v0.17.0"


def test_a_build_is_complete_only_with_its_record_and_every_command(tmp_path: Path) -> None:
    built = BuiltPeer(peer("kueue"), tmp_path)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "runner").write_text("")
    (tmp_path / "built.json").write_text("{}")
    assert not built.complete()  # minimalkueue is missing
    (tmp_path / "bin" / "minimalkueue").write_text("")
    assert built.complete()

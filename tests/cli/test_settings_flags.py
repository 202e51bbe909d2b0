"""Every setting is one flag, generated from its settings field: in --help once, with the
field's default and its environment variable, and that variable reaches the field.

The commands and the settings they build: `elastic-quota operator` (OperatorSettings, its
ReclaimSettings and EngineConfig), `elastic-quota webhook` (WebhookSettings and EngineConfig but
min scaling: it computes no runtime), `elastic-quota simulate` and `kubectl eq` (EngineConfig).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
from collections.abc import Callable, Mapping
from typing import Any, get_type_hints

import pytest
from eq_cli import flags, main, plugin
from eq_engine import EngineConfig, to_canonical
from eq_operator.settings import OperatorSettings, ReclaimSettings
from eq_webhook.settings import WebhookSettings

NOT_SETTINGS = {"--kubeconfig", "--log-level", "--log-format"}  # the process's, not a setting
REQUIRED = {"cert_file": "tls.crt", "key_file": "tls.key"}  # the webhook needs both


@dataclasses.dataclass(frozen=True)
class Command:
    argv: tuple[str, ...]
    settings: dict[type[Any], str]  # settings class -> where it sits in what `build` returns
    build: Callable[[argparse.Namespace], Any]
    parser: Callable[[], argparse.ArgumentParser] = main.parser
    left_out: frozenset[str] = frozenset()
    run: tuple[str, ...] = ()  # what the command needs beyond its flags to parse

    @property
    def name(self) -> str:
        return " ".join(self.argv) or "kubectl eq"

    def fields(self) -> list[tuple[type[Any], dataclasses.Field[Any]]]:
        return [
            (cls, field)
            for cls in self.settings
            for field in dataclasses.fields(cls)
            if not dataclasses.is_dataclass(get_type_hints(cls)[field.name])
            and field.name not in self.left_out
        ]

    def actions(self) -> list[argparse.Action]:
        parser = self.parser()
        if self.argv:
            (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
            parser = commands.choices[self.argv[0]]
        return parser._actions

    def parse(self, *args: str) -> Any:
        return self.build(self.parser().parse_args([*self.argv, *args, *self.run]))


COMMANDS = [
    Command(
        ("operator",),
        {OperatorSettings: "", ReclaimSettings: "reclaim", EngineConfig: "engine"},
        main.operator_settings,
    ),
    Command(
        ("webhook",),
        {WebhookSettings: "", EngineConfig: "engine"},
        main.webhook_settings,
        left_out=frozenset({"min_scaling", "reclaim_min_runtime", "reclaim_min_runtime_hard"}),
    ),
    Command(("simulate",), {EngineConfig: ""}, flags.engine_config, run=("-f", "objects.yaml")),
    Command((), {EngineConfig: ""}, flags.engine_config, parser=plugin.parser, run=("tree",)),
]
SETTINGS = [(c, cls, f) for c in COMMANDS for cls, f in c.fields()]


@pytest.fixture(autouse=True)
def no_variables(monkeypatch):
    """None of the developer's own ELASTIC_QUOTA_* variables."""
    for name in [n for n in os.environ if n.startswith(flags.ENV_PREFIX)]:
        monkeypatch.delenv(name)


def ids(case: Any) -> str:
    return case.name if isinstance(case, Command) else ""


def setting_ids(case: tuple[Command, type[Any], dataclasses.Field[Any]]) -> str:
    command, cls, field = case
    return f"{command.name}-{cls.__name__}.{field.name}"


def help_entries(command: Command, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """Each flag's entry in `--help`, run as a user runs it (one line each: a wide terminal)."""
    run = main.main if command.argv else plugin.main
    with pytest.raises(SystemExit) as exited:
        run([*command.argv, "--help"])
    assert exited.value.code == 0
    entries: dict[str, str] = {}
    flag = ""
    for line in capsys.readouterr().out.splitlines():
        started = re.match(r"  (--[a-z-]+)", line)
        if started:
            flag = started[1]
            entries[flag] = line
        elif flag and line.startswith("   "):
            entries[flag] += " " + line.strip()
        else:
            flag = ""
    return entries


def flags_of(command: Command, cls: type[Any], name: str) -> list[str]:
    dest = f"{cls.__name__}.{name}"
    return [s for a in command.actions() if a.dest == dest for s in a.option_strings]


@pytest.mark.parametrize("command", COMMANDS, ids=ids)
def test_every_setting_is_one_flag_with_its_default_and_variable_in_help(
    command, capsys, monkeypatch
):
    monkeypatch.setenv("COLUMNS", "1000")
    entries = help_entries(command, capsys)
    documented = set()
    for cls, field in command.fields():
        names = flags_of(command, cls, field.name)
        (flag,) = [n for n in names if not n.startswith("--no-")]
        if get_type_hints(cls)[field.name] is bool:  # a pair: --dry-run[=BOOL], --no-dry-run
            assert names == [flag, "--no-" + flag.removeprefix("--")]
        entry = entries[flag]
        summary, _, shown = entry.partition(f" (env {flags.env_name(flag)}")
        assert summary.split(maxsplit=2)[-1].strip(), f"{flag}: no help (no docstring?)"
        default = expected_default(field)
        if default is None:
            assert shown == ")", entry
        else:
            assert shown == f"; default: {default})", entry
        documented.add(flag)
    settings_flags = {f for f, e in entries.items() if "(env " in e} - NOT_SETTINGS
    assert settings_flags == documented  # no flag but the fields', none written by hand twice


def expected_default(field: dataclasses.Field[Any]) -> str | None:
    if field.default_factory is not dataclasses.MISSING:
        value = field.default_factory()
    elif field.default is dataclasses.MISSING or field.default is None:
        return None
    else:
        value = field.default
    if isinstance(value, bool):
        return "true" if value else "false"
    return '""' if value in ("", (), {}, frozenset()) else str(value)


SAMPLES: dict[Any, tuple[str, Callable[[Any], Any]]] = {
    int: ("7", lambda default: 7),
    float: ("2.5", lambda default: 2.5),
    str: ("other", lambda default: "other"),
    bool: ("", lambda default: not default),  # the text is the opposite of the default
    frozenset[str]: ("web,ml", lambda default: frozenset({"ml", "web"})),
    tuple[str, ...]: ("web,ml", lambda default: ("ml", "web")),
    Mapping[str, int]: ("cpu=2", lambda default: {"cpu": to_canonical("cpu", "2")}),
    Mapping[str, int] | None: ("cpu=2", lambda default: {"cpu": to_canonical("cpu", "2")}),
}


@pytest.mark.parametrize(("command", "cls", "field"), SETTINGS, ids=map(setting_ids, SETTINGS))
def test_each_flags_variable_sets_its_field(command, cls, field, monkeypatch):
    for name, value in REQUIRED.items():
        monkeypatch.setenv(flags.env_name(name.replace("_", "-")), value)
    (flag,) = [n for n in flags_of(command, cls, field.name) if not n.startswith("--no-")]
    text, expected = SAMPLES[get_type_hints(cls)[field.name]]
    default = getattr(cls(**REQUIRED) if cls is WebhookSettings else cls(), field.name)
    text = text or str(not default).lower()
    monkeypatch.setenv(flags.env_name(flag), text)
    built = command.parse()
    where = command.settings[cls]
    settings = getattr(built, where) if where else built
    assert getattr(settings, field.name) == expected(default) != default


@pytest.mark.parametrize("command", [c for c in COMMANDS if "webhook" not in c.argv], ids=ids)
def test_min_scaling_is_spelled_alike_in_every_command_that_computes(command, monkeypatch):
    def min_scaling(*args: str) -> bool:
        built = command.parse(*args)
        config = built.engine if isinstance(built, OperatorSettings) else built
        return config.min_scaling

    assert min_scaling() is True
    assert min_scaling("--no-min-scaling") is False
    assert min_scaling("--min-scaling", "false") is False
    monkeypatch.setenv("ELASTIC_QUOTA_MIN_SCALING", "false")
    assert min_scaling() is False
    assert min_scaling("--min-scaling=true") is True

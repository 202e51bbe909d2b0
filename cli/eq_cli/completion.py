"""Shell completion of `kubectl eq`: commands, options and their values, and the names of
groups, pods and namespaces read from the cluster, as kubectl completes its own.

One answer in cobra's completion protocol, which kubectl speaks with plugins: kubectl runs
`kubectl_complete-eq WORD...` (the words after `kubectl eq`, the last one being completed) and
reads one candidate a line, then `:DIRECTIVE` (4: no file names; 0: the shell may offer files).
The scripts of `kubectl eq completion bash|zsh` ask `kubectl-eq __complete WORD...` the same,
for the plugin typed as `kubectl-eq`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence

from .targets import GROUP_KINDS, POD_KINDS

NO_FILES, FILES = 4, 0
_VALUES = {"-o": ["json", "yaml", "wide"], "--output": ["json", "yaml", "wide"]}
_FILE_OPTIONS = {"-f", "--filename", "--kubeconfig"}
_SHELLS = ["bash", "zsh"]


def complete(words: Sequence[str]) -> int:
    """Prints the candidates for the last of `words`, then the directive."""
    candidates, directive = _candidates(list(words) or [""])
    sys.stdout.write("".join(f"{c}\n" for c in candidates) + f":{directive}\n")
    return 0


def kubectl_complete() -> int:
    """`kubectl_complete-eq`, which kubectl runs to complete `kubectl eq ...`."""
    return complete(sys.argv[1:])


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    # argparse keeps its options by their strings here; it has no public listing of them
    return dict(parser._option_string_actions)


def _candidates(words: list[str]) -> tuple[list[str], int]:
    from .plugin import commands as commands_of
    from .plugin import parser

    main = parser()
    commands = commands_of(main)
    current, before = words[-1], words[:-1]
    options = _options(main)
    positional: list[str] = []
    command = None
    namespace = context = kubeconfig = None
    skip = False
    for index, word in enumerate(before):
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            name, has_value, value = word.partition("=")
            action = options.get(name)
            takes = action is not None and action.nargs not in (0, "?")
            if takes and not has_value:
                value = before[index + 1] if index + 1 < len(before) else ""
                skip = True
            if name in ("-n", "--namespace"):
                namespace = value
            elif name == "--context":
                context = value
            elif name == "--kubeconfig":
                kubeconfig = value
            continue
        if command is None and word in commands:
            command = word
            options = _options(commands[word])
        else:
            positional.append(word)
    if before and skip:  # the current word is an option's value
        return _value_of(before[-1], current, kubeconfig, context)
    if current.startswith("-"):
        return sorted(o for o in options if o.startswith(current)), NO_FILES
    if command is None:
        return sorted(c for c in commands if c.startswith(current)), NO_FILES
    cluster = _Cluster(kubeconfig, context, namespace)
    if command == "completion":
        return ([s for s in _SHELLS if s.startswith(current)] if not positional else []), NO_FILES
    if command == "tree":
        return (cluster.groups(current) if not positional else []), NO_FILES
    if command == "explain":
        return _explained(positional, current, cluster), NO_FILES
    return [], FILES  # what-if takes only -f


def _explained(positional: list[str], current: str, cluster: _Cluster) -> list[str]:
    if not positional:
        if "/" in current:
            kind, _, name = current.partition("/")
            if kind in POD_KINDS:
                return [f"{kind}/{p}" for p in cluster.pods(name)]
            if kind in GROUP_KINDS:
                return [f"{kind}/{g}" for g in cluster.groups(name)]
            return []
        return [k for k in ("group", "pod") if k.startswith(current)]
    if len(positional) == 1 and positional[0] in POD_KINDS:
        return cluster.pods(current)
    if len(positional) == 1 and positional[0] in GROUP_KINDS:
        return cluster.groups(current)
    return []


def _value_of(
    option: str, current: str, kubeconfig: str | None, context: str | None
) -> tuple[list[str], int]:
    if option in _FILE_OPTIONS:
        return [], FILES
    if option in _VALUES:
        return [v for v in _VALUES[option] if v.startswith(current)], NO_FILES
    if option in ("-n", "--namespace"):
        return _Cluster(kubeconfig, context, None).namespaces(current), NO_FILES
    if option == "--context":
        return [c for c in _contexts(kubeconfig) if c.startswith(current)], NO_FILES
    return [], NO_FILES


def _contexts(kubeconfig: str | None) -> list[str]:
    from .kubeclient import contexts

    found = contexts(kubeconfig)
    return [] if found is None else sorted(str(c["name"]) for c in found[0])


class _Cluster:
    """Names listed from the cluster, one LIST each; nothing when it cannot be read (a
    completion never prints an error into the command line)."""

    def __init__(self, kubeconfig: str | None, context: str | None, namespace: str | None):
        self.kubeconfig, self.context, self.namespace = kubeconfig, context, namespace

    def groups(self, prefix: str) -> list[str]:
        return self._names("/apis/scheduling.sigs.k8s.io/v1alpha1/elasticquotas", prefix)

    def pods(self, prefix: str) -> list[str]:
        from .kubeclient import context_namespace

        try:
            namespace = self.namespace or context_namespace(self.kubeconfig, self.context)
        except Exception:
            return []
        return self._names(f"/api/v1/namespaces/{namespace}/pods", prefix)

    def namespaces(self, prefix: str) -> list[str]:
        return self._names("/api/v1/namespaces", prefix)

    def _names(self, path: str, prefix: str) -> list[str]:
        try:
            names = asyncio.run(self._list(path))
        except Exception:
            return []
        return sorted(n for n in names if n.startswith(prefix))

    async def _list(self, path: str) -> set[str]:
        from eq_kit.kube import Http, pages

        from .kubeclient import connect

        api = await connect(self.kubeconfig, "kubectl-eq", context=self.context)
        try:
            listing = pages(Http(api, read_timeout=10.0), path)
            items = [item async for page in listing for item in page.get("items") or ()]
            return {item["metadata"]["name"] for item in items}
        finally:
            await api.close()


def script(shell: str) -> str:
    """The completion script of `kubectl-eq` for `shell`."""
    return _SCRIPTS[shell]


_SCRIPTS = {
    "bash": """\
# bash completion for kubectl-eq: source <(kubectl eq completion bash)
_kubectl_eq() {
    local cur=${COMP_WORDS[COMP_CWORD]} directive
    local -a lines
    mapfile -t lines < <(kubectl-eq __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
    [[ ${#lines[@]} -gt 0 ]] || return
    directive=${lines[-1]#:}
    unset 'lines[-1]'
    if (( directive & 4 )); then
        compopt +o default 2>/dev/null
    fi
    COMPREPLY=($(compgen -W "${lines[*]}" -- "$cur"))
}
complete -o default -F _kubectl_eq kubectl-eq
""",
    "zsh": """\
#compdef kubectl-eq
# zsh completion for kubectl-eq: source <(kubectl eq completion zsh)
_kubectl_eq() {
    local -a lines
    local directive
    lines=("${(@f)$(kubectl-eq __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")
    (( ${#lines} )) || return
    directive=${lines[-1]#:}
    lines=("${(@)lines[1,-2]}")
    compadd -a lines
    (( directive & 4 )) || _files
}
compdef _kubectl_eq kubectl-eq
""",
}

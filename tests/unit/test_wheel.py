"""The built wheel carries the built-in policies: installed in a fresh venv, every one loads by name.

The wheel is built from a copy of this checkout's sources (so no build/
left in the tree can leak into it) with the project's own build backend
(`pip wheel --no-build-isolation`, no network) and installed without its
dependencies into a new venv in a temp dir; those are borrowed from the
project's venv through a .pth file, so the test needs no registry. The check
runs from a directory outside the checkout, so nothing can come from it.
"""

from __future__ import annotations

import json
import shutil
import site
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
POLICIES = sorted(p.stem for p in (REPO / "policies").glob("*.yaml"))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src, out = tmp_path_factory.mktemp("src"), tmp_path_factory.mktemp("dist")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, src / name)
    for name in ("scylla_singa", "policies"):
        shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "--disable-pip-version-check", "-w", str(out), str(src)],
                   check=True, capture_output=True, text=True, timeout=600)
    (built,) = out.glob("scylla_singa-*.whl")
    return built


@pytest.mark.slow
def test_the_wheel_carries_every_builtin_policy(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    packaged = sorted(Path(n).stem for n in names
                      if n.startswith("scylla_singa/placement/builtin_policies/") and n.endswith(".yaml"))
    assert packaged == POLICIES and POLICIES == ["network", "pack", "singa11", "spread"]


@pytest.mark.slow
def test_an_installed_wheel_loads_every_builtin_policy_by_name(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    target = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                            check=True, capture_output=True, text=True).stdout.strip()
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--disable-pip-version-check",
                    "--target", target, str(wheel)], check=True, capture_output=True, text=True, timeout=300)
    # The dependencies (numpy, yaml, ...) from the project's venv; its editable scylla_singa stays out
    # (a plain path line does not run that venv's own .pth files).
    (Path(target) / "borrowed-dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    code = ("import json, scylla_singa\n"
            "from scylla_singa.placement.policy import builtin_policy_names, load_policy\n"
            "names = builtin_policy_names()\n"
            "print(json.dumps({'where': scylla_singa.__file__, 'names': names,\n"
            "                  'loaded': [load_policy(n).name for n in names]}))\n")
    out = subprocess.run([str(python), "-c", code], cwd=tmp_path, check=True, capture_output=True, text=True,
                         timeout=120)
    got = json.loads(out.stdout)
    assert got["where"].startswith(target), got["where"]   # the installed copy, not the checkout
    assert got["names"] == POLICIES and got["loaded"] == POLICIES

"""The tree's rules (docs/design.md): one meaning per name, every package shipped, every marker accounted for.

The layers themselves are checked by `lint-imports` (pyproject.toml), which
`make test` runs before pytest; these are the rules it cannot express.
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "scylla_singa"
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
# File names that may repeat: a package's own files. No other exception (add one here with its reason).
REPEATABLE_FILES = {"__init__.py", "__main__.py"}
# Markers pytest and its plugins define themselves.
BUILTIN_MARKERS = {"parametrize", "skip", "skipif", "xfail", "usefixtures", "filterwarnings", "timeout"}
# Third-party packages the runtime (inside the singa image) may import, by distribution name.
RUNTIME_DEPENDENCIES = {"numpy", "pyzmq", "protobuf"}


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _packages() -> set[str]:
    return {".".join(p.parent.relative_to(REPO).parts) for p in PACKAGE.rglob("__init__.py")}


def test_no_two_modules_share_a_file_name() -> None:
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in _modules():
        if path.name not in REPEATABLE_FILES:
            by_name[path.name].append(str(path.relative_to(REPO)))
    clashes = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    assert not clashes, f"modules share a name (give each a name saying what it is): {clashes}"


def test_no_module_is_named_like_a_package() -> None:
    packages = {p.parent.name for p in PACKAGE.rglob("__init__.py")}
    clashes = sorted(str(p.relative_to(REPO)) for p in _modules() if p.stem in packages)
    assert not clashes, f"modules named like a package elsewhere: {clashes}"


def test_no_two_top_level_classes_share_a_name() -> None:
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in _modules():
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef):
                by_name[node.name].append(str(path.relative_to(REPO)))
    clashes = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    assert not clashes, f"classes share a name: {clashes}"


def test_every_package_is_in_the_wheel() -> None:
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    mapped = set(PYPROJECT["tool"]["setuptools"]["package-dir"])
    assert listed - mapped == _packages(), ("[tool.setuptools] packages in pyproject.toml must list every "
                                            f"package: missing {sorted(_packages() - listed)}, "
                                            f"gone {sorted(listed - mapped - _packages())}")
    for package, directory in PYPROJECT["tool"]["setuptools"]["package-dir"].items():
        assert package in listed and (REPO / directory / "__init__.py").is_file(), package


def test_the_runtime_contract_forbids_every_dependency_its_image_lacks() -> None:
    """A new dependency in pyproject.toml must join the forbidden list of the runtime's lint-imports contract."""
    import_names = {"pyyaml": "yaml", "scikit-learn": "sklearn"}
    deps = PYPROJECT["project"]["dependencies"] + [d for extra in ("data", "bench")
                                                  for d in PYPROJECT["project"]["optional-dependencies"][extra]]
    names = {re.split(r"[<>=~!\[ ]", d, maxsplit=1)[0].lower() for d in deps}
    wanted = {import_names.get(n, n) for n in names - RUNTIME_DEPENDENCIES}
    contract = next(c for c in PYPROJECT["tool"]["importlinter"]["contracts"]
                    if "scylla_singa.runtime" in c.get("source_modules", ()))
    assert wanted <= set(contract["forbidden_modules"]), sorted(wanted - set(contract["forbidden_modules"]))


def test_every_test_directory_is_a_package() -> None:
    """So test modules import their helpers by package (tests.support..., .helpers), never from a conftest."""
    dirs = {p.parent for p in (REPO / "tests").rglob("*.py") if "__pycache__" not in p.parts}
    missing = sorted(str(d.relative_to(REPO)) for d in dirs if not (d / "__init__.py").is_file())
    assert not missing, f"test directories without __init__.py: {missing}"


def test_no_test_imports_from_a_conftest() -> None:
    offenders = []
    for path in (REPO / "tests").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "conftest":
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not offenders, f"imports from a conftest (move the helper to tests/support): {offenders}"


def test_every_marker_used_is_registered_and_every_registered_one_is_used() -> None:
    registered = {m.split(":")[0].strip() for m in PYPROJECT["tool"]["pytest"]["ini_options"]["markers"]}
    used = set()
    for path in (REPO / "tests").rglob("*.py"):
        used |= set(re.findall(r"pytest\.mark\.(\w+)", path.read_text()))
    used -= BUILTIN_MARKERS
    assert used - registered == set(), f"markers used but not registered in pyproject.toml: {used - registered}"
    assert registered - used == set(), f"markers registered but never used: {registered - used}"

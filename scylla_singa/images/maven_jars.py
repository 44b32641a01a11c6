"""Prepare steps of the hdfs and zookeeper images: Maven Central jars into the build context.

Containers cannot reach Maven Central over HTTPS here, so the jars are
resolved on the host with `mvn dependency:copy-dependencies` from the small
`pom.xml` in the image directory into its git-ignored `lib/`. Maven's own
cache (~/.m2) makes later runs offline; a stamp keyed on the pom's content
makes a second prepare instant.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

# Native libraries for platforms we do not run on: megabytes nobody loads.
_FOREIGN = ("osx-", "windows-", "aarch_64", "riscv64", "kqueue", "macos")

# The NameNode's and DataNode's HTTP servers (WebHDFS included) need these
# resource directories on the classpath. Maven Central's hadoop-hdfs and
# hadoop-common jars leave them out (Hadoop's tarball ships them beside the
# jars); the minicluster artifact carries them.
HDFS_WEBAPPS = ("org.apache.hadoop:hadoop-client-minicluster:3.5.0",
                "webapps/hdfs/**,webapps/datanode/**,webapps/static/**")


def _mvn(args: list[str], what: str) -> None:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise RuntimeError(f"mvn not found: install Debian's maven and a JDK to build {what}")
    # A goal run without a project (dependency:unpack) writes marker files
    # under a literal `${project.basedir}/` in the working directory: keep
    # that in a temporary directory, out of the tree.
    with tempfile.TemporaryDirectory(prefix="scylla-mvn-") as cwd:
        proc = subprocess.run([mvn, "-B", "-q", *args], capture_output=True, text=True, cwd=cwd)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-25:])
        raise RuntimeError(f"mvn could not resolve {what}:\n{tail}")


def copy_maven_dependencies(image_dir: Path, extra: Callable[[Path], None] | None = None,
                            echo: Callable[[str], None] = print) -> Path:
    """Resolve `image_dir/pom.xml`'s runtime dependencies into `image_dir/lib`; idempotent.

    `extra(lib)` runs after the copy, before the stamp is written (so a failure
    in it is retried next time). Returns the lib directory; raises
    RuntimeError with Maven's last lines when resolution fails.
    """
    pom = image_dir / "pom.xml"
    lib = image_dir / "lib"
    stamp = lib / ".pom-sha256"
    want = hashlib.sha256(pom.read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text().strip() == want and any(lib.glob("*.jar")):
        return lib
    echo(f"  resolving {image_dir.name} jars from Maven Central (once)")
    if lib.exists():
        shutil.rmtree(lib)
    _mvn(["-f", str(pom.resolve()), "dependency:copy-dependencies", "-DincludeScope=runtime",
          f"-DoutputDirectory={lib.resolve()}"], str(pom))
    for jar in lib.glob("*.jar"):
        if any(tag in jar.name for tag in _FOREIGN):
            jar.unlink()
    if extra is not None:
        extra(lib)
    stamp.write_text(want + "\n")
    return lib


def _unpack_hdfs_webapps(lib: Path) -> None:
    """lib/resources/webapps/{hdfs,datanode,static} from the minicluster artifact."""
    artifact, includes = HDFS_WEBAPPS
    _mvn(["dependency:unpack", f"-Dartifact={artifact}:jar", f"-Dmdep.unpack.includes={includes}",
          f"-DoutputDirectory={(lib / 'resources').resolve()}"], f"{artifact} (webapps)")
    missing = [d for d in ("hdfs", "datanode", "static") if not (lib / "resources" / "webapps" / d).is_dir()]
    if missing:
        raise RuntimeError(f"{artifact} has no webapps/{', webapps/'.join(missing)}")


def prepare_hdfs(repo_root: Path) -> None:
    """images/hdfs/lib: Apache Hadoop 3.5.0 hadoop-hdfs(+client) + hadoop-common, their
    dependencies, and the servers' webapps under lib/resources."""
    copy_maven_dependencies(repo_root / "images" / "hdfs", extra=_unpack_hdfs_webapps)


def prepare_zookeeper(repo_root: Path) -> None:
    """images/zookeeper/lib: Apache ZooKeeper 3.9.5 and its dependencies (+ an SLF4J binding)."""
    copy_maven_dependencies(repo_root / "images" / "zookeeper")

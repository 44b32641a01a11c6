"""HDFS delivery: job files uploaded through WebHDFS, fetched by the Mesos fetcher.

The files go to /scylla/<job>/ and each task gets them as WebHDFS `http://`
URIs (`.../webhdfs/v1/scylla/<job>/job.conf?op=OPEN`, with `output_file`):
the fetcher of a stock Apache Mesos agent downloads http URIs itself,
following the NameNode's redirect to a DataNode, so agents need no Hadoop
client (an `hdfs://` URI would need one, `--hadoop_home`). The fetched
copies land in the sandbox, which on Apache Mesos is 0750 and root-owned,
unreadable by the image's non-root user; so each is also a read-only
volume with a relative `host_path` (Mesos's Docker containerizer resolves
it inside the sandbox) mounted at contracts.JOB_FILES_DIR, where the task
reads it through the file's own mode. The workspace is an `hdfs://`
directory the runtime writes checkpoints to through WebHDFS itself
(SCYLLA_WEBHDFS_URL), again nothing the agent must provide.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote, urlparse

from hdfs import InsecureClient
from hdfs.util import HdfsError

from scylla_singa.contracts import ENV_WEBHDFS_URL, JOB_FILES_DIR
from .job_files import Artifacts, DeliveryError


@dataclass
class HdfsDelivery:
    webhdfs_url: str                # http://namenode:9870
    hdfs_uri: str | None = None     # hdfs://namenode:8020 (default: the WebHDFS host, port 8020)
    user: str = "scylla"
    base: str = "/scylla"
    timeout_s: float = 30.0

    def __post_init__(self) -> None:
        parsed = urlparse(self.webhdfs_url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise DeliveryError(f"--hdfs must be the NameNode's WebHDFS URL, like http://namenode:9870 "
                                f"(got {self.webhdfs_url!r})")
        if self.hdfs_uri is None:
            self.hdfs_uri = f"hdfs://{parsed.hostname}:8020"
        self.client = InsecureClient(self.webhdfs_url, user=self.user, timeout=self.timeout_s)

    def job_path(self, job_id: str) -> str:
        return f"{self.base}/{job_id}"

    def prepare(self, job_id: str, files: dict[str, bytes], network: str) -> Artifacts:
        d = self.job_path(job_id)
        try:
            self.client.makedirs(f"{d}/workspace")
            for name, data in files.items():
                self.client.write(f"{d}/{name}", data=data, overwrite=True)
        except (HdfsError, OSError) as exc:
            raise DeliveryError(f"cannot upload job files to HDFS at {self.webhdfs_url}{d}: {exc}") from None
        uris = tuple({"value": self.open_url(f"{d}/{name}"), "output_file": name, "extract": False,
                      "cache": False, "executable": False} for name in files)
        volumes = tuple({"container_path": f"{JOB_FILES_DIR}/{name}", "host_path": name, "mode": "RO"}
                        for name in files)
        return Artifacts(network=network, volumes=volumes, uris=uris, workspace=f"{self.hdfs_uri}{d}/workspace",
                         env=((ENV_WEBHDFS_URL, self.webhdfs_url),))

    def open_url(self, path: str) -> str:
        """The WebHDFS URL that reads `path` (the NameNode answers with a redirect to a DataNode)."""
        return f"{self.webhdfs_url.rstrip('/')}/webhdfs/v1{quote(path)}?op=OPEN&user.name={quote(self.user)}"

    def cleanup(self, job_id: str, keep_workspace: bool) -> None:
        d = self.job_path(job_id)
        try:
            if keep_workspace:
                for name in self.client.list(d):
                    if name != "workspace":
                        self.client.delete(f"{d}/{name}", recursive=True)
            else:
                self.client.delete(d, recursive=True)
        except (HdfsError, OSError):
            pass

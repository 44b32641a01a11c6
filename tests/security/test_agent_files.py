"""The fetcher copies local files only from the agent's allowed roots; /files/* serves only what is in sandboxes."""

from __future__ import annotations

import requests

from tests.security.agent_fixtures import AUTH, frameworks, process_cluster, run_task, sandbox_of

__all__ = ["frameworks", "process_cluster"]   # fixtures used by the tests below


def test_fetching_etc_shadow_is_refused_naming_the_path_and_the_flag(process_cluster, frameworks) -> None:
    """Attack: a task lists file:///etc/shadow, then a bare /etc/shadow, as URIs, to read them in its sandbox."""
    fw = frameworks(process_cluster.master_address, user="nobody")
    for value in ("file:///etc/shadow", "/etc/shadow"):
        status = run_task(fw, "cat shadow", uris=[{"value": value}])
        assert status["state"] == "TASK_FAILED", value
        assert status["reason"] == "REASON_CONTAINER_LAUNCH_FAILED"
        assert f"{value}: local files are fetched only from under the agent's allowed roots" in status["message"]
        assert "/etc/shadow" in status["message"] and "--fetcher-allowed-roots" in status["message"]


def test_fetching_from_the_jobs_root_still_works(process_cluster, frameworks, tmp_path) -> None:
    """What the roots are for: files under the jobs root ($SCYLLA_HOME/jobs, the default) are fetched."""
    jobs = tmp_path / "home" / "jobs"
    jobs.mkdir(parents=True)
    (jobs / "conf.txt").write_text("mine\n")
    fw = frameworks(process_cluster.master_address, user="nobody")
    status = run_task(fw, "cat conf.txt", uris=[{"value": f"file://{jobs / 'conf.txt'}"}])
    assert status["state"] == "TASK_FINISHED", status.get("message")


def test_files_read_of_a_symlink_out_of_the_sandbox_is_refused(process_cluster, frameworks) -> None:
    """Attack: a task makes symlinks in its sandbox to /etc/shadow and to /etc, then reads them through the
    agent's /files/read, /files/download and /files/browse (the agent, as root, would follow them)."""
    fw = frameworks(process_cluster.master_address, user="nobody")
    status = run_task(fw, "ln -s /etc/shadow leak && ln -s /etc etc && echo mine > own.txt")
    assert status["state"] == "TASK_FINISHED", status.get("message")
    agent = f"http://{process_cluster.agent_addresses[0]}"
    sandbox = sandbox_of(process_cluster.agent_addresses[0], status["task_id"]["value"])
    for endpoint, path in (("read", "leak"), ("download", "leak"), ("read", "etc/passwd"), ("browse", "etc")):
        r = requests.get(f"{agent}/files/{endpoint}", params={"path": f"{sandbox}/{path}", "offset": 0}, timeout=10, auth=AUTH)
        assert (r.status_code, r.text) == (404, ""), (endpoint, path, r.text[:200])
    own = requests.get(f"{agent}/files/read", params={"path": f"{sandbox}/own.txt", "offset": 0}, timeout=10, auth=AUTH)
    assert own.json() == {"data": "mine\n", "offset": 0}
    down = requests.get(f"{agent}/files/download", params={"path": f"{sandbox}/own.txt"}, timeout=10, auth=AUTH)
    assert down.content == b"mine\n"

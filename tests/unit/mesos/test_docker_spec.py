"""TaskInfo -> Docker settings, as the Mesos Docker containerizer maps them, and what is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from scylla_singa.mesos.agent.docker_spec import build_spec
from scylla_singa.mesos.agent.terminal import WindowSize
from scylla_singa.mesos.api.container_info import SANDBOX_MOUNT, SpecError, validate_container
from scylla_singa.mesos.api.resources import Resources


def _task(container: dict | None = None, command: dict | None = None, resources: str = "cpus:0.5;mem:16") -> dict:
    docker = {"image": "img", "network": "BRIDGE"}
    c = {"type": "DOCKER", "docker": docker}
    if container:
        docker.update(container.pop("docker", {}))
        c.update(container)
    return {"task_id": {"value": "t1"}, "name": "t1", "resources": Resources.parse(resources).to_json(),
            "command": command or {"value": "echo hi", "environment": {"variables": [{"name": "A", "value": "1"}]}},
            "container": c}


def _spec(task: dict, tmp_path: Path, roots: list[Path] | None = None):
    return build_spec(task, framework_id="fw", agent_id="ag", container_id="cid", sandbox=tmp_path,
                      allowed_roots=roots or [])


def test_basic_mapping(tmp_path) -> None:
    s = _spec(_task(), tmp_path)
    assert (s.image, s.network, s.user_network) == ("img", "bridge", False)
    assert s.entrypoint == ["/bin/sh", "-c"] and s.command == ["echo hi"]
    assert s.cpu_shares == 512 and s.mem_limit == 32 * 1024 * 1024  # max(mem, 32 MB)
    assert s.environment == {"MESOS_TASK_ID": "t1", "MESOS_FRAMEWORK_ID": "fw", "MESOS_AGENT_ID": "ag",
                             "A": "1", "MESOS_SANDBOX": SANDBOX_MOUNT}
    assert s.volumes == {str(tmp_path): {"bind": SANDBOX_MOUNT, "mode": "rw"}}
    assert s.working_dir is None and "working_dir" not in s.create_kwargs()  # the image's, as under Mesos
    assert s.labels == {"scylla.managed": "true", "scylla.agent": "ag", "scylla.task": "t1", "scylla.framework": "fw"}
    kw = s.create_kwargs()
    assert kw["network_mode"] == "bridge" and kw["privileged"] is False and kw["name"] == "mesos-cid"


@pytest.mark.parametrize("command,entrypoint,argv", [
    ({"value": "a b", "shell": True}, ["/bin/sh", "-c"], ["a b"]),
    ({"value": "prog", "shell": False, "arguments": ["x", "y"]}, None, ["prog", "x", "y"]),
    ({"shell": False, "arguments": ["x"]}, None, ["x"]),
    ({"shell": False}, None, None),
], ids=["shell", "exec-value-and-arguments", "exec-arguments-only", "image-default"])
def test_shell_vs_arguments(tmp_path, command, entrypoint, argv) -> None:
    s = _spec(_task(command=command), tmp_path)
    assert (s.entrypoint, s.command) == (entrypoint, argv)


@pytest.mark.parametrize("network,infos,expect", [
    ("HOST", None, ("host", False)), ("NONE", None, ("none", False)),
    ("USER", [{"name": "scylla-j1"}], ("scylla-j1", True)),
], ids=["host", "none", "user"])
def test_networks(tmp_path, network, infos, expect) -> None:
    c = {"docker": {"network": network}}
    if infos:
        c["network_infos"] = infos
    s = _spec(_task(c), tmp_path)
    assert (s.network, s.user_network) == expect


def test_parameters_port_mappings_and_volumes(tmp_path) -> None:
    root = tmp_path / "jobs"
    (root / "j").mkdir(parents=True)
    c = {"docker": {"parameters": [{"key": "network-alias", "value": "j-proc-0"},
                                   {"key": "label", "value": "scylla.job=j"}, {"key": "env", "value": "B=2"},
                                   {"key": "shm-size", "value": "64m"}, {"key": "ulimit", "value": "nofile=1024:2048"},
                                   {"key": "user", "value": "1000:1000"}, {"key": "workdir", "value": "/w"}],
                    "port_mappings": [{"host_port": 31001, "container_port": 80}]},
         "volumes": [{"container_path": "/data", "host_path": str(root / "j"), "mode": "RO"},
                     {"container_path": "scratch", "host_path": "scratch", "mode": "RW"}], "hostname": "h"}
    s = _spec(_task(c, resources="cpus:1;mem:64;ports:[31000-31005]"), tmp_path / "sb", [root])
    assert s.aliases == ["j-proc-0"] and s.labels["scylla.job"] == "j" and s.environment["B"] == "2"
    assert (s.shm_size, s.ulimits, s.user, s.working_dir, s.hostname) == (
        "64m", [("nofile", 1024, 2048)], "1000:1000", "/w", "h")
    assert s.ports == {"80/tcp": 31001}
    assert s.volumes[str(root / "j")] == {"bind": "/data", "mode": "ro"}
    assert s.volumes[str(tmp_path / "sb" / "scratch")] == {"bind": f"{SANDBOX_MOUNT}/scratch", "mode": "rw"}


@pytest.mark.parametrize("container,resources,message", [
    ({"docker": {"network": "USER"}}, "cpus:1", "exactly one network_infos"),
    ({"docker": {"network": "USER"}, "network_infos": [{"name": "a"}, {"name": "b"}]}, "cpus:1", "exactly one"),
    ({"docker": {"network": "WIFI"}}, "cpus:1", "unknown Docker network"),
    ({"docker": {"privileged": True}}, "cpus:1", "privileged"),
    ({"docker": {"parameters": [{"key": "cap-add", "value": "ALL"}]}}, "cpus:1", "'cap-add' is refused"),
    ({"docker": {"parameters": [{"key": "volume", "value": "/:/h"}]}}, "cpus:1", "'volume' is refused"),
    ({"docker": {"parameters": [{"key": "user", "value": "root"}]}}, "cpus:1", "non-root"),
    ({"docker": {"parameters": [{"key": "user", "value": "0:0"}]}}, "cpus:1", "non-root"),
    ({"docker": {"port_mappings": [{"host_port": 80, "container_port": 80}]}}, "cpus:1;ports:[31000-31001]",
     "not in the task's ports"),
    ({"docker": {"image": ""}}, "cpus:1", "missing an image"),
    ({"volumes": [{"host_path": "/x"}]}, "cpus:1", "container_path"),
], ids=["user-no-name", "user-two-names", "unknown-network", "privileged", "cap-add", "volume-param",
        "root-user", "uid-0", "port-outside-offer", "no-image", "volume-no-path"])
def test_master_side_validation(container, resources, message) -> None:
    task = _task(container, resources=resources)
    with pytest.raises(SpecError, match=message):
        validate_container(task["container"], Resources.parse(resources))


@pytest.mark.parametrize("host_path,message", [
    ("/etc", "outside the agent's allowed host paths"), ("/var/run/docker.sock", "Docker socket"),
    ("../../etc", "leaves the sandbox")], ids=["outside-roots", "docker-socket", "relative-escape"])
def test_agent_side_volume_confinement(tmp_path, host_path, message) -> None:
    task = _task({"volumes": [{"container_path": "/x", "host_path": host_path, "mode": "RW"}]})
    with pytest.raises(SpecError, match=message):
        _spec(task, tmp_path / "sb", [tmp_path / "jobs"])


def _mesos_task(image: dict, **container) -> dict:
    task = _task()
    task["container"] = {"type": "MESOS", "mesos": {"image": image}, **container}
    return task


def test_a_mesos_container_with_a_docker_image_runs_as_the_mesos_containerizer_would(tmp_path) -> None:
    s = _spec(_mesos_task({"type": "DOCKER", "docker": {"name": "debian:bookworm-slim"}}), tmp_path)
    assert (s.image, s.network, s.user_network, s.force_pull) == ("debian:bookworm-slim", "host", False, False)
    assert s.volumes == {str(tmp_path): {"bind": SANDBOX_MOUNT, "mode": "rw"}} and s.working_dir == SANDBOX_MOUNT
    named = _spec(_mesos_task({"type": "DOCKER", "docker": {"name": "img"}, "cached": False},
                              network_infos=[{"name": "job-net"}]), tmp_path)
    assert (named.network, named.user_network, named.force_pull) == ("job-net", True, True)


def test_a_mesos_container_with_an_appc_image_is_refused() -> None:
    task = _mesos_task({"type": "APPC", "appc": {"name": "coreos.com/etcd"}})
    with pytest.raises(SpecError, match="APPC is not supported"):
        validate_container(task["container"], Resources.parse("cpus:0.5;mem:16"))


def test_a_mesos_container_with_tty_info_is_created_with_a_terminal_and_an_open_stdin(tmp_path) -> None:
    image = {"type": "DOCKER", "docker": {"name": "img"}}
    sized = _spec(_mesos_task(image, tty_info={"window_size": {"rows": 30, "columns": 100}}), tmp_path)
    assert (sized.tty, sized.window) == (True, WindowSize(30, 100))
    assert (sized.create_kwargs()["tty"], sized.create_kwargs()["stdin_open"]) == (True, True)
    default = _spec(_mesos_task(image, tty_info={}), tmp_path)
    assert (default.tty, default.window) == (True, None)
    docker = _spec(_task({"tty_info": {}}), tmp_path)   # ignored by the Docker containerizer, as in Mesos
    assert (docker.tty, docker.create_kwargs()["tty"], docker.create_kwargs()["stdin_open"]) == (False, False, False)

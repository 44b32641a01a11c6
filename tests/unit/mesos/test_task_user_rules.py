"""The pure rules of who a task runs as: uid spellings, image passwd lookups, the clean environment."""

from __future__ import annotations

import pytest

from scylla_singa.mesos.agent.image_user import ContainerUserRefused, container_uid, passwd_uid
from scylla_singa.mesos.agent.task_user import STANDARD_PATH, TaskUserError, clean_environment, resolve_user
from scylla_singa.mesos.api.container_info import SpecError, check_docker_user, numeric_uid

PASSWD = "root:x:0:0:root:/root:/bin/sh\ntoor:x:0:0::/:/bin/sh\nsinga:x:1000:1000::/home/singa:/bin/sh\n"


@pytest.mark.parametrize("text,uid", [("0", 0), ("00", 0), ("+0", 0), ("-0", 0), ("0000:0", 0), ("1000:0", 1000),
                                      ("0065534", 65534), ("root", None), ("singa:0", None), ("0x0", None)])
def test_numeric_uid_reads_a_number_as_the_kernel_does(text, uid) -> None:
    assert numeric_uid(text) == uid


@pytest.mark.parametrize("user", ["root", "0", "00", "+0", "-0", "0000:0", "root:root", ":0"])
def test_docker_user_root_in_any_spelling_is_refused(user) -> None:
    """Attack: docker parameter user spelled so the old text check ("0", "root") let uid 0 through."""
    with pytest.raises(SpecError, match="uid 0 \\(root\\)|names no user"):
        check_docker_user(user)
    check_docker_user("1000:0")   # a non-root uid with group 0 (the arbitrary-uid convention) is fine


def test_container_user_names_are_resolved_in_the_image() -> None:
    read = lambda: PASSWD  # noqa: E731
    assert passwd_uid(PASSWD, "singa") == 1000 and passwd_uid(PASSWD, "nobody") is None
    assert container_uid("img", None, "singa:singa", read, allow_root=False) == 1000
    assert container_uid("img", "1000:0", "", read, allow_root=False) == 1000
    with pytest.raises(ContainerUserRefused, match="user 'toor' \\(image img's USER\\) is uid 0 \\(root\\)"):
        container_uid("img", None, "toor", read, allow_root=False)
    with pytest.raises(ContainerUserRefused, match="image img has no USER, so it runs as root.*--allow-root-tasks"):
        container_uid("img", None, "", read, allow_root=False)
    with pytest.raises(ContainerUserRefused, match="'ghost' .* not defined in image img's /etc/passwd"):
        container_uid("img", "ghost", "singa", read, allow_root=False)
    assert container_uid("img", None, "", read, allow_root=True) == 0


def test_resolve_user_refuses_root_names_and_numbers_unless_allowed() -> None:
    for spelling in ("root", "0", "00", "+0", "0000:0"):
        with pytest.raises(TaskUserError, match="is uid 0 \\(root\\).*--allow-root-tasks"):
            resolve_user(spelling, "FrameworkInfo.user", allow_root=False)
        assert resolve_user(spelling, "FrameworkInfo.user", allow_root=True).uid == 0
    assert resolve_user("nobody", "FrameworkInfo.user", allow_root=False).uid == 65534
    with pytest.raises(TaskUserError, match="unknown on this agent's machine"):
        resolve_user("99999999999999999999", "CommandInfo.user", allow_root=False)


def test_the_clean_environment_has_only_the_sandbox_variables_path_and_what_the_task_gives() -> None:
    env = clean_environment({"environment": {"variables": [{"name": "A", "value": "1"}, {"name": "PATH",
                                                                                         "value": "/opt"}]}},
                            {"MESOS_SANDBOX": "/s"})
    assert env == {"PATH": "/opt", "MESOS_SANDBOX": "/s", "A": "1"}
    assert clean_environment({}, {})["PATH"] == STANDARD_PATH

"""The launch benchmark's own path, at its smallest, on the real engine.

The benchmark is run by hand between sweeps, so a change elsewhere (default
credentials on the master) once broke it without any test noticing. This runs
the same harness and floor once each for a 2-process job and checks what the
report is built from.
"""

from __future__ import annotations

import docker

from bench import launch


def test_launch_bench_measures_framework_and_floor_and_leaves_nothing(docker_client: docker.DockerClient,
                                                                      swarm_manager) -> None:
    data = launch.measure(docker_client, {"n": [2], "repeats": 1})
    (point,) = data["points"]
    assert point["n"] == 2
    assert len(point["framework"]) == 1 and point["framework"][0] > 0
    assert len(point["floor"]) == 1 and point["floor"][0] > 0
    (phases,) = point["phases"]
    assert phases["PREPARING"] <= phases["LAUNCHING"] <= phases["RUNNING"]
    assert data["left_behind"] == {"containers": 0, "networks": 0}
    section = launch.section(data)
    assert section.headline and section.headline[0].benchmark.startswith("4. Job launch, worst N (2 processes)")

"""Helpers shared by test packages: import them from here, never from a conftest.

    scylla_cli        ScyllaCli: `scylla-singa` as a subprocess, its store, its jobs' Docker objects
    mesos_framework   a recording pymesos framework (TestFramework) and TaskInfo builders
    prometheus_text   /metrics text parsed with prometheus-client's parser
    transition_tables every table's refusal check: missing (state, event) pairs raise InvalidTransition
"""

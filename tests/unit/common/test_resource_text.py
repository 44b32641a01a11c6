"""Mesos's resource text ("cpus:4;mem:8192;ports:[..]") split into its parts, for every reader of it."""

from __future__ import annotations

import pytest

from scylla_singa.common.resource_text import ResourceTextError, resource_items, scalar_resources


def test_parts_keep_their_order_and_their_role() -> None:
    items = resource_items(" cpus(*):4 ; mem(ml):8192;;ports:[31000-32000];ids:{a,b}")
    assert [(i.name, i.value, i.role) for i in items] == [("cpus", "4", None), ("mem", "8192", "ml"),
                                                           ("ports", "[31000-32000]", None), ("ids", "{a,b}", None)]
    assert items[0].part == "cpus(*):4"


def test_amounts_to_size_a_cluster_are_unreserved() -> None:
    """A role here would be dropped silently, and the operator would believe resources reserved."""
    with pytest.raises(ResourceTextError, match=r"'cpus\(ml\):2': a role cannot be given here"):
        scalar_resources("cpus(ml):2;mem:1024")
    assert scalar_resources("cpus(*):2") == {"cpus": 2.0}


def test_scalars_are_summed_by_name() -> None:
    assert scalar_resources("cpus:1.5;mem:1024;cpus:0.5") == {"cpus": 2.0, "mem": 1024.0}
    assert scalar_resources("") == {}


@pytest.mark.parametrize("text, where", [("cpus", "'cpus'"), ("cpus:2;:3", "':3'"), ("mem:lots", "'mem:lots'")],
                         ids=["no-value", "no-name", "not-a-number"])
def test_a_bad_part_is_named(text, where) -> None:
    with pytest.raises(ResourceTextError, match=where):
        scalar_resources(text)

"""Field positions in protobuf text, used to point errors at a line and column."""

from __future__ import annotations

from scylla_singa.jobconf.locate import field_positions, find_field

TEXT = '''name: "j"  # a comment with cluster { inside
neuralnet {
  layer { name: "a" }
  layer {
    name: "b"
    innerproduct_conf: { num_output: -1 }
  }
}
cluster {
  nworkers_per_procs: 2
}
'''


def test_positions_of_nested_and_repeated_fields() -> None:
    pos = field_positions(TEXT)
    assert pos["name"] == (1, 1)
    assert pos["neuralnet[0].layer[1].name"] == (5, 5)
    assert pos["neuralnet[0].layer[1].innerproduct_conf[0].num_output"] == (6, 26)
    assert pos["cluster[0].nworkers_per_procs"] == (10, 3)


def test_find_field_falls_back_to_the_enclosing_message() -> None:
    assert find_field(TEXT, "cluster.nworkers_per_procs") == (10, 3)
    assert find_field(TEXT, "cluster.nservers_per_procs") == (9, 1)
    assert find_field(TEXT, "neuralnet.layer[1].innerproduct_conf.num_output") == (6, 26)
    assert find_field(TEXT, "updater.type") is None


def test_comments_and_strings_are_not_fields() -> None:
    pos = field_positions('name: "cluster { x: 1 }"  # cluster {\ntrain_steps: 3\n')
    assert set(pos) == {"name", "train_steps"}

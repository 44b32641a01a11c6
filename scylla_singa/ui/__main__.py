"""`python -m scylla_singa.ui`: the same as `scylla-singa ui`."""

from .cli import ui

ui(prog_name="scylla-singa ui")

"""`python -m scylla_singa` is the `scylla-singa` command."""

from .cli import main

main(prog_name="scylla-singa")

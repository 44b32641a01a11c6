"""The built-in placement policies, one YAML file each.

pyproject.toml maps this directory into the package
scylla_singa.placement.builtin_policies, so the policies ship inside the
wheel and `--policy NAME` finds them in an installed scylla-singa too; this
file only makes the directory that package.
"""

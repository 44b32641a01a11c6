"""The security suite: every attack of docs/security.md tried against real components and refused.

Each test names the attack it tries in its docstring and asserts the reason
the refusal gives, not only that something failed.
"""

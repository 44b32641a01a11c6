"""Placement: where each process of a job goes, as a pure function over the agents' offers.

    place            place(plan, agents, policy) -> Placed | NotPlaced (with every agent's reason)
    policy           policy YAML -> a wired pipeline; the built-in policies (builtin_policies/)
    registry         plugin names (and constraint keys) -> plugin classes
    plugins/         filter plugins (who can host) and score plugins (who is best); each validates its own args
    snapshot         AgentView (an agent as the offers show it), Cycle (the per-cycle overlay)
    order            the order processes are placed in;  refine  local search lowering cross-agent traffic
    fit_status       "does not fit" as a value (Code, Status, Reason(kind, detail))
    resource_vector  cpus/mem/gpus as a small immutable vector
    yamlmarks        YAML with line/column of every value, for FILE:LINE:COL errors
"""

"""Docker Swarm: the engine as a swarm manager, and each job's attachable overlay network.

    overlays       swarm membership, job networks (create, find, remove), the isolation rule
    overlay_check  the smoke check: two containers on a fresh overlay, one reaching the other by name
"""

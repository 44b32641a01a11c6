"""Clusters: a cluster-in-a-box on one machine (up/down), and a cluster of separate machines (init/join/leave).

`scylla-singa cluster up` builds hosts from network namespaces, each with its
own Docker engine, joins them to the host engine's swarm, loads the images,
and starts the services (Apache HDFS, Apache ZooKeeper, masters, agents).
`cluster down` undoes it all, from the state file or by discovery.

Modules, one job each:
    config     the cluster's parameters, names and addresses (pure)
    resource_plan  what `up` creates, as an ordered list of resources (pure)
    kinds      create / destroy for each kind of resource
    up_down    `up` and `down`: the thin shell executing a plan and undoing it
    state      the state file, and `box_cluster()` (the cluster-in-a-box that is up)
    local      `local_cluster()` for other parts: a cluster-in-a-box, else this machine's membership
    discover   finding what a crashed `up` left behind, and sweeping it
    sh         running commands (the one place that shells out)
    netns      namespaces, veth links, the bridge, iptables rules
    engines    per-node dockerd: start, wait, stop, sweep
    swarmjoin  node engines joining the host swarm as workers, and leaving it
    services   HDFS and ZooKeeper containers on the services network
    launcher   masters and agents as processes in namespaces
    liveness   what is alive in a running cluster
    crossnode  the cross-host overlay check; checks: `cluster check`
    faults     cutting off / killing hosts and processes (for fault tests)

On separate machines (`cluster init` on the first, `cluster join` on the others):
    membership     what init, join and leave share: engine, address, master calls, the agent
    first_machine  `init` and join tokens; joining: `join`; leaving: `leave`
    join_token     the token's format, checksum and expiry (pure)
    member_state   what init/join made on this machine (write-ahead), and the ClusterInfo `run` reads
    member_status  `cluster status` of such a machine: every machine, role, health
    member_guard   iptables in front of the unauthenticated services, following the swarm
    master_client  calls to the leading master, following a standby's redirect with credentials
    machine_facts  what a machine offers (reading thin, arithmetic pure)
    supervisor     systemd units, or a supervisor process, for the agent and masters

Images reach the node engines through scylla_singa.images.node_sync; the
commands are scylla_singa.cli.cluster_commands.
"""

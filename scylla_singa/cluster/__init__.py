"""Cluster-in-a-box: several Docker hosts on one machine, joined into one Swarm.

`scylla-singa cluster up` builds hosts from network namespaces, each with its
own Docker engine, joins them to the host engine's swarm, loads the images,
and starts the services (Apache HDFS, Apache ZooKeeper, masters, agents).
`cluster down` undoes it all, from the state file or by discovery.

Modules, one job each:
    config     the cluster's parameters, names and addresses (pure)
    resource_plan  what `up` creates, as an ordered list of resources (pure)
    kinds      create / destroy for each kind of resource
    up_down    `up` and `down`: the thin shell executing a plan and undoing it
    state      the state file, and `local_cluster()` for other parts
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

Images reach the node engines through scylla_singa.images.node_sync; the
commands are scylla_singa.cli.cluster_commands.
"""

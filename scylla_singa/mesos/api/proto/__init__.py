"""Generated Mesos v1 protobuf modules (run `make proto` after editing a .proto).

mesos_pb2 (mesos.v1), scheduler_pb2, executor_pb2, master_pb2, agent_pb2,
quota_pb2, maintenance_pb2, allocator_pb2. The .proto files import each other
by their path from the repository root, so the generated modules import
`scylla_singa.mesos.api.proto.<name>_pb2`.
"""

"""The public Mesos v1 API as the master, agents and clients see it on the wire.

`proto/` holds our .proto files for Mesos's v1 messages (Mesos's own package,
message and field names and numbers) and their generated *_pb2 modules;
`codec` turns request bodies in `application/json` or
`application/x-protobuf` into the dicts the master handles, and back.
"""

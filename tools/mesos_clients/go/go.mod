// Pinned versions of mesos-go (v0.0.11, its last release) and of the
// dependencies its commands build with. mesos-go has no go.mod of its own,
// so every dependency is pinned here: its example-scheduler needs
// prometheus.Handler, gone after client_golang v0.9.
module scylla/mesosclients

go 1.21

require github.com/mesos/mesos-go v0.0.11

require (
	github.com/beorn7/perks v1.0.0 // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/golang/protobuf v1.3.1 // indirect
	github.com/google/uuid v1.0.0 // indirect
	github.com/matttproud/golang_protobuf_extensions v1.0.1 // indirect
	github.com/pborman/uuid v1.2.1 // indirect
	github.com/pquerna/ffjson v0.0.0-20190930134022-aa0246cd15f7 // indirect
	github.com/prometheus/client_golang v0.9.4 // indirect
	github.com/prometheus/client_model v0.0.0-20190129233127-fd36f4220a90 // indirect
	github.com/prometheus/common v0.4.1 // indirect
	github.com/prometheus/procfs v0.0.2 // indirect
)

//go:build tools

// Package mesosclients pins the third-party Mesos clients that
// tools/ensure_mesos_clients.sh builds for the compatibility tests.
// Nothing here is ours but this list: the commands are mesos-go's own.
package mesosclients

import (
	_ "github.com/mesos/mesos-go/api/v1/cmd/example-executor"
	_ "github.com/mesos/mesos-go/api/v1/cmd/example-scheduler"
	_ "github.com/mesos/mesos-go/api/v1/cmd/msh"
	_ "github.com/mesos/mesos-go/api/v1/cmd/mwatch"
)

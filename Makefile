# scylla-singa: `make demo` runs the main job, `make test` runs every test.
# Both set up everything first (Python env, Docker engine, images); re-running
# setup when all is in place takes seconds.
SHELL := /bin/bash
BIN := .venv/bin
PYTEST_ARGS ?=
SIZE ?= quick

.PHONY: help setup venv engine images demo test proto bench clean

help:
	@echo "make demo    set up, then run the example job (examples/digits-mlp)"
	@echo "make test    set up, then check the layers (lint-imports) and run the whole test suite"
	@echo "make setup   Python env in .venv, a Docker engine, the images"
	@echo "make images  build the Docker images (no registry needed)"
	@echo "make proto   regenerate the *_pb2.py files (job.proto, common.proto, the Mesos v1 .proto files)"
	@echo "make bench   run the benchmarks, write docs/benchmarks.md (SIZE=quick|full, ONLY=name,...)"

setup: images

venv:
	@tools/ensure_venv.sh

engine:
	@tools/ensure_docker.sh

images: venv engine
	@$(BIN)/scylla-singa images build

demo: setup
	$(BIN)/scylla-singa run --image singa:latest --linger 30s examples/digits-mlp/job.conf

test: setup
	@tools/ensure_browser.sh
	@tools/ensure_mesos_clients.sh
	$(BIN)/lint-imports
	MESOS_HOME=$$(tools/ensure_mesos.sh) SCYLLA_LEAK_CHECK=1 $(BIN)/pytest $(PYTEST_ARGS)

bench: setup
	$(BIN)/python -m bench.run --size $(SIZE) $(if $(ONLY),--only $(ONLY))

MESOS_PROTO_DIR := scylla_singa/mesos/api/proto

proto: venv
	$(BIN)/python -m grpc_tools.protoc -Iscylla_singa/jobconf --python_out=scylla_singa/jobconf \
		scylla_singa/jobconf/job.proto scylla_singa/jobconf/common.proto
	$(BIN)/python -m grpc_tools.protoc -I. --python_out=. $(wildcard $(MESOS_PROTO_DIR)/*.proto)

clean:
	rm -rf .venv .cache .pytest_cache .hypothesis

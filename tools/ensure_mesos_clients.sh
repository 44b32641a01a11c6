#!/usr/bin/env bash
# Installs the third-party Mesos clients the compatibility tests drive, from the
# registries, into .cache/clients/. Idempotent: a stamp keyed on this script and
# the pinned Go module makes a re-run instant.
#
# Why a script: issue 15's tests run clients that nobody here wrote, as shipped:
#   - mesos-go v0.0.11 (Go module proxy): example-scheduler + example-executor,
#     msh, mwatch -> .cache/clients/bin/ (versions pinned in tools/mesos_clients/go/);
#   - github.com/mesos/mesos_exporter (Go module proxy) -> .cache/clients/bin/,
#     when the proxy serves it (it answers 403 "not available" here; then noted
#     in .cache/clients/UNAVAILABLE and skipped);
#   - mesoshttp 0.4.2, avmesos 0.4.2, avmesos-cli 1.3.0 (PyPI) in their own venv
#     .cache/clients/venv (avmesos-cli 1.3 needs Python >= 3.12: CLIENTS_PYTHON,
#     else python3.13/python3.12 on PATH or under pyenv; else 3.11 with
#     avmesos-cli 1.0.0, noted in UNAVAILABLE);
#   - @dcos/mesos-client 1.0.0 (npm) with xhr2 0.2.1 (its XMLHttpRequest in Node)
#     -> .cache/clients/node.
# Needs go, python3 and npm on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CLIENTS=$ROOT/.cache/clients
GO_PINS=$ROOT/tools/mesos_clients/go
STAMP=$CLIENTS/.stamp
MESOS_GO_COMMANDS=(example-scheduler example-executor msh mwatch)
EXPORTER=github.com/mesos/mesos_exporter
EXPORTER_VERSION=v1.1.2

want=$(cat "$0" "$GO_PINS"/go.mod "$GO_PINS"/go.sum "$GO_PINS"/tools.go | sha256sum | cut -c1-16)
installed() {
  local c
  for c in "${MESOS_GO_COMMANDS[@]}"; do [[ -x $CLIENTS/bin/$c ]] || return 1; done
  [[ -x $CLIENTS/venv/bin/mesos-cli && -d $CLIENTS/node/node_modules/@dcos/mesos-client ]]
}
if [[ -f $STAMP && $(cat "$STAMP") == "$want" ]] && installed; then
  exit 0
fi

for tool in go npm python3; do
  command -v "$tool" >/dev/null || { echo "error: '$tool' is not on PATH; it is needed to install the Mesos clients" >&2; exit 1; }
done
mkdir -p "$CLIENTS/bin" "$CLIENTS/go/src"
: > "$CLIENTS/UNAVAILABLE"

echo "==> mesos-go commands (Go module proxy)"
export GOMODCACHE=$CLIENTS/go/mod GOCACHE=$CLIENTS/go/cache GOPATH=$CLIENTS/go/path GOFLAGS="-modcacherw -mod=mod" GOTOOLCHAIN=local
cp "$GO_PINS"/go.mod "$GO_PINS"/go.sum "$GO_PINS"/tools.go "$CLIENTS/go/src/"
(cd "$CLIENTS/go/src" && go build -o "$CLIENTS/bin/" \
  $(printf 'github.com/mesos/mesos-go/api/v1/cmd/%s ' "${MESOS_GO_COMMANDS[@]}"))

echo "==> $EXPORTER (Go module proxy)"
if (cd "$CLIENTS/go/src" && go mod download "$EXPORTER@$EXPORTER_VERSION") 2>"$CLIENTS/go/exporter.err"; then
  (cd "$CLIENTS/go/src" && go get "$EXPORTER@$EXPORTER_VERSION" && go build -o "$CLIENTS/bin/" "$EXPORTER")
else
  reason=$(tr '\n' ' ' < "$CLIENTS/go/exporter.err")
  echo "    not installed: $reason" >&2
  echo "mesos_exporter $EXPORTER_VERSION: $reason" >> "$CLIENTS/UNAVAILABLE"
fi

echo "==> mesoshttp, avmesos, avmesos-cli (PyPI) in .cache/clients/venv"
find_python() {
  local p
  for p in "${CLIENTS_PYTHON:-}" python3.13 python3.12 "$HOME"/.pyenv/versions/3.13*/bin/python3 "$HOME"/.pyenv/versions/3.12*/bin/python3; do
    [[ -n $p ]] && command -v "$p" >/dev/null 2>&1 && "$p" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null && { echo "$p"; return; }
  done
  return 1
}
cli_version=1.3.0
if ! python=$(find_python); then
  python=python3
  cli_version=1.0.0
  echo "avmesos-cli 1.3.0: needs Python >= 3.12 (none found; set CLIENTS_PYTHON); installed 1.0.0" >> "$CLIENTS/UNAVAILABLE"
fi
if [[ ! -x $CLIENTS/venv/bin/python ]] || ! "$CLIENTS/venv/bin/python" -c 'import sys; sys.exit(0)' 2>/dev/null; then
  rm -rf "$CLIENTS/venv"
  "$python" -m venv "$CLIENTS/venv"
fi
"$CLIENTS/venv/bin/python" -m pip install -q --disable-pip-version-check \
  mesoshttp==0.4.2 avmesos==0.4.2 "avmesos-cli==$cli_version"

echo "==> @dcos/mesos-client (npm) in .cache/clients/node"
mkdir -p "$CLIENTS/node"
npm install --prefix "$CLIENTS/node" --no-audit --no-fund --silent @dcos/mesos-client@1.0.0 xhr2@0.2.1

installed || { echo "error: some clients are missing after the install (see above)" >&2; exit 1; }
echo "$want" > "$STAMP"
echo "==> clients in $CLIENTS: $(ls "$CLIENTS/bin" | tr '\n' ' ')"
if [[ -s $CLIENTS/UNAVAILABLE ]]; then
  echo "==> not available from the registries:" >&2
  sed 's/^/    /' "$CLIENTS/UNAVAILABLE" >&2
fi

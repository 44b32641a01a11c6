#!/usr/bin/env bash
# Makes sure a Docker engine answers, plus the host tools the images and the
# cluster-in-a-box need (debootstrap, busybox-static, iproute2, iptables,
# docker-compose for the compose/ files, maven for the Java images' jars).
# Uses the engine at DOCKER_HOST or /var/run/docker.sock when it answers;
# otherwise, as root on Debian, installs Debian's docker.io and starts dockerd
# in the background (these machines have no init system to do it).
set -euo pipefail

NEED_PKGS=(docker.io docker-compose iproute2 iptables debootstrap busybox-static maven openssl)
NEED_CMDS=(docker dockerd docker-compose ip iptables nsenter debootstrap busybox mvn openssl)
LOG=/var/log/scylla-dockerd.log

engine_answers() { timeout 10 docker info >/dev/null 2>&1; }

missing_cmds() {
  local c out=()
  for c in "${NEED_CMDS[@]}"; do
    command -v "$c" >/dev/null 2>&1 || [[ -x /usr/sbin/$c || -x /sbin/$c || -x /bin/$c ]] || out+=("$c")
  done
  echo "${out[@]:-}"
}

install_packages() {
  if [[ $(id -u) -ne 0 || ! -x /usr/bin/apt-get ]]; then
    echo "error: missing $(missing_cmds) and cannot install them here (needs root on Debian/Ubuntu)." >&2
    echo "       install Docker Engine (docker.io), docker-compose, iproute2, iptables, debootstrap, busybox-static, maven and openssl, start dockerd, then re-run." >&2
    exit 1
  fi
  echo "==> installing ${NEED_PKGS[*]} from Debian"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${NEED_PKGS[@]}" >/dev/null
}

start_dockerd() {
  echo "==> starting dockerd in the background (log: $LOG)"
  # A pidfile left by a daemon that is gone would stop dockerd from starting.
  if [[ -f /var/run/docker.pid ]] && ! kill -0 "$(cat /var/run/docker.pid)" 2>/dev/null; then
    rm -f /var/run/docker.pid
  fi
  nohup dockerd >>"$LOG" 2>&1 </dev/null &
  local deadline=$((SECONDS + 90))
  until engine_answers; do
    if ((SECONDS > deadline)); then
      echo "error: dockerd did not answer within 90 s; last lines of $LOG:" >&2
      tail -n 20 "$LOG" >&2 || true
      exit 1
    fi
    sleep 1
  done
}

[[ -z $(missing_cmds) ]] || install_packages
if engine_answers; then
  exit 0
fi
if [[ -n ${DOCKER_HOST:-} ]]; then
  echo "error: DOCKER_HOST=$DOCKER_HOST does not answer ('docker info' failed); start that engine or unset DOCKER_HOST." >&2
  exit 1
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "error: no Docker engine answers at /var/run/docker.sock; start dockerd (or set DOCKER_HOST) and re-run." >&2
  exit 1
fi
start_dockerd

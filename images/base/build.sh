#!/usr/bin/env bash
# Builds the Debian base image offline: debootstrap --variant=minbase from the
# Debian mirror this host's apt uses, then `docker import`. About 45 s.
# Usage: build.sh TAG
set -euo pipefail
TAG=${1:-debian:bookworm-slim}
SUITE=bookworm

mirror() {
  local uri
  uri=$(grep -h -E '^(URIs:|deb )' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null \
        | grep -v -E 'security|nodesource|google|docker' \
        | sed -E 's/^URIs:[[:space:]]*//; s/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?//' \
        | awk '{print $1}' | grep -E '/debian/?$' | head -n 1)
  echo "${uri:-http://deb.debian.org/debian}"
}

MIRROR=$(mirror)
ROOTFS=$(mktemp -d /tmp/scylla-base.XXXXXX)
trap 'rm -rf "$ROOTFS"' EXIT
echo "  debootstrap $SUITE from $MIRROR (once, ~45 s)"
if ! debootstrap --variant=minbase "$SUITE" "$ROOTFS" "$MIRROR" >"$ROOTFS.log" 2>&1; then
  tail -n 30 "$ROOTFS.log" >&2
  rm -f "$ROOTFS.log"
  echo "error: debootstrap from $MIRROR failed (see above)" >&2
  exit 1
fi
rm -f "$ROOTFS.log"
# Like the official slim image: no apt caches, no docs.
rm -rf "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/cache/apt/*.bin "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/*
echo "deb $MIRROR $SUITE main" > "$ROOTFS/etc/apt/sources.list"
tar -C "$ROOTFS" -c . | docker import -c 'CMD ["bash"]' - "$TAG" >/dev/null

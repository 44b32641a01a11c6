#!/usr/bin/env bash
# Makes sure Debian's Chromium is at /usr/bin/chromium for the browser tests
# (tests/docker/ui, driven by Python's playwright with executable_path; no
# browser is ever downloaded by playwright). Idempotent: nothing to do when
# the binary is there; otherwise, as root on Debian, installs `chromium`.
set -euo pipefail

BROWSER=/usr/bin/chromium

if [[ -x $BROWSER ]]; then
  exit 0
fi
if [[ $(id -u) -ne 0 || ! -x /usr/bin/apt-get ]]; then
  echo "error: $BROWSER is missing and cannot be installed here (needs root on Debian/Ubuntu)." >&2
  echo "       install Debian's chromium package (apt-get install chromium), then re-run." >&2
  exit 1
fi
echo "==> installing chromium from Debian (for the browser tests)"
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
if [[ ! -x $BROWSER ]]; then
  echo "error: chromium was installed but $BROWSER is not there." >&2
  exit 1
fi

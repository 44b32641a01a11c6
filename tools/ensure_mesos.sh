#!/usr/bin/env bash
# Makes a real Apache Mesos 1.12 install usable on this machine, once, and
# prints its home (the directory holding bin/mesos-master) on stdout, so that
#     MESOS_HOME=$(tools/ensure_mesos.sh)
# works. Everything else goes to stderr.
#
# Why a script: the project tests its framework against the real Mesos master
# and agent, not only against its own; that binary build needs Debian 12's
# shared libraries (gRPC, protobuf, ZooKeeper's C client, APR, SVN ...) and
# must be unpacked somewhere writable. Idempotent: the packages are installed
# only when one is missing, and the archive is unpacked only when
# .cache/mesos/<checksum>/ lacks a complete copy (seconds on a re-run).
#
# The archive is the binary build of Mesos 1.12.0 for Debian 12 amd64
# (mesos-1.12.0-bin-debian12-amd64.tar.xz). Where it is looked for, first hit
# wins:
#   --archive PATH | MESOS_ARCHIVE=PATH
#   <repo>/../shared/mesos/mesos-1.12.0-bin-debian12-amd64.tar.xz
#   /work/shared/mesos/mesos-1.12.0-bin-debian12-amd64.tar.xz
# Its sha256 must be MESOS_ARCHIVE_SHA256 (default: the known build's), so a
# user can supply their own build of the same release by setting both.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

ARCHIVE_NAME=mesos-1.12.0-bin-debian12-amd64.tar.xz
KNOWN_SHA256=68e70ae71caf11213b529741b992aa3fc8cdbfee98a40b523b93eb7d8325ef9d
WANT_SHA256=${MESOS_ARCHIVE_SHA256:-$KNOWN_SHA256}
CACHE=$ROOT/.cache/mesos

# Debian 12 packages the binaries link against (found with ldd on the build).
RUNTIME_PKGS=(
  libabsl20220623 libacl1 libapr1 libaprutil1 libarchive13 libbrotli1 libbz2-1.0 libc-ares2 libc6
  libcom-err2 libcrypt1 libcurl4 libexpat1 libffi8 libgcc-s1 libgmp10 libgnutls30 libgrpc++1.51
  libgrpc29 libgssapi-krb5-2 libhogweed6 libicu72 libidn2-0 libk5crypto3 libkeyutils1 libkrb5-3
  libkrb5support0 libldap-2.5-0 liblz4-1 liblzma5 libnettle8 libnghttp2-14 libp11-kit0 libprotobuf32
  libpsl5 librtmp1 libsasl2-2 libsqlite3-0 libssh2-1 libssl3 libstdc++6 libsvn1 libtasn1-6
  libunistring2 libutf8proc2 libuuid1 libxml2 libzookeeper-mt2 libzstd1 zlib1g
  # not linked, loaded: the SASL CRAM-MD5 mechanism agents authenticate to the master with
  libsasl2-modules
)

say() { echo "$*" >&2; }
die() { say "error: $*"; exit 1; }

usage() {
  say "usage: tools/ensure_mesos.sh [--archive PATH]"
  say "  installs Mesos's Debian runtime packages, unpacks the archive into .cache/mesos/ and prints MESOS_HOME."
  say "  PATH (or MESOS_ARCHIVE) is $ARCHIVE_NAME; MESOS_ARCHIVE_SHA256 overrides its expected checksum."
}

archive=${MESOS_ARCHIVE:-}
while (($#)); do
  case $1 in
    --archive) [[ $# -ge 2 ]] || { usage; exit 2; }; archive=$2; shift 2 ;;
    --archive=*) archive=${1#--archive=}; shift ;;
    -h|--help) usage; exit 0 ;;
    *) say "error: unknown argument '$1'"; usage; exit 2 ;;
  esac
done

find_archive() {
  if [[ -n $archive ]]; then
    [[ -f $archive ]] || die "the Mesos archive '$archive' (from --archive or MESOS_ARCHIVE) does not exist; point MESOS_ARCHIVE at $ARCHIVE_NAME."
    echo "$archive"; return
  fi
  local c
  for c in "$ROOT/../shared/mesos/$ARCHIVE_NAME" "/work/shared/mesos/$ARCHIVE_NAME"; do
    [[ -f $c ]] && { echo "$c"; return; }
  done
  die "no Mesos archive found (looked in $ROOT/../shared/mesos/ and /work/shared/mesos/); set MESOS_ARCHIVE=/path/to/$ARCHIVE_NAME or pass --archive."
}

missing_pkgs() {
  # dpkg-query prints nothing for a package it does not know, so compare names.
  local installed p out=()
  installed=$(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${RUNTIME_PKGS[@]}" 2>/dev/null \
    | awk '$2 == "installed" {sub(/:.*/, "", $1); print $1}')
  for p in "${RUNTIME_PKGS[@]}"; do
    grep -qxF "$p" <<<"$installed" || out+=("$p")
  done
  echo "${out[@]:-}"
}

install_pkgs() {
  local missing
  command -v dpkg-query >/dev/null || die "this is not a Debian system (no dpkg-query); the Mesos build needs Debian 12's libraries: ${RUNTIME_PKGS[*]}"
  missing=$(missing_pkgs)
  [[ -z $missing ]] && return
  if [[ $(id -u) -ne 0 ]]; then
    die "Mesos needs these Debian packages, and installing them needs root: $missing (run: apt-get install $missing)"
  fi
  say "==> installing Mesos's runtime packages: $missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

unpacked_home() {
  local dest=$CACHE/${WANT_SHA256:0:16}
  [[ -f $dest/.complete && -x $dest/mesos-1.12.0/bin/mesos-master ]] && echo "$dest/mesos-1.12.0"
  return 0
}

unpack() {
  local src=$1 sum dest tmp
  dest=$CACHE/${WANT_SHA256:0:16}
  say "==> checking $src"
  sum=$(sha256sum "$src" | cut -d' ' -f1)
  [[ $sum == "$WANT_SHA256" ]] || die "the Mesos archive $src has sha256 $sum, expected $WANT_SHA256; use the original $ARCHIVE_NAME (or set MESOS_ARCHIVE_SHA256 for a build of your own)."
  say "==> unpacking it into $dest"
  mkdir -p "$CACHE"
  tmp=$(mktemp -d "$CACHE/.unpack.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  tar -xJf "$src" -C "$tmp"
  [[ -x $tmp/mesos-1.12.0/bin/mesos-master && -x $tmp/mesos-1.12.0/bin/mesos-agent && -d $tmp/mesos-1.12.0/libexec ]] \
    || die "$src does not hold mesos-1.12.0/bin/mesos-master, bin/mesos-agent and libexec/; is it $ARCHIVE_NAME?"
  rm -rf "$dest"
  mv "$tmp" "$dest"
  trap - EXIT
  touch "$dest/.complete"
  echo "$dest/mesos-1.12.0"
}

check_runs() {
  local home=$1 out
  out=$("$home/bin/mesos-master" --version 2>&1) \
    || die "$home/bin/mesos-master does not start: $out (a missing library? ldd $home/bin/mesos-master | grep 'not found')"
  say "==> $out at $home"
}

install_pkgs
home=$(unpacked_home)
if [[ -z $home ]]; then
  src=$(find_archive)
  home=$(unpack "$src")
fi
check_runs "$home"
echo "$home"

#!/usr/bin/env bash
# Fetches one pinned Node binary and prints its bin directory (the only line on stdout).
#   scripts/fetch-node.sh 24          the pinned 24.x (below); 22 likewise
#   scripts/fetch-node.sh 24.21.0     that exact version
# The binary is the registry package node-<os>-<arch>@<version>, fetched with `npm pack` (the
# registry's integrity check applies) into .tmp/node-versions/node-<version>/ and reused from
# there. Used by scripts/node-versions.sh (tests on other Nodes) and bench/request-path.mjs
# (--node). The pins are raised on purpose, so that a new Node release changes no result unseen.
set -uo pipefail
cd "$(dirname "$0")/.."

case "${1:?usage: scripts/fetch-node.sh MAJOR|VERSION}" in
  22) version=22.23.3 ;;
  24) version=24.21.0 ;;
  *) version=$1 ;;
esac
cache=.tmp/node-versions
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) arch=$(uname -m) ;;
esac
os=$(uname -s | tr '[:upper:]' '[:lower:]')
dir="$cache/node-$version"
mkdir -p "$cache"
if [ ! -x "$dir/bin/node" ]; then
  echo "== fetching node-$os-$arch@$version" >&2
  rm -rf "$dir" "$cache"/node-"$os"-"$arch"-"$version".*.tgz
  tgz=$(npm pack --silent --pack-destination "$cache" "node-$os-$arch@$version" 2>/dev/null | tail -n 1)
  if [ -z "$tgz" ] || [ ! -f "$cache/$tgz" ]; then
    echo "error: could not fetch node-$os-$arch@$version" >&2
    exit 1
  fi
  mkdir -p "$dir" && tar -xzf "$cache/$tgz" -C "$dir" --strip-components=1 && rm -f "$cache/$tgz" || exit 1
fi
cd "$dir/bin" && pwd

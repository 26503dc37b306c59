#!/usr/bin/env bash
# Runs the tests on the other supported Node versions (default 22.23.3 and 24.21.0, pinned so that a
# new Node release cannot change a CI result unseen; raise them on purpose) next to the machine's own
# Node: the unit tests (dist/src, which hold the state contract suites) plus test/gateway and
# test/security. Each Node binary is the registry package node-<os>-<arch>@<major>, fetched with
# `npm pack` (the registry's integrity check applies) into .tmp/node-versions/ and reused from there
# (scripts/fetch-node.sh, which holds the pins).
#
#   scripts/node-versions.sh                   22 and 24
#   NODE_VERSIONS="24" scripts/node-versions.sh
#   scripts/node-versions.sh dist/test/cli/     other test filters (paths under dist/) instead
#
# The compiled tests and node_modules are shared with the machine's Node: TypeScript's output
# does not depend on the runtime, and the one native addon (better-sqlite3, built for the
# machine's Node) is never loaded on Node 22.13+ and 24, where the SQLite state uses node:sqlite.
# Exit status: non-zero when any run failed or a Node could not be fetched.
set -uo pipefail
cd "$(dirname "$0")/.."

versions=${NODE_VERSIONS:-22 24}
if [ $# -gt 0 ]; then filters=("$@"); else filters=(dist/test/gateway/ dist/test/security/); fi

[ -d dist/src ] || npm run build || exit 1

status=0
summary=()
for major in $versions; do
  if ! bin=$(scripts/fetch-node.sh "$major"); then
    status=1
    summary+=("node $major: not fetched")
    continue
  fi
  v=$("$bin/node" --version)
  for run in "--unit" "${filters[*]}"; do
    echo "== Node $v: node scripts/test.mjs $run"
    start=$SECONDS
    # shellcheck disable=SC2086 # the filters are separate words
    PATH="$bin:$PATH" node scripts/test.mjs $run
    rc=$?
    [ $rc -eq 0 ] || status=1
    summary+=("Node $v, $run: $([ $rc -eq 0 ] && echo passed || echo "FAILED ($rc)") in $((SECONDS - start)) s")
  done
done

echo "== other Node versions"
printf '%s\n' "${summary[@]}"
exit $status

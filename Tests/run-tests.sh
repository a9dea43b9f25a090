#!/usr/bin/env bash
# The test command (README, "Set up"; .ci/run calls it too). Installs what the tests need and is
# missing, then runs `swift test` with the arguments given (e.g. `Tests/run-tests.sh --filter Syncthing`):
#   zlib1g-dev  headers of the system zlib (the example PNG codec links it)
#   syncthing   the tests with two real linked Syncthing instances (SyncthingConflictTests)
#   rclone      the tests with real `rclone bisync` runs (RcloneBisyncConflictTests)
# Installs with apt-get (sudo when not root). Without apt-get it says what is missing and runs the
# tests anyway: the real-tool tests then skip with an install hint, or fail when CI is set.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
command -v syncthing >/dev/null 2>&1 || missing+=(syncthing)
command -v rclone >/dev/null 2>&1 || missing+=(rclone)

if ((${#missing[@]})); then
  if command -v apt-get >/dev/null 2>&1; then
    echo "== installing ${missing[*]} with apt-get"
    sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  else
    echo "== missing: ${missing[*]} (no apt-get here: install them with your package manager)" >&2
  fi
fi

exec swift test "$@"

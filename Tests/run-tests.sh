#!/usr/bin/env bash
# The test command (README, "Set up"; .ci/run calls it too). Installs what the tests need and is
# missing, then runs `swift test` with the arguments given (e.g. `Tests/run-tests.sh --filter Syncthing`):
#   zlib1g-dev  headers of the system zlib (the example PNG codec links it)
#   libsqlite3-dev  headers of the system SQLite (ManagedDocuments' local record store links it)
#   syncthing   the tests with two real linked Syncthing instances (SyncthingConflictTests)
#   rclone      the tests with real `rclone bisync` runs (RcloneBisyncConflictTests) and
#               `rclone serve webdav` (WebDAVProbeTests)
#   apache2     the WebDAV store's tests against a private Apache mod_dav (WebDAV*Tests); installed
#               with a policy-rc.d that keeps the system-wide apache2 service from starting
#   wsgidav     WsgiDAV 4 + cheroot from PyPI, in a virtualenv under the cache folder
#               ($WSGIDAV_VENV, default ~/.cache/clouddocs-tests/wsgidav-venv; python3-venv from
#               apt-get when missing), for WebDAVProbeTests
# Installs with apt-get (sudo when not root). Without apt-get it says what is missing and runs the
# tests anyway: the real-tool tests then skip with an install hint, or fail when CI is set.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
[ -f /usr/include/sqlite3.h ] || missing+=(libsqlite3-dev)
command -v syncthing >/dev/null 2>&1 || missing+=(syncthing)
command -v rclone >/dev/null 2>&1 || missing+=(rclone)
command -v apache2 >/dev/null 2>&1 || [ -x /usr/sbin/apache2 ] || missing+=(apache2)
wsgidav_venv=${WSGIDAV_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/clouddocs-tests/wsgidav-venv}
need_wsgidav=
command -v wsgidav >/dev/null 2>&1 || [ -x "$wsgidav_venv/bin/wsgidav" ] || need_wsgidav=1
if [ -n "$need_wsgidav" ] && ! python3 -m venv --help >/dev/null 2>&1; then missing+=(python3-venv); fi

if ((${#missing[@]})); then
  if command -v apt-get >/dev/null 2>&1; then
    echo "== installing ${missing[*]} with apt-get"
    sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq
    # policy-rc.d (exit 101) keeps the packages from starting system-wide services (apache2)
    # while they install; removed again afterwards, and only if this script made it.
    policy=
    if [ ! -e /usr/sbin/policy-rc.d ]; then
      printf '#!/bin/sh\nexit 101\n' | $sudo tee /usr/sbin/policy-rc.d >/dev/null
      $sudo chmod +x /usr/sbin/policy-rc.d
      policy=1
    fi
    status=0
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" || status=$?
    if [ -n "$policy" ]; then $sudo rm -f /usr/sbin/policy-rc.d; fi
    [ "$status" = 0 ] || exit "$status"
  else
    echo "== missing: ${missing[*]} (no apt-get here: install them with your package manager)" >&2
  fi
fi

if [ -n "$need_wsgidav" ]; then
  echo "== installing WsgiDAV into $wsgidav_venv (pip)"
  mkdir -p "$(dirname "$wsgidav_venv")"
  if python3 -m venv "$wsgidav_venv" \
      && "$wsgidav_venv/bin/pip" install -q --disable-pip-version-check "wsgidav>=4,<5" cheroot; then
    :
  else
    echo "== could not install WsgiDAV (the WsgiDAV probe test will skip, or fail when CI is set)" >&2
    rm -rf "$wsgidav_venv"
  fi
fi
export WSGIDAV_VENV=$wsgidav_venv

exec swift test "$@"

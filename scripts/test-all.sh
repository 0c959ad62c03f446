#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh Debian/Ubuntu machine, then runs every test.
#   Java 17 (DynamoDB Local runs on it) and Chromium (browser tests), through apt-get when missing;
#   the npm dependencies (npm install, from the lock file); then the type check and the whole jest suite.
set -uo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive

missing=()
command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jre-headless)
[ -x /usr/bin/chromium ] || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing ${missing[*]} with apt-get"
  $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || {
    echo "apt-get could not install ${missing[*]}"
    exit 1
  }
fi

# npm ci would refuse this lock file: the registry here lacks other platforms' optional binaries
# (swc, jest's resolver), which npm install skips as it should. The lock still pins every version.
npm install --no-audit --no-fund --loglevel=error || exit 1
npm run typecheck || exit 1
npm test

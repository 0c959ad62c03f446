#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh Debian/Ubuntu machine, then runs every test.
#   Java 17 (DynamoDB Local runs on it), Chromium (browser tests) and what AWS's Lambda runtime interface
#   client builds with (cmake, make, g++, python3, libcurl's headers), through apt-get when missing;
#   the runtime interface client in its own folder (test/infra/lambda-ric, for the Lambda runtime test
#   only); the npm dependencies (npm ci, exactly the lock file); then the type check, the lint and the
#   whole jest suite.
# The suite runs on Node 22, the oldest version package.json's engines allows (Middy 7 needs it; Lambda
# runs 24). On a machine with an older Node, the script re-runs itself under Node 22 from the npm
# registry's `node` package, so what CI proves is what the README names.
set -uo pipefail
cd "$(dirname "$0")/.."

if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 22 ]; then
  echo "Node $(node --version) is older than 22: running the suite on Node 22 (npx -p node@22)"
  exec npx --yes -p node@22 bash "$PWD/scripts/test-all.sh" "$@"
fi
echo "Node $(node --version)"
# npx leaves its own settings in the environment; a nested npx (CDK's bundling runs one) would read them.
unset npm_config_package npm_config_yes npm_command
export DEBIAN_FRONTEND=noninteractive

missing=()
command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jre-headless)
[ -x /usr/bin/chromium ] || missing+=(chromium)
for tool in cmake make g++ python3; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
command -v curl-config >/dev/null 2>&1 || missing+=(libcurl4-openssl-dev)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing ${missing[*]} with apt-get"
  $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || {
    echo "apt-get could not install ${missing[*]}"
    exit 1
  }
fi

phase() {
  local name=$1
  shift
  local started=$SECONDS
  "$@" || return 1
  echo "$name: $((SECONDS - started)) s"
}

ric_install() {
  local log=test/infra/lambda-ric/install.log
  sh test/infra/lambda-ric/install.sh >"$log" 2>&1 && return 0
  tail -n 40 "$log"
  echo "test/infra/lambda-ric/install.sh failed (full output: $log)"
  return 1
}

# The type check and the lint each keep one core busy: they run side by side, each into its own log,
# printed when both are done. The lint's format check follows the type check, the shorter of the two.
typecheck_and_lint() {
  local logs
  logs=$(mktemp -d)
  { npm run typecheck && npm run lint:format; } >"$logs/typecheck" 2>&1 &
  local typecheck=$!
  npm run lint:code >"$logs/lint" 2>&1 &
  local lint=$!
  wait "$typecheck"
  local typecheck_status=$?
  wait "$lint"
  local lint_status=$?
  cat "$logs/typecheck" "$logs/lint"
  [ "$typecheck_status" -eq 0 ] || echo "npm run typecheck failed"
  [ "$lint_status" -eq 0 ] || echo "npm run lint failed"
  [ "$typecheck_status" -eq 0 ] && [ "$lint_status" -eq 0 ]
}

# The runtime interface client has its own folder: it builds a native addon, which `npm install` of
# the project must not need (test/infra/lambda-ric/install.sh says how, and why against the system's libcurl).
phase "AWS's Lambda runtime interface client" ric_install || exit 1
phase "npm ci" npm ci --no-audit --no-fund --loglevel=error || exit 1
phase "typecheck and lint" typecheck_and_lint || exit 1
npm test

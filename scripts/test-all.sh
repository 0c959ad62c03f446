#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh Debian/Ubuntu machine, then runs every test.
#   Java 17 (DynamoDB Local runs on it), Chromium (browser tests) and the tools that compile AWS's
#   Lambda runtime interface client (cmake, make, g++, python3), through apt-get when missing;
#   the runtime interface client in its own folder (test/infra/lambda-ric, for the Lambda runtime test
#   only: it builds a native addon, which `npm install` of the project must not need); the npm
#   dependencies (npm ci, exactly the lock file); then the whole jest suite, with the type check and the
#   lint beside it.
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
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing ${missing[*]} with apt-get"
  $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || {
    echo "apt-get could not install ${missing[*]}"
    exit 1
  }
fi

# The runtime interface client compiles its native addon (a minute or more) in the background while
# the project's own install, the type check, the lint and the suite run. Only the two tests that run it
# wait for it: they wait while the marker file `installing` exists (test/infra/support/lambda-instance.ts).
ric=test/infra/lambda-ric
# What later runs on this machine reuse: the client's build, the type check's state and the lint's caches (below).
cache_dir="${XDG_CACHE_HOME:-$HOME/.cache}/ai-usage-proxy"
ric_pid=""
rm -f "$ric/installing" # left by a run that was stopped mid-install
if [ -f "$ric/node_modules/aws-lambda-ric/rapid-client.node" ] && [ "$ric/node_modules/.package-lock.json" -nt "$ric/package-lock.json" ]; then
  echo "AWS's Lambda runtime interface client: installed ($ric)"
else
  echo "installing AWS's Lambda runtime interface client in $ric in the background (from the cache, or compiling a native addon: a minute or more)"
  touch "$ric/installing"
  # A build is kept in the user's cache folder, keyed by the lock file, Node's module ABI and the
  # machine, as node-gyp keeps Node's headers: a later run on this machine restores it.
  ric_archive="$cache_dir/lambda-ric-$(sha256sum "$ric/package-lock.json" | cut -c1-16)-abi$(node -p process.versions.modules)-$(uname -m).tar.gz"
  (
    trap 'rm -f "$ric/installing"' EXIT
    started=$SECONDS
    if [ -f "$ric_archive" ] && tar -xzmf "$ric_archive" -C "$ric" 2>/dev/null && [ -f "$ric/node_modules/aws-lambda-ric/rapid-client.node" ]; then
      echo "restored from $ric_archive in $((SECONDS - started)) s" >"$ric/install.log"
      exit 0
    fi
    npm ci --prefix "$ric" --no-audit --no-fund --loglevel=error >"$ric/install.log" 2>&1 || exit 1
    mkdir -p "$cache_dir" && tar -czf "$ric_archive.$$" -C "$ric" node_modules && mv "$ric_archive.$$" "$ric_archive" || rm -f "$ric_archive.$$"
    echo "installed in $((SECONDS - started)) s" >>"$ric/install.log"
  ) &
  ric_pid=$!
fi

# Waits for the background install of the runtime interface client; fails if it failed.
wait_for_ric() {
  [ -n "$ric_pid" ] || return 0
  if wait "$ric_pid"; then
    echo "AWS's Lambda runtime interface client: $(tail -n 1 "$ric/install.log")"
  else
    tail -n 40 "$ric/install.log"
    echo "npm ci --prefix $ric failed (full output: $ric/install.log)"
    ric_pid=""
    return 1
  fi
  ric_pid=""
}
# A failure before the suite still waits for the background install, so no compiler outlives the script.
trap 'wait_for_ric_quietly' EXIT
wait_for_ric_quietly() { [ -z "$ric_pid" ] || wait "$ric_pid" 2>/dev/null; }

phase() {
  local name=$1
  shift
  local started=$SECONDS
  "$@" || return 1
  echo "$name: $((SECONDS - started)) s"
}

# The type check and the lint run side by side, each into its own log, printed when both are done.
typecheck_and_lint() {
  local logs
  logs=$(mktemp -d)
  { npm run typecheck && { mkdir -p "$(dirname "$tsc_cache")" && cp "$tsc_state" "$tsc_cache" || true; }; } >"$logs/typecheck" 2>&1 &
  local typecheck=$!
  { npm run lint && node scripts/lint-cache.mjs save "$lint_cache"; } >"$logs/lint" 2>&1 &
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

phase "npm ci" npm ci --no-audit --no-fund --loglevel=error || exit 1
# The type check's incremental state names files relative to itself, so the one a passing check left
# in the user's cache folder (keyed by the lock file and Node's version) serves a fresh clone too:
# only what changed since is checked again. ESLint's cache names absolute paths: scripts/lint-cache.mjs
# carries it across checkouts. Prettier's serves repeated runs in one checkout only (package.json keeps
# all three in node_modules/.cache).
tsc_state=node_modules/.cache/tsc/tsbuildinfo
tsc_cache="$cache_dir/tsbuildinfo-$(sha256sum package-lock.json | cut -c1-16)-node$(node -p process.versions.node)"
[ -f "$tsc_state" ] || { [ -f "$tsc_cache" ] && mkdir -p "$(dirname "$tsc_state")" && cp "$tsc_cache" "$tsc_state"; }
lint_cache="$cache_dir/lint-$(sha256sum package-lock.json | cut -c1-16)"
node scripts/lint-cache.mjs restore "$lint_cache"
# The type check and the lint run beside the suite: its files spend much of their time waiting on
# servers and streams, which leaves a core free for them. Their output follows the suite's.
checks_log=$(mktemp)
phase "typecheck and lint" typecheck_and_lint >"$checks_log" 2>&1 &
checks=$!
npm test
tests_status=$?
phase "waiting for the runtime interface client" wait_for_ric || tests_status=1
wait "$checks"
checks_status=$?
cat "$checks_log"
[ "$checks_status" -eq 0 ] || echo "the type check or the lint failed"
[ "$tests_status" -eq 0 ] && [ "$checks_status" -eq 0 ]

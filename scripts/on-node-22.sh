#!/bin/sh
# Runs one command line (npm start, npm run bench) on Node 22 or newer, the oldest the project runs on
# (package.json "engines"). On an older Node it says so and re-runs the line under Node 22 from the npm
# registry's `node` package, as scripts/test-all.sh does, instead of failing later with a cryptic error.
# Arguments after the line (`npm start -- --new-token`) are passed to its last command.
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 22 ]; then
  echo "Node $(node --version) is older than 22: running on Node 22 (npx -p node@22)" >&2
  exec npx --yes -p node@22 sh "$0" "$@"
fi
# npx leaves its own settings in the environment; a nested npx (CDK's bundling runs one) would read them.
unset npm_config_package npm_config_yes npm_command
line=$1
shift
exec sh -c "$line \"\$@\"" sh "$@"

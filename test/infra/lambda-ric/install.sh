#!/usr/bin/env sh
# Installs AWS's Lambda runtime interface client (pinned by this folder's lock file) for the Lambda
# runtime test, and builds its native part.
#
# The package's own install script compiles a minimal static curl from source before its runtime
# library and addon: 173 s and 223 CPU-seconds on a 2-core machine, the largest step of a CI run.
# The runtime client only speaks HTTP/1.1 to the Runtime API on 127.0.0.1 (with proxies switched off
# in its own code), which the system's libcurl does as well. So this builds the same two parts the package builds, from the
# same sources it ships (its aws-lambda-cpp archive and its addon), and links them to the system's
# libcurl (Debian's libcurl4-openssl-dev) instead: 9 s and 10 CPU-seconds.
set -eu
cd "$(dirname "$0")"
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
package="$PWD/node_modules/aws-lambda-ric"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"

mkdir -p "$work/aws-lambda-cpp" "$prefix/lib"
# The archive carries macOS extended attributes that GNU tar warns about, one line per file.
tar xJf "$package/deps/aws-lambda-cpp.tar.xz" --no-same-owner -C "$work/aws-lambda-cpp" 2>/dev/null
cmake -S "$work/aws-lambda-cpp" -B "$work/aws-lambda-cpp/build" -DCMAKE_CXX_FLAGS=-fPIC \
  -DCMAKE_INSTALL_PREFIX="$prefix" >/dev/null
cmake --build "$work/aws-lambda-cpp/build" -j "$(nproc)" >/dev/null
cmake --install "$work/aws-lambda-cpp/build" >/dev/null

# The addon's build names `<prefix>/lib/libcurl.a`; a linker script in its place links the system's
# shared libcurl.
echo 'INPUT(-lcurl)' >"$prefix/lib/libcurl.a"
(cd "$package" && DEPS_PREFIX="$prefix" npm run --silent build:gyp >/dev/null)
cp "$package/src/native/build/Release/rapid-client.node" "$package/rapid-client.node"
rm -rf "$package/src/native/build"

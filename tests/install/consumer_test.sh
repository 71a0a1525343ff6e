#!/usr/bin/env bash
# A user's project against an installed cuscope: installs the build into a fresh prefix, configures
# examples/consumer with CMAKE_PREFIX_PATH pointing there (find_package(cuscope)), builds and runs
# it, and runs the installed command.
#   tests/install/consumer_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
for f in lib/libcuscope.so include/cuscope/session.h include/cuscope/cuscope.h lib/cmake/cuscope/cuscopeConfig.cmake \
         bin/cuscope; do
  [ -e "$work/prefix/$f" ] || { echo "not installed: $f"; exit 1; }
done
cmake -S "$source/examples/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; exit 1; }
cmake --build "$work/consumer" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
out=$("$work/consumer/consumer")
echo "$out"
grep -q "^sum 5050$" <<<"$out"
# Profiled where a GPU is; elsewhere the program says why and runs anyway.
grep -Eq "^(not profiled: no NVIDIA driver|trace .*consumer_[0-9]+\.cuscope)" <<<"$out"
# The consumer finds the installed library through its run path, not the build tree's.
# (ldd's output is held first: grep -q stops reading early, and under pipefail ldd's broken pipe would
# fail the check.)
libraries=$(ldd "$work/consumer/consumer")
grep -q "$work/prefix/lib/libcuscope.so" <<<"$libraries" ||
  { echo "$libraries"; echo "the consumer does not use the installed library"; exit 1; }
version=$("$work/prefix/bin/cuscope" version)
grep -q "^cuscope 2\." <<<"$version" || { echo "$version"; echo "the installed command reports another version"; exit 1; }
echo "consumer built and ran against $work/prefix"

#!/usr/bin/env bash
# Builds position-independent static copies of abseil, protobuf and RE2 into build-deps/install,
# from the Debian source packages of the very versions whose headers are installed (so headers and
# code always agree), with hidden visibility. Likewise civetweb and prometheus-cpp (core and pull
# only: the monitor mode's metrics endpoint), of the versions Debian offers; their headers come
# with them, so their -dev packages need not be installed.
#
# Why: libcuscope.so is loaded into other people's programs. Linked against the shared Debian
# libraries it would bring libprotobuf.so and nine libabsl_*.so into the host process, where the
# host's own protobuf calls could bind to our copy. Debian's static archives cannot go into a
# shared library (they are built as PIE, with local-exec TLS), so we build our own, link them into
# libcuscope.so and hide every one of their symbols (--exclude-libs). The CLI and the tests link
# the same archives.
#
# Idempotent: a second run with the same versions does nothing. Needs dpkg-dev's dpkg-source and
# network access to Debian's source packages (deb.debian.org) on the first run; ~10 min on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD/build-deps"
prefix="$root/install"
jobs="${BUILD_JOBS:-$(nproc)}"

# The source version: a binary rebuild (+b1) has the same source.
version_of() { dpkg-query -W -f='${source:Version}' "$1" 2>/dev/null; }
absl_version=$(version_of libabsl-dev)
protobuf_version=$(version_of libprotobuf-dev)
re2_version=$(version_of libre2-dev)
if [ -z "$absl_version" ] || [ -z "$protobuf_version" ] || [ -z "$re2_version" ]; then
  echo "cuscope: libabsl-dev, libprotobuf-dev and libre2-dev must be installed first (scripts/install_deps.sh)" >&2
  exit 1
fi
# Not installed: the version apt would install (apt-get update first); a binNMU keeps its source's.
candidate_source_version() {
  apt-cache show --no-all-versions "$1" 2>/dev/null |
    awk '/^Version:/ {v = $2} /^Source:/ && $3 {s = $3; gsub(/[()]/, "", s)} END {print s ? s : v}'
}
civetweb_version=$(candidate_source_version libcivetweb-dev)
prometheus_cpp_version=$(candidate_source_version prometheus-cpp-dev)
if [ -z "$civetweb_version" ] || [ -z "$prometheus_cpp_version" ]; then
  echo "cuscope: apt knows no libcivetweb-dev or prometheus-cpp-dev: run apt-get update first" >&2
  exit 1
fi
if [ ! -f /usr/share/unicode/UnicodeData.txt ]; then
  echo "cuscope: RE2's tables are generated from Debian's unicode-data package: install it first (scripts/install_deps.sh)" >&2
  exit 1
fi
# One stamp per library and version: a rerun builds only what is missing or out of date.
stamp() { echo "$prefix/.built-$1-$2"; }
wanted=()
[ -f "$(stamp abseil "$absl_version")" ] || wanted+=("abseil=$absl_version")
[ -f "$(stamp protobuf "$protobuf_version")" ] || wanted+=("protobuf=$protobuf_version")
[ -f "$(stamp re2 "$re2_version")" ] || wanted+=("re2=$re2_version")
# Our build of civetweb differs from its defaults (below); a change to how we build it is a new stamp.
civetweb_recipe="+stack0"
[ -f "$(stamp civetweb "$civetweb_version$civetweb_recipe")" ] || wanted+=("civetweb=$civetweb_version")
# prometheus-cpp is compiled against civetweb's headers: a new civetweb rebuilds it too.
if [ ! -f "$(stamp prometheus-cpp "$prometheus_cpp_version")" ] || [[ " ${wanted[*]} " == *" civetweb="* ]]; then
  wanted+=("prometheus-cpp=$prometheus_cpp_version")
fi
((${#wanted[@]})) || exit 0

echo "cuscope: building private static ${wanted[*]} in build-deps/ (once, a few minutes)"
rm -rf "$root/src" "$root/apt" "$root"/build-*
mkdir -p "$root/apt/lists/partial" "$root/src" "$prefix"
# A private source list: the machine's apt configuration is left as it is.
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
cat >"$root/apt/sources.list" <<EOF
deb-src http://deb.debian.org/debian $codename main
deb-src http://deb.debian.org/debian $codename-updates main
deb-src http://deb.debian.org/debian-security $codename-security main
EOF
apt_opts=(-o "Dir::Etc::SourceList=$root/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State::Lists=$root/apt/lists" -o Debug::NoDropPrivs=true -o APT::Sandbox::User=root)
apt-get "${apt_opts[@]}" -qq update
(cd "$root/src" && apt-get "${apt_opts[@]}" -qq source --download-only "${wanted[@]}" >/dev/null)
for dsc in "$root"/src/*.dsc; do
  name=$(basename "$dsc" .dsc)
  dpkg-source --no-check -x "$dsc" "$root/src/${name%%_*}" >/dev/null
done

common=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib
        -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DCMAKE_CXX_VISIBILITY_PRESET=hidden
        -DCMAKE_VISIBILITY_INLINES_HIDDEN=ON -DBUILD_SHARED_LIBS=OFF "-DCMAKE_CXX_FLAGS=-O2 -g0 -w")
build() {  # name version extra-cmake-args...
  local name=$1 version=$2 src="$root/src/$1"
  shift 2
  [ -f "$src/CMakeLists.txt" ] || src="$src/cmake"
  cmake -S "$src" -B "$root/build-$name" "${common[@]}" "$@" >/dev/null
  cmake --build "$root/build-$name" -j"$jobs" >/dev/null
  cmake --install "$root/build-$name" >/dev/null
  rm -rf "$root/build-$name"
  touch "$(stamp "$name" "$version")"
}
if [ -d "$root/src/abseil" ]; then
  # Debian's patches keep absl::string_view, optional and friends abseil's own types, as in the
  # installed headers, and name the inline namespace as Debian's build does.
  build abseil "$absl_version" -DCMAKE_CXX_STANDARD=17 -DABSL_PROPAGATE_CXX_STD=ON -DBUILD_TESTING=OFF
fi
if [ -d "$root/src/protobuf" ]; then
  build protobuf "$protobuf_version" -Dprotobuf_BUILD_TESTS=OFF -Dprotobuf_BUILD_PROTOC_BINARIES=OFF \
    -Dprotobuf_BUILD_SHARED_LIBS=OFF -Dprotobuf_WITH_ZLIB=OFF -Dprotobuf_BUILD_EXAMPLES=OFF
fi
if [ -d "$root/src/re2" ]; then
  # Debian's source leaves out RE2's generated tables; they are made as Debian's build makes them.
  (cd "$root/src/re2" &&
    perl re2/make_perl_groups.pl >re2/perl_groups.cc &&
    python3 re2/make_unicode_casefold.py >re2/unicode_casefold.cc &&
    python3 re2/make_unicode_groups.py >re2/unicode_groups.cc)
  build re2 "$re2_version" -DRE2_BUILD_TESTING=OFF
fi
if [ -d "$root/src/civetweb" ]; then
  # The library and its C++ wrapper only: no server program, no SSL, no LTO objects in the archive.
  # Its API macros mark every mg_* function and CivetServer visible: emptied, they are hidden too.
  hide_civetweb="-fvisibility=hidden -DCIVETWEB_API= -DCIVETWEB_CXX_API="
  # Its threads wait in 2 s slices, so stopping it (at the host program's exit) took up to 2 s.
  quick_stop="-DSOCKET_TIMEOUT_QUANTUM=200"
  # Threads with the system's default stack: civetweb's own default, 100 KiB, is too small for a
  # CUDA program (its libraries' thread-local storage goes on each thread's stack), and
  # pthread_create refused it there ("Cannot create threads").
  build civetweb "$civetweb_version$civetweb_recipe" -DCMAKE_POLICY_DEFAULT_CMP0063=NEW -DCIVETWEB_THREAD_STACK_SIZE=0 \
    "-DCMAKE_C_FLAGS=-O2 -g0 -w $hide_civetweb $quick_stop" "-DCMAKE_CXX_FLAGS=-O2 -g0 -w $hide_civetweb" \
    -DCIVETWEB_ENABLE_CXX=ON -DCIVETWEB_ENABLE_IPV6=ON -DCIVETWEB_ENABLE_SSL=OFF \
    -DCIVETWEB_ENABLE_SERVER_EXECUTABLE=OFF -DCIVETWEB_INSTALL_EXECUTABLE=OFF \
    -DCIVETWEB_BUILD_TESTING=OFF -DCIVETWEB_CXX_ENABLE_LTO=OFF -DCIVETWEB_ENABLE_LTO=OFF \
    -DCIVETWEB_ENABLE_ASAN=OFF
fi
if [ -d "$root/src/prometheus-cpp" ]; then
  # Serving metrics only (pull): no push client (curl), no gzip (zlib); civetweb is the one above.
  build prometheus-cpp "$prometheus_cpp_version" -DENABLE_PULL=ON -DENABLE_PUSH=OFF \
    -DENABLE_COMPRESSION=OFF -DENABLE_TESTING=OFF -DUSE_THIRDPARTY_LIBRARIES=OFF \
    -DGENERATE_PKGCONFIG=OFF -Dcivetweb_DIR="$prefix/lib/cmake/civetweb"
fi
rm -rf "$root/src" "$root/apt"
echo "cuscope: private static libraries in build-deps/install"

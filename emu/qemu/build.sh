#!/bin/sh
# Build qemu-system-x86_64 with pmutest's emulated PMU: Debian's own QEMU
# source (the version Debian ships as qemu-system-x86, whose firmware we
# use), emu/qemu/patches and files, emu/model.  The stripped binary is
# cached outside the clone, keyed by that version and a hash of every
# input; its path is the last line printed.
#
#   emu/qemu/build.sh               build, or reuse the cached build
#   emu/qemu/build.sh --print-path  print the cached binary's path, or say
#                                   it is not built (exit 1)
#   emu/qemu/build.sh --mutants [--print-path]
#                                   the mutant build (docs/mutants.md): every
#                                   mutant of harness/mutgen.py compiled in,
#                                   chosen at run time by X86PMU_MUTANT; its
#                                   own cache key, mutants.tsv beside the
#                                   binary, and a build tree of its own
#
# SPDX-License-Identifier: GPL-2.0-or-later
set -eu

EMU=$(cd "$(dirname "$0")/.." && pwd)
ROOT=$(cd "$EMU/.." && pwd)
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/pmutest/qemu-pmu
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
MUTANTS=
if [ "${1:-}" = "--mutants" ]; then
	MUTANTS=1
	shift
fi
# Debian's python3 for meson (a pyenv shim on PATH breaks it).
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH

# Every failure ends in one line naming the step that failed.
step=""
fail() {
	echo "emu/qemu/build.sh: failed: $step${1:+: $1}" >&2
	step=""
	exit 1
}
trap 'rc=$?; [ $rc -eq 0 ] || [ -z "$step" ] || echo "emu/qemu/build.sh: failed: $step" >&2' EXIT

as_root() { # as_root <command...>: run as root, or say what to run
	if [ "$(id -u)" = 0 ]; then
		"$@"
	else
		echo "emu/qemu/build.sh: needs root for: $*" >&2
		exit 1
	fi
}

# --- Which QEMU: the source of the qemu-system-x86 Debian would install
step="finding Debian's qemu-system-x86 version"
bin_version=$(apt-cache policy qemu-system-x86 2>/dev/null | sed -n 's/^ *Candidate: *//p')
[ -n "$bin_version" ] && [ "$bin_version" != "(none)" ] ||
	fail "no qemu-system-x86 in apt (run apt-get update?)"
# A binNMU (+bN) builds the same source: "Source: qemu (1:7.2+dfsg-7+deb12u18)".
src_version=$(apt-cache show "qemu-system-x86=$bin_version" 2>/dev/null |
	sed -n 's/^Source: qemu (\(.*\))$/\1/p' | head -n1)
[ -n "$src_version" ] || src_version=$bin_version
upstream=${src_version#*:}

# --- The cache key: the source version and everything that goes in
step="hashing emu/"
inputs_hash=$(cd "$EMU" && { find qemu/patches qemu/files model qemu/build.sh -type f \
	! -name '*.o' -print; [ -z "$MUTANTS" ] || echo ../harness/mutgen.py; } |
	LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16)
out_dir=$CACHE/$upstream-$inputs_hash${MUTANTS:+-mutants}
binary=$out_dir/qemu-system-x86_64

if [ "${1:-}" = "--print-path" ]; then
	step=""
	if [ -x "$binary" ]; then
		echo "$binary"
		exit 0
	fi
	echo "emu/qemu/build.sh: not built: $binary (run make emu-qemu)" >&2
	exit 1
fi
if [ -x "$binary" ]; then
	step=""
	echo "$binary"
	exit 0
fi

# --- One set-up at a time per cache: apt-get and dpkg each hold a lock, and
# two builds starting together (the boot matrix runs two kexec legs at once,
# each asking for this binary) would otherwise fail on the other's lock from
# an empty cache. The build itself waits on its tree's lock below.
mkdir -p "$CACHE"
exec 8>"$CACHE/setup.lock"
step="waiting for another build's set-up ($CACHE/setup.lock)"
flock 8 || fail

# --- Build dependencies and Debian's firmware, from Debian
step="installing the build dependencies (tools/install-deps.sh qemu-pmu)"
"$ROOT/tools/install-deps.sh" qemu-pmu || fail
# The firmware the binary loads (SeaBIOS, option ROMs) comes from these.
step="installing Debian's QEMU firmware (seabios, qemu-system-data $bin_version)"
if ! dpkg-query -W -f='${Status}' seabios 2>/dev/null | grep -q 'ok installed' ||
   [ "$(dpkg-query -W -f='${Version}' qemu-system-data 2>/dev/null)" != "$src_version" ]; then
	DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends \
		seabios "qemu-system-data=$src_version" >/dev/null || fail
fi

# --- A private apt configuration with deb-src entries derived from the
# machine's own apt sources: the machine's apt sources are only read.
APT=$CACHE/../apt/qemu-src
step="writing the private apt configuration ($APT)"
mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial" "$APT/parts" || fail
tmp=$APT/sources.list.new
: >"$tmp"
# deb822 stanzas: the deb ones again, typed deb-src.
for f in /etc/apt/sources.list.d/*.sources; do
	[ -e "$f" ] || continue
	awk 'BEGIN { RS = ""; ORS = "\n\n" }
	     tolower($0) ~ /(^|\n)types:[^\n]*deb([ \t\n]|$)/ && tolower($0) ~ /(^|\n)uris:[^\n]*debian/ {
		sub(/(^|\n)[Tt]ypes:[^\n]*/, "\nTypes: deb-src"); sub(/^\n/, ""); print }' "$f" >>"$tmp"
done
# One-line sources: "deb [opts] URI suite comps" as deb822 stanzas.
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
	[ -e "$f" ] || continue
	awk '$1 == "deb" {
		opts = ""; i = 2
		if ($2 ~ /^\[/) { while ($i !~ /\]$/) { opts = opts " " $i; i++ } opts = opts " " $i; i++ }
		uri = $i; suite = $(i + 1); comps = ""
		if (uri !~ /debian/) next
		for (j = i + 2; j <= NF; j++) comps = comps " " $j
		printf "Types: deb-src\nURIs: %s\nSuites: %s\nComponents:%s\n", uri, suite, comps
		if (opts ~ /signed-by=/) { s = opts; sub(/.*signed-by=/, "", s); sub(/[] ].*/, "", s); printf "Signed-By: %s\n", s }
		printf "\n" }' "$f" >>"$tmp"
done
[ -s "$tmp" ] || fail "no Debian deb entries in /etc/apt to derive deb-src ones from"
mv "$tmp" "$APT/parts/deb-src.sources"
apt_private() {
	apt-get -o APT::Sandbox::User=root -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$APT/parts" \
		-o Dir::State::Lists="$APT/lists" -o Dir::Cache="$APT/cache" "$@"
}

# --- The source, pinned to that version
step="downloading qemu=$src_version (apt-get source, private apt configuration)"
src_cache=$CACHE/src/$upstream
mkdir -p "$src_cache"
if ! ls "$src_cache"/*.dsc >/dev/null 2>&1; then
	{ apt_private update -qq && (cd "$src_cache" && apt_private source --download-only -qq "qemu=$src_version"); } \
		>"$CACHE/apt-source.log" 2>&1 ||
		{ tail -n 5 "$CACHE/apt-source.log" >&2; fail; }
fi

# --- The tree: pristine source + pmutest's changes, staged, then synced by
# content into a build tree kept per clone, so that a second build with a
# changed emu/ recompiles only the files whose content changed (ninja goes
# by mtime; rsync --checksum leaves the others untouched).
pristine=$CACHE/pristine-$upstream
if [ ! -d "$pristine/qemu" ]; then
	step="unpacking the source (dpkg-source -x)"
	rm -rf "$pristine.$$" && mkdir -p "$pristine.$$"
	# apt verified the files against the signed archive index; without
	# debian-keyring, dpkg-source can only warn that it cannot check the .dsc.
	dpkg-source -x "$src_cache"/qemu_*.dsc "$pristine.$$/qemu" >"$pristine.$$/unpack.log" 2>&1 ||
		{ tail -n 5 "$pristine.$$/unpack.log" >&2; rm -rf "$pristine.$$"; fail; }
	mv "$pristine.$$" "$pristine" 2>/dev/null || rm -rf "$pristine.$$"
fi
exec 8>&-
clone_key=$(printf '%s' "$ROOT" | sha256sum | cut -c1-8)
tree=$CACHE/tree-$upstream-$clone_key${MUTANTS:+-mutants}
mkdir -p "$tree"
# One build at a time per clone's tree.
exec 9>"$tree/lock"
step="waiting for another build of this clone ($tree/lock)"
flock 9 || fail
if [ -x "$binary" ]; then # built meanwhile by the holder of the lock
	step=""
	echo "$binary"
	exit 0
fi
work=$tree/stage.$$
trap 'rc=$?; rm -rf "$work"; [ $rc -eq 0 ] || [ -z "$step" ] ||
	echo "emu/qemu/build.sh: failed: $step" >&2' EXIT
step="staging the source (hard links to $pristine)"
rm -rf "$tree"/stage.*
# harness/mutgen.py rewrites files in place: the mutant build copies them.
if [ -n "$MUTANTS" ]; then cp -a "$pristine/qemu" "$work"; else cp -al "$pristine/qemu" "$work"; fi || fail

# --- pmutest's changes: the model, the new files, the patches (GNU patch
# and cp --remove-destination replace files, so the links stay pristine)
step="copying emu/model and emu/qemu/files into the tree"
cp --remove-destination "$EMU"/model/*.c "$EMU"/model/*.h "$work/target/i386/" || fail
(cd "$EMU/qemu/files" && find . -type f) | while read -r f; do
	mkdir -p "$work/$(dirname "$f")" && cp --remove-destination "$EMU/qemu/files/$f" "$work/$f" || exit 1
done || fail
for p in "$EMU"/qemu/patches/*.patch; do
	step="applying $(basename "$p")"
	(cd "$work" && patch -p1 --forward --batch --quiet <"$p" >"$tree/patch.log" 2>&1) ||
		{ cat "$tree/patch.log" >&2; fail; }
	if find "$work" -name '*.rej' | grep -q .; then
		fail "rejected hunks"
	fi
done
if [ -n "$MUTANTS" ]; then
	step="writing the mutants into the tree (harness/mutgen.py)"
	cp "$work/hw/intc/apic.c" "$work/hw/intc/apic.c.pristine" || fail
	(cd "$ROOT" && python3 -m harness.mutgen instrument "$work" "$tree/mutants.tsv") || fail
fi
step="syncing the staged source into $tree/qemu (by content)"
mkdir -p "$tree/qemu"
rsync -rlc --delete "$work/" "$tree/qemu/" || fail
rm -rf "$work"

# --- Configure and build qemu-system-x86_64 only
# Through ccache: the mutant build differs from the plain one in a few
# files (the model's variants, apic.c), so the second of make test's two
# builds takes almost every object from the first.  base_dir makes the
# paths under $CACHE relative, so that trees of other clones share objects
# too; without hash_dir, -g's working directory is not in the key.
export CCACHE_DIR=$CACHE/../ccache CCACHE_BASEDIR=$CACHE CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=3G
configure_args="--target-list=x86_64-softmmu --without-default-features --disable-docs
	--disable-tools --disable-user --disable-werror --meson=/usr/bin/meson
	--cc=/usr/lib/ccache/gcc
	--firmwarepath=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu"
# Configured again when the arguments changed, or when the tree was made
# elsewhere (build.ninja names its own tree by absolute path: a copied
# tree would compile the original's sources).
if [ ! -f "$tree/build/build.ninja" ] ||
   [ "$(cat "$tree/configure.args" 2>/dev/null)" != "$configure_args" ] ||
   ! grep -q -F "$tree/qemu" "$tree/build/build.ninja"; then
	step="configuring QEMU"
	rm -rf "$tree/build" "$tree/configure.args" && mkdir -p "$tree/build"
	# shellcheck disable=SC2086 # one word an argument
	(cd "$tree/build" && ../qemu/configure $configure_args \
		>"$tree/configure.log" 2>&1) || { tail -n 20 "$tree/configure.log" >&2; rm -rf "$tree/build"; fail; }
	printf '%s\n' "$configure_args" >"$tree/configure.args"
fi
step="building qemu-system-x86_64 (ninja -j$JOBS in $tree/build)"
(cd "$tree/build" && ninja -j"$JOBS" qemu-system-x86_64 >"$tree/build.log" 2>&1) ||
	{ grep -m 20 -E 'error|Error' "$tree/build.log" >&2 || tail -n 20 "$tree/build.log" >&2; fail; }
work=""

step="stripping and caching the binary"
mkdir -p "$out_dir"
strip -o "$out_dir/qemu-system-x86_64.tmp" "$tree/build/qemu-system-x86_64" || fail
[ -z "$MUTANTS" ] || cp "$tree/mutants.tsv" "$out_dir/mutants.tsv" || fail
mv "$out_dir/qemu-system-x86_64.tmp" "$binary" || fail
printf 'qemu source %s (Debian qemu-system-x86 %s)\ninputs %s\n' "$src_version" \
	"$bin_version" "$inputs_hash" >"$out_dir/BUILD-INFO"
step=""
echo "$binary"

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
#                                   binary, and an incremental build tree
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

# --- A deb-src entry derived from the machine's own apt sources
step="adding a deb-src entry from the apt sources"
has_deb_src() {
	grep -qs '^[[:space:]]*deb-src[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list ||
		grep -qsi '^Types:.*deb-src' /etc/apt/sources.list.d/*.sources
}
if ! has_deb_src; then
	src_list=/etc/apt/sources.list.d/pmutest-deb-src.sources
	tmp=$(mktemp)
	# deb822 stanzas: the deb ones again, typed deb-src.
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -e "$f" ] || continue
		awk 'BEGIN { RS = ""; ORS = "\n\n" }
		     tolower($0) ~ /(^|\n)types:[^\n]*deb([ \t\n]|$)/ {
			sub(/(^|\n)[Tt]ypes:[^\n]*/, "\nTypes: deb-src"); sub(/^\n/, ""); print }' "$f" >>"$tmp"
	done
	# One-line sources: "deb [opts] URI suite comps" as deb822 stanzas.
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -e "$f" ] || continue
		awk '$1 == "deb" {
			opts = ""; i = 2
			if ($2 ~ /^\[/) { while ($i !~ /\]$/) { opts = opts " " $i; i++ } opts = opts " " $i; i++ }
			uri = $i; suite = $(i + 1); comps = ""
			for (j = i + 2; j <= NF; j++) comps = comps " " $j
			printf "Types: deb-src\nURIs: %s\nSuites: %s\nComponents:%s\n", uri, suite, comps
			if (opts ~ /signed-by=/) { s = opts; sub(/.*signed-by=/, "", s); sub(/[] ].*/, "", s); printf "Signed-By: %s\n", s }
			printf "\n" }' "$f" >>"$tmp"
	done
	[ -s "$tmp" ] || { rm -f "$tmp"; fail "no deb entries to derive one from"; }
	as_root install -m 0644 "$tmp" "$src_list" || { rm -f "$tmp"; fail; }
	rm -f "$tmp"
	step="apt-get update (after adding $src_list)"
	as_root apt-get update -qq >/dev/null || fail
fi

# --- The source, pinned to that version
step="downloading qemu=$src_version (apt-get source)"
src_cache=$CACHE/src/$upstream
mkdir -p "$src_cache"
if ! ls "$src_cache"/*.dsc >/dev/null 2>&1; then
	(cd "$src_cache" && apt-get source --download-only -qq "qemu=$src_version" \
		>"$CACHE/apt-source.log" 2>&1) ||
		{ tail -n 5 "$CACHE/apt-source.log" >&2; fail "is there a deb-src entry for Debian's main archive?"; }
fi
work=$CACHE/build-$upstream-$inputs_hash.$$
rm -rf "$work"
mkdir -p "$work"
trap 'rc=$?; rm -rf "$work"; [ $rc -eq 0 ] || [ -z "$step" ] ||
	echo "emu/qemu/build.sh: failed: $step" >&2' EXIT
step="unpacking the source (dpkg-source -x)"
# apt verified the files against the signed archive index; without
# debian-keyring, dpkg-source can only warn that it cannot check the .dsc.
dpkg-source -x "$src_cache"/qemu_*.dsc "$work/qemu" >"$work/unpack.log" 2>&1 ||
	{ tail -n 5 "$work/unpack.log" >&2; fail; }

# --- pmutest's changes: the model, the new files, the patches
step="copying emu/model and emu/qemu/files into the tree"
cp "$EMU"/model/*.c "$EMU"/model/*.h "$work/qemu/target/i386/" || fail
cp -R "$EMU/qemu/files/." "$work/qemu/" || fail
for p in "$EMU"/qemu/patches/*.patch; do
	step="applying $(basename "$p")"
	(cd "$work/qemu" && patch -p1 --forward --batch --quiet <"$p" >"$work/patch.log" 2>&1) ||
		{ cat "$work/patch.log" >&2; fail; }
	if find "$work/qemu" -name '*.rej' | grep -q .; then
		fail "rejected hunks"
	fi
done

# --- The mutant build: every mutant in the tree's copies, then the tree
# synced by content into a build tree kept between builds (only what
# changed recompiles: the mutated files, at worst the whole PMU).
build_tree=$work
if [ -n "$MUTANTS" ]; then
	step="writing the mutants into the tree (harness/mutgen.py)"
	cp "$work/qemu/hw/intc/apic.c" "$work/qemu/hw/intc/apic.c.pristine" || fail
	(cd "$ROOT" && python3 -m harness.mutgen instrument "$work/qemu" "$work/mutants.tsv") || fail
	build_tree=$CACHE/mutants-work-$upstream
	step="syncing the tree into $build_tree"
	mkdir -p "$build_tree"
	(cd "$ROOT" && python3 -m harness.mutgen sync "$work/qemu" "$build_tree/qemu") || fail
fi

# --- Configure and build qemu-system-x86_64 only
step="configuring QEMU"
if [ ! -f "$build_tree/build/build.ninja" ]; then
mkdir -p "$build_tree/build"
(cd "$build_tree/build" && ../qemu/configure --target-list=x86_64-softmmu \
	--without-default-features --disable-docs --disable-tools --disable-user \
	--disable-werror --meson=/usr/bin/meson \
	--firmwarepath=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu \
	>"$work/configure.log" 2>&1) || { tail -n 20 "$work/configure.log" >&2; rm -rf "$build_tree/build"; fail; }
fi
step="building qemu-system-x86_64 (ninja -j$JOBS)"
(cd "$build_tree/build" && ninja -j"$JOBS" qemu-system-x86_64 >"$work/build.log" 2>&1) ||
	{ grep -m 20 -E 'error|Error' "$work/build.log" >&2 || tail -n 20 "$work/build.log" >&2; fail; }

step="stripping and caching the binary"
mkdir -p "$out_dir"
strip -o "$out_dir/qemu-system-x86_64.tmp" "$build_tree/build/qemu-system-x86_64" || fail
[ -z "$MUTANTS" ] || cp "$work/mutants.tsv" "$out_dir/mutants.tsv" || fail
mv "$out_dir/qemu-system-x86_64.tmp" "$binary" || fail
printf 'qemu source %s (Debian qemu-system-x86 %s)\ninputs %s\n' "$src_version" \
	"$bin_version" "$inputs_hash" >"$out_dir/BUILD-INFO"
step=""
echo "$binary"

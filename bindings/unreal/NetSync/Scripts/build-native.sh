#!/usr/bin/env bash
# Builds the native netsync library for the Unreal plugin and stages it,
# with the headers, where NetSyncLibrary.Build.cs and FNetSyncModule look.
#
# Usage: Scripts/build-native.sh [--debug] [--netsync DIR] [PLATFORM...]
#
#   PLATFORM     Rust target(s)                     staged as (in the plugin folder)
#   linux        x86_64-unknown-linux-gnu           Binaries/ThirdParty/NetSyncLibrary/Linux/libnetsync.so
#   linux-arm64  aarch64-unknown-linux-gnu          Binaries/ThirdParty/NetSyncLibrary/LinuxArm64/libnetsync.so
#   win64        x86_64-pc-windows-msvc             Binaries/ThirdParty/NetSyncLibrary/Win64/netsync.dll (+ .pdb)
#                (on Windows, e.g. Git Bash)        Source/ThirdParty/NetSyncLibrary/lib/Win64/netsync.dll.lib
#   mac          aarch64-apple-darwin +             Binaries/ThirdParty/NetSyncLibrary/Mac/libnetsync.dylib
#                x86_64-apple-darwin (on macOS)     (one universal file, by lipo)
#
# Headers (netsync.h, netsync.hpp, netsync_unreal_convert.hpp) always go to
# Source/ThirdParty/NetSyncLibrary/include/.
#
# --netsync DIR  the netsync checkout (default: the one this plugin sits in,
#                bindings/unreal/NetSync -> ../../..).
# --debug        the dev profile instead of release (both keep panic =
#                "unwind", which the library's panic boundary needs).
# Without a PLATFORM it builds for the machine it runs on.
# Each target needs its standard library: `rustup target add <target>`.
#
# Linux: the library gets the soname libnetsync.so, so that executables
# record that name (not this build path) and find the staged copy through
# the rpath Unreal adds. Mac: the install name is @rpath/libnetsync.dylib
# for the same reason.
set -euo pipefail

plugin=$(cd "$(dirname "$0")/.." && pwd)
netsync=$(cd "$plugin/../../.." && pwd)
profile=release
cargo_profile=(--release)
platforms=()
while [ $# -gt 0 ]; do
    case "$1" in
        --debug) profile=debug; cargo_profile=() ;;
        --netsync) shift; netsync=$(cd "${1:?--netsync needs a directory}" && pwd) ;;
        -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
        -*) echo "unknown option $1" >&2; exit 2 ;;
        *) platforms+=("$1") ;;
    esac
    shift
done
[ -f "$netsync/Cargo.toml" ] && [ -f "$netsync/include/netsync.h" ] || {
    echo "no netsync checkout at $netsync: pass --netsync DIR" >&2
    exit 2
}
if [ ${#platforms[@]} -eq 0 ]; then
    case "$(uname -s)-$(uname -m)" in
        Linux-x86_64) platforms=(linux) ;;
        Linux-aarch64) platforms=(linux-arm64) ;;
        Darwin-*) platforms=(mac) ;;
        MINGW*|MSYS*|CYGWIN*) platforms=(win64) ;;
        *) echo "unknown host $(uname -s) $(uname -m): name a platform" >&2; exit 2 ;;
    esac
fi

target_dir=${CARGO_TARGET_DIR:-$netsync/target}
binaries=$plugin/Binaries/ThirdParty/NetSyncLibrary
module=$plugin/Source/ThirdParty/NetSyncLibrary

# Builds the cdylib for one Rust target with extra linker arguments;
# prints the folder it landed in.
build() {
    local triple=$1
    shift
    echo "==> netsync cdylib ($profile) for $triple" >&2
    # The `cli` feature is the command-line program's; the library needs none of it.
    (cd "$netsync" && cargo rustc --lib --crate-type cdylib --no-default-features "${cargo_profile[@]}" \
        --target "$triple" -- "$@") >&2
    echo "$target_dir/$triple/$profile"
}

stage() {
    local from=$1 to=$2
    mkdir -p "$(dirname "$to")"
    cp "$from" "$to"
    echo "staged ${to#"$plugin"/} ($(wc -c <"$to") bytes)"
}

mkdir -p "$module/include"
for header in netsync.h netsync.hpp netsync_unreal_convert.hpp; do
    stage "$netsync/include/$header" "$module/include/$header"
done

for platform in "${platforms[@]}"; do
    case "$platform" in
        linux|linux-arm64)
            if [ "$platform" = linux ]; then triple=x86_64-unknown-linux-gnu folder=Linux
            else triple=aarch64-unknown-linux-gnu folder=LinuxArm64; fi
            out=$(build "$triple" -C link-arg=-Wl,-soname,libnetsync.so)
            stage "$out/libnetsync.so" "$binaries/$folder/libnetsync.so"
            ;;
        win64)
            out=$(build x86_64-pc-windows-msvc)
            stage "$out/netsync.dll" "$binaries/Win64/netsync.dll"
            [ -f "$out/netsync.pdb" ] && stage "$out/netsync.pdb" "$binaries/Win64/netsync.pdb"
            stage "$out/netsync.dll.lib" "$module/lib/Win64/netsync.dll.lib"
            ;;
        mac)
            name=(-C link-arg=-Wl,-install_name,@rpath/libnetsync.dylib)
            arm=$(build aarch64-apple-darwin "${name[@]}")
            intel=$(build x86_64-apple-darwin "${name[@]}")
            mkdir -p "$binaries/Mac"
            lipo -create "$arm/libnetsync.dylib" "$intel/libnetsync.dylib" -output "$binaries/Mac/libnetsync.dylib"
            echo "staged Binaries/ThirdParty/NetSyncLibrary/Mac/libnetsync.dylib (universal)"
            ;;
        *)
            echo "unknown platform $platform (linux, linux-arm64, win64, mac)" >&2
            exit 2
            ;;
    esac
done

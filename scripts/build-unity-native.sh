#!/usr/bin/env bash
# Builds the native netsync library for the Unity package and copies it
# where the package's plugin import settings expect it
# (unity-package/Runtime/Plugins/...). The binaries are not committed
# (.gitignore); their .meta files are.
#
# Usage: scripts/build-unity-native.sh [--debug] [PLATFORM...]
#
#   PLATFORM     Rust target                      plugin file
#   linux        x86_64-unknown-linux-gnu         Linux/x86_64/libnetsync.so
#   windows      x86_64-pc-windows-msvc           Windows/x86_64/netsync.dll   (on Windows, e.g. Git Bash)
#   windows-gnu  x86_64-pc-windows-gnu            Windows/x86_64/netsync.dll   (cross from Linux; needs mingw-w64)
#   macos        aarch64-apple-darwin +           macOS/libnetsync.dylib       (on macOS; one universal file by lipo)
#                x86_64-apple-darwin
#   ios          aarch64-apple-ios                iOS/libnetsync.a             (on macOS; static, DllImport "__Internal")
#   android      aarch64-linux-android            Android/arm64-v8a/libnetsync.so (needs the NDK and cargo-ndk)
#
# Without a PLATFORM it builds for the machine it runs on (linux here).
# Each target needs its standard library: `rustup target add <target>`.
# Release builds by default (the profile keeps panic = "unwind", which the
# panic boundary needs); --debug builds the dev profile instead.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=release
cargo_profile=(--release)
platforms=()
for arg in "$@"; do
    case "$arg" in
        --debug) profile=debug; cargo_profile=() ;;
        -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
        -*) echo "unknown option $arg" >&2; exit 2 ;;
        *) platforms+=("$arg") ;;
    esac
done
if [ ${#platforms[@]} -eq 0 ]; then
    case "$(uname -s)" in
        Linux) platforms=(linux) ;;
        Darwin) platforms=(macos) ;;
        MINGW*|MSYS*|CYGWIN*) platforms=(windows) ;;
        *) echo "unknown host $(uname -s): name a platform" >&2; exit 2 ;;
    esac
fi

plugins=unity-package/Runtime/Plugins
target_dir=${CARGO_TARGET_DIR:-target}

# Builds the library for one Rust target; prints the output folder.
build() {
    local triple=$1
    echo "==> cargo build --lib ($profile) for $triple" >&2
    # The `cli` feature is the command-line program's; the library needs none of it.
    cargo build --lib --no-default-features "${cargo_profile[@]}" --target "$triple" >&2
    echo "$target_dir/$triple/$profile"
}

install_plugin() {
    local from=$1 to=$2
    mkdir -p "$(dirname "$plugins/$to")"
    cp "$from" "$plugins/$to"
    echo "installed $plugins/$to ($(wc -c <"$plugins/$to") bytes)"
}

for platform in "${platforms[@]}"; do
    case "$platform" in
        linux)
            out=$(build x86_64-unknown-linux-gnu)
            install_plugin "$out/libnetsync.so" Linux/x86_64/libnetsync.so
            ;;
        windows)
            out=$(build x86_64-pc-windows-msvc)
            install_plugin "$out/netsync.dll" Windows/x86_64/netsync.dll
            ;;
        windows-gnu)
            out=$(build x86_64-pc-windows-gnu)
            install_plugin "$out/netsync.dll" Windows/x86_64/netsync.dll
            ;;
        macos)
            arm=$(build aarch64-apple-darwin)
            intel=$(build x86_64-apple-darwin)
            mkdir -p "$plugins/macOS"
            lipo -create "$arm/libnetsync.dylib" "$intel/libnetsync.dylib" -output "$plugins/macOS/libnetsync.dylib"
            echo "installed $plugins/macOS/libnetsync.dylib (universal)"
            ;;
        ios)
            out=$(build aarch64-apple-ios)
            install_plugin "$out/libnetsync.a" iOS/libnetsync.a
            ;;
        android)
            command -v cargo-ndk >/dev/null || {
                echo "android needs the NDK and cargo-ndk (cargo install cargo-ndk; set ANDROID_NDK_HOME)" >&2
                exit 1
            }
            echo "==> cargo ndk build --lib ($profile) for aarch64-linux-android" >&2
            cargo ndk -t arm64-v8a build --lib --no-default-features "${cargo_profile[@]}" >&2
            install_plugin "$target_dir/aarch64-linux-android/$profile/libnetsync.so" Android/arm64-v8a/libnetsync.so
            ;;
        *)
            echo "unknown platform $platform (linux, windows, windows-gnu, macos, ios, android)" >&2
            exit 2
            ;;
    esac
done

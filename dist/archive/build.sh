#!/usr/bin/env bash
# Packs a built fixity into the release archive of its system, with its manual, its
# shell completions, the user docs and the scheduling examples of that system:
#
#   bash dist/archive/build.sh x86_64-pc-windows-gnu        # fixity-VERSION-x86_64-pc-windows-gnu.zip
#   bash dist/archive/build.sh x86_64-unknown-linux-musl    # fixity-VERSION-x86_64-unknown-linux-musl.tar.gz
#   bash dist/archive/build.sh aarch64-apple-darwin         # fixity-VERSION-aarch64-apple-darwin.tar.gz
#
# The binary is target/TARGET/PROFILE/fixity[.exe] (FIXITY_ARCHIVE_PROFILE, default
# `deb`: release with thin LTO), built before (dist/static/build.sh for musl; cargo
# build --profile deb --target TARGET otherwise). The archives go into target/archives/
# with a SHA256SUMS that fixity itself writes, and are reproducible: names in order,
# every time SOURCE_DATE_EPOCH (default: the last commit's), no owner.
#
# Windows: a .zip (what Explorer opens) holding fixity.exe, the manual pages as text
# (man/fixity-hash.txt ..., CRLF: Windows has no man), PowerShell and bash completions,
# the Task Scheduler task (dist/windows). Elsewhere a .tar.gz holding the pages as
# man(1) reads them (man/fixity-hash.1 ...: `man -l`, or copy to a MANPATH), bash, zsh
# and fish completions, and the systemd units (Linux) or the launchd job (macOS).
#
# The pages, completions and SHA256SUMS are made by FIXITY_ARCHIVE_HOST_BIN when set (a
# fixity of this source built for this machine), otherwise by the archive's own binary
# where it runs here (natively, or under CARGO_TARGET_<TARGET>_RUNNER: wine,
# qemu-aarch64): the same command-line definitions. Windows' needs zip and groff (Debian: apt-get install zip groff).
set -euo pipefail
cd "$(dirname "$0")/../.."

target=${1:?usage: dist/archive/build.sh TARGET [--check] (x86_64-pc-windows-gnu, x86_64-unknown-linux-musl, aarch64-apple-darwin ...)}
check=no
[ "${2:-}" = --check ] && check=yes
profile=${FIXITY_ARCHIVE_PROFILE:-deb}
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
dir_of_profile=$profile
[ "$profile" = dev ] && dir_of_profile=debug
targets=${CARGO_TARGET_DIR:-target}
case $target in
  *-windows-*) exe=fixity.exe kind=windows ;;
  *-apple-darwin) exe=fixity kind=macos ;;
  *-linux-*) exe=fixity kind=linux ;;
  *) echo "dist/archive/build.sh: no archive layout for $target" >&2; exit 2 ;;
esac
bin="$targets/$target/$dir_of_profile/$exe"
# This machine's own target, built without --target.
if [ ! -f "$bin" ] && [ "$target" = "$(rustc -vV 2>/dev/null | sed -n 's/^host: //p')" ]; then
  bin="$targets/$dir_of_profile/$exe"
fi
if [ ! -f "$bin" ]; then
  echo "dist/archive/build.sh: $bin is missing: build it first (cargo build --profile $profile --target $target)" >&2
  exit 2
fi
bin=$(realpath "$bin")
# Windows' archive alone needs them: its pages as text (groff), and the zip.
for tool in groff zip; do
  if [ $kind = windows ] && ! command -v $tool >/dev/null 2>&1; then
    echo "dist/archive/build.sh: $tool is missing (Debian: apt-get install $tool)" >&2
    exit 2
  fi
done

# How the pages and completions are made: the archive's binary if it runs here.
runner_var="CARGO_TARGET_$(echo "$target" | tr 'a-z-' 'A-Z_')_RUNNER"
runner=${!runner_var:-}
gen=()
if [ -n "${FIXITY_ARCHIVE_HOST_BIN:-}" ]; then
  gen=("$(realpath "$FIXITY_ARCHIVE_HOST_BIN")")
elif $runner "$bin" --version >/dev/null 2>&1; then
  # shellcheck disable=SC2206
  gen=($runner "$bin")
else
  echo "dist/archive/build.sh: $bin does not run here: set FIXITY_ARCHIVE_HOST_BIN to a fixity built for this machine (or $runner_var)" >&2
  exit 2
fi

name="fixity-$version-$target"
out="$targets/archives"
work="$out/$name"
rm -rf "$work"
mkdir -p "$work/man" "$work/completions" "$work/docs"
cp "$bin" "$work/$exe"
# A build with debug information (the dev profile, as CI's Windows tests make it) loses it
# here; the release profiles strip their own.
if [ $kind = windows ] && [ "${target%%-*}" = x86_64 ] && command -v x86_64-w64-mingw32-strip >/dev/null 2>&1; then
  x86_64-w64-mingw32-strip --strip-debug "$work/$exe"
elif [ $kind = linux ] && [ "${target%%-*}" = "$(uname -m)" ] && command -v strip >/dev/null 2>&1; then
  strip --strip-debug "$work/$exe"
fi
cp README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE "$work/"
for doc in bagit catalog check dups formats platforms reliability remote repair scale; do
  cp "docs/$doc.md" "$work/docs/"
done

pages=$(mktemp -d)
trap 'rm -rf "$pages"' EXIT
"${gen[@]}" man --dir "$pages" >/dev/null
count=0
for page in "$pages"/*.1; do
  base=$(basename "$page" .1)
  if [ $kind = windows ]; then
    # Plain text, 78 columns, no overstrikes, CRLF.
    groff -man -Tutf8 -rLL=78n -rHY=0 -P-cbou "$page" 2>/dev/null | sed 's/$/\r/' > "$work/man/$base.txt"
  else
    cp "$page" "$work/man/$base.1"
  fi
  count=$((count + 1))
done
if [ $kind = windows ]; then
  "${gen[@]}" completions powershell > "$work/completions/fixity.ps1"
  "${gen[@]}" completions bash > "$work/completions/fixity.bash"
  cp dist/windows/fixity-verify.xml "$work/"
else
  "${gen[@]}" completions bash > "$work/completions/fixity.bash"
  "${gen[@]}" completions zsh > "$work/completions/_fixity"
  "${gen[@]}" completions fish > "$work/completions/fixity.fish"
  if [ $kind = macos ]; then
    cp dist/macos/org.fixity.verify.plist "$work/"
  else
    mkdir -p "$work/systemd"
    cp dist/systemd/fixity-verify@.service dist/systemd/fixity-verify@.timer dist/systemd/fixity-serve.service "$work/systemd/"
  fi
fi
# Whatever the umask: files readable by all, the binary runnable.
find "$work" -type d -exec chmod 755 {} +
find "$work" -type f -exec chmod 644 {} +
chmod 755 "$work/$exe"
find "$work" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

cd "$out"
if [ $kind = windows ]; then
  archive="$name.zip"
  rm -f "$archive"
  # -X: no extra attributes (uid, times beyond the DOS one); names in order.
  find "$name" -print | LC_ALL=C sort | TZ=UTC zip -q -X -9 "$archive" -@
else
  archive="$name.tar.gz"
  tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
    --format=gnu -cf - "$name" | gzip -9 -n > "$archive"
fi
rm -rf "$name"
# The sums of every archive made here so far, by fixity itself.
shopt -s nullglob
made=(fixity-*.zip fixity-*.tar.gz)
"${gen[@]}" hash -a sha256 -- "${made[@]}" > SHA256SUMS
echo "$out/$archive: $exe, $count manual pages, completions ($(du -h "$archive" | cut -f1))"

# --check: the archive opens, holds what it should, its binary runs (where it can here),
# and its sum is right.
if [ $check = yes ]; then
  fail() { echo "dist/archive/build.sh --check: $archive: $*" >&2; exit 1; }
  sha256sum --quiet -c --ignore-missing SHA256SUMS || fail "SHA256SUMS does not match"
  look=$(mktemp -d)
  trap 'rm -rf "$pages" "$look"' EXIT
  if [ $kind = windows ]; then unzip -q "$archive" -d "$look"; else tar -xzf "$archive" -C "$look"; fi
  top="$look/$name"
  for f in "$exe" README.md LICENSE-MIT LICENSE-APACHE docs/platforms.md completions/fixity.bash; do
    [ -s "$top/$f" ] || fail "$f is missing"
  done
  [ "$(find "$top/man" -type f | wc -l)" -eq "$count" ] && [ "$count" -ge 20 ] \
    || fail "$count manual pages"
  if [ $kind = windows ]; then
    [ -s "$top/completions/fixity.ps1" ] && [ -s "$top/fixity-verify.xml" ] || fail "no PowerShell completions or task"
    page="$top/man/fixity-hash.txt"
    grep -q $'\b' "$page" && fail "overstrikes left in the text pages"
    grep -q -- '--algorithm' "$page" || fail "fixity-hash.txt does not read as text"
    [ "$(grep -c $'\r$' "$page")" -eq "$(wc -l < "$page")" ] || fail "text pages without CRLF"
  else
    grep -q '^\.TH' "$top/man/fixity-hash.1" || fail "fixity-hash.1 is not a manual page"
  fi
  [ -x "$top/$exe" ] || [ $kind = windows ] || fail "$exe is not executable"
  if $runner "$bin" --version >/dev/null 2>&1; then
    $runner "$top/$exe" --version | grep -q "^fixity $version" || fail "its $exe does not run"
    echo "$archive: checked ($exe runs: $($runner "$top/$exe" --version))"
  else
    echo "$archive: checked (its $exe does not run on this machine)"
  fi
fi

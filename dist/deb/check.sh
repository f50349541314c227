#!/usr/bin/env bash
# Installs the package dist/deb/build.sh built, checks that everything is where Debian
# looks for it, and removes the package again. Run as root (CI runs it from .ci/run);
# exits 1 naming the first thing missing, after removing the package.
#
#   bash dist/deb/build.sh && sudo bash dist/deb/check.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

fail() {
  echo "dist/deb/check.sh: $*" >&2
  exit 1
}

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
deb=$(ls -t target/debian/fixity_"$version"-*.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || fail "no target/debian/fixity_$version-*.deb: run dist/deb/build.sh first"

echo "== $deb"
dpkg-deb --info "$deb" | sed -n 's/^ \(Package\|Version\|Architecture\|Depends\|Installed-Size\):/&/p'
dpkg -i "$deb"
trap 'dpkg -r fixity >/dev/null 2>&1 || true' EXIT

# The binary, from /usr/bin, is this version.
got=$(/usr/bin/fixity --version)
[ "$got" = "fixity $version" ] || fail "/usr/bin/fixity --version says '$got', not 'fixity $version'"

# The manual pages: gzipped in /usr/share/man/man1, found by man, and they render.
for page in fixity fixity-verify fixity-hash fixity-check fixity-scan; do
  [ -f "/usr/share/man/man1/$page.1.gz" ] || fail "no /usr/share/man/man1/$page.1.gz"
done
where=$(man -w fixity) || fail "man -w fixity finds no page"
[ "$where" = /usr/share/man/man1/fixity.1.gz ] || fail "man -w fixity gives $where"
shown=$(MANWIDTH=80 man fixity-verify 2>/tmp/fixity-man.err) || fail "man fixity-verify failed"
[ ! -s /tmp/fixity-man.err ] || fail "man fixity-verify warns: $(cat /tmp/fixity-man.err)"
for want in "fixity-verify" "SYNOPSIS" "EXIT STATUS" "--max-duration"; do
  grep -q -- "$want" <<<"$shown" || fail "man fixity-verify does not show '$want'"
done

# The completions, where bash-completion, zsh and fish look.
for f in /usr/share/bash-completion/completions/fixity /usr/share/zsh/vendor-completions/_fixity \
  /usr/share/fish/vendor_completions.d/fixity.fish; do
  [ -s "$f" ] || fail "no completion file $f"
done
grep -q "fixity" /usr/share/bash-completion/completions/fixity || fail "bash completion names no fixity"

# The docs and the license (cargo-deb's machine-readable copyright file).
for f in /usr/share/doc/fixity/README.md /usr/share/doc/fixity/docs/formats.md /usr/share/doc/fixity/docs/dups.md \
  /usr/share/doc/fixity/docs/remote.md \
  /usr/share/doc/fixity/copyright; do
  [ -s "$f" ] || fail "no $f"
done
grep -q "MIT OR Apache-2.0" /usr/share/doc/fixity/copyright || fail "copyright names no license"

# The systemd units: installed, not enabled, and accepted by systemd-analyze for an instance.
units=/usr/lib/systemd/system
for u in fixity-verify@.service fixity-verify@.timer; do
  [ -f "$units/$u" ] || fail "no $units/$u"
done
if ls /etc/systemd/system/*/fixity-verify@* >/dev/null 2>&1; then
  fail "the package enabled a unit: $(ls /etc/systemd/system/*/fixity-verify@*)"
fi
tmp=$(mktemp -d)
cp "$units/fixity-verify@.service" "$tmp/fixity-verify@tmp.service"
cp "$units/fixity-verify@.timer" "$tmp/fixity-verify@tmp.timer"
if ! out=$(systemd-analyze verify "$tmp/fixity-verify@tmp.service" "$tmp/fixity-verify@tmp.timer" 2>&1); then
  rm -rf "$tmp"
  fail "systemd-analyze verify: $out"
fi
rm -rf "$tmp"
[ -z "$out" ] || fail "systemd-analyze verify warns: $out"

# Removed cleanly.
trap - EXIT
dpkg -r fixity
[ ! -e /usr/bin/fixity ] || fail "/usr/bin/fixity is still there after dpkg -r"
[ ! -e "$units/fixity-verify@.service" ] || fail "the service is still there after dpkg -r"
echo "dist/deb/check.sh: $deb installs, checks and removes cleanly"

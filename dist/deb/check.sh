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
dpkg-deb --info "$deb" | sed -n 's/^ \(Package\|Version\|Architecture\|Depends\|Installed-Size\|Maintainer\):/&/p'

# lintian, before anything is installed: an error fails (CI with it); the warnings it
# prints are the ones dist/deb/README lists with the reason each is left.
command -v lintian >/dev/null 2>&1 || fail "lintian is missing: apt-get install lintian"
echo "== lintian $deb"
lintian_out=$(lintian --fail-on error --tag-display-limit 0 "$deb" 2>&1) \
  || fail "lintian finds errors:"$'\n'"$lintian_out"
printf '%s\n' "${lintian_out:-(no tags)}"
# The package's maintainer is the project's.
dpkg-deb --field "$deb" Maintainer | grep -q "<fixity@fixity-dev.org>" \
  || fail "Maintainer is $(dpkg-deb --field "$deb" Maintainer), not the project's"
dpkg -i "$deb"
trap 'dpkg -r fixity >/dev/null 2>&1 || true' EXIT

# dpkg checks every installed file against DEBIAN/md5sums (build.sh adds it).
dpkg --verify fixity || fail "dpkg --verify fixity: installed files differ from the package's md5sums"
[ -s /var/lib/dpkg/info/fixity.md5sums ] || fail "the package has no md5sums"

# The binary, from /usr/bin, is this version.
# A package built from a git checkout also names the commit: `fixity 0.1.0 (41dfd03 2026-11-26)`.
got=$(/usr/bin/fixity --version)
grep -Eqx "fixity ${version//./\\.}( \([0-9a-f]{7,} [0-9]{4}-[0-9]{2}-[0-9]{2}\))?" <<<"$got" \
  || fail "/usr/bin/fixity --version says '$got', not 'fixity $version [(COMMIT DATE)]'"

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

# The docs and the licence.
for f in /usr/share/doc/fixity/README.md /usr/share/doc/fixity/docs/formats.md /usr/share/doc/fixity/docs/dups.md \
  /usr/share/doc/fixity/docs/remote.md \
  /usr/share/doc/fixity/copyright; do
  [ -s "$f" ] || fail "no $f"
done
# DEP-5: the format line, the licence of every file, and a stand-alone paragraph for each
# licence named, the MIT text in full and Apache-2.0 by reference to common-licenses.
copyright=/usr/share/doc/fixity/copyright
head -n 1 "$copyright" | grep -qx "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/" \
  || fail "$copyright is not machine-readable (DEP-5): no Format line first"
grep -qx "License: MIT or Apache-2.0" "$copyright" || fail "$copyright names no licence for Files: *"
grep -qx "Copyright: 2026 The fixity developers" "$copyright" || fail "$copyright has no copyright line"
grep -qx " Permission is hereby granted, free of charge, to any person obtaining a copy" "$copyright" \
  || fail "$copyright lacks the MIT text"
grep -q "/usr/share/common-licenses/Apache-2.0" "$copyright" || fail "$copyright does not point to the Apache-2.0 text"
for f in /usr/share/doc/fixity/changelog.Debian.gz /usr/share/doc/fixity/changelog.gz; do
  [ -s "$f" ] || fail "no $f"
done
zcat /usr/share/doc/fixity/changelog.Debian.gz | head -n 1 | grep -q "^fixity ($version-" \
  || fail "changelog.Debian.gz's first entry is not for $version: dist/deb/changelog needs an entry"
zcat /usr/share/doc/fixity/changelog.gz | grep -q "^## \[$version\]" \
  || fail "the upstream changelog (CHANGELOG.md) has no section for $version"

# The systemd units: installed, not enabled, and accepted by systemd-analyze for an instance.
units=/usr/lib/systemd/system
for u in fixity-verify@.service fixity-verify@.timer fixity-serve.service; do
  [ -f "$units/$u" ] || fail "no $units/$u"
done
if ls /etc/systemd/system/*/fixity-verify@* /etc/systemd/system/*/fixity-serve* >/dev/null 2>&1; then
  fail "the package enabled a unit: $(ls /etc/systemd/system/*/fixity-*)"
fi
tmp=$(mktemp -d)
cp "$units/fixity-verify@.service" "$tmp/fixity-verify@tmp.service"
cp "$units/fixity-verify@.timer" "$tmp/fixity-verify@tmp.timer"
cp "$units/fixity-serve.service" "$tmp/"
if ! out=$(systemd-analyze verify "$tmp/fixity-verify@tmp.service" "$tmp/fixity-verify@tmp.timer" "$tmp/fixity-serve.service" 2>&1); then
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

#!/usr/bin/env bash
# Turns a staging tree made by `make install DESTDIR=$DEB_ROOT PREFIX=/usr` into a .deb; `make deb`
# runs it. It does what debhelper would: strips the binaries, compresses man pages and large docs,
# writes the DEP-5 copyright, changelog.Debian.gz, the conffile, the maintainer scripts,
# md5sums and the control file (Depends: from dpkg-shlibdeps), then dpkg-deb --root-owner-group.
#
# Environment: DEB_ROOT (…/debian/cued: dpkg-shlibdeps wants the debian/<package> layout),
# DEB_VERSION (0.2.0-1), DEB_ARCH, DEB_FILE, DEB_MAINTAINER (optional: else the author of the
# repository's first commit), SOURCE_DATE_EPOCH (optional: else the last commit's time).
set -euo pipefail
cd "$(dirname "$0")/.."
here=packaging/debian

: "${DEB_ROOT:?}" "${DEB_VERSION:?}" "${DEB_ARCH:?}" "${DEB_FILE:?}"
[[ "$DEB_VERSION" =~ ^[0-9][A-Za-z0-9.+~]*-[A-Za-z0-9.+~]+$ ]] \
  || { echo "build-deb.sh: '$DEB_VERSION' is no version (is cuedVersion in Sources/Protocol/CueProtocol/Version.swift?)" >&2; exit 1; }
[[ -d "$DEB_ROOT/usr/bin" ]] || { echo "build-deb.sh: no staged install in $DEB_ROOT" >&2; exit 1; }
[[ "$(basename "$DEB_ROOT")" == cued && "$(basename "$(dirname "$DEB_ROOT")")" == debian ]] \
  || { echo "build-deb.sh: DEB_ROOT must be …/debian/cued" >&2; exit 1; }
work=$(dirname "$(dirname "$DEB_ROOT")")   # holds debian/control for dpkg-shlibdeps

if [[ -z "${DEB_MAINTAINER:-}" ]]; then
  first=$(git rev-list --max-parents=0 HEAD 2>/dev/null | tail -1 || true)
  [[ -n "$first" ]] && DEB_MAINTAINER=$(git log -1 --format='%an <%ae>' "$first")
  : "${DEB_MAINTAINER:=the cued authors <cued@users.noreply.github.com>}"
fi
if [[ -z "${SOURCE_DATE_EPOCH:-}" ]]; then
  SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || date +%s)
fi
export SOURCE_DATE_EPOCH

# make install's manifest is for make uninstall; dpkg keeps its own list.
rm -f "$DEB_ROOT/usr/share/cued/install-manifest.txt"

# Binaries: strip as dh_strip does (cued; cuectl and cued-carousel are links to it). Then check each still runs.
binaries=()
for bin in "$DEB_ROOT"/usr/bin/*; do
  [[ -L "$bin" ]] && continue
  strip --remove-section=.comment --remove-section=.note "$bin"
  binaries+=("$bin")
done
# The libcanberra driver (a shared object: only what linking needs stays, as dh_strip does for libraries).
canberra_driver=$(find "$DEB_ROOT/usr/lib" -path '*/libcanberra-*/libcanberra-cued.so' 2>/dev/null | head -n 1)
[[ -n "$canberra_driver" ]] || { echo "build-deb.sh: no libcanberra-cued.so under $DEB_ROOT/usr/lib" >&2; exit 1; }
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$canberra_driver"
for bin in "$DEB_ROOT"/usr/bin/*; do "$bin" --version >/dev/null; done

# Man pages: gzip -9n, as dh_compress does.
find "$DEB_ROOT/usr/share/man" -type f -name '*.[1-9]' -exec gzip -9nf {} +

# Docs: copyright (DEP-5) replaces LICENSE; changelog.Debian.gz; files over 4 KiB compressed.
doc="$DEB_ROOT/usr/share/doc/cued"
mkdir -p "$doc"
rm -f "$doc/LICENSE"
install -m 0644 "$here/copyright" "$doc/copyright"
upstream="${DEB_VERSION%-*}"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
{
  echo "cued ($DEB_VERSION) unstable; urgency=medium"
  echo
  echo "  * cued $upstream, packaged from commit $commit by make deb."
  echo
  echo " -- $DEB_MAINTAINER  $(date -u -R -d "@$SOURCE_DATE_EPOCH")"
} >"$doc/changelog.Debian"
# The schema stays uncompressed: tools read it (dh_compress leaves such files alone when told with -X).
find "$doc" -type f ! -name copyright ! -name '*.gz' ! -name '*.json' -size +4k -exec gzip -9nf {} +
gzip -9nf "$doc/changelog.Debian"

# The config of the system-wide daemon (its unit passes --config /etc/cued/cued.toml): comments only.
install -D -m 0644 "$here/cued.toml" "$DEB_ROOT/etc/cued/cued.toml"

mkdir -p "$DEB_ROOT/DEBIAN"
echo /etc/cued/cued.toml >"$DEB_ROOT/DEBIAN/conffiles"
install -m 0755 "$here/postinst" "$DEB_ROOT/DEBIAN/postinst"
install -m 0755 "$here/postrm" "$DEB_ROOT/DEBIAN/postrm"

# Ownership is root's (dpkg-deb --root-owner-group); modes are 0755 for directories and programs,
# 0644 for the rest, whatever the umask was.
find "$DEB_ROOT" -type d -exec chmod 0755 {} +
find "$DEB_ROOT" -type f ! -path "$DEB_ROOT/DEBIAN/*" -exec chmod 0644 {} +
chmod 0755 "$DEB_ROOT"/usr/bin/*
chmod 0644 "$DEB_ROOT/DEBIAN/conffiles"

# md5sums of everything but the conffiles.
(cd "$DEB_ROOT" && find . -type f ! -path './DEBIAN/*' ! -path './etc/*' -printf '%P\0' | LC_ALL=C sort -z \
  | xargs -0 md5sum) >"$DEB_ROOT/DEBIAN/md5sums"
chmod 0644 "$DEB_ROOT/DEBIAN/md5sums"

# Depends: the shared libraries the binaries and the libcanberra driver need (the Swift runtime is
# linked in: none from /opt/swift). The driver links libcanberra.so.0 (NEEDED, as libcanberra's own
# drivers do, so that it loads in hosts that bind libcanberra locally): libcanberra0 is a dependency.
# libpipewire and libpulse are not among them: cued loads them (dlopen) only when that output is
# chosen, so control.in recommends them with the rest. libsndfile is loaded (dlopen) too, at the first
# Ogg or WAV cue, but every install may meet one (a sound theme's .oga): it is a dependency. So is
# libflac12, which cued loads at the first FLAC cue (libsndfile1 depends on it already; named here
# because cued loads it itself, and a FLAC cue must not depend on what libsndfile happens to need).
# GLib (libgio) is loaded only to follow a desktop's sound settings, where it is always installed: recommended.
if ldd "${binaries[@]}" | grep -q '/opt/swift'; then
  echo "build-deb.sh: a binary needs a library from /opt/swift (build with --static-swift-stdlib):" >&2
  ldd "${binaries[@]}" | grep '/opt/swift' >&2
  exit 1
fi
mkdir -p "$work/debian"
printf 'Source: cued\nMaintainer: %s\n\nPackage: cued\nArchitecture: any\n' "$DEB_MAINTAINER" >"$work/debian/control"
shlibs=$(cd "$work" && dpkg-shlibdeps -O --warnings=0 "${binaries[@]#"$work/"}" "${canberra_driver#"$work/"}" | sed -n 's/^shlibs:Depends=//p')
[[ -n "$shlibs" ]] || { echo "build-deb.sh: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
# Packed relative relocations (the Makefile's RELEASE_FLAGS: -z pack-relative-relocs) need glibc
# 2.36's loader, which the binary asks for as the version GLIBC_ABI_DT_RELR; dpkg-shlibdeps reads
# only the symbols a binary uses, so it may ask for an older libc6: raise it.
if [[ "$(readelf -V "${binaries[@]}")" == *GLIBC_ABI_DT_RELR* ]]; then
  libc=$(grep -o 'libc6 (>= [^)]*)' <<<"$shlibs" | head -n 1 | sed 's/libc6 (>= \(.*\))/\1/')
  if [[ -z "$libc" ]]; then
    shlibs="$shlibs, libc6 (>= 2.36)"
  elif dpkg --compare-versions "$libc" lt 2.36; then
    shlibs=${shlibs/"libc6 (>= $libc)"/"libc6 (>= 2.36)"}
  fi
fi
# adduser: postinst makes the cued system user and group.
depends="adduser, libsndfile1, libflac12, $shlibs"

size=$(du -sk --exclude=DEBIAN "$DEB_ROOT" | cut -f1)
sed -e "s|@VERSION@|$DEB_VERSION|" -e "s|@ARCH@|$DEB_ARCH|" -e "s|@MAINTAINER@|$DEB_MAINTAINER|" \
  -e "s|@INSTALLED_SIZE@|$size|" -e "s|@DEPENDS@|$depends|" "$here/control.in" >"$DEB_ROOT/DEBIAN/control"
chmod 0644 "$DEB_ROOT/DEBIAN/control"

mkdir -p "$(dirname "$DEB_FILE")"
dpkg-deb --root-owner-group -Zxz --build "$DEB_ROOT" "$DEB_FILE"
echo "Depends: $depends"

#!/usr/bin/env bash
# Installs and uninstalls cued; the Makefile's install, install-user, uninstall and deb targets run it.
#
#   packaging/install.sh stage       release build + man pages + shell completions into $STAGE: one
#                                    multi-call executable, cued, and every other executable product
#                                    as a symbolic link to it (Sources/Programs/cued/main.swift)
#   packaging/install.sh install     copies $STAGE and the repository's files under $DESTDIR$PREFIX,
#                                    recording what it wrote in $DATADIR/cued/install-manifest.txt
#   packaging/install.sh uninstall   removes what the manifest lists: the files, then the directories
#                                    install created, if they are empty. Nothing else.
#   packaging/install.sh man-page BIN   prints packaging/man/cued.1 with the OPTIONS list of the cued
#                                    binary BIN (from its settings table) in place of the @OPTIONS@ line
#   packaging/install.sh canberra-plugindir   prints the directory libcanberra loads its drivers from
#   packaging/install.sh static-cxx DIR   makes DIR hold libstdc++.a alone (a link to the compiler's),
#                                    for the release link to find before libstdc++.so (the Makefile's
#                                    RELEASE_FLAGS search it first: STATIC_CXX_DIR)
#
# Settings come from the environment (the Makefile passes them all): PREFIX, DESTDIR, BINDIR, DATADIR,
# MANDIR, DOCDIR, BASH_COMPLETIONDIR, ZSH_COMPLETIONDIR, FISH_COMPLETIONDIR, SYSTEMD_USER_UNITDIR,
# SYSTEMD_SYSTEM_UNITDIR (empty: system units are skipped, as for install-user), SWIFT, RELEASE_FLAGS,
# SCRATCH_PATH (empty: SwiftPM's .build), STAGE, CANBERRA_DRIVER_FILE (the built libcanberra-cued.so,
# `make canberra`) and CANBERRA_PLUGINDIR (where it goes, outside PREFIX: libcanberra looks only in
# its own directory; empty: not installed).
set -euo pipefail
cd "$(dirname "$0")/.."

: "${PREFIX:=/usr/local}"
: "${DESTDIR:=}"
: "${BINDIR:=$PREFIX/bin}"
: "${DATADIR:=$PREFIX/share}"
: "${MANDIR:=$DATADIR/man}"
: "${DOCDIR:=$DATADIR/doc/cued}"
: "${BASH_COMPLETIONDIR:=$DATADIR/bash-completion/completions}"
: "${ZSH_COMPLETIONDIR:=$DATADIR/zsh/site-functions}"
: "${FISH_COMPLETIONDIR:=$DATADIR/fish/vendor_completions.d}"
: "${SYSTEMD_USER_UNITDIR=$PREFIX/lib/systemd/user}"
: "${SYSTEMD_SYSTEM_UNITDIR=$PREFIX/lib/systemd/system}"
: "${SWIFT:=swift}"
: "${RELEASE_FLAGS=--static-swift-stdlib -Xlinker -z -Xlinker now}"   # the Makefile passes its own
: "${SCRATCH_PATH:=}"
: "${STAGE:=${SCRATCH_PATH:-.build}/install-staging}"
: "${CANBERRA_DRIVER_FILE:=${SCRATCH_PATH:-.build}/canberra/libcanberra-cued.so}"
MANIFEST="$DATADIR/cued/install-manifest.txt"
tmp=""

die() { echo "install.sh: $*" >&2; exit 1; }

# Every `.executable(name: "…")` product of Package.swift, in order (read from the manifest's text,
# so no JSON tool is needed; the product declarations are one call each). The first, cued, is the
# multi-call executable that is installed; the others are installed as links to it.
executables() {
  tr '\n' ' ' <Package.swift | grep -o '\.executable( *name: *"[^"]*"' | sed 's/.*"\(.*\)"$/\1/'
}

# libcanberra's driver directory: CA_PLUGIN_PATH, compiled in as $libdir/libcanberra-$version
# (Debian: /usr/lib/x86_64-linux-gnu/libcanberra-0.30). libcanberra-dev's pkg-config file says both;
# without it, the multiarch library directory and 0.30, libcanberra's last release since 2012.
canberra_plugindir() {
  local libdir version multiarch
  if libdir=$(pkg-config --variable=libdir libcanberra 2>/dev/null) && [[ -n "$libdir" ]]; then
    version=$(pkg-config --modversion libcanberra)
    echo "$libdir/libcanberra-$version"
    return
  fi
  multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch 2>/dev/null || true)
  echo "/usr/lib${multiarch:+/$multiarch}/libcanberra-0.30"
}
[[ -v CANBERRA_PLUGINDIR ]] || CANBERRA_PLUGINDIR=$(canberra_plugindir)

# The compiler's libstdc++.a, alone in $1 (Debian: libstdc++-12-dev, which Swift itself needs).
static_cxx() {
  local archive
  archive=$("${CXX:-c++}" -print-file-name=libstdc++.a 2>/dev/null || clang -print-file-name=libstdc++.a 2>/dev/null || true)
  [[ "$archive" == /* && -f "$archive" ]] || die "no libstdc++.a to link cued with (Debian: libstdc++-12-dev)"
  mkdir -p "$1"
  ln -sfn "$archive" "$1/libstdc++.a"
}

scratch_args=()
[[ -n "$SCRATCH_PATH" ]] && scratch_args=(--scratch-path "$SCRATCH_PATH")

# cued's man page: the hand-written packaging/man/cued.1, with the options list that the binary $1
# makes from its settings table (`cued --generate-manual-options`) in place of its @OPTIONS@ line.
man_page() {
  local options
  options=$("$1" --generate-manual-options) || die "$1 --generate-manual-options failed"
  [[ "$options" == .Bl* ]] || die "$1 --generate-manual-options printed no options list"
  grep -q '^\.\\" @OPTIONS@' packaging/man/cued.1 || die "packaging/man/cued.1 has no @OPTIONS@ line"
  while IFS= read -r line; do
    if [[ "$line" == '.\" @OPTIONS@'* ]]; then printf '%s\n' "$options"; else printf '%s\n' "$line"; fi
  done <packaging/man/cued.1
}

stage() {
  local -a tools
  read -r -a tools <<<"$(executables | tr '\n' ' ')"
  [[ ${#tools[@]} -gt 0 ]] || die "no executable products in Package.swift"
  [[ "${tools[0]}" == cued ]] || die "the first executable product in Package.swift is ${tools[0]}, not cued"
  # Only the multi-call cued: it holds every program, with one Swift runtime for all.
  # shellcheck disable=SC2086  # RELEASE_FLAGS is a list of flags
  "$SWIFT" build -c release $RELEASE_FLAGS "${scratch_args[@]}" --product cued
  local bin
  # shellcheck disable=SC2086
  bin=$("$SWIFT" build -c release $RELEASE_FLAGS "${scratch_args[@]}" --show-bin-path)

  # Man pages from swift-argument-parser's generate-manual plugin. It builds every product itself
  # with the plain flags of its configuration, so it runs on the debug build (the one `make build`
  # and `make test` keep up to date; the help text is the same): run on release, it would relink
  # the release binaries without --static-swift-stdlib. It writes into the scratch directory
  # (plugins/GenerateManual/outputs/<target>/), so it needs no write access to the package.
  local scratch="${SCRATCH_PATH:-.build}" date
  if [[ -n "${SOURCE_DATE_EPOCH:-}" ]]; then
    date=$(date -u -d "@$SOURCE_DATE_EPOCH" +%F)
  else
    date=$(git log -1 --format=%cs 2>/dev/null || true)
    [[ -n "$date" ]] || date=$(date -u +%F)
  fi
  rm -rf "$scratch/plugins/GenerateManual/outputs"
  "$SWIFT" package "${scratch_args[@]}" plugin generate-manual --configuration debug \
    --date "$date" --authors "the cued authors"

  rm -rf "$STAGE"
  mkdir -p "$STAGE/bin" "$STAGE/man" "$STAGE/completions"
  local tool page help
  [[ -x "$bin/cued" ]] || die "the release build has no $bin/cued"
  cp "$bin/cued" "$STAGE/bin/cued"
  # The other programs are cued under their own name: it runs the one argv[0] names.
  for tool in "${tools[@]:1}"; do
    ln -s cued "$STAGE/bin/$tool"
    help=$("$STAGE/bin/$tool" --help 2>&1) || true
    [[ "$help" == *"USAGE: $tool "* ]] || die "cued run as $tool is not $tool (is it in Sources/Programs/CuedMulticall/Program.swift?)"
  done
  # A blank line in the discussion text becomes .Pp (groff warns about empty input lines in mdoc).
  while IFS= read -r page; do sed 's/^$/.Pp/' "$page" >"$STAGE/man/$(basename "$page")"; done \
    < <(find "$scratch/plugins/GenerateManual/outputs" -name '*.[1-9]' -type f | sort)
  # Tools with a generated page use ArgumentParser, and cued parses by hand the same way: they
  # write their own completion scripts.
  for tool in "${tools[@]}"; do
    [[ -f "$STAGE/man/$tool.1" || $tool == cued ]] || continue
    # (bash completions are sourced, not run: no #! line)
    "$STAGE/bin/$tool" --generate-completion-script bash | sed '1{/^#!/d}' >"$STAGE/completions/$tool.bash"
    "$STAGE/bin/$tool" --generate-completion-script zsh >"$STAGE/completions/_$tool"
    "$STAGE/bin/$tool" --generate-completion-script fish >"$STAGE/completions/$tool.fish"
  done
  # Hand-written pages (packaging/man/) for tools that do not use ArgumentParser (cued);
  # cued's options list comes from its settings table.
  for tool in "${tools[@]}"; do
    [[ -f "$STAGE/man/$tool.1" || ! -f "packaging/man/$tool.1" ]] && continue
    if [[ $tool == cued ]]; then
      man_page "$STAGE/bin/cued" >"$STAGE/man/cued.1"
    else
      cp "packaging/man/$tool.1" "$STAGE/man/"
    fi
  done
  printf '%s\n' "${tools[@]}" >"$STAGE/executables"
  # The libcanberra driver, built by `make canberra` (plain C: the Makefile says why).
  [[ -f "$CANBERRA_DRIVER_FILE" ]] || die "no $CANBERRA_DRIVER_FILE (run: make canberra)"
  mkdir -p "$STAGE/lib"
  cp "$CANBERRA_DRIVER_FILE" "$STAGE/lib/libcanberra-cued.so"
  echo "staged in $STAGE: $(ls "$STAGE/bin" "$STAGE/lib" | grep -v : | tr '\n' ' ')"
}

# --- install ------------------------------------------------------------------------------------

files=()         # what this install wrote (paths without DESTDIR)
created_dirs=()  # directories it created (or an earlier install created: kept in the manifest)

# mkdir -p that remembers which of the directories did not exist yet.
ensure_dir() {
  local d="$1"
  while [[ "$d" != "/" && "$d" != "." && ! -d "$DESTDIR$d" ]]; do
    created_dirs+=("$d")
    d=$(dirname "$d")
  done
  (umask 022 && mkdir -p "$DESTDIR$1")
}

# put MODE SOURCE DESTINATION-PATH
put() {
  local mode="$1" src="$2" dest="$3"
  ensure_dir "$(dirname "$dest")"
  install -m "$mode" "$src" "$DESTDIR$dest"
  files+=("$dest")
  echo "  $DESTDIR$dest"
}

# put_link TARGET DESTINATION-PATH: a symbolic link (TARGET relative to its directory)
put_link() {
  local target="$1" dest="$2"
  ensure_dir "$(dirname "$dest")"
  rm -f "$DESTDIR$dest"
  ln -s "$target" "$DESTDIR$dest"
  files+=("$dest")
  echo "  $DESTDIR$dest -> $target"
}

# The unit's scope: systemd/system/ and systemd/user/ say it; a unit directly in systemd/ is a user
# unit unless it reads like a system one (a User=, Group= or socket owner, or multi-user.target),
# and a .socket goes where the .service of the same name goes.
unit_scope() {
  local unit="$1"
  case "$unit" in
    systemd/system/*) echo system; return ;;
    systemd/user/*) echo user; return ;;
  esac
  local pattern='^[[:space:]]*(User|Group|DynamicUser|SocketUser|SocketGroup)=|^[[:space:]]*WantedBy=.*multi-user\.target'
  if grep -Eq "$pattern" "$unit"; then echo system; return; fi
  local sibling="${unit%.*}.service"
  if [[ "$unit" == *.socket && -f "$sibling" ]] && grep -Eq "$pattern" "$sibling"; then echo system; return; fi
  echo user
}

install_all() {
  [[ -f "$STAGE/executables" ]] || die "nothing staged in $STAGE (run: make install)"
  local -a tools
  mapfile -t tools <"$STAGE/executables"
  local old_manifest="$DESTDIR$MANIFEST"
  local -a old_entries=()
  [[ -f "$old_manifest" ]] && mapfile -t old_entries < <(grep -v '^#' "$old_manifest")

  echo "installing into $DESTDIR$PREFIX:"
  local tool f
  for tool in "${tools[@]}"; do
    if [[ -L "$STAGE/bin/$tool" ]]; then put_link "$(readlink "$STAGE/bin/$tool")" "$BINDIR/$tool"; else put 0755 "$STAGE/bin/$tool" "$BINDIR/$tool"; fi
  done

  for f in sounds/*.mp3 sounds/README.md; do put 0644 "$f" "$DATADIR/cued/sounds/$(basename "$f")"; done

  local unit scope dir sed_args=()
  for tool in "${tools[@]}"; do
    # ExecStart=/any/where/cued …, ExecStart=-cued … (and every Exec*= line) → $BINDIR/cued …
    sed_args+=(-e "s#^([[:space:]]*Exec[A-Za-z]*=[-@:+!|]*)([^[:space:]]*/)?$tool([[:space:]]|\$)#\\1$BINDIR/$tool\\3#")
  done
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  while IFS= read -r unit; do
    scope=$(unit_scope "$unit")
    if [[ "$scope" == system ]]; then dir="$SYSTEMD_SYSTEM_UNITDIR"; else dir="$SYSTEMD_USER_UNITDIR"; fi
    [[ -n "$dir" ]] || { echo "  (skipped $scope unit $unit)"; continue; }
    mkdir -p "$tmp/$scope"
    sed -E "${sed_args[@]}" "$unit" >"$tmp/$scope/$(basename "$unit")"
    put 0644 "$tmp/$scope/$(basename "$unit")" "$dir/$(basename "$unit")"
  done < <(find systemd -type f \( -name '*.service' -o -name '*.socket' \) | sort)

  for f in "$STAGE"/man/*.[1-9]; do
    [[ -f "$f" ]] || continue
    local section="${f##*.}"
    put 0644 "$f" "$MANDIR/man$section/$(basename "$f")"
  done
  for f in "$STAGE"/completions/*.bash; do
    [[ -f "$f" ]] && put 0644 "$f" "$BASH_COMPLETIONDIR/$(basename "$f" .bash)"
  done
  for f in "$STAGE"/completions/_*; do
    [[ -f "$f" ]] && put 0644 "$f" "$ZSH_COMPLETIONDIR/$(basename "$f")"
  done
  for f in "$STAGE"/completions/*.fish; do
    [[ -f "$f" ]] && put 0644 "$f" "$FISH_COMPLETIONDIR/$(basename "$f")"
  done

  # libcanberra's driver, where libcanberra looks (outside PREFIX); CANBERRA_PLUGINDIR= skips it.
  if [[ -n "${CANBERRA_PLUGINDIR:-}" ]]; then
    put 0644 "$STAGE/lib/libcanberra-cued.so" "$CANBERRA_PLUGINDIR/libcanberra-cued.so"
  else
    echo "  (skipped the libcanberra driver: CANBERRA_PLUGINDIR is empty)"
  fi

  for f in README.md LICENSE docs/*.md docs/protocol.schema.json; do [[ -f "$f" ]] && put 0644 "$f" "$DOCDIR/$(basename "$f")"; done
  [[ -f systemd/cued.toml.example ]] && put 0644 systemd/cued.toml.example "$DOCDIR/examples/cued.toml.example"

  # An earlier install's files that this one did not write again are stale: remove them.
  local entry
  for entry in "${old_entries[@]}"; do
    [[ -n "$entry" ]] || continue
    if [[ "$entry" == */ ]]; then
      created_dirs+=("${entry%/}")
    elif [[ "$entry" != "$MANIFEST" ]] && ! printf '%s\n' "${files[@]}" | grep -qxF -- "$entry"; then
      rm -f "$DESTDIR$entry" && echo "  removed stale $DESTDIR$entry"
    fi
  done

  ensure_dir "$(dirname "$MANIFEST")"
  {
    echo "# Installed by cued's 'make install' (PREFIX=$PREFIX); 'make uninstall' removes these files"
    echo "# and then these directories (lines ending in /) if they are empty."
    printf '%s\n' "${files[@]}" "$MANIFEST"
    printf '%s/\n' "${created_dirs[@]}" | sort -u
  } >"$DESTDIR$MANIFEST.new"
  chmod 0644 "$DESTDIR$MANIFEST.new"
  mv "$DESTDIR$MANIFEST.new" "$DESTDIR$MANIFEST"
  echo "manifest: $DESTDIR$MANIFEST"
}

uninstall_all() {
  local manifest="$DESTDIR$MANIFEST"
  if [[ ! -f "$manifest" ]]; then
    echo "no $manifest: nothing installed there (PREFIX=$PREFIX DESTDIR=$DESTDIR)" >&2
    return 0
  fi
  local entry
  # Files first (the manifest itself last), then directories, deepest first, only when empty.
  while IFS= read -r entry; do
    [[ -z "$entry" || "$entry" == \#* || "$entry" == */ || "$entry" == "$MANIFEST" ]] && continue
    if [[ -f "$DESTDIR$entry" || -L "$DESTDIR$entry" ]]; then
      rm -f "$DESTDIR$entry" && echo "  removed $DESTDIR$entry"
    fi
  done <"$manifest"
  local -a dirs
  mapfile -t dirs < <(grep '/$' "$manifest" | sort -r)
  rm -f "$manifest"
  for entry in "${dirs[@]}"; do
    entry="${entry%/}"
    [[ -d "$DESTDIR$entry" ]] || continue
    if rmdir "$DESTDIR$entry" 2>/dev/null; then
      echo "  removed $DESTDIR$entry/"
    else
      echo "  kept $DESTDIR$entry/ (not empty)"
    fi
  done
}

case "${1:-}" in
  stage) stage ;;
  install) install_all ;;
  uninstall) uninstall_all ;;
  executables) executables ;;
  canberra-plugindir) canberra_plugindir ;;
  static-cxx) [[ -n "${2:-}" ]] || die "usage: $0 static-cxx DIR"; static_cxx "$2" ;;
  man-page) [[ -n "${2:-}" ]] || die "usage: $0 man-page CUED-BINARY"; man_page "$2" ;;
  *) die "usage: $0 stage|install|uninstall|executables|canberra-plugindir|static-cxx DIR|man-page CUED-BINARY" ;;
esac

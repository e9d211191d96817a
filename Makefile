# cued: build, run, test. Each target installs only what it needs on Debian first
# (scripts/install-deps.sh: --run for building and running, --test for the test servers and tools,
# --tools for regenerating sounds and benchmarks) and never removes or replaces an installed package.
SWIFT ?= swift
CONFIG ?= debug
DEVICE ?= auto
BUILD_FLAGS ?=

.PHONY: all deps test-deps tool-deps package-deps build release run test test-live sounds fixtures clean bench bench-quick canberra canberra-play

all: build

deps:
	@SWIFT="$(SWIFT)" scripts/install-deps.sh --run

test-deps:
	@SWIFT="$(SWIFT)" scripts/install-deps.sh --test

tool-deps:
	@SWIFT="$(SWIFT)" scripts/install-deps.sh --tools

package-deps:
	@SWIFT="$(SWIFT)" scripts/install-deps.sh --package

build: deps
	$(SWIFT) build -c $(CONFIG) $(BUILD_FLAGS)
	@$(MAKE) --no-print-directory canberra

release:
	@$(MAKE) build CONFIG=release

# The daemon on this checkout's sounds. DEVICE=auto (PipeWire, else ALSA default); null plays into a silent clock-paced sink.
run: build
	$$($(SWIFT) build -c $(CONFIG) --show-bin-path)/cued --sounds sounds --device $(DEVICE)

# Every test: unit, decoder fixtures, ALSA file-PCM captures, PulseAudio and PipeWire end-to-end;
# then the suites named here once more on the native PipeWire output, and the PulseAudio suites on
# the other PulseAudio-protocol server.
PULSE_SUITES = PulseAudioTests|GatedCaptureTests|SandboxTests
PIPEWIRE_SUITES = EndToEndTests.DaemonTests|SoundAndEventTests|EndToEndTests.PagingTests|HostileProtocolTests|HostileInputTests|AccessAndLimitTests|OutsideClientTests

test: test-deps
	$(SWIFT) build --build-tests $(BUILD_FLAGS) 2>&1 | tee .build-test.log
	@if grep -E '^/.*(Sources|Tests)/.*: warning:' .build-test.log; then echo "build has warnings (above)"; exit 1; fi
	# One test at a time: many tests run real daemons, sound servers and a release build, and on a
	# 2-core machine running them side by side starves the timing-sensitive ones. Every pass goes
	# through scripts/swift-test.sh, which fails a pass that ends without Swift Testing's summary
	# line or counts fewer tests than `swift test list` holds for its filter.
	SWIFT="$(SWIFT)" scripts/swift-test.sh --skip-build --no-parallel $(BUILD_FLAGS)
	# The device-agnostic end-to-end suites again, on the native PipeWire output into a headless
	# PipeWire (Tests/EndToEndTests/Harness.swift, sharedOutput) instead of the null sink.
	CUED_TEST_DEVICE=pipewire SWIFT="$(SWIFT)" scripts/swift-test.sh --skip-build --no-parallel $(BUILD_FLAGS) --filter '$(PIPEWIRE_SUITES)'
	# The PulseAudio-protocol suites again against a private pipewire-pulse, when the first pass used
	# the pulseaudio server: both arrangements a user's machine may have (scripts/install-deps.sh).
	@if [ -x /usr/bin/pulseaudio ] && [ "$${CUED_TEST_PULSE_SERVER:-pulseaudio}" = pulseaudio ]; then \
	  echo "CUED_TEST_PULSE_SERVER=pipewire-pulse $(SWIFT) test --filter '$(PULSE_SUITES)'"; \
	  CUED_TEST_PULSE_SERVER=pipewire-pulse SWIFT="$(SWIFT)" scripts/swift-test.sh --skip-build --no-parallel $(BUILD_FLAGS) --filter '$(PULSE_SUITES)'; \
	fi
	# The Python client package (clients/python), pip-installed into a scratch venv as a user installs
	# it, type-checked, and tested against this build's cued.
	clients/python/run-tests.sh "$$($(SWIFT) build --show-bin-path $(BUILD_FLAGS))/cued"

# The behaviour bodies that `make test` runs in process (Tests/DaemonBehaviours), once more on the
# real cued through a paced device, in real time: the same body, live (CUED_TEST_LIVE=1).
LIVE_SUITES = LiveCueRulesTests|LivePagingTests|LivePageBurstTests|LiveConnectionsTests|LiveSoundLibraryTests|LivePlayerTests|LiveFilePlayTests|LiveSoundsAndEventsTests|LiveSoundWatchingTests|LiveHostilePathsTests
test-live: test-deps
	$(SWIFT) build --build-tests $(BUILD_FLAGS)
	CUED_TEST_LIVE=1 SWIFT="$(SWIFT)" scripts/swift-test.sh --skip-build --no-parallel $(BUILD_FLAGS) --filter '$(LIVE_SUITES)'

# The transcripts of docs/PROTOCOL.md, rewritten where they differ from what this build's daemon
# sends (Tests/Protocol/transcripts.py --update; `make test` checks them). Read the diff: the prose
# around a block must still say what it shows. TRANSCRIPTS_ARGS=--all rewrites times and levels too.
TRANSCRIPTS_ARGS ?=

.PHONY: transcripts

transcripts: test-deps
	$(SWIFT) build $(BUILD_FLAGS)
	python3 Tests/Protocol/transcripts.py --update --cued "$$($(SWIFT) build --show-bin-path $(BUILD_FLAGS))/cued" $(TRANSCRIPTS_ARGS)

# The generated parts of docs/protocol.schema.json (its requests) and docs/PROTOCOL.md (section 2's
# op list, each op's field table), rewritten from the op table and each op's field declarations, and
# the libcanberra driver's cued-protocol.h (error codes, reasons, features, the role rule), from
# CueProtocol (Tools/CueProtocolDocs); CueProtocolTests ("The generated protocol docs") fails while
# any differs.
.PHONY: protocol-docs

protocol-docs:
	$(SWIFT) build --product cued-protocol-docs $(BUILD_FLAGS)
	"$$($(SWIFT) build --show-bin-path $(BUILD_FLAGS))/cued-protocol-docs" .

sounds: tool-deps
	sounds/make-sounds.sh

fixtures: tool-deps
	Tests/Fixtures/make-fixtures.sh

clean:
	rm -rf .build .build-test.log

# --- Installation and the Debian package (packaging/) ---------------------------------------------
#   make install [PREFIX=/usr/local] [DESTDIR=…]   binaries, sounds, units, man pages, completions, the
#                                                  libcanberra driver (in CANBERRA_PLUGINDIR, below)
#   make install-user                              the same into ~/.local, units into ~/.config/systemd/user
#   make uninstall [PREFIX=…] [DESTDIR=…]          removes what the install's manifest lists
#   make deb                                       dist/cued_<version>-<revision>_<arch>.deb
# The binaries come from a release build with RELEASE_FLAGS: the Swift runtime linked in (nothing
# under /opt/swift is needed at run time) and BIND_NOW. One executable is installed, the multi-call
# cued; cuectl and cued-carousel are symbolic links to it (one Swift runtime, not three: 16.6 MB,
# not 43.5). So that the daemon's idle RSS does not pay for the programs it carries, it is linked
# with the toolchain's lld: relative relocations packed (RELR: 9 KiB, not 1 MiB read at every
# start), no symbols of its own exported (its dynamic symbol table was 0.5 MiB), and libstdc++ linked
# in (the Swift runtime uses little of it; libstdc++.so's symbol tables cost 1 MiB of RSS): STATIC_CXX_DIR
# holds only libstdc++.a and is searched first (docs/PERFORMANCE.md, "Issue 32: footprint"). SCRATCH_PATH: a SwiftPM build folder other
# than .build (the install tests use one: `swift test` holds the lock on .build while they run).
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
DOCDIR ?= $(DATADIR)/doc/cued
BASH_COMPLETIONDIR ?= $(DATADIR)/bash-completion/completions
ZSH_COMPLETIONDIR ?= $(DATADIR)/zsh/site-functions
FISH_COMPLETIONDIR ?= $(DATADIR)/fish/vendor_completions.d
SYSTEMD_USER_UNITDIR ?= $(PREFIX)/lib/systemd/user
SYSTEMD_SYSTEM_UNITDIR ?= $(PREFIX)/lib/systemd/system
STATIC_CXX_DIR = $(abspath $(BUILD_DIR))/static-libstdc++
RELEASE_FLAGS ?= --static-swift-stdlib -Xswiftc -use-ld=lld -Xswiftc -L$(STATIC_CXX_DIR) -Xlinker -z -Xlinker now \
  -Xlinker -z -Xlinker pack-relative-relocs -Xlinker --no-export-dynamic
SCRATCH_PATH ?=
BUILD_DIR = $(or $(SCRATCH_PATH),.build)
DEB_REVISION ?= 1
DEB_VERSION = $(shell sed -n 's/.*cuedVersion *= *"\([^"]*\)".*/\1/p' Sources/Protocol/CueProtocol/Version.swift)-$(DEB_REVISION)
DEB_ARCH = $(shell dpkg --print-architecture)
DEB_FILE = dist/cued_$(DEB_VERSION)_$(DEB_ARCH).deb
DEB_WORK = $(abspath $(BUILD_DIR))/deb
DEB_ROOT = $(DEB_WORK)/debian/cued

# --- libcanberra-cued.so: the libcanberra driver (Sources/Plugins/CanberraCued, docs/CLIENT.md) -----
# Plain C built by cc, not SwiftPM: SwiftPM links every dynamic library product with swiftc, which adds
# the Swift runtime (libswiftCore.so, swiftrt.o) even to a C-only one, and this library is loaded into
# any program that plays a libcanberra sound. It links libc, libm and libcanberra.so.0 (NEEDED, as
# libcanberra's own drivers do): a host that loads libcanberra with local binding (GTK's modules,
# Python's ctypes, any plugin) leaves libcanberra's symbols out of the global scope, and a driver
# that left its ca_* calls undefined would not load there. Only the eight cued_driver_* entry points
# are exported: libcanberra looks each up in the driver and its dependencies, and finds its own
# dispatchers (driver_open, …) for any the driver lacks. -Bsymbolic binds the driver's calls to its
# own entry points to itself. Building needs libcanberra-dev (pkg-config's libcanberra).
#   make canberra        $(BUILD_DIR)/canberra/libcanberra-cued.so (make build makes it too)
#   make canberra-play   $(BUILD_DIR)/canberra/canberra-play: plays through the real libcanberra (needs libcanberra-dev)
# CANBERRA_PLUGINDIR is where libcanberra looks for drivers (its compiled-in path; Debian:
# /usr/lib/<multiarch>/libcanberra-0.30), whatever PREFIX is; empty: the driver is not installed.
ifeq ($(origin CC),default)
CC := $(shell command -v cc >/dev/null 2>&1 && echo cc || echo clang)
endif
CANBERRA_DIR = $(BUILD_DIR)/canberra
CANBERRA_SOURCES = $(wildcard Sources/Plugins/CanberraCued/*.c)
CANBERRA_HEADERS = $(wildcard Sources/Plugins/CanberraCued/*.h)
CANBERRA_CFLAGS ?= -std=c11 -O2 -g -Wall -Wextra -Wshadow -Wstrict-prototypes -D_FORTIFY_SOURCE=2 -fstack-protector-strong
# -z nodelete: libcanberra unloads a driver whose open failed and loads it again at the next play;
# kept loaded, the driver remembers a daemon that did not answer (driver.c, hold_off) across them.
CANBERRA_LDFLAGS ?= -Wl,-z,relro -Wl,-z,now -Wl,-z,nodelete -Wl,--as-needed -Wl,-Bsymbolic
CANBERRA_PLUGINDIR ?= $(shell packaging/install.sh canberra-plugindir)

canberra: $(CANBERRA_DIR)/libcanberra-cued.so

$(CANBERRA_DIR)/libcanberra-cued.so: $(CANBERRA_SOURCES) $(CANBERRA_HEADERS) Makefile
	@mkdir -p $(CANBERRA_DIR)
	@libs=$$(pkg-config --libs libcanberra) || { echo "make canberra: the driver links libcanberra, whose libcanberra-dev is not installed: run scripts/install-deps.sh" >&2; exit 1; }; \
	  echo $(CC) $(CANBERRA_CFLAGS) -fPIC -fvisibility=hidden -pthread -shared $(CANBERRA_LDFLAGS) -o $@ $(CANBERRA_SOURCES) $$libs -lm; \
	  $(CC) $(CANBERRA_CFLAGS) -fPIC -fvisibility=hidden -pthread -shared $(CANBERRA_LDFLAGS) -o $@ $(CANBERRA_SOURCES) $$libs -lm

canberra-play: $(CANBERRA_DIR)/canberra-play

$(CANBERRA_DIR)/canberra-play: Tests/Canberra/canberra-play.c
	@mkdir -p $(CANBERRA_DIR)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -pthread -o $@ $< $$(pkg-config --cflags --libs libcanberra)

INSTALL_ENV = PREFIX="$(PREFIX)" DESTDIR="$(if $(DESTDIR),$(abspath $(DESTDIR)))" BINDIR="$(BINDIR)" \
  DATADIR="$(DATADIR)" MANDIR="$(MANDIR)" DOCDIR="$(DOCDIR)" BASH_COMPLETIONDIR="$(BASH_COMPLETIONDIR)" \
  ZSH_COMPLETIONDIR="$(ZSH_COMPLETIONDIR)" FISH_COMPLETIONDIR="$(FISH_COMPLETIONDIR)" \
  SYSTEMD_USER_UNITDIR="$(SYSTEMD_USER_UNITDIR)" SYSTEMD_SYSTEM_UNITDIR="$(SYSTEMD_SYSTEM_UNITDIR)" \
  SWIFT="$(SWIFT)" RELEASE_FLAGS="$(RELEASE_FLAGS)" SCRATCH_PATH="$(SCRATCH_PATH)" \
  STAGE="$(BUILD_DIR)/install-staging" CANBERRA_DRIVER_FILE="$(CANBERRA_DIR)/libcanberra-cued.so" \
  CANBERRA_PLUGINDIR="$(CANBERRA_PLUGINDIR)"

.PHONY: install-stage install install-user uninstall uninstall-user deb static-cxx

# STATIC_CXX_DIR (above), made before any release link.
static-cxx:
	@packaging/install.sh static-cxx "$(STATIC_CXX_DIR)"

# Release binaries, man pages (swift-argument-parser's generate-manual) and completions, staged in
# $(BUILD_DIR)/install-staging.
install-stage: deps canberra static-cxx
	@$(INSTALL_ENV) packaging/install.sh stage

install: install-stage
	@$(INSTALL_ENV) packaging/install.sh install

# User units only (the system-wide pair needs root): systemctl --user daemon-reload afterwards. No
# libcanberra driver either: libcanberra looks for it only in its own directory, which is root's.
install-user:
	@$(MAKE) install PREFIX="$(HOME)/.local" DESTDIR= SYSTEMD_USER_UNITDIR="$(HOME)/.config/systemd/user" SYSTEMD_SYSTEM_UNITDIR= \
	  CANBERRA_PLUGINDIR=

uninstall:
	@$(INSTALL_ENV) packaging/install.sh uninstall

uninstall-user:
	@$(MAKE) uninstall PREFIX="$(HOME)/.local" DESTDIR= CANBERRA_PLUGINDIR=

# Debian puts zsh functions of packages in vendor-completions (site-functions is for /usr/local).
deb: package-deps
	rm -rf "$(DEB_WORK)" "$(DEB_FILE)"
	@$(MAKE) install DESTDIR="$(DEB_ROOT)" PREFIX=/usr ZSH_COMPLETIONDIR=/usr/share/zsh/vendor-completions
	@DEB_ROOT="$(DEB_ROOT)" DEB_VERSION="$(DEB_VERSION)" DEB_ARCH="$(DEB_ARCH)" DEB_FILE="$(DEB_FILE)" \
	  packaging/build-deb.sh
	@echo "built $(DEB_FILE)"

# Benchmarks (docs/PERFORMANCE.md), on the binaries as installed (RELEASE_FLAGS). bench-quick is the
# short mode CI runs: it checks that they work.
bench: tool-deps static-cxx
	$(SWIFT) build -c release $(RELEASE_FLAGS)
	bench/run.py --out .build/bench-results.json

bench-quick: tool-deps static-cxx
	$(SWIFT) build -c release $(RELEASE_FLAGS)
	bench/run.py --quick --device null

# The fuzzer (scripts/fuzz.sh, docs/RELIABILITY.md): libFuzzer on the request path (framing, JSON,
# request decoding, replies) for FUZZ_SECONDS, from Fuzz/corpus with Fuzz/protocol.dict. New inputs go
# to .build-fuzz/fuzz-finds, a crashing input to .build-fuzz/artifacts/ (and the target fails).
#   make fuzz                       60 s
#   make fuzz FUZZ_SECONDS=3600     an hour; FUZZ_JOBS=2 runs two workers
FUZZ_SECONDS ?= 60

.PHONY: fuzz fuzz-decode fuzz-config fuzz-canberra

fuzz:
	SWIFT="$(SWIFT)" scripts/fuzz.sh $(FUZZ_SECONDS)

# The decoders and sniffers under libFuzzer (FUZZ_TARGET=decode, Fuzz/decode-corpus).
fuzz-decode: test-deps
	FUZZ_TARGET=decode SWIFT="$(SWIFT)" scripts/fuzz.sh $(FUZZ_SECONDS)

# The config file's TOML parser under libFuzzer (FUZZ_TARGET=config, Fuzz/config-corpus).
fuzz-config:
	FUZZ_TARGET=config SWIFT="$(SWIFT)" scripts/fuzz.sh $(FUZZ_SECONDS)

# The libcanberra driver's JSON reader and writer (Sources/Plugins/CanberraCued/wire.c), in C with
# AddressSanitizer and UBSan (Tests/Canberra/wire-fuzz.c; corpus Fuzz/canberra-corpus).
fuzz-canberra:
	FUZZ_TARGET=canberra SWIFT="$(SWIFT)" scripts/fuzz.sh $(FUZZ_SECONDS)

# The soak test (scripts/soak.sh, docs/RELIABILITY.md): a release cued on the null sink through
# 100,000 one-shot plays and 10,000 connect/disconnect cycles, with players and system sounds made and
# disposed of throughout; fails when RSS grows by 1 MiB or more after the warm-up, or a descriptor,
# thread, voice, player, sound or client is left over. The short mode runs in `make test` (SoakTests).
#   make soak                                   the full size, about 90 s on 2 cores
#   make soak SOAK_ARGS="--plays 1000000 --cycles 100000"   longer
SOAK_ARGS ?=

.PHONY: soak

soak: test-deps
	SWIFT="$(SWIFT)" scripts/soak.sh $(SOAK_ARGS)

# The test suite under a sanitizer (scripts/sanitize.sh, docs/RELIABILITY.md), in its own scratch path
# (.build-tsan / .build-asan). Reports from the test runner and from every cued/cuectl it starts go to
# files in .build-tsan/sanitizer-reports (.build-asan/…); any report fails the target. Suppressions:
# scripts/tsan.supp, scripts/lsan.supp. A few tests are skipped (SANITIZE_SKIP, scripts/sanitize.sh).
#   make sanitize SANITIZER=thread                      ThreadSanitizer (the default)
#   make sanitize SANITIZER=address                     AddressSanitizer and LeakSanitizer
#   make sanitize SANITIZE_FILTER='CueCoreTests|PlayerTests'   some suites (a swift test --filter)
SANITIZER ?= thread
SANITIZE_FILTER ?=

.PHONY: sanitize

sanitize: test-deps
	SWIFT="$(SWIFT)" scripts/sanitize.sh $(SANITIZER) $(if $(SANITIZE_FILTER),'$(SANITIZE_FILTER)')

# cued: build, run, test. `make run` and `make test` install what they need on Debian first.
SWIFT ?= swift
CONFIG ?= debug
DEVICE ?= default
BUILD_FLAGS ?=

.PHONY: all deps build release run test sounds fixtures clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	$(SWIFT) build -c $(CONFIG) $(BUILD_FLAGS)

release:
	@$(MAKE) build CONFIG=release

# The daemon on this checkout's sounds. DEVICE=null plays into a silent clock-paced sink.
run: build
	$$($(SWIFT) build -c $(CONFIG) --show-bin-path)/cued --sounds sounds --device $(DEVICE)

# Every test: unit, decoder fixtures, ALSA file-PCM captures, PulseAudio null-sink end-to-end.
test: deps
	$(SWIFT) build --build-tests $(BUILD_FLAGS) 2>&1 | tee .build-test.log
	@if grep -E '^/.*(Sources|Tests)/.*: warning:' .build-test.log; then echo "build has warnings (above)"; exit 1; fi
	$(SWIFT) test --skip-build $(BUILD_FLAGS)

sounds:
	@scripts/install-deps.sh --with-tools
	sounds/make-sounds.sh

fixtures:
	@scripts/install-deps.sh --with-tools
	Tests/Fixtures/make-fixtures.sh

clean:
	rm -rf .build .build-test.log

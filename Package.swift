// swift-tools-version:6.0
import PackageDescription

// Module map (see docs/ARCHITECTURE.md):
//   CueCore      pure mixing core: voices, mixer, ramps, lock-free rings, the engine cycle. No C, no Foundation.
//   CueAudio     audio I/O: libmpg123 + libsyn123 decoding, libebur128 loudness, ALSA, PipeWire and PulseAudio output, the audio thread. The only importer of the C libraries.
//   CueProtocol  the JSON-lines wire protocol, shared by the daemon, the client library and cuectl.
//   CueDBus      a small D-Bus client over a Unix socket, and RTKit (real-time for the audio thread without privilege).
//   CuePosix     thin typed wrappers over the POSIX calls both sides need (sockets, poll sets, files, eventfd,
//                signalfd, threads, clocks, child processes); errno is handled in one place (SystemCall).
//   CueDaemon    the daemon's control side: socket server, cue library, voice lifetimes.
//   CueClient    the client library used by cuectl (links no audio library).
let package = Package(
  name: "cued",
  products: [
    .executable(name: "cued", targets: ["cued"]),
    .executable(name: "cuectl", targets: ["cuectl"]),
    .executable(name: "cued-config", targets: ["cued-config"]),
    .executable(name: "cued-carousel", targets: ["cued-carousel"]),
    .library(name: "CueClient", targets: ["CueClient"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    // The TOML parser (toml++ underneath). It links Foundation, so it lives in its own small
    // executable, cued-config, which the daemon runs to read its config file: cued stays Foundation-free.
    .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
  ],
  targets: [
    // C libraries, found through pkg-config.
    .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
    .systemLibrary(name: "CMPG123", pkgConfig: "libmpg123", providers: [.apt(["libmpg123-dev"])]),
    .systemLibrary(name: "CSyn123", pkgConfig: "libsyn123", providers: [.apt(["libmpg123-dev"])]),
    .systemLibrary(name: "CSndfile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
    // EBU R128 loudness and peaks of each cue, measured at load (Loudness.swift).
    .systemLibrary(name: "CEbur128", pkgConfig: "libebur128", providers: [.apt(["libebur128-dev"])]),
    // Stand-ins for what Swift cannot call in libasound (variadic error handler).
    .target(name: "CAudioShims", dependencies: ["CALSA"]),
    // A plain-C face of libpipewire-0.3 (one stream on a pw_thread_loop): SPA pods, variadic properties
    // and event tables are macros and inline code Swift cannot call; only this target includes the
    // PipeWire headers. Not a pkg-config `.systemLibrary`: libpipewire-0.3.pc and libspa-0.2.pc carry
    // `-D_REENTRANT`, which SwiftPM drops with a "prohibited flag(s)" warning on every build, and a
    // system library's `link` reaches only Swift importers, not a C target. The paths are the ones
    // `pkg-config --cflags libpipewire-0.3` prints (Debian: libpipewire-0.3-dev, libspa-0.2-dev).
    .target(
      name: "CPipeWireShims",
      cSettings: [.unsafeFlags(["-I/usr/include/pipewire-0.3", "-I/usr/include/spa-0.2"])],
      linkerSettings: [.linkedLibrary("pipewire-0.3")]),
    // A plain-C face of libpulse (one playback stream on a pa_threaded_mainloop): state callbacks waited
    // for under the mainloop lock, timers and buffer attributes; only this target includes the PulseAudio
    // headers. Not a pkg-config `.systemLibrary` for the same reason as CPipeWireShims (libpulse.pc carries
    // `-D_REENTRANT`). Debian: libpulse-dev.
    .target(name: "CPulseShims", linkerSettings: [.linkedLibrary("pulse")]),
    // Stand-ins for glibc symbols that Swift's Glibc module hides (ucred, accept4, eventfd, signalfd).
    .target(name: "CSystemShims"),

    .target(name: "CueCore"),
    .target(
      name: "CueAudio",
      dependencies: [
        "CueCore", "CuePosix", "CueDBus", "CALSA", "CMPG123", "CSyn123", "CSndfile", "CEbur128", "CAudioShims", "CPipeWireShims", "CPulseShims",
      ]),
    .target(name: "CueProtocol"),
    .target(name: "CuePosix", dependencies: ["CSystemShims"]),
    // A small D-Bus client (wire format, AUTH EXTERNAL, method calls over a Unix socket) and RTKit on it.
    .target(name: "CueDBus", dependencies: ["CuePosix"]),
    .target(
      name: "CueDaemon",
      dependencies: [
        "CueCore", "CueAudio", "CueProtocol", "CuePosix",
        .product(name: "Logging", package: "swift-log"),
      ]),
    .target(name: "CueClient", dependencies: ["CueProtocol", "CuePosix"]),
    .executableTarget(
      name: "cued",
      dependencies: [
        // No swift-argument-parser: it brings FoundationEssentials (CueDaemon/DaemonCommandLine.swift says why).
        "CueDaemon", "CueAudio", "CuePosix", "CueProtocol",
        .product(name: "Logging", package: "swift-log"),
      ]),
    .executableTarget(
      name: "cuectl",
      dependencies: [
        "CueClient", "CueProtocol", "CuePosix",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]),

    // The demo terminal carousel: audible paging through the client library.
    .executableTarget(
      name: "cued-carousel",
      dependencies: [
        "CueClient", "CueProtocol", "CuePosix", .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]),
    // Micro-benchmarks for `make bench` (the mixer, the decoder); not installed.
    .executableTarget(name: "cued-bench", dependencies: ["CueCore", "CueAudio", "CuePosix"]),
    // The request path as one checked function of arbitrary bytes (`ProtocolFuzzing`), shared by the
    // fuzzer and the corpus test. A target of its own so that CueProtocol, which clients link, carries no fuzz code.
    .target(name: "CueProtocolFuzzing", dependencies: ["CueProtocol"]),
    // Plays a tone through the PipeWire shim into a (test) sink and checks it on the sink's monitor:
    // quantum, delay, onset, node removal on disconnect. For scripts/pipewire-env.sh set-ups; not installed.
    .executableTarget(name: "cued-pwprobe", dependencies: ["CPipeWireShims", "CuePosix"]),
    // The libFuzzer target for request framing and decoding (scripts/fuzz.sh, Fuzz/); in a normal build,
    // a replayer of fuzz inputs. Not installed.
    .executableTarget(name: "cued-fuzz", dependencies: ["CueProtocolFuzzing", "CuePosix"]),
    // The libFuzzer target for the sniffers and decoders (MP3, Ogg, WAV, FLAC; FUZZ_TARGET=decode
    // scripts/fuzz.sh, Fuzz/decode-corpus); in a normal build, a replayer. Not installed.
    .executableTarget(name: "cued-fuzz-decode", dependencies: ["CueAudio", "CueCore", "CuePosix"]),
    // The soak test driver for `make soak` and Tests/EndToEndTests/SoakTests.swift; not installed.
    .executableTarget(name: "cued-soak", dependencies: ["CueProtocol", "CuePosix"]),
    .executableTarget(
      name: "cued-config",
      dependencies: ["CueProtocol", "CuePosix", .product(name: "TOMLKit", package: "TOMLKit")]),

    // Counts malloc/free per thread by interposing them in the test binary (allocation tests).
    .target(name: "CAllocCounter", path: "Tests/CAllocCounter"),
    .testTarget(name: "CueCoreTests", dependencies: ["CueCore", "CAllocCounter"]),
    .testTarget(name: "CueProtocolTests", dependencies: ["CueProtocol", "CueProtocolFuzzing", "CuePosix"]),
    .testTarget(name: "CuePosixTests", dependencies: ["CuePosix", "CAllocCounter"]),
    // A private dbus-daemon and a fake RTKit service, for CueDBusTests and EndToEndTests.
    .target(name: "DBusTestSupport", dependencies: ["CueDBus", "CuePosix"], path: "Tests/DBusTestSupport"),
    .testTarget(name: "CueDBusTests", dependencies: ["CueDBus", "CuePosix", "DBusTestSupport"]),
    .testTarget(name: "CueClientTests", dependencies: ["CueClient", "CueProtocol", "CuePosix", "cued"]),
    .testTarget(name: "CueDaemonTests", dependencies: ["CueDaemon", "CueAudio", "CuePosix"]),
    .testTarget(name: "CueAudioTests", dependencies: ["CueAudio", "CueCore", "CAllocCounter"], resources: []),
    .testTarget(name: "PipeWireShimTests", dependencies: ["CPipeWireShims", "CAllocCounter", "CuePosix"]),
    .testTarget(
      name: "EndToEndTests",
      dependencies: [
        "cued", "cuectl", "cued-config", "cued-carousel", "cued-pwprobe", "cued-fuzz-decode", "CueAudio", "CueProtocol", "CuePosix",
        "CueDBus", "DBusTestSupport",
      ]),
  ],
  swiftLanguageModes: [.v6]
)

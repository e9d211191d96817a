// swift-tools-version:6.0
import PackageDescription

// The tree shows the layers (docs/ARCHITECTURE.md), each a folder of Sources/; a module imports only
// modules of its own layer or of the layers listed before it:
//   Sources/System    CuePosix (typed POSIX calls; errno read here only) and its C stand-ins; CLibraryLoading (dlopen).
//   Sources/Protocol  CueProtocol: the JSON-lines wire protocol, shared by the daemon, the client library and cuectl.
//   Sources/Engine    CueCore: the pure mixing core (voices, mixer, ramps, lock-free rings, the engine cycle). No C, no Foundation.
//   Sources/Decoding  CueDecoding: libmpg123 + libsyn123, libsndfile, libFLAC, libebur128, and their C modules. Links no sound server.
//   Sources/Output    CueOutput: the output devices, the backend table `--device` picks them from, the audio thread
//                     and the real-time policy; one folder per C face
//                     (ALSA, PipeWire, PulseAudio, RealTime: sd-bus for RTKit). The sound-server faces and sd-bus
//                     load their library when chosen (dlopen), never linked.
//   Sources/Control   CueDaemon: the daemon's control side (socket server, cues, the voice gate, players, paging, …);
//                     CueTOML: the TOML 1.0 parser that reads cued.toml in process; CGSettings: the desktop's
//                     sound settings through GSettings (GLib loaded with dlopen when followed, never linked).
//   Sources/Client    CueClient: the client library (links no audio library).
//   Sources/Programs  cued, cuectl, cued-carousel: what is installed, as one multi-call executable (`cued`;
//                     `cuectl` and `cued-carousel` are links to it) with one Swift runtime, not three.
//   Sources/Plugins   libcanberra-cued.so, the libcanberra driver: C built by the Makefile (`make canberra`), not
//                     here: SwiftPM links the Swift runtime into every dynamic library product.
// Development tools (the protocol docs writer, benchmarks, the soak driver, fuzzers, the PipeWire probe) live in Tools/
// and are never installed.
let package = Package(
  name: "cued",
  products: [
    .executable(name: "cued", targets: ["cued", "CuedMulticall"]),
    .executable(name: "cuectl", targets: ["cuectl"]),
    .executable(name: "cued-carousel", targets: ["cued-carousel"]),
    .library(name: "CueClient", targets: ["CueClient"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
  ],
  targets: [
    // MARK: System
    // Libraries that not every run uses are not linked: each C face loads its own with dlopen when
    // first needed (cued_pw_load, cued_pa_load when that backend is chosen or probed by `--device
    // auto`, as SDL and miniaudio load theirs; cued_sdbus_load at the first RTKit request;
    // cued_sf_load at the first Ogg or WAV file, cued_flac_load at the first FLAC file; cued_gs_load
    // when the desktop's sound settings are followed: in a desktop session, their schema installed), so `--device
    // null` with MP3 cues maps none of them (nor the X11, D-Bus and crypto libraries libpulse pulls
    // in, nor libsndfile's encoders), and the Debian package only recommends the sound-server clients.
    // This target is that dlopen/dlsym.
    .target(name: "CLibraryLoading", path: "Sources/System/CLibraryLoading"),
    // Stand-ins for glibc symbols that Swift's Glibc module hides (ucred, accept4, eventfd, signalfd).
    .target(name: "CSystemShims", path: "Sources/System/CSystemShims"),
    .target(name: "CuePosix", dependencies: ["CSystemShims"], path: "Sources/System/CuePosix"),

    // MARK: Protocol
    .target(name: "CueProtocol", path: "Sources/Protocol/CueProtocol"),

    // MARK: Engine
    .target(name: "CueCore", path: "Sources/Engine/CueCore"),

    // MARK: Decoding (C libraries found through pkg-config)
    .systemLibrary(name: "CMPG123", path: "Sources/Decoding/CMPG123", pkgConfig: "libmpg123", providers: [.apt(["libmpg123-dev"])]),
    .systemLibrary(name: "CSyn123", path: "Sources/Decoding/CSyn123", pkgConfig: "libsyn123", providers: [.apt(["libmpg123-dev"])]),
    // libsndfile's face: loaded (dlopen) at the first file that is not an MP3, never linked (CSndfile.h says why).
    .target(name: "CSndfile", dependencies: ["CLibraryLoading"], path: "Sources/Decoding/CSndfile"),
    // libFLAC's stream decoder, for every FLAC file: loaded (dlopen) at the first one, never linked (CFLAC.h says why).
    .target(name: "CFLAC", dependencies: ["CLibraryLoading"], path: "Sources/Decoding/CFLAC"),
    // EBU R128 loudness and peaks of each cue, measured at load (Loudness.swift).
    .systemLibrary(name: "CEbur128", path: "Sources/Decoding/CEbur128", pkgConfig: "libebur128", providers: [.apt(["libebur128-dev"])]),
    .target(
      name: "CueDecoding", dependencies: ["CueCore", "CuePosix", "CMPG123", "CSyn123", "CSndfile", "CFLAC", "CEbur128"],
      path: "Sources/Decoding/CueDecoding"),

    // MARK: Output
    .systemLibrary(name: "CALSA", path: "Sources/Output/ALSA/CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
    // Stand-ins for what Swift cannot call in libasound (variadic error handler).
    .target(name: "CAudioShims", dependencies: ["CALSA"], path: "Sources/Output/ALSA/CAudioShims"),
    // A plain-C face of libpipewire-0.3 (one stream on a pw_thread_loop): SPA pods, variadic properties
    // and event tables are macros and inline code Swift cannot call; only this target includes the
    // PipeWire headers, and every libpipewire call in it goes through the table of its syms.h. Not a
    // pkg-config `.systemLibrary`: libpipewire-0.3.pc and libspa-0.2.pc carry `-D_REENTRANT`, which
    // SwiftPM drops with a "prohibited flag(s)" warning on every build. The paths are the ones
    // `pkg-config --cflags libpipewire-0.3` prints (Debian: libpipewire-0.3-dev, libspa-0.2-dev).
    .target(
      name: "CPipeWireShims", dependencies: ["CLibraryLoading"], path: "Sources/Output/PipeWire/CPipeWireShims",
      cSettings: [.unsafeFlags(["-I/usr/include/pipewire-0.3", "-I/usr/include/spa-0.2"])]),
    // A plain-C face of libpulse (one playback stream on a pa_threaded_mainloop): state callbacks waited
    // for under the mainloop lock, timers and buffer attributes; only this target includes the PulseAudio
    // headers, and every libpulse call in it goes through the table of its syms.h. Not a pkg-config
    // `.systemLibrary` for the same reason as CPipeWireShims (libpulse.pc carries `-D_REENTRANT`).
    // Debian: libpulse-dev.
    .target(name: "CPulseShims", dependencies: ["CLibraryLoading"], path: "Sources/Output/PulseAudio/CPulseShims"),
    // A plain-C face of libsystemd's sd-bus, for asking RTKit for a real-time thread. Not linked:
    // dlopen("libsystemd.so.0") on the first RTKit request, so a process that never asks maps none
    // of it; the few prototypes are declared in the shim, so building needs no libsystemd-dev.
    .target(name: "CSDBus", dependencies: ["CLibraryLoading"], path: "Sources/Output/RealTime/CSDBus"),
    .target(
      name: "CueOutput", dependencies: ["CueCore", "CuePosix", "CSDBus", "CALSA", "CAudioShims", "CPipeWireShims", "CPulseShims"],
      path: "Sources/Output/CueOutput"),

    // MARK: Control
    // The TOML 1.0 parser for cued.toml: bytes in, values out; no Foundation and no other module, so
    // that its tests and any fuzzer build it alone.
    .target(name: "CueTOML", path: "Sources/Control/CueTOML"),
    // A plain-C face of GSettings (libgio, libgobject, libglib), for the desktop's sound theme and its
    // event-sounds switch (`sound-theme = "desktop"`, the default). Not linked: dlopen when a daemon
    // follows the desktop (in a desktop session, DesktopSettings.swift) and the schema is installed,
    // so a server, or a daemon with a theme of its own, maps none of GLib; the few prototypes are declared in the face, so building needs no
    // libglib2.0-dev.
    .target(name: "CGSettings", dependencies: ["CLibraryLoading"], path: "Sources/Control/CGSettings"),
    .target(
      name: "CueDaemon",
      dependencies: [
        "CueCore", "CueDecoding", "CueOutput", "CueProtocol", "CuePosix", "CueTOML", "CGSettings",
        .product(name: "Logging", package: "swift-log"),
      ],
      path: "Sources/Control/CueDaemon"),

    // MARK: Client
    .target(name: "CueClient", dependencies: ["CueProtocol", "CuePosix"], path: "Sources/Client/CueClient"),

    // MARK: Programs
    // cuectl and cued-carousel are libraries with one entry point each (`cuectlMain()`,
    // `carouselMain()`), so that one executable can hold all three programs.
    .target(
      name: "CuectlProgram",
      dependencies: [
        "CueClient", "CueProtocol", "CuePosix", "TerminalScreen", .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      path: "Sources/Programs/cuectl"),
    // The demo terminal carousel: audible paging through the client library.
    .target(
      name: "CarouselProgram",
      dependencies: [
        "CueClient", "CueProtocol", "CuePosix", "TerminalScreen", .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      path: "Sources/Programs/cued-carousel"),
    // The terminal in full-screen mode (raw input, the alternate screen, mouse reports), for both.
    .target(name: "TerminalScreen", dependencies: ["CuePosix"], path: "Sources/Programs/TerminalScreen"),
    // The daemon, and the multi-call executable that is installed: run as `cuectl` or
    // `cued-carousel` (a link's name) it is that program (main.swift). The daemon itself parses its
    // command line by hand: swift-argument-parser, and with it FoundationEssentials, never runs in
    // it (CueDaemon/Config/DaemonCommandLine.swift says why). The product lists "CuedMulticall" too: a
    // product of more than one target is one that swift-argument-parser's generate-manual plugin
    // skips, which leaves cued to its hand-written page (packaging/man/cued.1).
    .executableTarget(
      name: "cued",
      dependencies: [
        "CueDaemon", "CueOutput", "CuePosix", "CueProtocol", .product(name: "Logging", package: "swift-log"),
        "CuectlProgram", "CarouselProgram", "CuedMulticall",
      ],
      path: "Sources/Programs/cued"),
    // Which program a name runs.
    .target(name: "CuedMulticall", path: "Sources/Programs/CuedMulticall"),
    // Each alone, for `swift run` and the tests (not installed).
    .executableTarget(name: "cuectl", dependencies: ["CuectlProgram"], path: "Sources/Programs/Separate/cuectl"),
    .executableTarget(name: "cued-carousel", dependencies: ["CarouselProgram"], path: "Sources/Programs/Separate/cued-carousel"),

    // MARK: Development tools (Tools/; never installed)
    // Micro-benchmarks for `make bench` (the mixer, the decoder).
    .executableTarget(name: "cued-bench", dependencies: ["CueCore", "CueDecoding", "CuePosix"], path: "Tools/cued-bench"),
    // The request path as one checked function of arbitrary bytes (`ProtocolFuzzing`), shared by the
    // fuzzer and the corpus test. A target of its own so that CueProtocol, which clients link, carries no fuzz code.
    .target(name: "CueProtocolFuzzing", dependencies: ["CueProtocol"], path: "Tools/CueProtocolFuzzing"),
    // Plays a tone through the PipeWire shim into a (test) sink and checks it on the sink's monitor:
    // quantum, delay, onset, node removal on disconnect. For scripts/pipewire-env.sh set-ups.
    // The probe's recorder of a sink's monitor: the shim's stream with capture properties, kept out of
    // the face cued ships (it builds on the shim's internal header, hence the -I to its folder).
    .target(
      name: "CPipeWireCapture", dependencies: ["CPipeWireShims"], path: "Tools/CPipeWireCapture",
      cSettings: [
        .unsafeFlags([
          "-I/usr/include/pipewire-0.3", "-I/usr/include/spa-0.2", "-I\(Context.packageDirectory)/Sources/Output/PipeWire/CPipeWireShims",
        ])
      ]),
    // CueOutput for GraphCycles: the probe finds its stream's xruns with cued's own test.
    .executableTarget(name: "cued-pwprobe", dependencies: ["CPipeWireShims", "CPipeWireCapture", "CueOutput", "CuePosix"], path: "Tools/cued-pwprobe"),
    // The libFuzzer target for request framing and decoding (scripts/fuzz.sh, Fuzz/); in a normal build,
    // a replayer of fuzz inputs.
    .executableTarget(name: "cued-fuzz", dependencies: ["CueProtocolFuzzing", "CuePosix"], path: "Tools/cued-fuzz"),
    // The libFuzzer target for the sniffers and decoders (MP3, Ogg, WAV, FLAC; FUZZ_TARGET=decode
    // scripts/fuzz.sh, Fuzz/decode-corpus); in a normal build, a replayer. Links no sound-server library.
    .executableTarget(name: "cued-fuzz-decode", dependencies: ["CueDecoding", "CueCore", "CuePosix"], path: "Tools/cued-fuzz-decode"),
    // The libFuzzer target for the config file's TOML parser (FUZZ_TARGET=config scripts/fuzz.sh,
    // Fuzz/config-corpus); in a normal build, a replayer.
    .executableTarget(name: "cued-fuzz-config", dependencies: ["CueTOML", "CuePosix"], path: "Tools/cued-fuzz-config"),
    // The generated parts of docs/protocol.schema.json and docs/PROTOCOL.md, from the op table and
    // each op's field declarations (`make protocol-docs`; CueProtocolTests fails when they differ).
    .target(name: "CueProtocolDocs", dependencies: ["CueProtocol"], path: "Tools/CueProtocolDocs"),
    .executableTarget(name: "cued-protocol-docs", dependencies: ["CueProtocolDocs", "CuePosix"], path: "Tools/cued-protocol-docs"),
    // The soak test driver for `make soak` and Tests/EndToEndTests/SoakTests.swift.
    .executableTarget(name: "cued-soak", dependencies: ["CueProtocol", "CuePosix"], path: "Tools/cued-soak"),

    // MARK: Tests (they mirror the modules)
    // Counts malloc/free per thread by interposing them in the test binary (allocation tests).
    .target(name: "CAllocCounter", path: "Tests/CAllocCounter"),
    .testTarget(name: "CueCoreTests", dependencies: ["CueCore", "CAllocCounter"]),
    .testTarget(name: "CueProtocolTests", dependencies: ["CueProtocol", "CueProtocolFuzzing", "CueProtocolDocs", "CuePosix"]),
    .testTarget(name: "CuePosixTests", dependencies: ["CuePosix", "CAllocCounter"]),
    // The one way the tests start the real daemon (DaemonProcess), run commands and find the binaries.
    .target(name: "DaemonTestSupport", dependencies: ["CuePosix"], path: "Tests/DaemonTestSupport"),
    // Behaviour test bodies written once against one client surface (`DaemonUnderTest`), which
    // CueDaemonTests runs in process on the manual clock and EndToEndTests against the real cued.
    .target(name: "DaemonBehaviours", dependencies: ["CueDecoding", "CueProtocol", "CuePosix", "DaemonTestSupport"], path: "Tests/DaemonBehaviours"),
    // A private system bus with the real rtkit-daemon (and a stand-in polkit authority) on it, and
    // cued run as nobody: real-time through RTKit, tested unprivileged.
    .target(
      name: "RealtimeKitTestSupport", dependencies: ["CuePosix", "DaemonTestSupport"], path: "Tests/RealtimeKitTestSupport",
      exclude: ["fake-polkit.py"]),
    .testTarget(name: "CueClientTests", dependencies: ["CueClient", "CueProtocol", "CuePosix", "DaemonTestSupport", "cued", "cuectl"]),
    .testTarget(name: "CueTOMLTests", dependencies: ["CueTOML"]),
    .testTarget(name: "CueDaemonTests", dependencies: ["CueDaemon", "CueDecoding", "CueOutput", "CuePosix", "CueTOML", "DaemonBehaviours"]),
    .testTarget(name: "CueDecodingTests", dependencies: ["CueDecoding", "CueCore"]),
    .testTarget(name: "CueOutputTests", dependencies: ["CueOutput", "CueCore", "CAllocCounter"]),
    .testTarget(name: "PipeWireShimTests", dependencies: ["CPipeWireShims", "CAllocCounter", "CuePosix"]),
    // The terminal carousel's page logic, as a pure model.
    .testTarget(name: "CarouselTests", dependencies: ["CarouselProgram", "CueProtocol"]),
    .testTarget(
      name: "EndToEndTests",
      dependencies: [
        "cued", "cuectl", "cued-carousel", "cued-pwprobe", "cued-fuzz-decode", "cued-fuzz-config", "CueClient", "CueDecoding", "CueProtocol",
        "CuePosix", "CarouselProgram", "CuedMulticall", "DaemonTestSupport", "DaemonBehaviours", "RealtimeKitTestSupport",
      ]),
  ],
  swiftLanguageModes: [.v6]
)

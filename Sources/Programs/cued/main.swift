import CarouselProgram
import CuectlProgram
import CuedMulticall

// One executable, three programs: the installed `cuectl` and `cued-carousel` are links to `cued`
// (packaging/install.sh), which runs the program its name says, as BusyBox and swift-driver do. Each
// program statically linked would carry a Swift runtime of its own (three in all, 43.5 MB);
// together they share one (docs/PERFORMANCE.md, "Issue 32: footprint"). The daemon's own start
// does not pay for the others: nothing of theirs runs, and their code is only mapped, not read.
// `swift build` also makes `cuectl` and `cued-carousel` alone (Sources/Programs/Separate/), for
// `swift run` and the tests.
switch Program(invokedAs: CommandLine.arguments.first ?? "") {
case .cuectl: cuectlMain()
case .carousel: carouselMain()
case .daemon: Cued.main()
}

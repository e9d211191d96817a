import CarouselProgram

// `cued-carousel` alone, for `swift run cued-carousel` and the tests; what is installed is the
// multi-call `cued` under this name (Sources/Programs/cued/main.swift).
carouselMain()

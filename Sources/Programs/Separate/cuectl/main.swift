import CuectlProgram

// `cuectl` alone, for `swift run cuectl` and the tests; what is installed is the multi-call `cued`
// under this name (Sources/Programs/cued/main.swift).
cuectlMain()

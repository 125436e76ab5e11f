// Kernels written in Python for the command line: `trnsim kernels bench|compile --plugin
// kernels.py` starts an interpreter inside the program, defines the trnsim package's core
// there (the same bindings as the extension module), and runs the file, whose
// trnsim.kernels.register(...) calls add its kernels to the kernel library of this process.
#pragma once

#include <string>

#include "trn/base/status.h"

namespace trn::python {

/// Runs the Python file `path`; an error names the file and the Python exception.
Status loadPythonKernels(const std::string& path);

}  // namespace trn::python

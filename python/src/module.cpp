// The extension module trnsim._trnsim that `import trnsim` loads (define_module.cpp has its
// contents).
#include "bindings.h"

PYBIND11_MODULE(_trnsim, m) { trn::python::defineModule(m); }

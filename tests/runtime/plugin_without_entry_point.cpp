// A shared library that is not a trnsim plugin: it exports a function, but not
// trnsim_register_kernels. `trnsim kernels ... --plugin` must refuse it with a clear error.
extern "C" int not_a_trnsim_plugin() { return 17; }

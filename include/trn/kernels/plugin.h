// Kernel plugins: a shared library of user kernels that `trnsim kernels list|compile|bench
// --plugin libmykernels.so` adds to the kernel library, so the float64 check, --dump-after,
// --trace and the report work on them exactly as on the reference kernels (docs/install.md#kernel-plugins).
//
// A plugin defines one function with C linkage,
//
//   extern "C" int trnsim_register_kernels(int abiVersion, trn::kernels::PluginRegistrar* r);
//
// which returns trn::kernels::kPluginMismatch when abiVersion differs from the
// kPluginAbiVersion it was compiled with, and otherwise calls r->add(entry) for each of its
// kernels and returns 0. The plugin is built against the trnsim headers with the compiler that
// built trnsim and links none of the trnsim libraries: its calls to nl/nisa resolve to the ones
// inside the trnsim executable, which exports them.
#pragma once

#include <string>
#include <vector>

#include "trn/base/status.h"
#include "trn/kernels/registry.h"

namespace trn::kernels {

/// Bumped whenever KernelEntry, the tile language's types or PluginRegistrar change layout.
inline constexpr int kPluginAbiVersion = 1;

/// What trnsim_register_kernels returns when the versions differ.
inline constexpr int kPluginMismatch = 1;

/// The name of the plugin's entry point.
inline constexpr const char* kPluginEntryPoint = "trnsim_register_kernels";

/// Handed to a plugin's entry point; collects its kernels.
/// Contract: add may be called any number of times during the entry point, never after it.
class PluginRegistrar {
 public:
  virtual ~PluginRegistrar() = default;
  /// Adds one kernel to the library (registerKernel's rules); an error is kept and reported by
  /// the loader, naming the plugin.
  virtual void add(KernelEntry entry) = 0;
};

/// Loads the shared library at `path`, calls its entry point and registers its kernels; returns
/// their names. A missing or unloadable file, a missing entry point, a version mismatch, a
/// plugin with no kernels or a kernel registerKernel refuses are errors naming the file.
Result<std::vector<std::string>> loadKernelPlugin(const std::string& path);

}  // namespace trn::kernels

extern "C" {
/// Implemented by the plugin, called once by loadKernelPlugin.
int trnsim_register_kernels(int abiVersion, trn::kernels::PluginRegistrar* registrar);
}

#include "trn/kernels/plugin.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <filesystem>
#include <system_error>

namespace trn::kernels {
namespace {

using EntryPoint = int (*)(int, PluginRegistrar*);

/// Collects the plugin's kernels; registers them only if every one is acceptable.
class Collector final : public PluginRegistrar {
 public:
  void add(KernelEntry entry) override { entries_.push_back(std::move(entry)); }
  std::vector<KernelEntry>& entries() { return entries_; }

 private:
  std::vector<KernelEntry> entries_;
};

std::string lastDlError() {
  const char* error = dlerror();
  return error != nullptr ? std::string(error) : std::string("unknown error");
}

}  // namespace

Result<std::vector<std::string>> loadKernelPlugin(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return notFound(fmt::format("plugin {}: no such file", path));
  }
  // A path without a slash would make dlopen search the library path instead of the file.
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  // Kept loaded for the life of the process: the registered kernels' code lives in it.
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return invalidArgument(fmt::format("plugin {}: cannot load it: {}", path, lastDlError()));
  }
  dlerror();
  void* symbol = dlsym(handle, kPluginEntryPoint);
  if (symbol == nullptr) {
    dlclose(handle);
    return notFound(
        fmt::format("plugin {}: it exports no function '{}' (extern \"C\"; trn/kernels/plugin.h)",
                    path, kPluginEntryPoint));
  }
  Collector collector;
  const auto entryPoint = reinterpret_cast<EntryPoint>(symbol);
  const int code = entryPoint(kPluginAbiVersion, &collector);
  if (code == kPluginMismatch) {
    return invalidArgument(
        fmt::format("plugin {}: it was built for another version of the plugin interface than this "
                    "trnsim's ({}); rebuild it against these trnsim headers",
                    path, kPluginAbiVersion));
  }
  if (code != 0) {
    return invalidArgument(
        fmt::format("plugin {}: its {} returned {} (not 0)", path, kPluginEntryPoint, code));
  }
  if (collector.entries().empty()) {
    return invalidArgument(fmt::format("plugin {}: it registered no kernel", path));
  }
  std::vector<std::string> names;
  for (KernelEntry& entry : collector.entries()) {
    names.push_back(entry.name);
    if (Status added = registerKernel(std::move(entry)); !added.ok()) {
      return added.withContext(fmt::format("plugin {}", path));
    }
  }
  return names;
}

}  // namespace trn::kernels

// A plugin whose kernel the registry refuses (it takes a reference kernel's name), and which
// then checks nothing else: the loader must report the refusal, naming the plugin file.
#include "trn/kernels/plugin.h"

extern "C" int trnsim_register_kernels(int abiVersion, trn::kernels::PluginRegistrar* registrar) {
  if (abiVersion != trn::kernels::kPluginAbiVersion) {
    return trn::kernels::kPluginMismatch;
  }
  trn::kernels::KernelEntry entry;
  entry.name = "tensor_add";
  registrar->add(std::move(entry));
  return 0;
}

// A compiled model as one file (.trnx), what neuronx-cc's NEFF is to the Neuron runtime: every
// distinct kernel (a chip program per kernel: one program per core of the logical core), the
// launch order with what each launch reads and writes, the weights, and the graph's interface
// (inputs, outputs, node names for the profile). `trnsim compile model.onnx -o model.trnx`
// writes it; `trnsim graph run model.trnx` loads and runs it without the ONNX file.
//
// Layout (little-endian): the magic "TRNXMODL", a u32 format version (1), a u32 of zero, a u64
// manifest length, the manifest (JSON), then the blobs the manifest places by offset and length
// from the end of the manifest: each kernel's chip program (TRNPROG, chip_program.h) and each
// weight (.npy). The reader bounds every length and offset by the file's size before it reads,
// decodes each program and array with its own validating decoder, and checks the manifest's
// wiring (each launch reads graph inputs, weights or earlier launches' results, with the program
// tensors' names, shapes and types) so that a corrupt file is an error naming what is wrong.
#pragma once

#include <string>

#include "trn/base/status.h"
#include "trn/graph/model.h"

namespace trn::graph {

/// Format version of the .trnx file.
inline constexpr std::uint32_t kModelFileVersion = 1;

/// Writes `model`, compiled for the chip named `chip`, to `path` (replacing it).
Status saveModel(const CompiledModel& model, const std::string& chip, const std::string& path);

/// A model read back from a file, and the chip it was compiled for.
struct LoadedModel {
  CompiledModel model;
  std::string chip;
};

/// Reads a .trnx file of at most `maxBytes`.
Result<LoadedModel> loadModel(const std::string& path,
                              std::uint64_t maxBytes = std::uint64_t{64} << 30);

}  // namespace trn::graph

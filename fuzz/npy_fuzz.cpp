// Fuzz target: the .npy reader. An array it accepts has a shape whose size matches its data, and
// serialising it gives a file that parses back to the same type, shape and data.
#include "fuzz_target.h"
#include "trn/runtime/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trn::runtime;
  const trn::Result<NpyArray> array =
      parseNpy(std::as_bytes(std::span(data, size)), "fuzz.npy");
  if (!array.ok()) {
    return 0;
  }
  const std::optional<std::int64_t> elements = array->elementCount();
  TRN_CHECK(elements.has_value()) << "an accepted array has no element count";
  TRN_CHECK(static_cast<std::uint64_t>(*elements) * npyItemSize(array->type) ==
            array->data.size())
      << "data size does not match the shape";
  const trn::Result<std::vector<std::byte>> bytes = serializeNpy(*array);
  TRN_CHECK(bytes.ok()) << "cannot serialise an accepted array: " << bytes.status().toString();
  const trn::Result<NpyArray> back = parseNpy(*bytes, "serialized.npy");
  TRN_CHECK(back.ok()) << "cannot parse what serializeNpy wrote: " << back.status().toString();
  TRN_CHECK(back->type == array->type && back->shape == array->shape &&
            back->data == array->data)
      << "serialize -> parse changed the array";
  return 0;
}

#include "trn/core/device_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "trn/base/checked.h"

namespace trn::core {

DeviceMemory::DeviceMemory(std::int64_t stackBytes, std::int64_t stacks)
    : stackBytes_(stackBytes), stacks_(stacks) {
  for (std::int64_t s = 0; s < stacks; ++s) {
    next_.push_back(s * stackBytes);
  }
}

Result<std::shared_ptr<DeviceMemory>> DeviceMemory::create(std::int64_t stackBytes,
                                                           std::int64_t stacks, bool withData,
                                                           bool trackWrites) {
  const Checked<std::int64_t> capacity = Checked<std::int64_t>(stackBytes) * stacks;
  if (stackBytes < 1 || stacks < 1 || !capacity.valid()) {
    return invalidArgument(fmt::format(
        "device memory needs at least one stack of at least one byte, and a capacity that fits "
        "64 bits; got {} stacks of {} bytes",
        stacks, stackBytes));
  }
  std::shared_ptr<DeviceMemory> device(new DeviceMemory(stackBytes, stacks));
  if (withData) {
    TRN_ASSIGN_OR_RETURN(device->bytes_,
                         TrackedBytes::create(static_cast<std::size_t>(capacity.value()),
                                              trackWrites, "device memory (HBM)"));
  }
  return device;
}

Result<std::int64_t> DeviceMemory::allocate(std::int64_t bytes, std::int64_t stack,
                                            std::string_view what) {
  if (stack < 0 || stack >= stacks_) {
    return invalidArgument(fmt::format("{}: HBM stack {} does not exist (the device has 0..{})",
                                       what, stack, stacks_ - 1));
  }
  std::int64_t& next = next_[static_cast<std::size_t>(stack)];
  const std::int64_t end = (stack + 1) * stackBytes_;
  const std::optional<std::int64_t> rounded =
      (Checked<std::int64_t>(std::max<std::int64_t>(bytes, 1)) + (kDeviceAlignment - 1)).get();
  const std::int64_t aligned = rounded ? *rounded / kDeviceAlignment * kDeviceAlignment : -1;
  if (bytes < 0 || aligned < 0 || aligned > end - next) {
    return outOfRange(fmt::format("{}: {} bytes do not fit in HBM stack {} ({} of {} bytes free)",
                                  what, bytes, stack, end - next, stackBytes_));
  }
  const std::int64_t address = next;
  next += aligned;
  return address;
}

Status DeviceMemory::checkRange(std::int64_t address, std::int64_t size) const {
  if (address < 0 || size < 0 || address > capacity() || size > capacity() - address) {
    return outOfRange(fmt::format("device bytes [{}, {} + {}) lie outside the {} bytes of HBM",
                                  address, address, size, capacity()));
  }
  return {};
}

Status DeviceMemory::write(std::int64_t address, std::span<const std::byte> data) {
  TRN_RETURN_IF_ERROR(checkRange(address, static_cast<std::int64_t>(data.size())));
  if (!hasData() || data.empty()) {
    return {};
  }
  std::memcpy(bytes_.data() + address, data.data(), data.size());
  bytes_.markWritten(static_cast<std::size_t>(address), data.size());
  return {};
}

Result<std::span<const std::byte>> DeviceMemory::read(std::int64_t address,
                                                      std::int64_t size) const {
  TRN_RETURN_IF_ERROR(checkRange(address, size));
  if (!hasData()) {
    return failedPrecondition("device memory has no values: the run is timing-only");
  }
  return std::span<const std::byte>(bytes_.data() + address, static_cast<std::size_t>(size));
}

}  // namespace trn::core

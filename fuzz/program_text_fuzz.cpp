// Fuzz target: the program text parser. Text it accepts must survive the round trips of
// program_round_trip.h (format -> parse equal, encode accepted -> decode equal), and the
// verifier must answer for it against the default core limits without crashing.
#include "fuzz_target.h"
#include "program_round_trip.h"
#include "trn/isa/core_limits.h"
#include "trn/isa/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const trn::Result<trn::isa::Program> program =
      trn::isa::parseProgramText(trn::fuzz::asText(data, size), "fuzz.tasm");
  if (!program.ok()) {
    return 0;
  }
  trn::fuzz::checkRoundTrips(*program);
  (void)trn::isa::verifyProgram(*program, trn::isa::CoreLimits{});
  return 0;
}

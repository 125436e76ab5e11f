// The text form of a Program ("trnsim assembly", .tasm):
//
//   # comment
//   .tensor a input bf16 [128, 512]
//   .tensor c output fp32 [128, 512]
//   sp:  dma_copy dst=sbuf[0:128]:bf16[[1,512]] src=hbm:a:bf16[[512,128],[1,512]] queue=0 signal(s0+=1)
//   pe:  nc_matmul dst=psum[0:128]:fp32[[1,512]] ... wait(s0>=1) signal(s1+=1) loc=kernel.cpp:42
//
// One instruction per line: the issuing engine, the mnemonic, then `field=value` for the
// instruction's declared fields (any order; omitted fields keep their defaults), semaphore waits
// `wait(sN>=V)` / `wait(sN==V)`, updates `signal(sN+=V)` / `signal(sN-=V)` / `signal(sN=V)`, and an
// optional source location. Access-pattern syntax is in access_pattern.h.
#pragma once

#include <string>
#include <string_view>

#include "trn/base/status.h"
#include "trn/isa/program.h"

namespace trn::isa {

/// Renders a whole program; parseProgramText(formatProgramText(p)) == p.
std::string formatProgramText(const Program& program);

/// Renders one instruction (without the engine prefix when `withEngine` is false).
std::string formatInstruction(const Instruction& instr, const Program& program,
                              bool withEngine = true);

/// Parses program text. Errors name the source (`name`), line and column-free token at fault.
Result<Program> parseProgramText(std::string_view text, std::string_view name);

}  // namespace trn::isa

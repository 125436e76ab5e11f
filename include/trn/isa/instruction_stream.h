// InstructionStream: one engine's in-order instruction stream, stored packed. A decoded
// Instruction is large (a variant sized for the widest instruction, access patterns of 112 B,
// two vectors and a string: about 730 B), while most instructions say little; a stream keeps,
// per instruction, a 28-byte entry, its semaphore waits and updates as plain records, its file
// name as an index into a table of distinct names, and its fields in a compact byte encoding
// (variable-length integers). A typical kernel instruction takes under 128 bytes this way.
//
// Reading decodes: operator[] and iteration give Instructions by value, and the simulator
// decodes only what it needs (decodeBody, waits, updates) into storage it reuses. Packing is
// lossless for every value an Instruction can hold, valid or not, so the form checks
// (program.h) and the verifier see exactly what was stored. Instructions are replaced with set(),
// never edited in place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "trn/base/huge_pages.h"
#include "trn/isa/instruction_set.h"

namespace trn::isa {

class InstructionStream {
 public:
  /// The most bytes of packed fields one stream holds (entries address them with 32 bits). The
  /// readers stop with an error well before (ProgramLimits::kMaxInstructions); a program built in
  /// code that passes it is a bug.
  static constexpr std::size_t kMaxFieldBytes = std::size_t{0xffffffffU};
  /// The most semaphore waits, and separately updates, of one packed instruction (16-bit counts;
  /// the formats accept ProgramLimits::kMaxSyncEntries).
  static constexpr std::size_t kMaxSyncEntries = 0xffff;

  /// Appends `instr`, packed.
  void push_back(const Instruction& instr);
  /// Appends the instruction `body` on `engine` with semaphores `sync`, packed, located at
  /// `file`:`line` (for builders that keep semaphores and source locations apart from their
  /// instructions, as the kernel IR does).
  void push_back(Engine engine, const InstructionBody& body, const SyncView& sync,
                 std::string_view file, std::int32_t line);
  /// Appends `instr` whose fields are already packed: `fields` must be exactly the bytes that
  /// packing instr.body writes (the compact program decoder, which has checked them, passes the
  /// file's bytes through). Debug builds check it.
  void pushPacked(const Instruction& instr, std::span<const std::byte> fields);
  /// Replaces instruction `index` (< size()) with `instr`. The old packed fields stay in the
  /// stream until it is copied; editing is for building and tests, not for hot loops.
  void set(std::size_t index, const Instruction& instr);
  /// Reserves room for `instructions` instructions whose fields pack into at most `fieldBytes`
  /// bytes in all (by default a typical kernel's). Room that is never written costs address
  /// space, not memory: the host backs pages when they are first touched.
  void reserve(std::size_t instructions, std::optional<std::size_t> fieldBytes = std::nullopt);
  void clear();

  [[nodiscard]] std::size_t size() const { return entries_.size(); }
  [[nodiscard]] bool empty() const { return entries_.empty(); }

  /// Instruction `index`, decoded. Const, so that editing a copy by mistake does not compile.
  const Instruction operator[](std::size_t index) const;
  /// Decodes instruction `index` into `into`, reusing its storage.
  void decode(std::size_t index, Instruction& into) const;
  /// Decodes only the fields of instruction `index` into `into`, reusing it when the type is the
  /// same.
  void decodeBody(std::size_t index, InstructionBody& into) const;

  /// The issuing engine, the instruction type (its InstructionBody alternative), the semaphore
  /// lists and the source location of instruction `index`, without decoding. The spans stay
  /// valid until the stream changes.
  [[nodiscard]] Engine engine(std::size_t index) const { return entries_[index].engine; }
  [[nodiscard]] std::size_t typeIndex(std::size_t index) const { return entries_[index].type; }
  [[nodiscard]] const InstrInfo& info(std::size_t index) const;
  [[nodiscard]] std::span<const SemaphoreWait> waits(std::size_t index) const;
  [[nodiscard]] std::span<const SemaphoreUpdate> updates(std::size_t index) const;
  [[nodiscard]] std::string_view locationFile(std::size_t index) const;
  [[nodiscard]] std::int32_t locationLine(std::size_t index) const { return entries_[index].line; }

  /// Host bytes the stream's data takes, for memory figures: its entries, fields, semaphore
  /// lists and file names. Reserved room is not counted; large blocks are backed by pages only
  /// once written (see reserve).
  [[nodiscard]] std::size_t residentBytes() const;

  /// Instructions compare by value, decoded.
  friend bool operator==(const InstructionStream& a, const InstructionStream& b);

  /// Yields each instruction, decoded into storage the iterator reuses.
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Instruction;
    using difference_type = std::ptrdiff_t;
    using pointer = const Instruction*;
    using reference = const Instruction&;

    Iterator() = default;
    Iterator(const InstructionStream* stream, std::size_t index) : stream_(stream), index_(index) {}
    reference operator*() const;
    pointer operator->() const { return &**this; }
    Iterator& operator++() {
      ++index_;
      return *this;
    }
    void operator++(int) { ++index_; }
    friend bool operator==(const Iterator& a, const Iterator& b) { return a.index_ == b.index_; }

   private:
    const InstructionStream* stream_ = nullptr;
    std::size_t index_ = 0;
    mutable Instruction current_;
    mutable std::size_t decoded_ = static_cast<std::size_t>(-1);
  };
  [[nodiscard]] Iterator begin() const { return {this, 0}; }
  [[nodiscard]] Iterator end() const { return {this, size()}; }

 private:
  /// Where the parts of one instruction are: 28 bytes.
  struct Entry {
    std::uint32_t fields = 0;       ///< offset of the packed fields in fields_
    std::uint32_t firstWait = 0;    ///< in waits_
    std::uint32_t firstUpdate = 0;  ///< in updates_
    std::uint32_t file = 0;         ///< in files_
    std::int32_t line = 0;
    std::uint16_t type = 0;  ///< InstructionBody alternative
    std::uint16_t waitCount = 0;
    std::uint16_t updateCount = 0;
    Engine engine = Engine::kSp;
  };
  static_assert(sizeof(Entry) == 28);

  /// Stores an instruction's engine, type (its InstructionBody alternative), semaphores and
  /// location, but not its fields, which the caller appends to fields_.
  Entry packShell(Engine engine, std::size_t type, const SyncView& sync, std::string_view file,
                  std::int32_t line);
  Entry pack(Engine engine, const InstructionBody& body, const SyncView& sync,
             std::string_view file, std::int32_t line);

  // Large vectors: a loaded chip program's streams take about a gigabyte.
  LargeVector<Entry> entries_;
  LargeVector<std::byte> fields_;
  LargeVector<SemaphoreWait> waits_;
  LargeVector<SemaphoreUpdate> updates_;
  std::vector<std::string> files_;
  /// Hashes a name given as any string type, so that a string_view is looked up without a copy.
  struct FileHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view name) const {
      return std::hash<std::string_view>{}(name);
    }
  };
  std::unordered_map<std::string, std::uint32_t, FileHash, std::equal_to<>> fileIndex_;
  std::uint32_t lastFile_ = 0;  ///< the file of the latest packed instruction, tried first
};

}  // namespace trn::isa

// Framing of a trace file: the magic, then blocks, each a varint length and a serialized
// v1::Block. Shared by the writer and the reader so the two can never disagree.
#ifndef CUSCOPE_LIB_CORE_TRACE_FORMAT_H_
#define CUSCOPE_LIB_CORE_TRACE_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cuscope/v1/trace.pb.h"

namespace cuscope::core {

inline constexpr std::string_view kTraceMagic{"CUSCOPE\n", 8};
inline constexpr uint32_t kFormatVersion = 1;
// No block the collector writes comes near this; a larger length means a corrupt file, and the
// reader refuses it rather than allocating it.
inline constexpr uint64_t kMaxBlockBytes = 512ull << 20;

// Appends the framed block (length prefix and payload) to `out`.
void AppendFramedBlock(const v1::Block& block, std::string* out);

// Reads a varint at `data[pos..]`. Returns the value and advances `pos`, or nullopt when the
// bytes end first (or the varint is longer than 10 bytes, which `malformed` then says).
std::optional<uint64_t> ReadVarint(std::string_view data, size_t* pos, bool* malformed);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_TRACE_FORMAT_H_

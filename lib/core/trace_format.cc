#include "lib/core/trace_format.h"

namespace cuscope::core {

void AppendFramedBlock(const v1::Block& block, std::string* out) {
  const size_t size = block.ByteSizeLong();
  char prefix[10];
  size_t n = 0;
  uint64_t v = size;
  while (v >= 0x80) {
    prefix[n++] = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  prefix[n++] = static_cast<char>(v);
  const size_t old = out->size();
  out->append(prefix, n);
  out->resize(old + n + size);
  block.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(out->data() + old + n));
}

std::optional<uint64_t> ReadVarint(std::string_view data, size_t* pos, bool* malformed) {
  uint64_t value = 0;
  size_t p = *pos;
  for (int shift = 0; shift < 70; shift += 7) {
    if (p >= data.size()) return std::nullopt;
    const uint8_t byte = static_cast<uint8_t>(data[p++]);
    if (shift == 63 && byte > 1) break;
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *pos = p;
      return value;
    }
  }
  *malformed = true;
  return std::nullopt;
}

}  // namespace cuscope::core

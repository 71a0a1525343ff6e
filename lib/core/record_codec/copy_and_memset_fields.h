// The fields copies and memsets share (when, how many bytes, where they ran, what launched them),
// with the same names in MemcpyRecord / MemsetRecord and v1::Memcpy / v1::Memset: written and
// read here once, so memcpy.cc and memset.cc hold only what is a copy's or a memset's own.
#ifndef CUSCOPE_LIB_CORE_RECORD_CODEC_COPY_AND_MEMSET_FIELDS_H_
#define CUSCOPE_LIB_CORE_RECORD_CODEC_COPY_AND_MEMSET_FIELDS_H_

#include <cstdint>

#include "lib/core/record_codec/columns.h"

namespace cuscope::core {

// `base_time_ns` is the chunk's base time.
template <typename Record, typename Message>
void EncodeCopyAndMemsetFields(const Record& r, uint64_t base_time_ns, Message* out) {
  out->set_start(static_cast<int64_t>(r.start - base_time_ns));
  out->set_duration(SpanDuration(r.start, r.end));
  out->set_bytes(r.bytes);
  out->set_device(r.device);
  out->set_context(r.context);
  out->set_stream(r.stream);
  out->set_correlation_id(r.correlation_id);
  out->set_async(r.async);
  out->set_graph_id(r.graph_id);
  out->set_graph_node_id(r.graph_node_id);
}

template <typename Message, typename Record>
void DecodeCopyAndMemsetFields(const Message& m, uint64_t base_time_ns, Record* out) {
  out->start = base_time_ns + static_cast<uint64_t>(m.start());
  out->end = out->start + m.duration();
  out->bytes = m.bytes();
  out->device = m.device();
  out->context = m.context();
  out->stream = m.stream();
  out->correlation_id = m.correlation_id();
  out->async = m.async();
  out->graph_id = m.graph_id();
  out->graph_node_id = m.graph_node_id();
}

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_RECORD_CODEC_COPY_AND_MEMSET_FIELDS_H_

#include "lib/export/perfetto_writer.h"

#include "absl/strings/str_cat.h"

namespace cuscope::exporter {
namespace {

namespace pp = ::perfetto::protos;

void AppendVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

// Trace.packet is field 1, length-delimited: (1 << 3) | 2.
constexpr char kPacketTag = 0x0a;

}  // namespace

std::pair<uint64_t, bool> PerfettoWriter::Interner::Get(const Name& name) {
  if (name.key != 0) {
    CacheEntry& slot = cache_[(name.key * 0x9e3779b97f4a7c15ull) >> 56];
    if (slot.key == name.key) return {slot.iid, false};
    auto [it, inserted] = by_key_.try_emplace(name.key, next_);
    if (inserted) ++next_;
    slot = {name.key, it->second};
    return {it->second, inserted};
  }
  const absl::string_view text(name.text.data(), name.text.size());
  if (auto it = by_text_.find(text); it != by_text_.end()) return {it->second, false};
  by_text_.emplace(std::string(name.text), next_);
  return {next_++, true};
}

uint64_t PerfettoWriter::EventName(const Name& name) {
  auto [iid, added] = names_.Get(name);
  if (added) {
    pp::EventName* n = packet_.mutable_interned_data()->add_event_names();
    n->set_iid(iid);
    n->set_name(name.text.data(), name.text.size());
  }
  return iid;
}

uint64_t PerfettoWriter::Category(const Name& name) {
  auto [iid, added] = categories_.Get(name);
  if (added) {
    pp::EventCategory* c = packet_.mutable_interned_data()->add_event_categories();
    c->set_iid(iid);
    c->set_name(name.text.data(), name.text.size());
  }
  return iid;
}

void PerfettoWriter::Annotate(absl::Span<const Arg> args) {
  for (const Arg& arg : args) {
    pp::DebugAnnotation* a = event_.add_debug_annotations();
    auto [name_iid, name_added] = annotation_names_.Get(arg.name);
    if (name_added) {
      pp::DebugAnnotationName* n = packet_.mutable_interned_data()->add_debug_annotation_names();
      n->set_iid(name_iid);
      n->set_name(arg.name.text.data(), arg.name.text.size());
    }
    a->set_name_iid(name_iid);
    switch (arg.type) {
      case Arg::Type::kUint: a->set_uint_value(arg.u); break;
      case Arg::Type::kInt: a->set_int_value(arg.i); break;
      case Arg::Type::kDouble: a->set_double_value(arg.d); break;
      case Arg::Type::kBool: a->set_bool_value(arg.b); break;
      case Arg::Type::kString: {
        auto [value_iid, value_added] = annotation_strings_.Get(arg.s);
        if (value_added) {
          pp::InternedString* s = packet_.mutable_interned_data()->add_debug_annotation_string_values();
          s->set_iid(value_iid);
          s->set_str(arg.s.text.data(), arg.s.text.size());
        }
        a->set_string_value_iid(value_iid);
        break;
      }
    }
  }
}

void PerfettoWriter::WritePacket(bool needs_state) {
  packet_.set_trusted_packet_sequence_id(kSequenceId);
  uint32_t flags = needs_state ? pp::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE : 0;
  if (first_packet_) {
    flags |= pp::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED;
    first_packet_ = false;
  }
  if (flags != 0) packet_.set_sequence_flags(flags);
  const size_t size = packet_.ByteSizeLong();
  std::string& buffer = out_->buffer();
  buffer.push_back(kPacketTag);
  AppendVarint(size, &buffer);
  const size_t at = buffer.size();
  buffer.resize(at + size);
  packet_.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(&buffer[at]));
  out_->MaybeFlush();
  // The event and the descriptor are members lent to the packet for serialization only (so no
  // packet allocates its own): take them back before Clear() would delete them.
  if (packet_.has_track_event()) {
    packet_.unsafe_arena_release_track_event();
  } else if (packet_.has_track_descriptor()) {
    packet_.unsafe_arena_release_track_descriptor();
  }
  packet_.Clear();
}

void PerfettoWriter::WriteEvent(uint64_t time, bool needs_state) {
  packet_.set_timestamp(time);
  packet_.unsafe_arena_set_allocated_track_event(&event_);
  WritePacket(needs_state);
}

absl::StatusOr<uint64_t> PerfettoWriter::Uuid(uint64_t track) {
  if (track == last_track_ && last_uuid_ != 0) return last_uuid_;
  auto it = uuids_.find(track);
  if (it == uuids_.end()) return absl::InternalError(absl::StrCat("event on undeclared track ", track));
  last_track_ = track;
  last_uuid_ = it->second;
  return last_uuid_;
}

absl::Status PerfettoWriter::Start(const ExportInfo& info) {
  first_ns_ = info.first_ns;
  return absl::OkStatus();
}

absl::Status PerfettoWriter::AddTrack(const Track& track) {
  descriptor_.Clear();
  const uint64_t uuid = uuids_.size() + 1;
  if (!uuids_.emplace(track.id, uuid).second) return absl::InternalError(absl::StrCat("track ", track.id, " twice"));
  descriptor_.set_uuid(uuid);
  if (track.parent != 0) {
    absl::StatusOr<uint64_t> parent = Uuid(track.parent);
    if (!parent.ok()) return parent.status();
    descriptor_.set_parent_uuid(*parent);
  }
  switch (track.type) {
    case TrackType::kProcess: {
      pp::ProcessDescriptor* p = descriptor_.mutable_process();
      p->set_pid(track.pid);
      for (const std::string& arg : track.cmdline) p->add_cmdline(arg);
      if (!track.name.empty()) p->set_process_name(track.name);
      break;
    }
    case TrackType::kThread: {
      pp::ThreadDescriptor* t = descriptor_.mutable_thread();
      t->set_pid(track.pid);
      t->set_tid(track.tid);
      if (!track.name.empty()) t->set_thread_name(track.name);
      break;
    }
    case TrackType::kGroup:
      descriptor_.set_name(track.name);
      descriptor_.set_child_ordering(pp::TrackDescriptor::EXPLICIT);
      descriptor_.set_sibling_order_rank(track.order);
      break;
    case TrackType::kSlices:
      descriptor_.set_name(track.name);
      descriptor_.set_sibling_order_rank(track.order);
      break;
    case TrackType::kCounter:
      descriptor_.set_name(track.name);
      descriptor_.set_sibling_order_rank(track.order);
      if (!track.unit.empty()) descriptor_.mutable_counter()->set_unit_name(track.unit);
      break;
  }
  // Descriptors carry the trace's first timestamp: a track exists from the start.
  packet_.set_timestamp(first_ns_);
  packet_.unsafe_arena_set_allocated_track_descriptor(&descriptor_);
  WritePacket(/*needs_state=*/false);
  return out_->status();
}

absl::Status PerfettoWriter::AddSlice(const Slice& slice) {
  absl::StatusOr<uint64_t> uuid = Uuid(slice.track);
  if (!uuid.ok()) return uuid.status();
  event_.Clear();
  event_.set_type(pp::TrackEvent::TYPE_SLICE_BEGIN);
  event_.set_track_uuid(*uuid);
  event_.set_name_iid(EventName(slice.name));
  if (!slice.category.text.empty()) event_.add_category_iids(Category(slice.category));
  Annotate(slice.args);
  if (slice.flow_out != 0) event_.add_flow_ids(slice.flow_out);
  if (slice.flow_in != 0) event_.add_terminating_flow_ids(slice.flow_in);
  WriteEvent(slice.start, /*needs_state=*/true);
  // The end names no interned string: it needs no incremental state.
  event_.Clear();
  event_.set_type(pp::TrackEvent::TYPE_SLICE_END);
  event_.set_track_uuid(*uuid);
  WriteEvent(slice.end, /*needs_state=*/false);
  return out_->status();
}

absl::Status PerfettoWriter::AddInstant(const Instant& instant) {
  absl::StatusOr<uint64_t> uuid = Uuid(instant.track);
  if (!uuid.ok()) return uuid.status();
  event_.Clear();
  event_.set_type(pp::TrackEvent::TYPE_INSTANT);
  event_.set_track_uuid(*uuid);
  event_.set_name_iid(EventName(instant.name));
  if (!instant.category.text.empty()) event_.add_category_iids(Category(instant.category));
  Annotate(instant.args);
  WriteEvent(instant.time, /*needs_state=*/true);
  return out_->status();
}

absl::Status PerfettoWriter::AddCounter(uint64_t track, uint64_t time, double value) {
  absl::StatusOr<uint64_t> uuid = Uuid(track);
  if (!uuid.ok()) return uuid.status();
  event_.Clear();
  event_.set_type(pp::TrackEvent::TYPE_COUNTER);
  event_.set_track_uuid(*uuid);
  event_.set_double_counter_value(value);
  WriteEvent(time, /*needs_state=*/false);
  return out_->status();
}

absl::Status PerfettoWriter::Finish() { return out_->status(); }

}  // namespace cuscope::exporter

#include "tests/export/perfetto_decode.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace cuscope::exporter::testing {
namespace {

namespace pp = ::perfetto::protos;

// One kind of interned string: iid -> text. A redefinition must repeat the same text.
struct Table {
  std::map<uint64_t, std::string> entries;
  void Define(uint64_t iid, const std::string& text, const char* kind, std::vector<std::string>* errors) {
    if (iid == 0) errors->push_back(absl::StrCat(kind, " interned with iid 0"));
    auto [it, inserted] = entries.emplace(iid, text);
    if (!inserted && it->second != text) errors->push_back(absl::StrCat(kind, " iid ", iid, " redefined"));
  }
  std::string Get(uint64_t iid, const char* kind, std::vector<std::string>* errors) const {
    auto it = entries.find(iid);
    if (it == entries.end()) {
      errors->push_back(absl::StrCat(kind, " iid ", iid, " used before its definition"));
      return "";
    }
    return it->second;
  }
};

struct Event {
  uint64_t ts;
  size_t order;
  const pp::TrackEvent* event;
  DecodedSlice resolved;
};

}  // namespace

std::vector<const DecodedSlice*> DecodedTrace::OnTrack(uint64_t track) const {
  std::vector<const DecodedSlice*> out;
  for (const DecodedSlice& s : slices) {
    if (s.track == track) out.push_back(&s);
  }
  return out;
}

std::vector<const DecodedSlice*> DecodedTrace::Named(const std::string& name) const {
  std::vector<const DecodedSlice*> out;
  for (const DecodedSlice& s : slices) {
    if (s.name == name) out.push_back(&s);
  }
  return out;
}

uint64_t DecodedTrace::TrackNamed(const std::string& name) const {
  for (const auto& [uuid, t] : tracks) {
    if (t.name() == name || (t.has_process() && t.process().process_name() == name) ||
        (t.has_thread() && t.thread().thread_name() == name)) {
      return uuid;
    }
  }
  return 0;
}

DecodedTrace DecodePerfetto(const std::string& bytes) {
  DecodedTrace out;
  pp::Trace trace;
  if (!trace.ParseFromString(bytes)) {
    out.errors.push_back("the file does not parse as perfetto.protos.Trace");
    return out;
  }
  out.packets.assign(trace.packet().begin(), trace.packet().end());

  Table names, categories, annotation_names, annotation_strings;
  bool state_valid = false;
  std::vector<Event> events;
  for (size_t i = 0; i < out.packets.size(); ++i) {
    const pp::TracePacket& p = out.packets[i];
    if (p.trusted_packet_sequence_id() != 1) out.errors.push_back(absl::StrCat("packet ", i, " on another sequence"));
    if (p.sequence_flags() & pp::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED) {
      names = categories = annotation_names = annotation_strings = Table();
      state_valid = true;
    }
    if ((p.sequence_flags() & pp::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE) && !state_valid) {
      out.errors.push_back(absl::StrCat("packet ", i, " needs incremental state before it was cleared: dropped"));
      continue;
    }
    const pp::InternedData& d = p.interned_data();
    if (p.has_interned_data() && !(p.sequence_flags() & pp::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE) &&
        !(p.sequence_flags() & pp::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED)) {
      out.errors.push_back(absl::StrCat("packet ", i, " has interned data without sequence flags"));
    }
    for (const auto& e : d.event_names()) names.Define(e.iid(), e.name(), "event name", &out.errors);
    for (const auto& e : d.event_categories()) categories.Define(e.iid(), e.name(), "category", &out.errors);
    for (const auto& e : d.debug_annotation_names()) {
      annotation_names.Define(e.iid(), e.name(), "annotation name", &out.errors);
    }
    for (const auto& e : d.debug_annotation_string_values()) {
      annotation_strings.Define(e.iid(), e.str(), "annotation string", &out.errors);
    }
    if (p.has_track_descriptor()) {
      const pp::TrackDescriptor& t = p.track_descriptor();
      if (t.uuid() == 0) out.errors.push_back("track descriptor without uuid");
      if (t.has_parent_uuid() && out.tracks.count(t.parent_uuid()) == 0) {
        out.errors.push_back(absl::StrCat("track ", t.uuid(), " declared before its parent"));
      }
      if (!out.tracks.emplace(t.uuid(), t).second)
        out.errors.push_back(absl::StrCat("track ", t.uuid(), " declared twice"));
    }
    if (p.has_track_event()) {
      const pp::TrackEvent& e = p.track_event();
      if (!p.has_timestamp()) out.errors.push_back(absl::StrCat("event packet ", i, " without timestamp"));
      if (out.tracks.count(e.track_uuid()) == 0) {
        out.errors.push_back(absl::StrCat("event on undeclared track ", e.track_uuid()));
      }
      Event ev{p.timestamp(), i, &e, {}};
      DecodedSlice& s = ev.resolved;
      s.track = e.track_uuid();
      s.start = s.end = p.timestamp();
      if (e.has_name_iid()) s.name = names.Get(e.name_iid(), "event name", &out.errors);
      if (e.has_name()) s.name = e.name();
      for (uint64_t c : e.category_iids()) s.categories.push_back(categories.Get(c, "category", &out.errors));
      for (const auto& c : e.categories()) s.categories.push_back(c);
      for (const pp::DebugAnnotation& a : e.debug_annotations()) {
        const std::string key =
            a.has_name_iid() ? annotation_names.Get(a.name_iid(), "annotation name", &out.errors) : a.name();
        Value v;
        switch (a.value_case()) {
          case pp::DebugAnnotation::kBoolValue: v = a.bool_value(); break;
          case pp::DebugAnnotation::kUintValue: v = a.uint_value(); break;
          case pp::DebugAnnotation::kIntValue: v = a.int_value(); break;
          case pp::DebugAnnotation::kDoubleValue: v = a.double_value(); break;
          case pp::DebugAnnotation::kStringValue: v = a.string_value(); break;
          case pp::DebugAnnotation::kStringValueIid:
            v = annotation_strings.Get(a.string_value_iid(), "annotation string", &out.errors);
            break;
          default: out.errors.push_back(absl::StrCat("annotation ", key, " without a value"));
        }
        if (!s.args.emplace(key, v).second) out.errors.push_back(absl::StrCat("annotation ", key, " twice"));
      }
      s.flow_ids.assign(e.flow_ids().begin(), e.flow_ids().end());
      s.terminating_flow_ids.assign(e.terminating_flow_ids().begin(), e.terminating_flow_ids().end());
      events.push_back(std::move(ev));
    }
  }

  // The trace processor's order: by timestamp, ties in file order.
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.ts < b.ts; });
  std::map<uint64_t, std::vector<DecodedSlice>> open;
  for (Event& ev : events) {
    std::vector<DecodedSlice>& stack = open[ev.resolved.track];
    switch (ev.event->type()) {
      case pp::TrackEvent::TYPE_SLICE_BEGIN:
        ev.resolved.depth = static_cast<int>(stack.size());
        stack.push_back(std::move(ev.resolved));
        break;
      case pp::TrackEvent::TYPE_SLICE_END:
        if (stack.empty()) {
          out.errors.push_back(absl::StrCat("slice end without a begin on track ", ev.resolved.track));
          break;
        }
        stack.back().end = ev.ts;
        out.slices.push_back(std::move(stack.back()));
        stack.pop_back();
        break;
      case pp::TrackEvent::TYPE_INSTANT:
        ev.resolved.depth = static_cast<int>(stack.size());
        out.instants.push_back(std::move(ev.resolved));
        break;
      case pp::TrackEvent::TYPE_COUNTER:
        if (!ev.event->has_double_counter_value()) out.errors.push_back("counter event without a double value");
        out.counters[ev.resolved.track].push_back({ev.ts, ev.event->double_counter_value()});
        break;
      default: out.errors.push_back("event without a type");
    }
  }
  for (const auto& [track, stack] : open) {
    if (!stack.empty()) out.errors.push_back(absl::StrCat(stack.size(), " slices never ended on track ", track));
  }
  std::stable_sort(out.slices.begin(), out.slices.end(),
                   [](const DecodedSlice& a, const DecodedSlice& b) { return a.start < b.start; });
  return out;
}

}  // namespace cuscope::exporter::testing

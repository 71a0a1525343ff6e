#include "lib/export/chrome_json_writer.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "lib/core/json.h"
#include "lib/core/utf8.h"

namespace cuscope::exporter {

// Names come from the program (NVTX, kernels): the escaper writes bytes that are not UTF-8 as
// U+FFFD, which would otherwise make the file unreadable.
void ChromeJsonWriter::String(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) {
    core::AppendJsonString(text, core::JsonEscaping::kMinimal, &out_->buffer());
    return;
  }
  // Cut where a character ends, and say so: "<prefix>... (N bytes)".
  const std::string_view prefix = core::Utf8Prefix(text, max_bytes);
  std::string cut(prefix);
  absl::StrAppend(&cut, "... (", text.size(), " bytes)");
  core::AppendJsonString(cut, core::JsonEscaping::kMinimal, &out_->buffer());
}

void ChromeJsonWriter::Time(std::string_view key, uint64_t ns, bool relative) {
  std::string& out = out_->buffer();
  out.append(",\"");
  out.append(key.data(), key.size());
  out.append("\":");
  uint64_t value = ns;
  if (relative) {
    if (ns < origin_) {
      out.push_back('-');
      value = origin_ - ns;
    } else {
      value = ns - origin_;
    }
  }
  absl::StrAppend(&out, value / 1000);
  const uint64_t fraction = value % 1000;
  out.push_back('.');
  out.push_back(static_cast<char>('0' + fraction / 100));
  out.push_back(static_cast<char>('0' + fraction / 10 % 10));
  out.push_back(static_cast<char>('0' + fraction % 10));
}

void ChromeJsonWriter::BeginEvent(char phase, const Place& place, bool with_tid) {
  std::string& out = out_->buffer();
  out.append(first_event_ ? "{\"ph\":\"" : ",\n{\"ph\":\"");
  first_event_ = false;
  out.push_back(phase);
  absl::StrAppend(&out, "\",\"pid\":", place.pid);
  if (with_tid) absl::StrAppend(&out, ",\"tid\":", place.tid);
}

void ChromeJsonWriter::Args(absl::Span<const Arg> args) {
  if (args.empty()) return;
  std::string& out = out_->buffer();
  out.append(",\"args\":{");
  bool first = true;
  for (const Arg& arg : args) {
    if (!first) out.push_back(',');
    first = false;
    String(arg.name.text, kMaxArgBytes);
    out.push_back(':');
    switch (arg.type) {
      case Arg::Type::kUint: absl::StrAppend(&out, arg.u); break;
      case Arg::Type::kInt: absl::StrAppend(&out, arg.i); break;
      case Arg::Type::kDouble:  // shortest exact form; JSON has no NaN or infinity: null
        core::AppendJson(core::JsonNumberValue(arg.d), core::JsonEscaping::kMinimal, &out);
        break;
      case Arg::Type::kBool: out.append(arg.b ? "true" : "false"); break;
      case Arg::Type::kString: String(arg.s.text, kMaxArgBytes); break;
    }
  }
  out.push_back('}');
}

void ChromeJsonWriter::Metadata(std::string_view name, uint32_t pid, const uint32_t* tid, std::string_view key,
                                std::string_view text, int64_t number, bool is_number) {
  Place place;
  place.pid = pid;
  place.tid = tid != nullptr ? *tid : 0;
  BeginEvent('M', place, tid != nullptr);
  std::string& out = out_->buffer();
  out.append(",\"name\":");
  String(name, kMaxNameBytes);
  out.append(",\"args\":{");
  String(key, kMaxNameBytes);
  out.push_back(':');
  if (is_number) {
    absl::StrAppend(&out, number);
  } else {
    String(text, kMaxNameBytes);
  }
  out.append("}}");
}

uint32_t ChromeJsonWriter::SyntheticTid(uint32_t pid, int64_t preferred) {
  if (preferred > 0 && preferred < kSyntheticBase &&
      used_tids_.insert({pid, static_cast<uint32_t>(preferred)}).second) {
    return static_cast<uint32_t>(preferred);
  }
  while (!used_tids_.insert({pid, next_tid_}).second) ++next_tid_;
  return next_tid_++;
}

absl::Status ChromeJsonWriter::Start(const ExportInfo& info) {
  origin_ = info.time_origin_ns;
  source_path_ = info.source_path;
  out_->Append("{\"traceEvents\":[\n");
  return out_->status();
}

absl::Status ChromeJsonWriter::AddTrack(const Track& track) {
  Place place;
  const Place* parent = nullptr;
  if (track.parent != 0) {
    auto it = places_.find(track.parent);
    if (it == places_.end()) return absl::InternalError(absl::StrCat("track ", track.id, " before its parent"));
    parent = &it->second;
  }
  switch (track.type) {
    case TrackType::kProcess:
      // A pid from the file at or past kSyntheticBase (no Linux pid is) would merge with a GPU's
      // process: it gets a synthetic pid of its own, its name still says which process it is.
      place.pid = track.pid > 0 && static_cast<uint32_t>(track.pid) < kSyntheticBase ? static_cast<uint32_t>(track.pid)
                                                                                      : next_pid_++;
      Metadata("process_name", place.pid, nullptr, "name", track.name, 0, false);
      Metadata("process_sort_index", place.pid, nullptr, "sort_index", {}, track.order, true);
      break;
    case TrackType::kThread:
      place.pid = parent != nullptr ? parent->pid : next_pid_++;
      if (track.tid > 0 && track.tid <= UINT32_MAX &&
          used_tids_.insert({place.pid, static_cast<uint32_t>(track.tid)}).second) {
        place.tid = static_cast<uint32_t>(track.tid);
      } else {
        place.tid = SyntheticTid(place.pid, 0);
      }
      if (!track.name.empty()) Metadata("thread_name", place.pid, &place.tid, "name", track.name, 0, false);
      Metadata("thread_sort_index", place.pid, &place.tid, "sort_index", {}, track.order, true);
      break;
    case TrackType::kGroup:
    case TrackType::kSlices:
      if (parent == nullptr) {
        // A top-level track: a process of its own; a slice track is also its only thread.
        place.pid = next_pid_++;
        Metadata("process_name", place.pid, nullptr, "name", track.name, 0, false);
        Metadata("process_sort_index", place.pid, nullptr, "sort_index", {}, track.order, true);
        if (track.type == TrackType::kGroup) break;
      } else {
        place.pid = parent->pid;
      }
      place.tid = SyntheticTid(place.pid, track.preferred_tid);
      Metadata("thread_name", place.pid, &place.tid, "name", track.name, 0, false);
      Metadata("thread_sort_index", place.pid, &place.tid, "sort_index", {}, track.order, true);
      break;
    case TrackType::kCounter:
      place.pid = parent != nullptr ? parent->pid : next_pid_++;
      place.counter_name = track.name;
      place.unit = track.unit.empty() ? "value" : track.unit;
      break;
  }
  places_[track.id] = std::move(place);
  out_->MaybeFlush();
  return out_->status();
}

absl::Status ChromeJsonWriter::AddSlice(const Slice& slice) {
  auto it = places_.find(slice.track);
  if (it == places_.end()) return absl::InternalError(absl::StrCat("slice on undeclared track ", slice.track));
  BeginEvent('X', it->second);
  Time("ts", slice.start, true);
  Time("dur", slice.end - slice.start, false);
  std::string& out = out_->buffer();
  out.append(",\"name\":");
  String(slice.name.text, kMaxNameBytes);
  if (!slice.category.text.empty()) {
    out.append(",\"cat\":");
    String(slice.category.text, kMaxArgBytes);
  }
  Args(slice.args);
  // One bind id per event (event_sink.h: a slice has a flow in or a flow out, not both).
  if (slice.flow_in != 0) {
    absl::StrAppend(&out, ",\"bind_id\":", slice.flow_in, ",\"flow_in\":true");
  } else if (slice.flow_out != 0) {
    absl::StrAppend(&out, ",\"bind_id\":", slice.flow_out, ",\"flow_out\":true");
  }
  out.push_back('}');
  out_->MaybeFlush();
  return out_->status();
}

absl::Status ChromeJsonWriter::AddInstant(const Instant& instant) {
  auto it = places_.find(instant.track);
  if (it == places_.end()) return absl::InternalError(absl::StrCat("instant on undeclared track ", instant.track));
  BeginEvent('i', it->second);
  Time("ts", instant.time, true);
  std::string& out = out_->buffer();
  out.append(",\"s\":\"t\",\"name\":");
  String(instant.name.text, kMaxNameBytes);
  if (!instant.category.text.empty()) {
    out.append(",\"cat\":");
    String(instant.category.text, kMaxArgBytes);
  }
  Args(instant.args);
  out.push_back('}');
  out_->MaybeFlush();
  return out_->status();
}

absl::Status ChromeJsonWriter::AddCounter(uint64_t track, uint64_t time, double value) {
  auto it = places_.find(track);
  if (it == places_.end()) return absl::InternalError(absl::StrCat("counter on undeclared track ", track));
  const Place& place = it->second;
  BeginEvent('C', place, false);
  Time("ts", time, true);
  std::string& out = out_->buffer();
  out.append(",\"name\":");
  String(place.counter_name, kMaxNameBytes);
  out.append(",\"args\":{");
  String(place.unit, kMaxArgBytes);
  out.push_back(':');
  // Viewers draw a counter only from numbers: a sample that is not finite is drawn at 0.
  core::AppendJson(std::isfinite(value) ? core::JsonNumberValue(value) : core::Json(0), core::JsonEscaping::kMinimal,
                   &out);
  out.append("}}");
  out_->MaybeFlush();
  return out_->status();
}

absl::Status ChromeJsonWriter::Finish() {
  std::string& out = out_->buffer();
  out.append("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"cuscope_session_start_ns\":");
  // An integer (above 2^53: a reader that keeps numbers as doubles, JavaScript's, rounds it).
  absl::StrAppend(&out, origin_);
  out.append(",\"cuscope_source\":");
  String(source_path_, SIZE_MAX);
  out.append(",\"cuscope_time_unit\":\"us since the session start (cuscope_session_start_ns, CUPTI's clock)\"}}\n");
  return out_->status();
}

}  // namespace cuscope::exporter

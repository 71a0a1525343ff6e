// `cuscope export --format perfetto`: the scenario of export_test_trace.h exported and read back
// field by field against proto/perfetto/trace_subset.proto.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/export/exporter.h"
#include "lib/export/findings_pass.h"
#include "tests/export/export_test_trace.h"
#include "tests/export/perfetto_decode.h"

namespace cuscope::exporter::testing {
namespace {

namespace pp = ::perfetto::protos;

constexpr uint64_t kBucket = 10'000;  // 10 µs

class PerfettoExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BuildScenario(&trace_);
    input_ = trace_.Write();
    output_ = TempPath(".pftrace");
    ExportOptions options;
    options.bucket_ns = kBucket;
    auto summary = ExportToFile(input_, output_, options);
    ASSERT_TRUE(summary.ok()) << summary.status();
    summary_ = *summary;
    bytes_ = ReadFile(output_);
    decoded_ = DecodePerfetto(bytes_);
    for (const std::string& e : decoded_.errors) ADD_FAILURE() << e;
  }

  const DecodedSlice& Only(const std::string& name) {
    const std::vector<const DecodedSlice*> found = decoded_.Named(name);
    EXPECT_EQ(found.size(), 1u) << name;
    static const DecodedSlice kNone;
    return found.empty() ? kNone : *found[0];
  }
  uint64_t Track(const std::string& name) {
    const uint64_t uuid = decoded_.TrackNamed(name);
    EXPECT_NE(uuid, 0u) << "no track " << name;
    return uuid;
  }
  const pp::TrackDescriptor& Descriptor(uint64_t uuid) { return decoded_.tracks[uuid]; }

  TestTrace trace_;
  std::string input_, output_, bytes_;
  ExportSummary summary_;
  DecodedTrace decoded_;
};

template <typename T>
T ArgOf(const DecodedSlice& s, const std::string& key) {
  auto it = s.args.find(key);
  if (it == s.args.end() || !std::holds_alternative<T>(it->second)) {
    ADD_FAILURE() << s.name << " has no " << key << " of the expected type";
    return T();
  }
  return std::get<T>(it->second);
}

TEST_F(PerfettoExportTest, SequenceFlagsAndInterning) {
  ASSERT_FALSE(decoded_.packets.empty());
  EXPECT_EQ(decoded_.packets[0].sequence_flags(),
            static_cast<uint32_t>(pp::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED));
  EXPECT_TRUE(decoded_.packets[0].has_track_descriptor());
  size_t events = 0;
  for (size_t i = 1; i < decoded_.packets.size(); ++i) {
    const pp::TracePacket& p = decoded_.packets[i];
    EXPECT_EQ(p.trusted_packet_sequence_id(), 1u);
    if (p.has_track_event()) {
      ++events;
      // Packets that refer to interned strings say so; slice ends and counter samples refer to none.
      const pp::TrackEvent::Type type = p.track_event().type();
      const bool interned = type == pp::TrackEvent::TYPE_SLICE_BEGIN || type == pp::TrackEvent::TYPE_INSTANT;
      EXPECT_EQ(p.sequence_flags(),
                interned ? static_cast<uint32_t>(pp::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE) : 0u);
      EXPECT_EQ(p.track_event().has_name_iid(), interned);
      EXPECT_LE(p.track_event().track_uuid(), decoded_.tracks.size());
    }
  }
  EXPECT_GT(events, 40u);
  // Interned: the kernel's name is written once though two kernels carry it, and so is the name of
  // the annotation every kernel has.
  size_t definitions = 0;
  for (const pp::TracePacket& p : decoded_.packets) {
    for (const auto& n : p.interned_data().event_names()) definitions += n.name() == "kernel";
  }
  EXPECT_EQ(definitions, 1u);
  auto count = [&](const std::string& text) {
    size_t n = 0;
    for (size_t at = bytes_.find(text); at != std::string::npos; at = bytes_.find(text, at + 1)) ++n;
    return n;
  };
  // (The short name "kernel" is also a category's and other names' part: the recorded name is unique.)
  EXPECT_EQ(count("_Z6kernelPf"), 1u);
  EXPECT_EQ(count("registers per thread"), 1u);
  EXPECT_EQ(count("(128, 1, 1)"), 1u);
}

TEST_F(PerfettoExportTest, TrackHierarchy) {
  const uint64_t process = Track("app");
  const pp::TrackDescriptor& p = Descriptor(process);
  ASSERT_TRUE(p.has_process());
  EXPECT_EQ(p.process().pid(), 42);
  ASSERT_EQ(p.process().cmdline_size(), 2);
  EXPECT_EQ(p.process().cmdline(0), "/usr/bin/app");
  EXPECT_EQ(p.process().cmdline(1), "--steps=3");

  uint64_t thread = 0;
  for (const auto& [uuid, t] : decoded_.tracks) {
    if (t.has_thread()) {
      EXPECT_EQ(thread, 0u) << "one host thread";
      thread = uuid;
      EXPECT_EQ(t.thread().pid(), 42);
      EXPECT_EQ(t.thread().tid(), 100);
      EXPECT_EQ(t.parent_uuid(), process);
    }
  }
  ASSERT_NE(thread, 0u);
  EXPECT_EQ(Descriptor(Track("NVTX, thread 100")).parent_uuid(), thread);
  EXPECT_EQ(Descriptor(Track("CUPTI overhead, thread 100")).parent_uuid(), thread);

  const uint64_t gpu = Track("GPU 0: NVIDIA H200");
  const pp::TrackDescriptor& g = Descriptor(gpu);
  EXPECT_FALSE(g.has_parent_uuid());
  EXPECT_EQ(g.child_ordering(), pp::TrackDescriptor::EXPLICIT);
  const pp::TrackDescriptor& util = Descriptor(Track("GPU 0 utilization"));
  EXPECT_EQ(util.parent_uuid(), gpu);
  ASSERT_TRUE(util.has_counter());
  EXPECT_EQ(util.counter().unit_name(), "%");
  EXPECT_EQ(util.sibling_order_rank(), 0);
  const pp::TrackDescriptor& s7 = Descriptor(Track("Stream 7"));
  const pp::TrackDescriptor& s8 = Descriptor(Track("Stream 8"));
  const pp::TrackDescriptor& overlap = Descriptor(Track("Stream 7 (overlap 1)"));
  EXPECT_EQ(s7.parent_uuid(), gpu);
  EXPECT_EQ(s8.parent_uuid(), gpu);
  EXPECT_EQ(overlap.parent_uuid(), gpu);
  EXPECT_EQ(s7.sibling_order_rank(), 1);
  EXPECT_EQ(s8.sibling_order_rank(), 2);

  EXPECT_FALSE(Descriptor(Track("cuscope capture windows")).has_parent_uuid());
  const uint64_t findings = Track("cuscope findings");
  size_t finding_tracks = 0;
  for (const auto& [uuid, t] : decoded_.tracks) finding_tracks += t.parent_uuid() == findings;
  EXPECT_EQ(finding_tracks, summary_.findings);
  // Every track: process, thread, NVTX, overhead, GPU, utilization, 2 streams, 1 overflow, windows,
  // findings group and one per finding.
  EXPECT_EQ(decoded_.tracks.size(), 11u + summary_.findings);
  EXPECT_EQ(summary_.tracks, decoded_.tracks.size());
}

TEST_F(PerfettoExportTest, KernelSlicesWithAnnotations) {
  const uint64_t stream7 = Track("Stream 7");
  std::vector<std::pair<std::string, std::pair<uint64_t, uint64_t>>> got;
  for (const DecodedSlice* s : decoded_.OnTrack(stream7)) got.push_back({s->name, {s->start - kT0, s->end - kT0}});
  const std::vector<std::pair<std::string, std::pair<uint64_t, uint64_t>>> want = {
      {"kernel", {5000, 15000}},
      {"Memcpy HtoD", {22000, 32000}},
      {"profiled [metrics replay]", {50000, 60000}},  // its passes: to the METRICS window's end
      {"node1", {72000, 74000}},
      {"node2", {74000, 76000}},
      {"kernel", {10'000'000, 10'001'000}},
  };
  EXPECT_EQ(got, want);

  const DecodedSlice& k = *decoded_.OnTrack(stream7)[0];
  EXPECT_EQ(k.categories, std::vector<std::string>{"kernel"});
  EXPECT_EQ(k.depth, 0);
  EXPECT_EQ(ArgOf<std::string>(k, "grid"), "(4, 1, 1)");
  EXPECT_EQ(ArgOf<std::string>(k, "block"), "(128, 1, 1)");
  EXPECT_EQ(ArgOf<uint64_t>(k, "registers per thread"), 32u);
  EXPECT_EQ(ArgOf<int64_t>(k, "static shared memory"), 256);
  EXPECT_EQ(ArgOf<int64_t>(k, "dynamic shared memory"), 1024);
  EXPECT_EQ(ArgOf<uint64_t>(k, "correlation id"), 1u);
  EXPECT_EQ(ArgOf<std::string>(k, "mangled name"), "_Z6kernelPf");
  EXPECT_EQ(k.args.count("replayed for metrics"), 0u);
  EXPECT_EQ(k.args.count("graph id"), 0u);

  const DecodedSlice& replayed = Only("profiled [metrics replay]");
  EXPECT_EQ(replayed.categories, std::vector<std::string>{"replayed_kernel"});
  EXPECT_EQ(ArgOf<bool>(replayed, "replayed for metrics"), true);

  const DecodedSlice& node1 = Only("node1");
  EXPECT_EQ(ArgOf<uint64_t>(node1, "graph id"), 9u);
  EXPECT_EQ(ArgOf<uint64_t>(node1, "graph node id"), 73000u);

  // k2() partly overlaps kernel(float*) on stream 7: it has a track of its own beside the stream.
  const std::vector<const DecodedSlice*> overlap = decoded_.OnTrack(Track("Stream 7 (overlap 1)"));
  ASSERT_EQ(overlap.size(), 1u);
  EXPECT_EQ(overlap[0]->name, "k2");
  EXPECT_EQ(overlap[0]->start, kT0 + 12000);
  EXPECT_EQ(overlap[0]->end, kT0 + 18000);
  EXPECT_EQ(summary_.overlap_slices, 1u);
  EXPECT_EQ(summary_.dropped_slices, 0u);
  EXPECT_EQ(summary_.kernels, 6u);
}

TEST_F(PerfettoExportTest, CopiesAndMemsets) {
  const DecodedSlice& copy = Only("Memcpy HtoD");
  EXPECT_EQ(copy.categories, std::vector<std::string>{"memcpy"});
  EXPECT_EQ(ArgOf<uint64_t>(copy, "bytes"), 1048576u);
  EXPECT_EQ(ArgOf<std::string>(copy, "copy kind"), "HtoD");
  EXPECT_EQ(ArgOf<std::string>(copy, "source memory"), "pinned");
  EXPECT_EQ(ArgOf<std::string>(copy, "destination memory"), "device");
  EXPECT_DOUBLE_EQ(ArgOf<double>(copy, "throughput GB/s"), 104.8576);
  EXPECT_EQ(ArgOf<bool>(copy, "async"), true);
  EXPECT_EQ(ArgOf<uint64_t>(copy, "correlation id"), 2u);

  const DecodedSlice& memset = Only("Memset");
  EXPECT_EQ(memset.track, Track("Stream 8"));
  EXPECT_EQ(memset.start, kT0 + 16000);
  EXPECT_EQ(memset.end, kT0 + 18000);
  EXPECT_EQ(ArgOf<uint64_t>(memset, "bytes"), 4096u);
  EXPECT_EQ(ArgOf<uint64_t>(memset, "value"), 7u);
  EXPECT_EQ(ArgOf<std::string>(memset, "memory kind"), "device");
}

TEST_F(PerfettoExportTest, ApiCallsOnTheirThread) {
  uint64_t thread = 0;
  for (const auto& [uuid, t] : decoded_.tracks) {
    if (t.has_thread()) thread = uuid;
  }
  std::vector<std::tuple<std::string, uint64_t, uint64_t, int>> got;
  for (const DecodedSlice* s : decoded_.OnTrack(thread))
    got.emplace_back(s->name, s->start - kT0, s->end - kT0, s->depth);
  const std::vector<std::tuple<std::string, uint64_t, uint64_t, int>> want = {
      {"cudaLaunchKernel", 1000, 3000, 0},           {"cuLaunchKernel", 1500, 2500, 1},
      {"cudaMemsetAsync", 15000, 15500, 0},          {"cudaMemcpyAsync", 20000, 21000, 0},
      {"cudaLaunchKernel", 45000, 60000, 0},         {"cudaGraphLaunch", 70000, 71000, 0},
      {"cudaLaunchKernel", 9'990'000, 9'995'000, 0},
  };
  EXPECT_EQ(got, want);
  const DecodedSlice& driver = Only("cuLaunchKernel");
  EXPECT_EQ(driver.categories, std::vector<std::string>{"cuda_driver"});
  EXPECT_EQ(ArgOf<uint64_t>(driver, "correlation id"), 1u);
  EXPECT_EQ(decoded_.OnTrack(thread)[0]->categories, std::vector<std::string>{"cuda_runtime"});
  EXPECT_EQ(summary_.api_calls, 7u);
}

TEST_F(PerfettoExportTest, FlowsFromCallsToTheirGpuWork) {
  // Flow ids by slice name and start, as (flow_ids, terminating_flow_ids).
  std::map<std::pair<std::string, uint64_t>, std::pair<std::vector<uint64_t>, std::vector<uint64_t>>> flows;
  for (const DecodedSlice& s : decoded_.slices) {
    if (!s.flow_ids.empty() || !s.terminating_flow_ids.empty()) {
      flows[{s.name, s.start - kT0}] = {s.flow_ids, s.terminating_flow_ids};
    }
  }
  using V = std::vector<uint64_t>;
  const std::map<std::pair<std::string, uint64_t>, std::pair<V, V>> want = {
      // The runtime call starts the arrow; the driver call sharing its id does not.
      {{"cudaLaunchKernel", 1000}, {V{1}, V{}}},
      {{"kernel", 5000}, {V{}, V{1}}},
      {{"cudaMemsetAsync", 15000}, {V{3}, V{}}},
      {{"Memset", 16000}, {V{}, V{3}}},
      {{"cudaMemcpyAsync", 20000}, {V{2}, V{}}},
      {{"Memcpy HtoD", 22000}, {V{}, V{2}}},
      {{"cudaLaunchKernel", 45000}, {V{4}, V{}}},
      {{"profiled [metrics replay]", 50000}, {V{}, V{4}}},
      // A graph launch: one arrow, to the first node written.
      {{"cudaGraphLaunch", 70000}, {V{5}, V{}}},
      {{"node1", 72000}, {V{}, V{5}}},
      {{"cudaLaunchKernel", 9'990'000}, {V{6}, V{}}},
      {{"kernel", 10'000'000}, {V{}, V{6}}},
  };
  EXPECT_EQ(flows, want);
  EXPECT_EQ(summary_.flows, 6u);
}

TEST_F(PerfettoExportTest, NvtxRangesNestAcrossChunks) {
  const std::vector<const DecodedSlice*> ranges = decoded_.OnTrack(Track("NVTX, thread 100"));
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0]->name, "outer");
  EXPECT_EQ(ranges[0]->start, kT0 + 500);
  EXPECT_EQ(ranges[0]->end, kT0 + 40000);
  EXPECT_EQ(ranges[0]->depth, 0);
  EXPECT_EQ(ranges[1]->name, "inner");
  EXPECT_EQ(ranges[1]->start, kT0 + 900);
  EXPECT_EQ(ranges[1]->end, kT0 + 3500);
  EXPECT_EQ(ranges[1]->depth, 1);
  EXPECT_EQ(ranges[0]->categories, std::vector<std::string>{"nvtx"});
  ASSERT_EQ(decoded_.instants.size(), 1u);
  EXPECT_EQ(decoded_.instants[0].name, "checkpoint");
  EXPECT_EQ(decoded_.instants[0].start, kT0 + 4000);
  EXPECT_EQ(decoded_.instants[0].track, Track("NVTX, thread 100"));
  EXPECT_EQ(summary_.nvtx_ranges, 2u);
  EXPECT_EQ(summary_.nvtx_marks, 1u);

  const std::vector<const DecodedSlice*> overhead = decoded_.OnTrack(Track("CUPTI overhead, thread 100"));
  ASSERT_EQ(overhead.size(), 1u);
  EXPECT_EQ(overhead[0]->name, "buffer flush");
  EXPECT_EQ(overhead[0]->start, kT0 + 33000);
  EXPECT_EQ(overhead[0]->end, kT0 + 34000);
}

TEST_F(PerfettoExportTest, CaptureWindows) {
  const std::vector<const DecodedSlice*> windows = decoded_.OnTrack(Track("cuscope capture windows"));
  ASSERT_EQ(windows.size(), 2u);
  // The TIMELINE window's halves (opened in chunk 1, closed in chunk 2) make one slice.
  EXPECT_EQ(windows[0]->name, "timeline capture");
  EXPECT_EQ(windows[0]->start, kT0);
  EXPECT_EQ(windows[0]->end, kT0 + 100000);
  EXPECT_EQ(ArgOf<std::string>(*windows[0], "reason"), "session");
  EXPECT_EQ(windows[1]->name, "metrics collection (kernel replay)");
  EXPECT_EQ(windows[1]->categories, std::vector<std::string>{"metrics_window"});
  EXPECT_EQ(windows[1]->start, kT0 + 45000);
  EXPECT_EQ(windows[1]->end, kT0 + 60000);
  EXPECT_EQ(windows[1]->depth, 1);
}

TEST_F(PerfettoExportTest, UtilizationCounter) {
  const auto& samples = decoded_.counters[Track("GPU 0 utilization")];
  std::vector<std::pair<uint64_t, double>> got;
  for (const auto& [t, v] : samples) got.push_back({t - kT0, v});
  // 10 µs buckets from the first timestamp (the window's opening at 0); each sample holds until the
  // next. [0,10): kernel 5 of 10 µs; [10,20): kernel, k2 and memset, 8 µs of union; [20,30): the
  // copy, 8 µs; [30,40): 2 µs; graph nodes 4 µs in [70,80); the last kernel fills the last
  // (1 µs long) bucket; the replayed launch does not count.
  const std::vector<std::pair<uint64_t, double>> want = {
      {0, 50.0},     {10000, 80.0}, {30000, 20.0},       {40000, 0.0},
      {70000, 40.0}, {80000, 0.0},  {10'000'000, 100.0}, {10'001'000, 0.0},
  };
  EXPECT_EQ(got, want);
  EXPECT_EQ(summary_.bucket_ns, kBucket);
  EXPECT_EQ(summary_.counter_samples, want.size());
}

TEST_F(PerfettoExportTest, FindingsAsMarkedSpans) {
  absl::StatusOr<std::vector<analysis::Finding>> findings = RunFindingsPass(input_);
  ASSERT_TRUE(findings.ok()) << findings.status();
  size_t with_spans = 0;
  for (size_t i = 0; i < findings->size(); ++i) {
    const analysis::Finding& f = (*findings)[i];
    if (f.spans.empty()) continue;
    ++with_spans;
    const std::string_view severity = analysis::SeverityName(f.severity);
    const std::string name =
        absl::StrCat(i + 1, ". ", absl::string_view(severity.data(), severity.size()), ": ", f.headline);
    const uint64_t track = Track(name);
    EXPECT_EQ(Descriptor(track).parent_uuid(), Track("cuscope findings"));
    std::vector<std::tuple<uint64_t, uint64_t, std::string>> want, got;
    for (const analysis::Span& s : f.spans) want.emplace_back(s.begin, s.end, s.label.empty() ? f.rule_id : s.label);
    // Spans that overlap go to the finding's overflow tracks.
    for (const auto& [uuid, t] : decoded_.tracks) {
      if (uuid != track && t.name().rfind(absl::StrCat(i + 1, ". ", f.rule_id, " (overlap"), 0) != 0) continue;
      for (const DecodedSlice* s : decoded_.OnTrack(uuid)) {
        got.emplace_back(s->start, s->end, s->name);
        EXPECT_EQ(ArgOf<std::string>(*s, "rule"), f.rule_id);
        EXPECT_EQ(ArgOf<std::string>(*s, "severity"), std::string(analysis::SeverityName(f.severity)));
        EXPECT_EQ(ArgOf<std::string>(*s, "headline"), f.headline);
        EXPECT_EQ(ArgOf<uint64_t>(*s, "rank"), i + 1);
        EXPECT_EQ(s->categories, std::vector<std::string>{"finding"});
      }
    }
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want) << f.rule_id;
  }
  // A GPU idle for 99% of 10 ms is a finding with the idle gaps as spans.
  EXPECT_GE(with_spans, 1u);
  EXPECT_EQ(summary_.findings, with_spans);
  // Every finding counts in the total, as `cuscope analyze` lists them, drawn or not.
  EXPECT_EQ(summary_.findings_total, findings->size());
}

TEST_F(PerfettoExportTest, WithoutFindingsNoFindingsTrack) {
  const std::string out = TempPath(".pftrace");
  ExportOptions options;
  options.findings = false;
  options.bucket_ns = kBucket;
  auto summary = ExportToFile(input_, out, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  const DecodedTrace d = DecodePerfetto(ReadFile(out));
  EXPECT_TRUE(d.errors.empty());
  EXPECT_EQ(d.TrackNamed("cuscope findings"), 0u);
  EXPECT_EQ(d.slices.size(), decoded_.slices.size() - summary_.finding_spans);
  EXPECT_EQ(summary->findings, 0u);
}

TEST_F(PerfettoExportTest, AdaptiveBucketByDefault) {
  const std::string out = TempPath(".pftrace");
  ExportOptions options;
  options.findings = false;
  auto summary = ExportToFile(input_, out, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  // 10.001 ms in 5000 buckets of 1, 2 or 5 times a power of ten ns: 2 µs covers 10 ms only, so 5 µs.
  EXPECT_EQ(summary->bucket_ns, 5000u);
}

}  // namespace
}  // namespace cuscope::exporter::testing

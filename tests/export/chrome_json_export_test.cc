// `cuscope export --format chrome-json`: the scenario of export_test_trace.h exported and parsed
// back with protobuf's JSON parser into a google.protobuf.Struct.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <unistd.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/core/output_file.h"
#include "lib/export/chrome_json_writer.h"
#include "lib/export/exporter.h"
#include "tests/export/export_test_trace.h"

// A namespace of its own: other files of this test program have helpers of the same names
// (Value), and CI compiles them together (CUSCOPE_UNITY_TESTS).
namespace cuscope::exporter::testing::chrome_json_test {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

class ChromeJsonExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BuildScenario(&trace_);
    input_ = trace_.Write();
    const std::string output = TempPath(".json");
    ExportOptions options;
    options.format = ExportFormat::kChromeJson;
    options.bucket_ns = 10'000;
    auto summary = ExportToFile(input_, output, options);
    ASSERT_TRUE(summary.ok()) << summary.status();
    text_ = ReadFile(output);
    const auto status = google::protobuf::util::JsonStringToMessage(text_, &root_);
    ASSERT_TRUE(status.ok()) << status.ToString();
    for (const Value& e : root_.fields().at("traceEvents").list_value().values()) events_.push_back(&e.struct_value());
  }

  static std::string Str(const Struct& s, const std::string& key) {
    auto it = s.fields().find(key);
    return it == s.fields().end() ? "" : it->second.string_value();
  }
  static double Num(const Struct& s, const std::string& key) {
    auto it = s.fields().find(key);
    return it == s.fields().end() ? -1 : it->second.number_value();
  }
  static const Struct& Args(const Struct& s) { return s.fields().at("args").struct_value(); }

  std::vector<const Struct*> Phase(const std::string& ph, const std::string& name = "") const {
    std::vector<const Struct*> out;
    for (const Struct* e : events_) {
      if (Str(*e, "ph") == ph && (name.empty() || Str(*e, "name") == name)) out.push_back(e);
    }
    return out;
  }
  // The pid named `name` by a process_name event.
  double Pid(const std::string& name) const {
    for (const Struct* e : Phase("M", "process_name")) {
      if (Str(Args(*e), "name") == name) return Num(*e, "pid");
    }
    ADD_FAILURE() << "no process " << name;
    return -1;
  }
  // The tid named `name` by a thread_name event in process `pid`.
  double Tid(double pid, const std::string& name) const {
    for (const Struct* e : Phase("M", "thread_name")) {
      if (Num(*e, "pid") == pid && Str(Args(*e), "name") == name) return Num(*e, "tid");
    }
    ADD_FAILURE() << "no thread " << name;
    return -1;
  }
  const Struct& OnlyX(const std::string& name) const {
    const std::vector<const Struct*> found = Phase("X", name);
    EXPECT_EQ(found.size(), 1u) << name;
    static const Struct kNone;
    return found.empty() ? kNone : *found[0];
  }

  TestTrace trace_;
  std::string input_, text_;
  Struct root_;
  std::vector<const Struct*> events_;
};

TEST_F(ChromeJsonExportTest, ProcessesAndThreads) {
  EXPECT_EQ(Pid("app"), 42);
  const double gpu = Pid("GPU 0: NVIDIA H200");
  EXPECT_EQ(gpu, ChromeJsonWriter::kSyntheticBase);
  // A stream is a thread of its GPU's process, with the stream id as tid.
  EXPECT_EQ(Tid(gpu, "Stream 7"), 7);
  EXPECT_EQ(Tid(gpu, "Stream 8"), 8);
  EXPECT_GE(Tid(gpu, "Stream 7 (overlap 1)"), ChromeJsonWriter::kSyntheticBase);
  EXPECT_GE(Tid(42, "NVTX, thread 100"), ChromeJsonWriter::kSyntheticBase);
  EXPECT_NE(Pid("cuscope findings"), -1);
  // An integer, as every number the project writes (1.7e18 is one a double holds exactly).
  EXPECT_EQ(root_.fields().at("otherData").struct_value().fields().at("cuscope_session_start_ns").number_value(),
            1700000000000000000.0);
}

TEST_F(ChromeJsonExportTest, CompleteEventsInMicroseconds) {
  const double gpu = Pid("GPU 0: NVIDIA H200");
  const std::vector<const Struct*> kernels = Phase("X", "kernel");
  ASSERT_EQ(kernels.size(), 2u);
  const Struct& k = *kernels[0];
  EXPECT_EQ(Num(k, "pid"), gpu);
  EXPECT_EQ(Num(k, "tid"), 7);
  EXPECT_EQ(Num(k, "ts"), 5.0);  // µs since the first timestamp (kT0)
  EXPECT_EQ(Num(k, "dur"), 10.0);
  EXPECT_EQ(Str(k, "cat"), "kernel");
  EXPECT_EQ(Str(Args(k), "grid"), "(4, 1, 1)");
  EXPECT_EQ(Str(Args(k), "block"), "(128, 1, 1)");
  EXPECT_EQ(Num(Args(k), "registers per thread"), 32);
  EXPECT_EQ(Num(Args(k), "correlation id"), 1);
  EXPECT_EQ(Num(*kernels[1], "ts"), 10000.0);
  EXPECT_EQ(Num(*kernels[1], "dur"), 1.0);
  // Nanoseconds survive: the API call inside the launch starts 1.5 µs in.
  const Struct& driver = OnlyX("cuLaunchKernel");
  EXPECT_EQ(Num(driver, "ts"), 1.5);
  EXPECT_EQ(Num(driver, "pid"), 42);
  EXPECT_EQ(Num(driver, "tid"), 100);
  EXPECT_EQ(Str(driver, "cat"), "cuda_driver");

  const Struct& copy = OnlyX("Memcpy HtoD");
  EXPECT_EQ(Num(Args(copy), "bytes"), 1048576);
  EXPECT_EQ(Str(Args(copy), "source memory"), "pinned");
  EXPECT_EQ(Args(copy).fields().at("async").bool_value(), true);

  const Struct& k2 = OnlyX("k2");
  EXPECT_EQ(Num(k2, "tid"), Tid(gpu, "Stream 7 (overlap 1)"));

  const Struct& outer = OnlyX("outer");
  EXPECT_EQ(Num(outer, "ts"), 0.5);
  EXPECT_EQ(Num(outer, "dur"), 39.5);
  EXPECT_EQ(Num(outer, "tid"), Tid(42, "NVTX, thread 100"));
  const std::vector<const Struct*> marks = Phase("i", "checkpoint");
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(Num(*marks[0], "ts"), 4.0);
  EXPECT_EQ(Str(*marks[0], "s"), "t");

  const Struct& replayed = OnlyX("profiled [metrics replay]");
  EXPECT_EQ(Num(replayed, "dur"), 10.0) << "placed over its passes: to the METRICS window's end";
  EXPECT_EQ(Args(replayed).fields().at("replayed for metrics").bool_value(), true);
}

TEST_F(ChromeJsonExportTest, FlowsByBindId) {
  std::map<std::string, std::vector<std::pair<double, std::string>>> flows;  // bind id -> (ts, name + direction)
  for (const Struct* e : Phase("X")) {
    auto it = e->fields().find("bind_id");
    if (it == e->fields().end()) continue;
    const bool out = e->fields().count("flow_out") && e->fields().at("flow_out").bool_value();
    const bool in = e->fields().count("flow_in") && e->fields().at("flow_in").bool_value();
    EXPECT_NE(out, in);
    flows[std::to_string(static_cast<int>(it->second.number_value()))].push_back(
        {Num(*e, "ts"), Str(*e, "name") + (out ? " out" : " in")});
  }
  for (auto& [id, ends] : flows) std::sort(ends.begin(), ends.end());
  using E = std::vector<std::pair<double, std::string>>;
  const std::map<std::string, E> want = {
      {"1", E{{1.0, "cudaLaunchKernel out"}, {5.0, "kernel in"}}},
      {"2", E{{20.0, "cudaMemcpyAsync out"}, {22.0, "Memcpy HtoD in"}}},
      {"3", E{{15.0, "cudaMemsetAsync out"}, {16.0, "Memset in"}}},
      {"4", E{{45.0, "cudaLaunchKernel out"}, {50.0, "profiled [metrics replay] in"}}},
      {"5", E{{70.0, "cudaGraphLaunch out"}, {72.0, "node1 in"}}},
      {"6", E{{9990.0, "cudaLaunchKernel out"}, {10000.0, "kernel in"}}},
  };
  EXPECT_EQ(flows, want);
}

TEST_F(ChromeJsonExportTest, UtilizationCounter) {
  std::vector<std::pair<double, double>> got;
  for (const Struct* e : Phase("C", "GPU 0 utilization")) {
    EXPECT_EQ(Num(*e, "pid"), Pid("GPU 0: NVIDIA H200"));
    got.push_back({Num(*e, "ts"), Num(Args(*e), "%")});
  }
  const std::vector<std::pair<double, double>> want = {{0, 50},  {10, 80}, {30, 20},     {40, 0},
                                                       {70, 40}, {80, 0},  {10000, 100}, {10001, 0}};
  EXPECT_EQ(got, want);
}

TEST_F(ChromeJsonExportTest, CompleteEventsNestPerThread) {
  // Viewers build each thread's stack from complete events: on one (pid, tid) two events must be
  // disjoint or one inside the other.
  std::map<std::pair<double, double>, std::vector<std::pair<double, double>>> by_thread;
  for (const Struct* e : Phase("X")) {
    by_thread[{Num(*e, "pid"), Num(*e, "tid")}].push_back({Num(*e, "ts"), Num(*e, "ts") + Num(*e, "dur")});
  }
  for (const auto& [thread, spans] : by_thread) {
    for (const auto& a : spans) {
      for (const auto& b : spans) {
        const bool disjoint = a.second <= b.first || b.second <= a.first;
        const bool nested =
            (a.first <= b.first && b.second <= a.second) || (b.first <= a.first && a.second <= b.second);
        EXPECT_TRUE(disjoint || nested) << thread.first << "/" << thread.second;
      }
    }
  }
  EXPECT_GE(by_thread.size(), 7u);
}

TEST_F(ChromeJsonExportTest, EscapesNames) {
  TestTrace t;
  t.Api("cudaLaunchKernel_v7000", 0, 1000, 1);
  t.Kernel("quote\"back\\slash\ttab\x01", 2000, 3000, 7, 1);
  t.Nvtx(v1::NVTX_KIND_MARK, 1, 500, "caf\xc3\xa9");
  t.EndChunk();
  const std::string out = TempPath(".json");
  ExportOptions options;
  options.format = ExportFormat::kChromeJson;
  options.findings = false;
  ASSERT_TRUE(ExportToFile(t.Write(), out, options).ok());
  Struct root;
  const std::string text = ReadFile(out);
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(text, &root).ok()) << text;
  bool kernel = false, mark = false;
  for (const Value& e : root.fields().at("traceEvents").list_value().values()) {
    const std::string name = Str(e.struct_value(), "name");
    kernel |= name == "quote\"back\\slash\ttab\x01";
    mark |= name == "caf\xc3\xa9";
  }
  EXPECT_TRUE(kernel);
  EXPECT_TRUE(mark);
}

// The review's trace: a 197 KB trace whose kernels all name one very long name became 2.4 GB of
// Chrome JSON (no interning: each event spells its name out). Names are cut at 1 KiB, arguments at
// 512 bytes, where a character ends, and say how long they were; the file stays valid JSON.
TEST(ChromeJsonWriterTest, LongNamesAreCutAndSaySo) {
  TestTrace t;
  const std::string long_name = "_Z" + std::string(50'000, 'k') + "\xc3\xa9";
  t.Api("cudaLaunchKernel_v7000", 0, 1000, 1);
  t.Kernel(long_name.c_str(), 2000, 3000, 7, 1);
  t.EndChunk();
  const std::string out = TempPath(".json");
  ExportOptions options;
  options.format = ExportFormat::kChromeJson;
  options.findings = false;
  auto summary = ExportToFile(t.Write(), out, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  Struct root;
  const std::string text = ReadFile(out);
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(text, &root).ok());
  EXPECT_LT(text.size(), 16u * 1024) << "the name once at most 1 KiB, its mangled form 512 bytes";
  bool found = false;
  for (const Value& e : root.fields().at("traceEvents").list_value().values()) {
    const Struct& ev = e.struct_value();
    if (ev.fields().at("ph").string_value() != "X" || ev.fields().at("name").string_value().rfind("_Zkk", 0) != 0) {
      continue;
    }
    found = true;
    const std::string name = ev.fields().at("name").string_value();
    EXPECT_EQ(name, std::string("_Z") + std::string(1022, 'k') + "... (50004 bytes)");
    const std::string mangled = ev.fields().at("args").struct_value().fields().at("mangled name").string_value();
    EXPECT_EQ(mangled, std::string("_Z") + std::string(510, 'k') + "... (50004 bytes)");
  }
  EXPECT_TRUE(found);
}

// A cut never splits a character: a 2-byte character across the 1 KiB mark is left out whole.
TEST(ChromeJsonWriterTest, ACutEndsWhereACharacterEnds) {
  const std::string path = TempPath(".json");
  auto file = core::OutputFile::Create(path, false);
  ASSERT_TRUE(file.ok());
  ChromeJsonWriter writer(file->get());
  ASSERT_TRUE(writer.Start(ExportInfo{100, 200, 100, "in"}).ok());
  Track group;
  group.id = 1;
  group.type = TrackType::kGroup;
  group.name = "g";
  ASSERT_TRUE(writer.AddTrack(group).ok());
  Slice s;
  s.track = 1;
  s.start = 150;
  s.end = 160;
  const std::string name = std::string(ChromeJsonWriter::kMaxNameBytes - 1, 'a') + "\xc3\xa9" + "tail";
  s.name = Name{0, name};
  ASSERT_TRUE(writer.AddSlice(s).ok());
  ASSERT_TRUE(writer.Finish().ok());
  ASSERT_TRUE((*file)->Close().ok());
  const std::string text = ReadFile(path);
  EXPECT_NE(text.find(std::string(ChromeJsonWriter::kMaxNameBytes - 1, 'a') + "... (1029 bytes)"), std::string::npos);
  Struct root;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(text, &root).ok());
}

// Whatever a trace holds, an export stops at 256 times its size plus 64 KiB with one error, and
// leaves no file: here 30,000 kernels, each a few bytes in the trace, naming one 1 KiB name of
// characters JSON escapes (\u0001: 6 bytes each).
TEST(ExportBoundTest, AnExportPastItsBoundStopsWithOneErrorAndNoFile) {
  TestTrace t;
  const std::string name(1000, '\x01');
  for (uint64_t i = 0; i < 30'000; ++i) t.Kernel(name.c_str(), 2000 + 10 * i, 2005 + 10 * i, 7, 0);
  t.EndChunk();
  const std::string input = t.Write();
  for (const ExportFormat format : {ExportFormat::kChromeJson, ExportFormat::kPerfetto}) {
    const std::string out = TempPath(".out");
    ExportOptions options;
    options.format = format;
    options.findings = false;
    auto summary = ExportToFile(input, out, options);
    if (format == ExportFormat::kPerfetto) {
      // Perfetto interns the name: about the trace's size.
      ASSERT_TRUE(summary.ok()) << summary.status();
      continue;
    }
    ASSERT_FALSE(summary.ok());
    EXPECT_EQ(summary.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_NE(summary.status().message().find("256 times the trace's"), std::string::npos) << summary.status();
    EXPECT_EQ(summary.status().message().find('\n'), std::string::npos);
    EXPECT_NE(::access(out.c_str(), F_OK), 0) << "the partial output is removed";
  }
}

// The trace format cannot carry bytes that are not UTF-8, but the writer must never write a file a
// JSON reader refuses, whatever it is handed.
TEST(ChromeJsonWriterTest, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  const std::string path = TempPath(".json");
  auto file = core::OutputFile::Create(path, false);
  ASSERT_TRUE(file.ok()) << file.status();
  ChromeJsonWriter writer(file->get());
  ASSERT_TRUE(writer.Start(ExportInfo{100, 200, 100, "in"}).ok());
  Track group;
  group.id = 1;
  group.type = TrackType::kGroup;
  group.name = "bad \xff\xc3 name";
  ASSERT_TRUE(writer.AddTrack(group).ok());
  Track slices;
  slices.id = 2;
  slices.parent = 1;
  slices.name = "\xe2\x82";  // a cut sequence
  ASSERT_TRUE(writer.AddTrack(slices).ok());
  Slice s;
  s.track = 2;
  s.start = 150;
  s.end = 160;
  s.name = Name{0, "ok \xf0\x9f\x99\x82"};  // a valid 4-byte sequence stays
  ASSERT_TRUE(writer.AddSlice(s).ok());
  ASSERT_TRUE(writer.Finish().ok());
  ASSERT_TRUE((*file)->Close().ok());
  Struct root;
  const std::string text = ReadFile(path);
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(text, &root).ok()) << text;
  std::vector<std::string> names;
  for (const Value& e : root.fields().at("traceEvents").list_value().values()) {
    const Struct& ev = e.struct_value();
    if (ev.fields().at("ph").string_value() == "M" &&
        ev.fields().at("name").string_value().find("_name") != std::string::npos) {
      names.push_back(ev.fields().at("args").struct_value().fields().at("name").string_value());
    } else if (ev.fields().at("ph").string_value() == "X") {
      names.push_back(ev.fields().at("name").string_value());
      EXPECT_EQ(ev.fields().at("ts").number_value(), 0.05);
      EXPECT_EQ(ev.fields().at("dur").number_value(), 0.01);
    }
  }
  // One replacement per invalid byte that starts nothing, one for a sequence cut short.
  const std::vector<std::string> want = {"bad \xef\xbf\xbd\xef\xbf\xbd name", "\xef\xbf\xbd",
                                         "ok \xf0\x9f\x99\x82"};
  EXPECT_EQ(names, want);
}

// A kernel whose launch's stack was taken carries its launch site; one without, no such argument.
TEST(ChromeJsonLaunchSiteTest, AKernelCarriesWhereItWasLaunchedFrom) {
  TestTrace t;
  t.Window(v1::WINDOW_KIND_TIMELINE, 0, 100'000, "session");
  t.Api("cudaLaunchKernel", 1000, 2000, 1);
  t.Kernel("_Z4stepv", 5000, 6000, 7, 1);
  t.LaunchStack(1, {{"/usr/lib/libcudart.so.13", "cudaLaunchKernel"}, {"/opt/app/trainer", "_ZN5model5trainEv"}});
  t.Api("cudaLaunchKernel", 7000, 8000, 2);
  t.Kernel("_Z4stepv", 9000, 9500, 7, 2);
  const std::string output = TempPath(".json");
  ExportOptions options;
  options.format = ExportFormat::kChromeJson;
  ASSERT_TRUE(ExportToFile(t.Write(), output, options).ok());
  Struct root;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(output), &root).ok());
  std::vector<std::string> sites;
  for (const Value& e : root.fields().at("traceEvents").list_value().values()) {
    const Struct& event = e.struct_value();
    auto cat = event.fields().find("cat");
    if (cat == event.fields().end() || cat->second.string_value() != "kernel") continue;
    const Struct& args = event.fields().at("args").struct_value();
    auto site = args.fields().find("launched from");
    sites.push_back(site == args.fields().end() ? "" : site->second.string_value());
  }
  EXPECT_EQ(sites, (std::vector<std::string>{"model::train (trainer)", ""}));
}

}  // namespace
}  // namespace cuscope::exporter::testing::chrome_json_test

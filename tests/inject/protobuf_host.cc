// A host program with its own protobuf: Debian's shared libprotobuf, default visibility, as an
// application that uses protobuf has. Run with libcuscope.so preloaded, it reports which loaded
// object serves its protobuf calls, whether libcuscope.so exports any protobuf or abseil symbol,
// and which protobuf/abseil/RE2 libraries the process has mapped.
//
//   protobuf_host /path/to/libcuscope.so
#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "google/protobuf/timestamp.pb.h"

namespace {

// A protobuf function every message calls, and an abseil one libcuscope.so uses inside.
constexpr char kProtobufSymbol[] = "_ZNK6google8protobuf11MessageLite17SerializeAsStringB5cxx11Ev";
constexpr char kAbslSymbol[] = "_ZN4absl7debian36StrCatB5cxx11ERKNS0_8AlphaNumES3_";

int PrintForeignLibrary(dl_phdr_info* info, size_t, void*) {
  const char* name = info->dlpi_name;
  if (name == nullptr) return 0;
  for (const char* lib : {"libprotobuf", "libabsl_", "libre2"}) {
    if (std::strstr(name, lib) != nullptr) std::printf("mapped %s\n", name);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  google::protobuf::Timestamp ts;
  ts.set_seconds(1234567890);
  ts.set_nanos(42);
  google::protobuf::Timestamp back;
  if (!back.ParseFromString(ts.SerializeAsString()) || back.seconds() != 1234567890 || back.nanos() != 42) {
    std::printf("protobuf round trip failed\n");
    return 1;
  }
  std::printf("round trip ok\n");
  Dl_info info{};
  void* serialize = dlsym(RTLD_DEFAULT, kProtobufSymbol);
  if (serialize != nullptr && dladdr(serialize, &info) != 0 && info.dli_fname != nullptr) {
    std::printf("protobuf served by %s\n", info.dli_fname);
  }
  void* cuscope = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD);
  std::printf("cuscope loaded: %s\n", cuscope != nullptr ? "yes" : "no");
  if (cuscope != nullptr) {
    std::printf("cuscope exports protobuf: %s\n", dlsym(cuscope, kProtobufSymbol) != nullptr ? "yes" : "no");
    std::printf("cuscope exports abseil: %s\n", dlsym(cuscope, kAbslSymbol) != nullptr ? "yes" : "no");
    std::printf("cuscope exports its API: %s\n", dlsym(cuscope, "cuscope_start") != nullptr ? "yes" : "no");
    dlclose(cuscope);
  }
  dl_iterate_phdr(PrintForeignLibrary, nullptr);
  return 0;
}

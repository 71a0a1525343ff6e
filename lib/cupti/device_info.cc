#include "lib/cupti/device_info.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <cuda.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cuscope::cupti {
namespace {

struct DriverApi {
  CUresult (*init)(unsigned int) = nullptr;
  CUresult (*driver_get_version)(int*) = nullptr;
  CUresult (*device_get_count)(int*) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*device_get_name)(char*, int, CUdevice) = nullptr;
  CUresult (*device_get_attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*device_total_mem)(size_t*, CUdevice) = nullptr;
  CUresult (*device_get_uuid)(CUuuid*, CUdevice) = nullptr;
};

}  // namespace

bool DriverLoadable() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  return lib != nullptr;
}

bool DriverHasContext() {
  // Only a driver the program has already loaded: loading or initializing it here would be ours.
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) return false;
  auto get_current = reinterpret_cast<CUresult (*)(CUcontext*)>(dlsym(lib, "cuCtxGetCurrent"));
  auto get_count = reinterpret_cast<CUresult (*)(int*)>(dlsym(lib, "cuDeviceGetCount"));
  auto get_device = reinterpret_cast<CUresult (*)(CUdevice*, int)>(dlsym(lib, "cuDeviceGet"));
  auto primary_state =
      reinterpret_cast<CUresult (*)(CUdevice, unsigned int*, int*)>(dlsym(lib, "cuDevicePrimaryCtxGetState"));
  if (get_current != nullptr) {
    CUcontext ctx = nullptr;
    if (get_current(&ctx) == CUDA_SUCCESS && ctx != nullptr) return true;
  }
  int count = 0;
  // CUDA_ERROR_NOT_INITIALIZED until the program calls cuInit: then it has no context either.
  if (get_count == nullptr || get_device == nullptr || primary_state == nullptr || get_count(&count) != CUDA_SUCCESS) {
    return false;
  }
  for (int i = 0; i < count; ++i) {
    CUdevice dev = 0;
    unsigned int flags = 0;
    int active = 0;
    if (get_device(&dev, i) == CUDA_SUCCESS && primary_state(dev, &flags, &active) == CUDA_SUCCESS && active) {
      return true;
    }
  }
  return false;
}

namespace {

// Opens the driver the program already uses (or loads it), without a link-time dependency.
absl::StatusOr<DriverApi> OpenDriver() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (lib == nullptr) return absl::UnavailableError("no NVIDIA driver (libcuda.so.1 not found)");
  DriverApi api;
  api.init = reinterpret_cast<decltype(api.init)>(dlsym(lib, "cuInit"));
  api.driver_get_version = reinterpret_cast<decltype(api.driver_get_version)>(dlsym(lib, "cuDriverGetVersion"));
  api.device_get_count = reinterpret_cast<decltype(api.device_get_count)>(dlsym(lib, "cuDeviceGetCount"));
  api.device_get = reinterpret_cast<decltype(api.device_get)>(dlsym(lib, "cuDeviceGet"));
  api.device_get_name = reinterpret_cast<decltype(api.device_get_name)>(dlsym(lib, "cuDeviceGetName"));
  api.device_get_attribute = reinterpret_cast<decltype(api.device_get_attribute)>(dlsym(lib, "cuDeviceGetAttribute"));
  api.device_total_mem = reinterpret_cast<decltype(api.device_total_mem)>(dlsym(lib, "cuDeviceTotalMem_v2"));
  api.device_get_uuid = reinterpret_cast<decltype(api.device_get_uuid)>(dlsym(lib, "cuDeviceGetUuid_v2"));
  if (!api.init || !api.driver_get_version || !api.device_get_count || !api.device_get || !api.device_get_name ||
      !api.device_get_attribute) {
    return absl::UnavailableError("the NVIDIA driver library lacks entry points cuscope needs (driver too old?)");
  }
  return api;
}

int Attr(const DriverApi& api, CUdevice dev, CUdevice_attribute a) {
  int v = 0;
  if (api.device_get_attribute(&v, a, dev) != CUDA_SUCCESS) return 0;
  return v;
}

v1::Device DescribeDevice(const DriverApi& api, int ordinal) {
  v1::Device d;
  CUdevice dev = 0;
  d.set_id(ordinal);
  if (api.device_get(&dev, ordinal) != CUDA_SUCCESS) return d;
  char name[256] = {0};
  if (api.device_get_name(name, sizeof(name) - 1, dev) == CUDA_SUCCESS) d.set_name(name);
  if (api.device_get_uuid != nullptr) {
    CUuuid uuid;
    if (api.device_get_uuid(&uuid, dev) == CUDA_SUCCESS) {
      std::string s = "GPU-";
      for (int i = 0; i < 16; ++i) {
        absl::StrAppendFormat(&s, "%02x", static_cast<unsigned char>(uuid.bytes[i]));
        if (i == 3 || i == 5 || i == 7 || i == 9) s += "-";
      }
      d.set_uuid(s);
    }
  }
  d.set_compute_capability_major(Attr(api, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR));
  d.set_compute_capability_minor(Attr(api, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
  d.set_sm_count(Attr(api, dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
  d.set_warp_size(Attr(api, dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE));
  d.set_max_threads_per_sm(Attr(api, dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR));
  if (d.warp_size() > 0) d.set_max_warps_per_sm(d.max_threads_per_sm() / d.warp_size());
  d.set_max_blocks_per_sm(Attr(api, dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR));
  d.set_max_threads_per_block(Attr(api, dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
  d.set_registers_per_sm(Attr(api, dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR));
  d.set_max_registers_per_block(Attr(api, dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK));
  d.set_shared_memory_per_sm(Attr(api, dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR));
  d.set_max_shared_memory_per_block(Attr(api, dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN));
  d.set_sm_clock_khz(Attr(api, dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE));
  d.set_memory_clock_khz(Attr(api, dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE));
  d.set_memory_bus_width_bits(Attr(api, dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH));
  // Double data rate: two transfers per memory clock across the bus.
  d.set_peak_dram_bytes_per_second(2ull * d.memory_clock_khz() * 1000ull * d.memory_bus_width_bits() / 8);
  d.set_l2_cache_bytes(Attr(api, dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE));
  d.set_pci_bus_id(Attr(api, dev, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID));
  if (api.device_total_mem != nullptr) {
    size_t bytes = 0;
    if (api.device_total_mem(&bytes, dev) == CUDA_SUCCESS) d.set_global_memory_bytes(bytes);
  }
  d.set_reserved_shared_memory_per_block(Attr(api, dev, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK));
  // Peak FLOP rates at the boost clock, for the roofline. FP32: 128 lanes per SM on compute
  // capability 8.x-10.x, 2 FLOP per FMA; FP16 on the same pipes packs two (HFMA2).
  const uint32_t cc = d.compute_capability_major();
  if (cc >= 8 && d.sm_clock_khz() > 0) {
    const double per_sm_clock = static_cast<double>(d.sm_count()) * d.sm_clock_khz() * 1e3;
    d.set_peak_fp32_flops(2.0 * 128 * per_sm_clock);
    d.set_peak_fp16_flops(2.0 * d.peak_fp32_flops());
    if (cc == 9 && d.compute_capability_minor() == 0) {
      // GH100: 64 FP64 lanes per SM (half the FP32 rate); the four tensor cores of an SM do 2048
      // dense FP16/BF16 FMA per clock, 4096 FLOP (989 TFLOP/s on an H100 SXM at 1.83 GHz).
      d.set_peak_fp64_flops(2.0 * 64 * per_sm_clock);
      d.set_peak_fp16_tensor_flops(4096.0 * per_sm_clock);
    }
  }
  return d;
}

int ReadProfilingAdminOnly() {
  std::ifstream params("/proc/driver/nvidia/params");
  std::string line;
  while (std::getline(params, line)) {
    const std::string key = "RmProfilingAdminOnly: ";
    if (line.rfind(key, 0) == 0) return std::atoi(line.c_str() + key.size());
  }
  return -1;
}

}  // namespace

absl::StatusOr<SystemInfo> QuerySystem() {
  SystemInfo info;
  info.is_root = ::geteuid() == 0;
  info.profiling_admin_only = ReadProfilingAdminOnly();
  // CUPTI is looked up, not linked, so `cuscope info` works where CUPTI is missing.
  void* cupti = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
  if (cupti == nullptr) cupti = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
  if (cupti == nullptr) cupti = dlopen("libcupti.so", RTLD_NOW | RTLD_LOCAL);
  if (auto* get_version = cupti ? reinterpret_cast<int (*)(uint32_t*)>(dlsym(cupti, "cuptiGetVersion")) : nullptr;
      get_version != nullptr) {
    uint32_t v = 0;
    if (get_version(&v) == 0) info.cupti_version = v;
  }
  if (auto* rt = reinterpret_cast<int (*)(int*)>(dlsym(RTLD_DEFAULT, "cudaRuntimeGetVersion")); rt != nullptr) {
    int v = 0;
    if (rt(&v) == 0) info.runtime_version = v;
  }
  auto api = OpenDriver();
  if (!api.ok()) return api.status();
  const CUresult init = api->init(0);
  if (init == CUDA_ERROR_NO_DEVICE) return absl::UnavailableError("no CUDA device (the driver found no GPU)");
  if (init != CUDA_SUCCESS) return absl::UnavailableError(absl::StrCat("the CUDA driver failed to start (error ", init, ")"));
  int version = 0;
  if (api->driver_get_version(&version) == CUDA_SUCCESS) info.driver_version = version;
  int count = 0;
  if (api->device_get_count(&count) != CUDA_SUCCESS || count == 0) return absl::UnavailableError("no CUDA device");
  for (int i = 0; i < count; ++i) info.devices.push_back(DescribeDevice(*api, i));
  return info;
}

std::string DescribeSystem(const absl::StatusOr<SystemInfo>& info) {
  if (!info.ok()) return absl::StrCat("GPU: none usable: ", info.status().message(), "\n");
  std::string out;
  absl::StrAppendFormat(&out, "CUDA driver: %d.%d\n", info->driver_version / 1000, (info->driver_version % 1000) / 10);
  if (info->cupti_version != 0) {
    absl::StrAppendFormat(&out, "CUPTI API version: %u\n", info->cupti_version);
  } else {
    out += "CUPTI: not found (libcupti.so.13); the collector cannot run\n";
  }
  for (const auto& d : info->devices) {
    absl::StrAppendFormat(&out, "GPU %u: %s (compute capability %u.%u, %s)\n", d.id(), d.name(),
                          d.compute_capability_major(), d.compute_capability_minor(), d.uuid());
    absl::StrAppendFormat(&out, "  SMs %u, max warps/SM %u, max blocks/SM %u, registers/SM %u, shared memory/SM %u KiB\n",
                          d.sm_count(), d.max_warps_per_sm(), d.max_blocks_per_sm(), d.registers_per_sm(),
                          d.shared_memory_per_sm() / 1024);
    absl::StrAppendFormat(&out, "  SM clock %.0f MHz, memory clock %.0f MHz, bus %u bits, peak DRAM %.0f GB/s, L2 %.0f MiB, memory %.1f GiB\n",
                          d.sm_clock_khz() / 1e3, d.memory_clock_khz() / 1e3, d.memory_bus_width_bits(),
                          d.peak_dram_bytes_per_second() / 1e9, d.l2_cache_bytes() / 1048576.0,
                          d.global_memory_bytes() / 1073741824.0);
  }
  const bool counters = info->is_root || info->profiling_admin_only == 0;
  absl::StrAppendFormat(&out, "Hardware counters: %s\n",
                        counters ? "readable by this user"
                        : info->profiling_admin_only == 1
                            ? "administrators only (RmProfilingAdminOnly=1); run as root or ask for NVreg_RestrictProfilingToAdminUsers=0"
                            : "unknown (no /proc/driver/nvidia/params)");
  return out;
}

}  // namespace cuscope::cupti

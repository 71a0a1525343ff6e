// A bare CUPTI collector as an injection library: it enables the same activity kinds as cuscope
// and discards every buffer unread. Injected beside a program (CUDA_INJECTION64_PATH), it
// measures what CUPTI itself costs, the floor under any CUPTI-based tool.
#include <cupti.h>

#include <cstdlib>

namespace {

void CUPTIAPI Requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = 4 << 20;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}

void CUPTIAPI Completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t) { std::free(buffer); }

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  if (cuptiActivityRegisterCallbacks(Requested, Completed) != CUPTI_SUCCESS) return 1;
  const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                      CUPTI_ACTIVITY_KIND_MEMSET,            CUPTI_ACTIVITY_KIND_RUNTIME,
                                      CUPTI_ACTIVITY_KIND_DRIVER,            CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
                                      CUPTI_ACTIVITY_KIND_MARKER,            CUPTI_ACTIVITY_KIND_MEMORY2,
                                      CUPTI_ACTIVITY_KIND_OVERHEAD};
  for (auto k : kinds) cuptiActivityEnable(k);
  return 1;
}

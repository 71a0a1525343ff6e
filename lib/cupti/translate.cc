#include "lib/cupti/translate.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace cuscope::cupti {
namespace {

v1::MemoryKind ToMemoryKind(uint32_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return v1::MEMORY_KIND_PAGEABLE;
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return v1::MEMORY_KIND_PINNED;
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: return v1::MEMORY_KIND_DEVICE;
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return v1::MEMORY_KIND_ARRAY;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return v1::MEMORY_KIND_MANAGED;
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: return v1::MEMORY_KIND_DEVICE_STATIC;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return v1::MEMORY_KIND_MANAGED_STATIC;
    default: return v1::MEMORY_KIND_UNKNOWN;
  }
}

v1::CopyKind ToCopyKind(uint32_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return v1::COPY_KIND_HTOD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return v1::COPY_KIND_DTOH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return v1::COPY_KIND_HTOA;
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return v1::COPY_KIND_ATOH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return v1::COPY_KIND_ATOA;
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return v1::COPY_KIND_ATOD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return v1::COPY_KIND_DTOA;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return v1::COPY_KIND_DTOD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return v1::COPY_KIND_HTOH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return v1::COPY_KIND_PTOP;
    default: return v1::COPY_KIND_UNKNOWN;
  }
}

v1::SyncType ToSyncType(uint32_t t) {
  switch (t) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return v1::SYNC_TYPE_EVENT_SYNCHRONIZE;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return v1::SYNC_TYPE_STREAM_WAIT_EVENT;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return v1::SYNC_TYPE_STREAM_SYNCHRONIZE;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return v1::SYNC_TYPE_CONTEXT_SYNCHRONIZE;
    default: return v1::SYNC_TYPE_UNKNOWN;
  }
}

v1::LaunchType ToLaunchType(uint8_t t) {
  switch (t) {
    case CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE: return v1::LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE;
    case CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE: return v1::LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE;
    case CUPTI_ACTIVITY_LAUNCH_TYPE_CBL_COMMANDLIST: return v1::LAUNCH_TYPE_COMMAND_LIST;
    default: return v1::LAUNCH_TYPE_REGULAR;
  }
}

// Process and thread of an object id that names a thread (NVTX markers, overhead records).
void ThreadOf(CUpti_ActivityObjectKind kind, const CUpti_ActivityObjectKindId& id, uint32_t* pid, uint64_t* tid) {
  if (kind == CUPTI_ACTIVITY_OBJECT_PROCESS || kind == CUPTI_ACTIVITY_OBJECT_THREAD) {
    *pid = id.pt.processId;
    *tid = kind == CUPTI_ACTIVITY_OBJECT_THREAD ? id.pt.threadId : 0;
  }
}

// CUPTI_TIMESTAMP_UNKNOWN in start or end: the activity had not finished when its buffer was
// handed over.
bool Incomplete(uint64_t start, uint64_t end) { return start == CUPTI_TIMESTAMP_UNKNOWN || end == CUPTI_TIMESTAMP_UNKNOWN; }

void TranslateKernel(const CUpti_ActivityKernel10& k, core::ActivitySink& sink, const ReplayedLaunches* replayed) {
  // A launch replayed for metrics has no timestamps of its own (CUPTI leaves them unset or equal):
  // it is kept, at the time its profiling began, so its counters have a kernel row to link to.
  const auto replay = replayed != nullptr ? replayed->find(k.correlationId) : ReplayedLaunches::const_iterator();
  const bool was_replayed = replayed != nullptr && replay != replayed->end();
  if (Incomplete(k.start, k.end) && !was_replayed) {
    sink.AddIncomplete(k.kind);
    return;
  }
  core::KernelActivity a;
  a.start = k.start;
  a.end = k.end;
  if (was_replayed && Incomplete(k.start, k.end)) a.start = a.end = replay->second;
  a.correlation_id = k.correlationId;
  a.stream = k.streamId;
  a.graph_id = k.graphId;
  a.graph_node_id = k.graphNodeId;
  // Set only when the session asked for latency timestamps; CUPTI leaves 0 or UNKNOWN otherwise.
  if (k.queued != CUPTI_TIMESTAMP_UNKNOWN && k.queued != 0 && !was_replayed) a.queued = k.queued;
  core::KernelConfig& c = a.config;
  c.name = k.name != nullptr ? std::string_view(k.name) : std::string_view("<unnamed kernel>");
  c.device = k.deviceId;
  c.context = k.contextId;
  c.grid_x = k.gridX;
  c.grid_y = k.gridY;
  c.grid_z = k.gridZ;
  c.block_x = k.blockX;
  c.block_y = k.blockY;
  c.block_z = k.blockZ;
  c.registers_per_thread = k.registersPerThread;
  c.static_shared_memory = k.staticSharedMemory;
  c.dynamic_shared_memory = k.dynamicSharedMemory;
  c.local_memory_per_thread = k.localMemoryPerThread;
  c.launch_type = ToLaunchType(k.launchType);
  c.cluster_x = k.clusterX;
  c.cluster_y = k.clusterY;
  c.cluster_z = k.clusterZ;
  c.shared_memory_executed = k.sharedMemoryExecuted;
  c.device_launched = k.isDeviceLaunched != 0;
  // Kernel replay for metric collection leaves one record of zero duration for the replayed
  // launch; a real kernel always takes time.
  if (k.end == k.start || was_replayed) a.flags |= v1::KERNEL_FLAG_REPLAYED;
  sink.Add(a);
}

void TranslateMemcpy(const CUpti_ActivityMemcpy6& m, core::ActivitySink& sink) {
  if (Incomplete(m.start, m.end)) {
    sink.AddIncomplete(m.kind);
    return;
  }
  core::MemcpyRecord r;
  r.start = m.start;
  r.end = m.end;
  r.copy_kind = ToCopyKind(m.copyKind);
  r.src_kind = ToMemoryKind(m.srcKind);
  r.dst_kind = ToMemoryKind(m.dstKind);
  r.bytes = m.bytes;
  r.device = m.deviceId;
  r.context = m.contextId;
  r.stream = m.streamId;
  r.correlation_id = m.correlationId;
  r.async = (m.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0;
  r.graph_id = m.graphId;
  r.graph_node_id = m.graphNodeId;
  sink.Add(r);
}

void TranslateMemset(const CUpti_ActivityMemset4& m, core::ActivitySink& sink) {
  if (Incomplete(m.start, m.end)) {
    sink.AddIncomplete(m.kind);
    return;
  }
  core::MemsetRecord r;
  r.start = m.start;
  r.end = m.end;
  r.bytes = m.bytes;
  r.value = m.value;
  r.memory_kind = ToMemoryKind(m.memoryKind);
  r.device = m.deviceId;
  r.context = m.contextId;
  r.stream = m.streamId;
  r.correlation_id = m.correlationId;
  r.async = (m.flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) != 0;
  r.graph_id = m.graphId;
  r.graph_node_id = m.graphNodeId;
  sink.Add(r);
}

void TranslateApi(const CUpti_ActivityAPI& api, v1::ApiDomain domain, core::ActivitySink& sink) {
  core::ApiActivity a;
  a.start = api.start;
  a.end = api.end;
  a.domain = domain;
  a.callback_id = api.cbid;
  a.pid = api.processId;
  a.tid = api.threadId;
  a.correlation_id = api.correlationId;
  a.return_code = api.returnValue;
  sink.Add(a);
}

void TranslateSync(const CUpti_ActivitySynchronization2& s, core::ActivitySink& sink) {
  core::SyncRecord r;
  r.start = s.start;
  r.end = s.end;
  r.type = ToSyncType(s.type);
  r.context = s.contextId;
  r.stream = s.streamId;  // CUPTI_SYNCHRONIZATION_INVALID_VALUE is core::kNoStream
  r.event = s.cudaEventId;
  r.correlation_id = s.correlationId;
  sink.Add(r);
}

void TranslateMarker(const CUpti_ActivityMarker2& m, core::ActivitySink& sink) {
  core::NvtxActivity a;
  a.time = m.timestamp;
  if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
    a.kind = v1::NVTX_KIND_MARK;
  } else if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
    a.kind = v1::NVTX_KIND_RANGE_START;
  } else if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
    a.kind = v1::NVTX_KIND_RANGE_END;
  } else {
    a.kind = v1::NVTX_KIND_UNKNOWN;
  }
  a.id = m.id;
  ThreadOf(m.objectKind, m.objectId, &a.pid, &a.tid);
  if (m.name != nullptr) a.name = m.name;
  if (m.domain != nullptr) a.domain = m.domain;
  sink.Add(a);
}

// A marker's payload. An extended one (NVTX's payload extension: NCCL's collectives) arrives as a
// pointer to an nvtxPayloadData_t {schema id, size, data pointer} that CUPTI allocated with malloc,
// its data too: both are copied here (at most kMaxNvtxPayloadBytes of the data) and freed, as
// CUPTI's documentation of CUpti_ActivityMarkerData2 asks of its reader.
void TranslateMarkerData(const CUpti_ActivityMarkerData2& m, core::ActivitySink& sink) {
  core::NvtxPayloadRecord p;
  p.id = m.id;
  switch (m.payloadKind) {
    case CUPTI_METRIC_VALUE_KIND_UINT64:
      p.kind = v1::NVTX_PAYLOAD_KIND_UINT64;
      p.bits = m.payload.metricValueUint64;
      break;
    case CUPTI_METRIC_VALUE_KIND_INT64:
      p.kind = v1::NVTX_PAYLOAD_KIND_INT64;
      p.bits = static_cast<uint64_t>(m.payload.metricValueInt64);
      break;
    case CUPTI_METRIC_VALUE_KIND_DOUBLE:
      p.kind = v1::NVTX_PAYLOAD_KIND_DOUBLE;
      std::memcpy(&p.bits, &m.payload.metricValueDouble, sizeof(p.bits));
      break;
    case CUPTI_METRIC_VALUE_KIND_NVTX_EXTENDED_PAYLOAD: {
      // nvtxPayloadData_t's layout (nvToolsExtPayload.h): uint64 schemaId, size_t size, const void* payload.
      struct PayloadData {
        uint64_t schema_id;
        size_t size;
        const void* data;
      };
      auto* payload = reinterpret_cast<PayloadData*>(static_cast<uintptr_t>(m.payload.metricValueNvtxExtendedPayload));
      if (payload == nullptr) return;
      p.kind = v1::NVTX_PAYLOAD_KIND_EXTENDED;
      p.schema_id = payload->schema_id;
      if (payload->data != nullptr) {
        p.data.assign(static_cast<const char*>(payload->data), std::min(payload->size, core::kMaxNvtxPayloadBytes));
        std::free(const_cast<void*>(payload->data));
      }
      std::free(payload);
      break;
    }
    default:
      return;  // a color or a category alone: nothing the trace keeps
  }
  sink.Add(p);
}

void TranslateMemory(const CUpti_ActivityMemory4& m, core::ActivitySink& sink) {
  core::MemoryOpRecord r;
  r.time = m.timestamp;
  switch (m.memoryOperationType) {
    case CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION: r.type = v1::MEMORY_OPERATION_ALLOCATION; break;
    case CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE: r.type = v1::MEMORY_OPERATION_RELEASE; break;
    default: r.type = v1::MEMORY_OPERATION_UNKNOWN; break;
  }
  r.memory_kind = ToMemoryKind(m.memoryKind);
  r.bytes = m.bytes;
  r.address = m.address;
  r.device = m.deviceId;
  r.context = m.contextId;
  r.stream = m.streamId;
  r.correlation_id = m.correlationId;
  r.async = m.isAsync != 0;
  sink.Add(r);
}

void TranslateOverhead(const CUpti_ActivityOverhead3& o, core::ActivitySink& sink) {
  core::OverheadActivity a;
  a.start = o.start;
  a.end = o.end;
  a.kind = OverheadKindName(o.overheadKind);
  ThreadOf(o.objectKind, o.objectId, &a.pid, &a.tid);
  a.correlation_id = o.correlationId;
  sink.Add(a);
}

}  // namespace

std::string_view OverheadKindName(CUpti_ActivityOverheadKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return "driver compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return "cupti buffer flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return "cupti instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return "cupti resource";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING: return "runtime-triggered module loading";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING: return "lazy function loading";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL: return "command buffer full";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST: return "activity buffer request";
    case CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT: return "uvm activity init";
    default: return "unknown";
  }
}

void TranslateActivity(const CUpti_Activity& record, core::ActivitySink& sink, const ReplayedLaunches* replayed) {
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      TranslateKernel(reinterpret_cast<const CUpti_ActivityKernel10&>(record), sink, replayed);
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      TranslateMemcpy(reinterpret_cast<const CUpti_ActivityMemcpy6&>(record), sink);
      break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      TranslateMemset(reinterpret_cast<const CUpti_ActivityMemset4&>(record), sink);
      break;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
      TranslateApi(reinterpret_cast<const CUpti_ActivityAPI&>(record), v1::API_DOMAIN_RUNTIME, sink);
      break;
    case CUPTI_ACTIVITY_KIND_DRIVER:
      TranslateApi(reinterpret_cast<const CUpti_ActivityAPI&>(record), v1::API_DOMAIN_DRIVER, sink);
      break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      TranslateSync(reinterpret_cast<const CUpti_ActivitySynchronization2&>(record), sink);
      break;
    case CUPTI_ACTIVITY_KIND_MARKER:
      TranslateMarker(reinterpret_cast<const CUpti_ActivityMarker2&>(record), sink);
      break;
    case CUPTI_ACTIVITY_KIND_MARKER_DATA:
      TranslateMarkerData(reinterpret_cast<const CUpti_ActivityMarkerData2&>(record), sink);
      break;
    case CUPTI_ACTIVITY_KIND_MEMORY2:
      TranslateMemory(reinterpret_cast<const CUpti_ActivityMemory4&>(record), sink);
      break;
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      TranslateOverhead(reinterpret_cast<const CUpti_ActivityOverhead3&>(record), sink);
      break;
    default:
      sink.AddUntranslated(static_cast<uint32_t>(record.kind));
      break;
  }
}

}  // namespace cuscope::cupti

#include "lib/cupti/nvtx_capture.h"

#include <cwchar>
#include <string>

#include <generated_nvtx_meta.h>

namespace cuscope::cupti {
namespace {

using Edge = core::NvtxCaptureWatch::Edge;

// A wide message as ASCII; empty when a character is not ASCII (no range name can match it then,
// as names come from the command line or the environment as bytes).
std::string AsciiOf(const wchar_t* message) {
  std::string out;
  if (message == nullptr) return out;
  for (const wchar_t* c = message; *c != 0; ++c) {
    if (*c < 0 || *c > 127) return {};
    out.push_back(static_cast<char>(*c));
  }
  return out;
}

std::string MessageOf(const nvtxEventAttributes_t* a) {
  if (a == nullptr) return {};
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      return a->message.ascii != nullptr ? std::string(a->message.ascii) : std::string();
    case NVTX_MESSAGE_TYPE_UNICODE:
      return AsciiOf(a->message.unicode);
    default:
      return {};
  }
}

template <typename Params>
const Params& ParamsOf(const CUpti_NvtxData& data) {
  return *static_cast<const Params*>(data.functionParams);
}

uint64_t ReturnedId(const CUpti_NvtxData& data) {
  return data.functionReturnValue != nullptr ? *static_cast<const nvtxRangeId_t*>(data.functionReturnValue) : 0;
}

}  // namespace

const std::vector<CUpti_CallbackId>& NvtxCaptureCallbacks() {
  static const auto* ids = new std::vector<CUpti_CallbackId>{
      CUPTI_CBID_NVTX_nvtxRangePushA,        CUPTI_CBID_NVTX_nvtxRangePushW,
      CUPTI_CBID_NVTX_nvtxRangePushEx,       CUPTI_CBID_NVTX_nvtxRangePop,
      CUPTI_CBID_NVTX_nvtxRangeStartA,       CUPTI_CBID_NVTX_nvtxRangeStartW,
      CUPTI_CBID_NVTX_nvtxRangeStartEx,      CUPTI_CBID_NVTX_nvtxRangeEnd,
      CUPTI_CBID_NVTX_nvtxDomainRangePushEx, CUPTI_CBID_NVTX_nvtxDomainRangePop,
      CUPTI_CBID_NVTX_nvtxDomainRangeStartEx, CUPTI_CBID_NVTX_nvtxDomainRangeEnd};
  return *ids;
}

Edge ObserveNvtxCall(core::NvtxCaptureWatch& watch, CUpti_CallbackId cbid, const CUpti_NvtxData& data,
                     uint64_t thread) {
  const bool has_params = data.functionParams != nullptr;
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePushA:
      if (!has_params) return Edge::kNone;
      return watch.Push(thread, ParamsOf<nvtxRangePushA_params>(data).message != nullptr
                                    ? ParamsOf<nvtxRangePushA_params>(data).message
                                    : "");
    case CUPTI_CBID_NVTX_nvtxRangePushW:
      if (!has_params) return Edge::kNone;
      return watch.Push(thread, AsciiOf(ParamsOf<nvtxRangePushW_params>(data).message));
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      if (!has_params) return Edge::kNone;
      return watch.Push(thread, MessageOf(ParamsOf<nvtxRangePushEx_params>(data).eventAttrib));
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
      if (!has_params) return Edge::kNone;
      return watch.Push(thread, MessageOf(ParamsOf<nvtxDomainRangePushEx_params>(data).core.eventAttrib));
    case CUPTI_CBID_NVTX_nvtxRangePop:
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
      return watch.Pop(thread);
    case CUPTI_CBID_NVTX_nvtxRangeStartA:
      if (!has_params) return Edge::kNone;
      return watch.Start(ParamsOf<nvtxRangeStartA_params>(data).message != nullptr
                             ? ParamsOf<nvtxRangeStartA_params>(data).message
                             : "",
                         ReturnedId(data));
    case CUPTI_CBID_NVTX_nvtxRangeStartW:
      if (!has_params) return Edge::kNone;
      return watch.Start(AsciiOf(ParamsOf<nvtxRangeStartW_params>(data).message), ReturnedId(data));
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
      if (!has_params) return Edge::kNone;
      return watch.Start(MessageOf(ParamsOf<nvtxRangeStartEx_params>(data).eventAttrib), ReturnedId(data));
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx:
      if (!has_params) return Edge::kNone;
      return watch.Start(MessageOf(ParamsOf<nvtxDomainRangeStartEx_params>(data).core.eventAttrib), ReturnedId(data));
    case CUPTI_CBID_NVTX_nvtxRangeEnd:
      if (!has_params) return Edge::kNone;
      return watch.End(ParamsOf<nvtxRangeEnd_params>(data).id);
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
      if (!has_params) return Edge::kNone;
      return watch.End(ParamsOf<nvtxDomainRangeEnd_params>(data).core.id);
    default:
      return Edge::kNone;
  }
}

}  // namespace cuscope::cupti

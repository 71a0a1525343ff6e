// The GNU build id of an ELF image: what names one build of an executable or shared object, so that
// a frame's module offset is read against the very file it was taken from, not a rebuilt one.
#ifndef CUSCOPE_LIB_CORE_ELF_BUILD_ID_H_
#define CUSCOPE_LIB_CORE_ELF_BUILD_ID_H_

#include <string>

namespace cuscope::core {

// The build id (the NT_GNU_BUILD_ID note's bytes) of the 64-bit ELF image whose header is mapped at
// `base` in this process (dladdr's dli_fbase), read from its program headers' notes; empty when it
// has none, or when what lies at `base` is not such an image. Reads only the header, the program
// headers and the note segments, all inside the image's first loaded segment or its notes; every
// size is bounded before it is used.
std::string BuildIdOfMappedImage(const void* base);

// As lowercase hex, the way `readelf -n` and `file` print it.
std::string BuildIdHex(const std::string& build_id);

}  // namespace cuscope::core

#endif  // CUSCOPE_LIB_CORE_ELF_BUILD_ID_H_

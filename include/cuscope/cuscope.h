/* cuscope's C API, for programs in other languages.
 *
 * Each function returns 0 on success and a non-zero value otherwise; cuscope_last_error()
 * describes the last failure. Nothing here aborts the program. */
#ifndef CUSCOPE_CUSCOPE_H_
#define CUSCOPE_CUSCOPE_H_

#include <stddef.h>
#include <stdint.h>

#include "cuscope/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Starts recording into `output` (a name pattern as for CUSCOPE_OUTPUT; NULL for the default).
 * Other settings come from the CUSCOPE_* environment variables. A failure is also one
 * "cuscope:" line on stderr unless CUSCOPE_QUIET is set, as cuscope::Session::Start does. */
CUSCOPE_EXPORT int cuscope_start(const char* output);
CUSCOPE_EXPORT int cuscope_flush(void);
/* Stops and writes what is left; 0 when no session was recording, as cuscope::Session::Stop. */
CUSCOPE_EXPORT int cuscope_stop(void);
/* Flight mode (CUSCOPE_MODE=flight): writes the records kept to `path` (NULL or "" for the
 * output name with the lowest free number), with `after_seconds` more after the call; as
 * cuscope::Session::Snapshot. */
CUSCOPE_EXPORT int cuscope_snapshot(const char* path, double after_seconds);
/* The end of a step that took `seconds`: in flight mode above CUSCOPE_FLIGHT_STEP_THRESHOLD, a
 * snapshot; as cuscope::Session::MarkStep. */
CUSCOPE_EXPORT int cuscope_mark_step(double seconds);
/* Ranges and marks (NVTX, so other tools see them too). */
CUSCOPE_EXPORT void cuscope_range_push(const char* name);
CUSCOPE_EXPORT void cuscope_range_pop(void);
CUSCOPE_EXPORT void cuscope_mark(const char* message);
/* Request scopes (cuscope/request.h): every CUDA call this thread makes until the matching end
 * belongs to the request `request_id`; `route` (NULL for none) names its route or model, one of a
 * small fixed set. A batch scope names the requests a batch serves (`count` ids, at most 256 kept).
 * Scopes nest per thread; an end closes the innermost scope of its kind. Each is two clock reads
 * and no allocation; without an active session, nothing. */
CUSCOPE_EXPORT void cuscope_request_begin(uint64_t request_id, const char* route);
CUSCOPE_EXPORT void cuscope_request_end(void);
CUSCOPE_EXPORT void cuscope_batch_begin(const uint64_t* request_ids, size_t count);
CUSCOPE_EXPORT void cuscope_batch_end(void);
/* The last error message; empty when none. */
CUSCOPE_EXPORT const char* cuscope_last_error(void);
/* Writes a description of GPUs, driver, CUPTI and counter permission into `buffer` (always
 * terminated). Returns the length of the full text. */
CUSCOPE_EXPORT size_t cuscope_describe_system(char* buffer, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* CUSCOPE_CUSCOPE_H_ */

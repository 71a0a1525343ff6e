/* The C API from C89: compiled with -std=c89 -pedantic-errors, so the public C header stays valid
 * C for C users. Calls each function the way a C program would, with and without a session, and
 * prints what each returned as key=value lines for tests/inject/inject_test.cc to check. */
#include <stdio.h>
#include <string.h>

#include "cuscope/cuscope.h"

static void Report(const char* call, int rc) {
  const char* error = cuscope_last_error();
  printf("%s=%d error=%s\n", call, rc, error != NULL && error[0] != '\0' ? "set" : "none");
}

int main(void) {
  char small[8];
  size_t full;
  /* Nothing to stop, flush or snapshot yet. */
  Report("stop_without_session", cuscope_stop());
  Report("flush_without_session", cuscope_flush());
  Report("snapshot_without_session", cuscope_snapshot(NULL, 0.0));
  Report("mark_step_without_session", cuscope_mark_step(0.5));
  /* NULL names are allowed. */
  cuscope_range_push(NULL);
  cuscope_mark(NULL);
  cuscope_range_pop();
  full = cuscope_describe_system(small, sizeof(small));
  printf("describe_length_over_buffer=%d terminated=%d\n", full >= sizeof(small) ? 1 : 0,
         memchr(small, '\0', sizeof(small)) != NULL ? 1 : 0);
  printf("describe_null_buffer=%d\n", cuscope_describe_system(NULL, 0) == full ? 1 : 0);
  /* Without a GPU the start fails and says why; with one, it records until the stop. */
  {
    int started = cuscope_start(NULL);
    Report("start", started);
    if (started == 0) Report("stop", cuscope_stop());
  }
  return 0;
}

// A program with cuscope linked in: a session around its work and a named region. Without a GPU
// the session cannot start; the program says why and does its work anyway, unprofiled.
#include <cstdio>

#include "cuscope/region.h"
#include "cuscope/session.h"

int main() {
  cuscope::SessionOptions options;
  options.output = "consumer_%p";
  options.quiet = true;
  cuscope::Session session(options);
  const bool profiling = session.Start();
  if (!profiling) std::printf("not profiled: %s\n", session.error().c_str());
  long sum = 0;
  {
    cuscope::Region work("work");
    for (int i = 1; i <= 100; ++i) sum += i;
  }
  std::printf("sum %ld\n", sum);
  if (profiling && session.Stop()) std::printf("trace %s\n", session.output_path().c_str());
  return 0;
}

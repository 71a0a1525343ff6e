// A module the unwinder test loads and unloads: the dynamic linker then counts one object
// unloaded, which must retire libunwind's caches.
extern "C" __attribute__((visibility("default"))) int UnwinderProbe() { return 7; }

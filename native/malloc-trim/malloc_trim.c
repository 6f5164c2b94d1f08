/*
 * glibc's malloc_trim(0) for Node: gives the whole free pages inside malloc's arenas back to the
 * system (madvise), not only the free space at the top of the main heap that glibc trims by itself.
 * Node has no way to call it. Lode calls it after a memory-reducing collection, once a burst of work
 * is over (libs/platform/src/runtime/idle-memory-trim.ts): the native allocations of a burst (libgit2,
 * OpenSSL, zlib, Buffers under MALLOC_MMAP_THRESHOLD_) leave free holes in the arenas that otherwise
 * stay resident. Elsewhere than glibc it does nothing and says so (`available` is false).
 */
#include <stdlib.h>
#include <node_api.h>
#if defined(__GLIBC__)
#include <malloc.h>
#define LODE_HAS_MALLOC_TRIM 1
#else
#define LODE_HAS_MALLOC_TRIM 0
#endif

/* mallocTrim(): true when glibc gave memory back, false when it had none to give (or no glibc). */
static napi_value MallocTrim(napi_env env, napi_callback_info info) {
  (void)info;
  int released = 0;
#if LODE_HAS_MALLOC_TRIM
  released = malloc_trim(0);
#endif
  napi_value result;
  napi_get_boolean(env, released != 0, &result);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_value available;
  napi_create_function(env, "mallocTrim", NAPI_AUTO_LENGTH, MallocTrim, NULL, &fn);
  napi_set_named_property(env, exports, "mallocTrim", fn);
  napi_get_boolean(env, LODE_HAS_MALLOC_TRIM, &available);
  napi_set_named_property(env, exports, "available", available);
  return exports;
}

/* Calls a given libnccl.so.2 the way a job that reaches NCCL by name does, and prints what
 * it answered, for scripts/compat to run with and without LD_PRELOAD=libncclwatch.so and
 * diff. Needs no GPU: the calls are the ones that answer without one.
 *
 *   nccl_compat_probe LIBNCCL passthrough
 *     dlopen(LIBNCCL, RTLD_LOCAL); prints ncclGetVersion, ncclGetErrorString of every code,
 *     ncclGetUniqueId (result; whether the id is non-zero, as its bytes differ per run),
 *     ncclCommInitRank with nranks 1 (fails without a GPU), ncclGetLastError, and the
 *     hooked calls that reject their arguments (NULL communicator, empty group).
 *   nccl_compat_probe LIBNCCL probe NAME...
 *     dlopen(LIBNCCL, RTLD_GLOBAL); prints, per NAME, whether dlsym(handle, NAME) and
 *     dlsym(RTLD_DEFAULT, NAME) found it ("NAME handle=1 default=1").
 *
 * Output is on stdout only (NCCL's own warnings go to stderr and carry pids); exit 0 when
 * every call could be made, 2 on bad usage or a library that cannot be loaded. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

typedef int (*IntPtrFn)(int*);
typedef const char* (*ErrorStringFn)(int);

enum { kUniqueIdBytes = 128, kLastResultCode = 12 };
/* ncclUniqueId: passed by value to ncclCommInitRank (in memory, per the x86-64 ABI). */
typedef struct {
  char internal[kUniqueIdBytes];
} UniqueId;
typedef int (*UniqueIdFn)(UniqueId*);
typedef int (*InitRankFn)(void**, int, UniqueId, int);
typedef const char* (*LastErrorFn)(void*);
typedef int (*AllReduceFn)(const void*, void*, size_t, int, int, void*, void*);
typedef int (*CommFn)(void*);
typedef int (*VoidFn)(void);

/* dlsym into a function pointer without a cast ISO C forbids. */
static void* Find(void* handle, const char* name) {
  void* symbol = dlsym(handle, name);
  if (symbol == NULL) printf("%s: missing\n", name);
  return symbol;
}

static void Version(void* nccl) {
  IntPtrFn get_version;
  *(void**)&get_version = Find(nccl, "ncclGetVersion");
  int version = 0;
  if (get_version) {
    int rc = get_version(&version);
    printf("ncclGetVersion: rc=%d version=%d\n", rc, version);
  }
}

static void ErrorStrings(void* nccl) {
  ErrorStringFn error_string;
  *(void**)&error_string = Find(nccl, "ncclGetErrorString");
  for (int code = 0; error_string && code <= kLastResultCode; ++code) {
    printf("ncclGetErrorString(%d): %s\n", code, error_string(code));
  }
}

static void UniqueIdAndInit(void* nccl) {
  UniqueIdFn unique_id;
  InitRankFn init_rank;
  *(void**)&unique_id = Find(nccl, "ncclGetUniqueId");
  *(void**)&init_rank = Find(nccl, "ncclCommInitRank");
  UniqueId id;
  memset(&id, 0, sizeof id);
  if (unique_id) {
    int rc = unique_id(&id);
    int nonzero = 0;
    for (int i = 0; i < kUniqueIdBytes; ++i) nonzero |= id.internal[i] != 0;
    printf("ncclGetUniqueId: rc=%d nonzero=%d\n", rc, nonzero);
  }
  if (init_rank) {
    void* comm = NULL;
    int rc = init_rank(&comm, 1, id, 0);
    printf("ncclCommInitRank(nranks=1): rc=%d comm=%s\n", rc, comm ? "set" : "NULL");
  }
}

/* Added in 2.13; absent before, which is printed like any other answer. */
static void LastError(void* nccl) {
  LastErrorFn last_error;
  *(void**)&last_error = Find(nccl, "ncclGetLastError");
  if (last_error) printf("ncclGetLastError: %s\n", last_error(NULL));
}

/* Hooked entry points given arguments NCCL rejects before touching a GPU. */
static void RejectedCalls(void* nccl) {
  AllReduceFn all_reduce;
  CommFn destroy;
  VoidFn group_start, group_end;
  *(void**)&all_reduce = Find(nccl, "ncclAllReduce");
  *(void**)&destroy = Find(nccl, "ncclCommDestroy");
  *(void**)&group_start = Find(nccl, "ncclGroupStart");
  *(void**)&group_end = Find(nccl, "ncclGroupEnd");
  if (all_reduce) printf("ncclAllReduce(comm=NULL): rc=%d\n", all_reduce(NULL, NULL, 1, 0, 0, NULL, NULL));
  if (destroy) printf("ncclCommDestroy(NULL): rc=%d\n", destroy(NULL));
  if (group_start && group_end) {
    int start = group_start();
    int end = group_end();
    printf("ncclGroupStart/End (empty): rc=%d,%d\n", start, end);
  }
}

static int Probe(void* nccl, int count, char** names) {
  for (int i = 0; i < count; ++i) {
    int by_handle = dlsym(nccl, names[i]) != NULL;
    int by_default = dlsym(RTLD_DEFAULT, names[i]) != NULL;
    printf("%s handle=%d default=%d\n", names[i], by_handle, by_default);
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 3 || (strcmp(argv[2], "passthrough") != 0 && strcmp(argv[2], "probe") != 0)) {
    fprintf(stderr, "usage: nccl_compat_probe LIBNCCL passthrough | LIBNCCL probe NAME...\n");
    return 2;
  }
  int passthrough = strcmp(argv[2], "passthrough") == 0;
  void* nccl = dlopen(argv[1], RTLD_NOW | (passthrough ? RTLD_LOCAL : RTLD_GLOBAL));
  if (nccl == NULL) {
    fprintf(stderr, "nccl_compat_probe: cannot load %s: %s\n", argv[1], dlerror());
    return 2;
  }
  if (!passthrough) return Probe(nccl, argc - 3, argv + 3);
  setvbuf(stdout, NULL, _IOLBF, 0);
  Version(nccl);
  ErrorStrings(nccl);
  UniqueIdAndInit(nccl);
  LastError(nccl);
  RejectedCalls(nccl);
  return 0;
}

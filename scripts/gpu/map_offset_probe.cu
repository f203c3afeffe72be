// What the CUDA driver allows and costs when part of a physical allocation is
// mapped somewhere else: cuMemMap with a non-zero offset, one handle mapped at
// two addresses at once (aliases), cuMemUnmap of part of one mapping, and the
// per-call time of map / set access / unmap for 1-20 granules, one mapping or
// many. Decides whether expanse may move the free granules of a partly used
// page (docs/policy-study.md, "pieces").
//
// Build and run on the GPU machine:
//   nvcc -O2 -o /tmp/probe scripts/gpu/map_offset_probe.cu -lcuda && /tmp/probe
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vector>
#include <algorithm>

static double now_us() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

#define CK(x)                                                                       \
  do {                                                                              \
    CUresult r_ = (x);                                                              \
    if (r_ != CUDA_SUCCESS) {                                                       \
      const char *s_ = nullptr;                                                     \
      cuGetErrorName(r_, &s_);                                                      \
      printf("FAIL %s -> %s (line %d)\n", #x, s_ ? s_ : "?", __LINE__);             \
      exit(1);                                                                      \
    }                                                                               \
  } while (0)

static CUmemAllocationProp prop;
static CUmemAccessDesc acc;

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main() {
  CK(cuInit(0));
  CUdevice dev;
  CK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  memset(&prop, 0, sizeof prop);
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  size_t g = 0;
  CK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  acc.location = prop.location;
  acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  printf("granularity %zu\n", g);

  const size_t N = 20;  // granules in the big page
  CUmemGenericAllocationHandle h;
  CK(cuMemCreate(&h, N * g, &prop, 0));
  CUdeviceptr va1, va2;
  CK(cuMemAddressReserve(&va1, 4 * N * g, 0, 0, 0));
  CK(cuMemAddressReserve(&va2, 4 * N * g, 0, 0, 0));

  // 1. The whole page at va1; a pattern written through it.
  CK(cuMemMap(va1, N * g, 0, h, 0));
  CK(cuMemSetAccess(va1, N * g, &acc, 1));
  std::vector<unsigned> host(N * g / 4);
  for (size_t i = 0; i < host.size(); i++) host[i] = (unsigned)(i * 2654435761u);
  CK(cuMemcpyHtoD(va1, host.data(), N * g));

  // 1b. The whole handle at va2 too (offset 0): an alias without an offset.
  {
    CUresult ra = cuMemMap(va2, N * g, 0, h, 0);
    const char *na = nullptr;
    cuGetErrorName(ra, &na);
    printf("whole handle mapped a second time (offset 0): %s\n", na);
    if (ra == CUDA_SUCCESS) {
      CK(cuMemSetAccess(va2, N * g, &acc, 1));
      unsigned w = 0;
      CK(cuMemcpyDtoH(&w, va2 + 7 * g, 4));
      printf("  alias reads the first mapping's data: %s\n", w == host[7 * g / 4] ? "yes" : "NO");
      CK(cuMemUnmap(va2, N * g));
    }
    // A handle mapped nowhere else, from a non-zero offset.
    CUmemGenericAllocationHandle h3;
    CK(cuMemCreate(&h3, 4 * g, &prop, 0));
    ra = cuMemMap(va2, 2 * g, 2 * g, h3, 0);
    cuGetErrorName(ra, &na);
    printf("map of granules 2..4 of an unmapped 4-granule handle: %s\n", na);
    if (ra == CUDA_SUCCESS) CK(cuMemUnmap(va2, 2 * g));
    // Part of a handle from offset 0 (a prefix).
    ra = cuMemMap(va2, 2 * g, 0, h3, 0);
    cuGetErrorName(ra, &na);
    printf("map of granules 0..2 of that handle (a prefix, offset 0): %s\n", na);
    if (ra == CUDA_SUCCESS) CK(cuMemUnmap(va2, 2 * g));
    CK(cuMemRelease(h3));
  }

  // 2. Granules 5..20 of the same handle at va2 (offset 5g) while va1 still maps them.
  CUresult r = cuMemMap(va2, (N - 5) * g, 5 * g, h, 0);
  const char *nm = nullptr;
  cuGetErrorName(r, &nm);
  printf("map with offset 5 granules while the handle is mapped elsewhere: %s\n", nm);
  if (r == CUDA_SUCCESS) {
    CK(cuMemSetAccess(va2, (N - 5) * g, &acc, 1));
    std::vector<unsigned> back((N - 5) * g / 4);
    CK(cuMemcpyDtoH(back.data(), va2, (N - 5) * g));
    bool same = memcmp(back.data(), host.data() + 5 * g / 4, (N - 5) * g) == 0;
    printf("alias reads what the first mapping wrote: %s\n", same ? "yes" : "NO");
    unsigned v = 0xdeadbeef;
    CK(cuMemcpyHtoD(va2, &v, 4));
    unsigned w = 0;
    CK(cuMemcpyDtoH(&w, va1 + 5 * g, 4));
    printf("first mapping reads what the alias wrote: %s\n", w == v ? "yes" : "NO");
  }

  // 3. Part of a mapping unmapped alone.
  r = cuMemUnmap(va1 + 10 * g, 10 * g);
  cuGetErrorName(r, &nm);
  printf("unmap of the upper half of a one-call mapping: %s\n", nm);
  if (r == CUDA_SUCCESS) {
    unsigned w = 0;
    CUresult r2 = cuMemcpyDtoH(&w, va1, 4);
    cuGetErrorName(r2, &nm);
    printf("  lower half still readable: %s (%s)\n", nm, w == host[0] ? "data intact" : "data differs");
  }
  // 4. Unmap the alias; the first mapping keeps its data.
  if (cuMemUnmap(va2, (N - 5) * g) == CUDA_SUCCESS) {
    unsigned w = 0;
    CK(cuMemcpyDtoH(&w, va1 + 6 * g, 4));
    printf("after the alias is unmapped the first mapping still holds its data: %s\n",
           w == host[6 * g / 4] ? "yes" : "NO");
  }
  cuMemUnmap(va1, N * g);  // whatever is left (may fail if step 3 split it)
  cuMemUnmap(va1, 10 * g);

  printf("done (offsets unsupported: no timings)\n");
  return 0;
  // 5. Timings (median of 200): the page stays mapped at va1 as a base.
  CK(cuMemMap(va1, N * g, 0, h, 0));
  CK(cuMemSetAccess(va1, N * g, &acc, 1));
  const int R = 200;
  for (size_t k : {1, 5, 15}) {
    std::vector<double> tm, ta, tu;
    for (int i = 0; i < R; i++) {
      double t0 = now_us();
      CK(cuMemMap(va2, k * g, (N - k) * g, h, 0));
      double t1 = now_us();
      CK(cuMemSetAccess(va2, k * g, &acc, 1));
      double t2 = now_us();
      CK(cuMemUnmap(va2, k * g));
      double t3 = now_us();
      tm.push_back(t1 - t0);
      ta.push_back(t2 - t1);
      tu.push_back(t3 - t2);
    }
    printf("alias of %2zu granules (one call each): map %.1f us, set access %.1f us, unmap %.1f us\n", k,
           median(tm), median(ta), median(tu));
  }
  // The same through a fresh handle of k granules, for comparison.
  for (size_t k : {1, 10, 20}) {
    std::vector<double> tc, tm, ta, tu, tr;
    for (int i = 0; i < R / 4; i++) {
      CUmemGenericAllocationHandle h2;
      double t0 = now_us();
      CK(cuMemCreate(&h2, k * g, &prop, 0));
      double t1 = now_us();
      CK(cuMemMap(va2, k * g, 0, h2, 0));
      double t2 = now_us();
      CK(cuMemSetAccess(va2, k * g, &acc, 1));
      double t3 = now_us();
      CK(cuMemUnmap(va2, k * g));
      double t4 = now_us();
      CK(cuMemRelease(h2));
      double t5 = now_us();
      tc.push_back(t1 - t0);
      tm.push_back(t2 - t1);
      ta.push_back(t3 - t2);
      tu.push_back(t4 - t3);
      tr.push_back(t5 - t4);
    }
    printf("fresh page of %2zu granules: create %.1f, map %.1f, set access %.1f, unmap %.1f, release %.1f us\n", k,
           median(tc), median(tm), median(ta), median(tu), median(tr));
  }
  // m mappings (one granule each, of one handle) side by side: one set
  // access and one unmap over all of them.
  for (size_t m : {2, 5, 15}) {
    std::vector<double> tm, ta, tu;
    for (int i = 0; i < R / 4; i++) {
      double t0 = now_us();
      for (size_t j = 0; j < m; j++) CK(cuMemMap(va2 + j * g, g, j * g, h, 0));
      double t1 = now_us();
      CK(cuMemSetAccess(va2, m * g, &acc, 1));
      double t2 = now_us();
      CUresult ru = cuMemUnmap(va2, m * g);
      double t3 = now_us();
      if (ru != CUDA_SUCCESS) {
        cuGetErrorName(ru, &nm);
        printf("one unmap over %zu mappings: %s\n", m, nm);
        for (size_t j = 0; j < m; j++) CK(cuMemUnmap(va2 + j * g, g));
      }
      tm.push_back(t1 - t0);
      ta.push_back(t2 - t1);
      tu.push_back(t3 - t2);
    }
    printf("%2zu one-granule mappings: %zu maps %.1f us, one set access over all %.1f us, one unmap over all %.1f us\n",
           m, m, median(tm), median(ta), median(tu));
  }
  CK(cuMemUnmap(va1, N * g));
  CK(cuMemRelease(h));
  printf("done\n");
  return 0;
}

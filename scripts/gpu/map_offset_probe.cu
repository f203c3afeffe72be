// What the CUDA driver allows and costs when part of a physical allocation is
// mapped somewhere else: cuMemMap with a non-zero offset, one handle mapped at
// two addresses at once (aliases), and cuMemUnmap of part of one mapping.
// Decides whether expanse could move the free granules of a partly used page
// (docs/policy-study.md, sixth round: it cannot on CUDA 13).
//
// Build and run on the GPU machine:
//   nvcc -O2 -o /tmp/probe scripts/gpu/map_offset_probe.cu -lcuda && /tmp/probe
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

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
  const bool alias_mapped = r == CUDA_SUCCESS;
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
  if (alias_mapped && cuMemUnmap(va2, (N - 5) * g) == CUDA_SUCCESS) {
    unsigned w = 0;
    CK(cuMemcpyDtoH(&w, va1 + 6 * g, 4));
    printf("after the alias is unmapped the first mapping still holds its data: %s\n",
           w == host[6 * g / 4] ? "yes" : "NO");
  }
  cuMemUnmap(va1, N * g);  // whatever is left (may fail if step 3 split it)
  cuMemUnmap(va1, 10 * g);

  CK(cuMemRelease(h));
  printf("done\n");
  return 0;
}

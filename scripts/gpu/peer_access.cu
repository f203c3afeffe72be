// Peer access through expanse on two GPUs: a buffer in an expandable
// segment of GPU 0 read by GPU 1, by a peer copy and by a kernel, for pages
// mapped before and after peer access was enabled.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include "expanse.h"

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("FAIL %s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

__global__ void fill(float *p, size_t n, float base) {
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = base + (float)(i % 1000);
}

__global__ void sum(const float *p, size_t n, unsigned long long *out) {
    unsigned long long local = 0;
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) local += (unsigned long long)p[i];
    atomicAdd(out, local);
}

static unsigned long long expected(size_t n, float base) {
    unsigned long long s = 0;
    for (size_t i = 0; i < n; i++) s += (unsigned long long)(base + (float)(i % 1000));
    return s;
}

static int check_from_gpu1(const float *src, size_t n, float base, const char *what) {
    unsigned long long *out;
    CK(cudaSetDevice(1));
    CK(cudaMalloc(&out, sizeof *out));
    CK(cudaMemset(out, 0, sizeof *out));
    sum<<<264, 256>>>(src, n, out);  // a kernel on GPU 1 reading GPU 0's memory
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    unsigned long long got;
    CK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
    CK(cudaFree(out));
    unsigned long long want = expected(n, base);
    printf("%s: kernel on GPU 1 read sum %llu, expected %llu: %s\n", what, got, want, got == want ? "ok" : "FAIL");
    return got == want ? 0 : 1;
}

int main() {
    int n = 0;
    CK(cudaGetDeviceCount(&n));
    if (n < 2) { printf("FAIL: need 2 GPUs, have %d\n", n); return 1; }
    CK(cudaSetDevice(0)); CK(cudaFree(0));
    CK(cudaSetDevice(1)); CK(cudaFree(0));
    const size_t count = 6u << 20;  // 24 MiB of floats
    float *before = (float *)expanse_alloc(count * 4, 0, NULL);
    if (!before) { printf("FAIL alloc: %s\n", expanse_last_error()); return 1; }
    CK(cudaSetDevice(0));
    fill<<<264, 256>>>(before, count, 1.0f);
    CK(cudaDeviceSynchronize());
    if (expanse_enable_peer_access(1, 0) != 0) { printf("FAIL peer: %s\n", expanse_last_error()); return 1; }
    printf("backend %s, peer access 1 -> 0 enabled\n", expanse_backend());
    int fails = 0;
    fails += check_from_gpu1(before, count, 1.0f, "page mapped before enabling");

    // Pages mapped after peer access was enabled (a new 300 MiB region).
    const size_t big = 75u << 20;  // 300 MiB of floats
    float *after = (float *)expanse_alloc(big * 4, 0, NULL);
    if (!after) { printf("FAIL alloc: %s\n", expanse_last_error()); return 1; }
    CK(cudaSetDevice(0));
    fill<<<264, 256>>>(after, big, 7.0f);
    CK(cudaDeviceSynchronize());
    fails += check_from_gpu1(after, big, 7.0f, "pages mapped after enabling");

    // Peer copy into an expanse buffer on GPU 1.
    float *dst = (float *)expanse_alloc(big * 4, 1, NULL);
    if (!dst) { printf("FAIL alloc on 1: %s\n", expanse_last_error()); return 1; }
    CK(cudaMemcpyPeer(dst, 1, after, 0, big * 4));
    CK(cudaSetDevice(1));
    CK(cudaDeviceSynchronize());
    float host[4];
    CK(cudaMemcpy(host, dst + 123456, sizeof host, cudaMemcpyDeviceToHost));
    int copy_ok = host[0] == 7.0f + 456 && host[3] == 7.0f + 459;
    printf("peer copy GPU 0 -> GPU 1: %s (%.0f %.0f)\n", copy_ok ? "ok" : "FAIL", host[0], host[3]);
    fails += !copy_ok;

    expanse_free(before, 0, 0, NULL);
    expanse_free(after, 0, 0, NULL);
    expanse_free(dst, 0, 1, NULL);
    expanse_empty_cache();
    printf(fails ? "PEER TEST FAILED\n" : "PEER TEST PASSED\n");
    return fails ? 1 : 0;
}

// The allocation fast path of four allocators, measured in ONE process on
// the same sequences (built and driven by scripts/gpu/bench_alloc.py):
//   expanse        libexpanse.so's C ABI (expanse_alloc / expanse_free),
//                  loaded with dlopen, CUDA backend, default config;
//   torch          c10::cuda::CUDACachingAllocator::raw_alloc_with_stream /
//                  raw_delete (native or expandable: the launcher switches
//                  with torch.cuda.memory._set_allocator_settings);
//   async          cudaMallocAsync / cudaFreeAsync on the default mempool,
//                  release threshold UINT64_MAX so it caches;
//   floor          a mutex-guarded exact-size cache over cudaMalloc.
// Sequences (the same as `expanse bench`, crates/expanse-cli/src/bench.rs):
//   pair    malloc then free of one size, median of 5 runs of N pairs;
//   mixed   256 live, each step frees slot next() % 256 and allocates
//           size() into it; LCG s = s * 6364136223846793005 +
//           1442695040888963407, next() = s >> 33, seed 42; size():
//           base = 1 << (9 + next() % 18), base + next() % base;
//   threads the mixed pattern on T threads at once (seed 42 + thread),
//           each on its own stream or all on one: total steps per second.
#include <torch/extension.h>
#include <pybind11/stl.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Allocator {
  virtual ~Allocator() = default;
  virtual void* alloc(size_t size, cudaStream_t s) = 0;
  virtual void free(void* p, cudaStream_t s) = 0;
  virtual void release() = 0;
};

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

struct Expanse : Allocator {
  using AllocFn = void* (*)(size_t, int, void*);
  using FreeFn = void (*)(void*, size_t, int, void*);
  using VoidFn = void (*)();
  using StrFn = const char* (*)();
  AllocFn a;
  FreeFn f;
  VoidFn empty;
  StrFn last_error;
  explicit Expanse(const std::string& lib) {
    void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) throw std::runtime_error(std::string("dlopen: ") + dlerror());
    a = reinterpret_cast<AllocFn>(dlsym(h, "expanse_alloc"));
    f = reinterpret_cast<FreeFn>(dlsym(h, "expanse_free"));
    empty = reinterpret_cast<VoidFn>(dlsym(h, "expanse_empty_cache"));
    last_error = reinterpret_cast<StrFn>(dlsym(h, "expanse_last_error"));
    if (!a || !f || !empty || !last_error) throw std::runtime_error("libexpanse.so lacks a symbol");
  }
  void* alloc(size_t size, cudaStream_t s) override {
    void* p = a(size, 0, s);
    if (!p) {
      const char* e = last_error();
      throw std::runtime_error(std::string("expanse_alloc: ") + (e ? e : "null"));
    }
    return p;
  }
  void free(void* p, cudaStream_t s) override { f(p, 0, 0, s); }
  void release() override { empty(); }
};

struct Torch : Allocator {
  void* alloc(size_t size, cudaStream_t s) override {
    return c10::cuda::CUDACachingAllocator::raw_alloc_with_stream(size, s);
  }
  void free(void* p, cudaStream_t) override { c10::cuda::CUDACachingAllocator::raw_delete(p); }
  void release() override { c10::cuda::CUDACachingAllocator::emptyCache(); }
};

struct Async : Allocator {
  cudaMemPool_t pool;
  Async() {
    check(cudaDeviceGetDefaultMemPool(&pool, 0), "cudaDeviceGetDefaultMemPool");
    uint64_t threshold = UINT64_MAX;
    check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold), "release threshold");
  }
  void* alloc(size_t size, cudaStream_t s) override {
    void* p = nullptr;
    check(cudaMallocAsync(&p, size, s), "cudaMallocAsync");
    return p;
  }
  void free(void* p, cudaStream_t s) override { check(cudaFreeAsync(p, s), "cudaFreeAsync"); }
  void release() override {
    check(cudaDeviceSynchronize(), "sync");
    check(cudaMemPoolTrimTo(pool, 0), "cudaMemPoolTrimTo");
  }
};

struct Floor : Allocator {
  std::mutex m;
  std::unordered_map<void*, size_t> sizes;
  std::unordered_map<size_t, std::vector<void*>> cache;
  void* alloc(size_t size, cudaStream_t) override {
    std::lock_guard<std::mutex> g(m);
    auto& v = cache[size];
    void* p;
    if (!v.empty()) {
      p = v.back();
      v.pop_back();
    } else {
      check(cudaMalloc(&p, size), "cudaMalloc");
    }
    sizes[p] = size;
    return p;
  }
  void free(void* p, cudaStream_t) override {
    std::lock_guard<std::mutex> g(m);
    auto it = sizes.find(p);
    cache[it->second].push_back(p);
    sizes.erase(it);
  }
  void release() override {
    std::lock_guard<std::mutex> g(m);
    for (auto& kv : cache)
      for (void* p : kv.second) cudaFree(p);
    cache.clear();
  }
};

struct Lcg {
  uint64_t s;
  uint64_t next() {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return s >> 33;
  }
  uint64_t size() {
    uint64_t base = 1ULL << (9 + next() % 18);
    return base + next() % base;
  }
};

// Streams shared by every allocator and phase, never destroyed: an allocator
// may keep cached blocks that remember the stream they were used on.
// streams()[0] is the single-thread stream, 1..n the threads' own streams.
const std::vector<cudaStream_t>& streams(size_t n) {
  static std::vector<cudaStream_t> all;
  static std::mutex m;
  std::lock_guard<std::mutex> g(m);
  while (all.size() < n + 1) {
    cudaStream_t s;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    all.push_back(s);
  }
  return all;
}

constexpr int kSlots = 256;
constexpr int kReps = 5;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double ns_since(Clock::time_point t, int64_t n) {
  return std::chrono::duration<double, std::nano>(Clock::now() - t).count() / double(n);
}

struct Mixed {
  Lcg rng;
  std::vector<void*> slots;
  cudaStream_t stream;
  Mixed(Allocator& a, uint64_t seed, cudaStream_t s) : rng{seed}, stream(s) {
    for (int i = 0; i < kSlots; i++) slots.push_back(a.alloc(rng.size(), s));
  }
  void steps(Allocator& a, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
      size_t slot = rng.next() % kSlots;
      a.free(slots[slot], stream);
      slots[slot] = a.alloc(rng.size(), stream);
    }
  }
  void free_all(Allocator& a) {
    for (void* p : slots) a.free(p, stream);
    slots.clear();
  }
};

double hot_pair(Allocator& a, size_t size, int64_t pairs, cudaStream_t s) {
  for (int i = 0; i < 1000; i++) a.free(a.alloc(size, s), s);
  std::vector<double> v;
  for (int r = 0; r < kReps; r++) {
    auto t = Clock::now();
    for (int64_t i = 0; i < pairs; i++) a.free(a.alloc(size, s), s);
    v.push_back(ns_since(t, pairs));
  }
  return median(v);
}

double mixed(Allocator& a, int64_t steps, cudaStream_t s) {
  Mixed m(a, 42, s);
  m.steps(a, steps / 10);
  std::vector<double> v;
  for (int r = 0; r < kReps; r++) {
    auto t = Clock::now();
    m.steps(a, steps);
    v.push_back(ns_since(t, steps));
  }
  m.free_all(a);
  return median(v);
}

// Total steps per second of `n` threads, each on its own stream or all on `shared`.
double threaded(Allocator& a, int n, bool own, int64_t steps) {
  const auto& all = streams(n);
  std::vector<cudaStream_t> mine(n, all[0]);
  if (own)
    for (int i = 0; i < n; i++) mine[i] = all[i + 1];
  std::vector<double> v;
  for (int r = 0; r < kReps; r++) {
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::vector<std::string> errors(n);
    std::vector<std::thread> ts;
    for (int i = 0; i < n; i++) {
      ts.emplace_back([&, i] {
        try {
          check(cudaSetDevice(0), "cudaSetDevice");
          Mixed m(a, 42 + i, mine[i]);
          m.steps(a, steps / 10);
          ready++;
          while (!go.load()) std::this_thread::yield();
          m.steps(a, steps);
          m.free_all(a);
        } catch (const std::exception& e) {
          errors[i] = e.what();
          ready++;
        }
      });
    }
    while (ready.load() < n) std::this_thread::yield();
    auto t = Clock::now();
    go = true;
    for (auto& th : ts) th.join();
    double secs = std::chrono::duration<double>(Clock::now() - t).count();
    for (auto& e : errors)
      if (!e.empty()) throw std::runtime_error("thread: " + e);
    v.push_back(double(n) * double(steps) / secs);
  }
  check(cudaDeviceSynchronize(), "sync");
  return median(v);
}

}  // namespace

// Measure allocator `kind` ("expanse", "torch", "async", "floor"); returns
// {"pair_ns": {size: ns}, "mixed_ns": ns, "threads": {n: [own, one]}}.
py::dict run(const std::string& kind, const std::string& lib, int64_t pairs, int64_t steps, int64_t thread_steps,
             std::vector<int> thread_counts, int pin_cpu) {
  check(cudaSetDevice(0), "cudaSetDevice");
  // The single-thread sequences on one CPU when asked (pin_cpu >= 0): the
  // scheduler then cannot move the measuring thread between cores, one
  // source of the round-to-round swings on the GPU host. The threaded runs
  // get the thread's former CPUs back.
  cpu_set_t former;
  CPU_ZERO(&former);
  const bool pinned = pin_cpu >= 0 && pthread_getaffinity_np(pthread_self(), sizeof former, &former) == 0;
  if (pinned) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(pin_cpu, &one);
    if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) != 0)
      throw std::runtime_error("cannot pin the measuring thread to CPU " + std::to_string(pin_cpu));
  }
  std::unique_ptr<Allocator> a;
  if (kind == "expanse") a = std::make_unique<Expanse>(lib);
  else if (kind == "torch") a = std::make_unique<Torch>();
  else if (kind == "async") a = std::make_unique<Async>();
  else if (kind == "floor") a = std::make_unique<Floor>();
  else throw std::runtime_error("unknown allocator " + kind);
  cudaStream_t s = streams(0)[0];
  py::dict out, pair, threads;
  {
    py::gil_scoped_release nogil;
    for (size_t size : {size_t(512), size_t(64) << 10, size_t(1) << 20, size_t(8) << 20, size_t(64) << 20}) {
      double ns = hot_pair(*a, size, pairs, s);
      py::gil_scoped_acquire g;
      pair[py::str(std::to_string(size))] = ns;
    }
    // The floor caches exact sizes only: random sizes would cudaMalloc
    // every step and never reuse, so it runs the pairs alone.
    double mx = kind == "floor" ? -1.0 : mixed(*a, steps, s);
    {
      py::gil_scoped_acquire g;
      out["mixed_ns"] = mx;
    }
    if (pinned) pthread_setaffinity_np(pthread_self(), sizeof former, &former);
    for (int n : kind == "floor" ? std::vector<int>{} : thread_counts) {
      double own = threaded(*a, n, true, thread_steps);
      double one = threaded(*a, n, false, thread_steps);
      py::gil_scoped_acquire g;
      threads[py::str(std::to_string(n))] = py::make_tuple(own, one);
    }
    check(cudaStreamSynchronize(s), "sync");
    a->release();
  }
  out["pair_ns"] = pair;
  out["threads"] = threads;
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("run", &run, "measure one allocator on the pair, mixed and threaded sequences",
        py::arg("kind"), py::arg("lib"), py::arg("pairs"), py::arg("steps"), py::arg("thread_steps"),
        py::arg("thread_counts"), py::arg("pin_cpu") = -1);
}

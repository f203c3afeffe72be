// expanse as PyTorch's allocator, with the hooks PyTorch's Python
// pluggable-allocator path does not forward: empty_cache, memory fraction,
// record_stream, and CUDA graph private pools (begin/end allocate to pool,
// release pool). Built on first use by python/expanse_compat.py through
// torch.utils.cpp_extension; it dlopens libexpanse.so (the same handle the
// ctypes side uses, so both see one allocator) and calls its C ABI
// (crates/expanse-capi/include/expanse.h).
//
// Rules this file keeps, from how PyTorch's own allocator behaves:
// - While a capture is under way, every call into expanse runs with the
//   thread's stream-capture mode relaxed (PyTorch's cudaMallocMaybeCapturing
//   does the same around cudaMalloc): a private pool's new segment is a
//   cuMemAlloc, which "global" capture mode (torch.cuda.graph's default)
//   forbids and which would invalidate the capture.
// - No hook throws where PyTorch cannot take an exception: releasePool runs
//   from ~CUDAGraph (noexcept), so its failure is a warning.
// - A pool's filter is forgotten when its capture ends, and also when the
//   same pool begins again (a capture that failed between begin and end
//   leaves its filter behind, pointing at a CUDAGraph that is gone).
#include <torch/extension.h>
#include <torch/csrc/cuda/CUDAPluggableAllocator.h>

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <csignal>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct Api {
  void* (*alloc)(size_t, int, void*) = nullptr;
  void (*free)(void*, size_t, int, void*) = nullptr;
  void (*empty_cache)() = nullptr;
  void (*record_stream)(void*, void*) = nullptr;
  void (*set_memory_fraction)(double, int) = nullptr;
  int (*begin_pool)(int, unsigned long long, unsigned long long) = nullptr;
  void* (*alloc_in_pool)(size_t, int, void*, unsigned long long, unsigned long long) = nullptr;
  int (*end_pool)(int, unsigned long long, unsigned long long) = nullptr;
  int (*release_pool)(int, unsigned long long, unsigned long long) = nullptr;
  const char* (*last_error)() = nullptr;
  void (*clear_last_error)() = nullptr;
};

Api api;

// Pools being allocated to, with PyTorch's filter (which streams, or which
// thread, allocate to the pool); evaluated at each allocation.
struct Capture {
  int device;
  c10::cuda::MempoolId_t id;
  std::function<bool(cudaStream_t)> filter;
};
std::mutex captures_mutex;
std::vector<Capture> captures;
// captures.size(), read without the lock on the allocation fast path.
std::atomic<size_t> capture_count{0};

std::string last_error() {
  const char* e = api.last_error ? api.last_error() : nullptr;
  return e ? std::string(e) : std::string("unknown error");
}

// Numbers in messages are formatted here with snprintf, never through
// c10::str's std::ostream: on the H200 machine (PyTorch 2.11 wheel, the
// system's g++) inserting an integer into the stream crashed inside the
// extension's own instantiation of ostream::_M_insert<unsigned long> (the
// native stack of the set_per_process_memory_fraction crash), while
// strings pass. Messages reach c10::str as one std::string.
template <typename... A>
std::string fmt(const char* f, A... a) {
  char buf[512];
  std::snprintf(buf, sizeof buf, f, a...);
  return std::string(buf);
}

// Relaxed stream-capture mode on this thread while it lives (when `on`).
class RelaxedCapture {
 public:
  explicit RelaxedCapture(bool on) : on_(on) {
    if (on_) cudaThreadExchangeStreamCaptureMode(&mode_);
  }
  ~RelaxedCapture() {
    if (on_) cudaThreadExchangeStreamCaptureMode(&mode_);
  }
  RelaxedCapture(const RelaxedCapture&) = delete;
  RelaxedCapture& operator=(const RelaxedCapture&) = delete;

 private:
  bool on_;
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

bool capturing() {
  return capture_count.load(std::memory_order_acquire) > 0;
}

void* ext_alloc(size_t size, int device, cudaStream_t stream) {
  bool in_pool = false;
  c10::cuda::MempoolId_t id{0, 0};
  const bool any = capturing();
  if (any) {
    // Latest first, as PyTorch's get_pool: in nested use_mem_pool blocks
    // the innermost pool gets the allocation.
    std::lock_guard<std::mutex> lock(captures_mutex);
    for (auto c = captures.rbegin(); c != captures.rend(); ++c) {
      if (c->device == device && c->filter(stream)) {
        in_pool = true;
        id = c->id;
        break;
      }
    }
  }
  void* p = nullptr;
  {
    RelaxedCapture relaxed(any);
    p = in_pool ? api.alloc_in_pool(size, device, stream, id.first, id.second) : api.alloc(size, device, stream);
  }
  if (p == nullptr && size > 0) {
    const std::string msg = fmt("expanse: allocating %zu bytes on device %d%s: %s", size, device,
                                in_pool ? " (private pool)" : "", last_error().c_str());
    TORCH_CHECK_WITH(OutOfMemoryError, false, msg);
  }
  return p;
}

void ext_free(void* ptr, size_t size, int device, cudaStream_t stream) {
  RelaxedCapture relaxed(capturing());
  api.free(ptr, size, device, stream);
}

template <typename F>
void load_sym(void* h, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(h, name));
  TORCH_CHECK(out != nullptr, "expanse: symbol ", name, " missing from libexpanse.so (rebuild it)");
}

void check(int rc, const char* what) {
  TORCH_CHECK(rc == 0, "expanse ", what, ": ", last_error());
}

void forget_capture(int device, c10::cuda::MempoolId_t id) {
  std::lock_guard<std::mutex> lock(captures_mutex);
  std::vector<Capture> keep;
  for (auto& c : captures) {
    if (!(c.device == device && c.id == id)) keep.push_back(std::move(c));
  }
  captures.swap(keep);
  capture_count.store(captures.size(), std::memory_order_release);
}

void begin_pool(int device, c10::cuda::MempoolId_t id, std::function<bool(cudaStream_t)> filter) {
  forget_capture(device, id);
  {
    RelaxedCapture relaxed(true);
    check(api.begin_pool(device, id.first, id.second), "begin_allocate_to_pool");
  }
  std::lock_guard<std::mutex> lock(captures_mutex);
  captures.push_back(Capture{device, id, std::move(filter)});
  capture_count.store(captures.size(), std::memory_order_release);
}

void end_pool(int device, c10::cuda::MempoolId_t id) {
  forget_capture(device, id);
  RelaxedCapture relaxed(true);
  check(api.end_pool(device, id.first, id.second), "end_allocate_to_pool");
}

void release_pool(int device, c10::cuda::MempoolId_t id) noexcept {
  // From ~CUDAGraph: an exception here would terminate the process.
  forget_capture(device, id);
  RelaxedCapture relaxed(true);
  if (api.release_pool(device, id.first, id.second) != 0) {
    TORCH_WARN(fmt("expanse release_pool(%d, (%llu, %llu)): %s", device, (unsigned long long)id.first,
                   (unsigned long long)id.second, last_error().c_str()));
  }
}

// EXPANSE_EXT_BACKTRACE=1 (diagnosis, where no debugger is installed): a
// fatal signal prints the native stack to stderr, then the signal's default
// action runs (backtrace_symbols_fd allocates nothing).
void print_native_stack(int sig) {
  void* frames[64];
  int n = backtrace(frames, 64);
  const char msg[] = "expanse_ext: fatal signal, native stack:\n";
  (void)!write(2, msg, sizeof(msg) - 1);
  backtrace_symbols_fd(frames, n, 2);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// Make expanse PyTorch's CUDA allocator, with every hook set.
void install(const std::string& path) {
  const char* bt = std::getenv("EXPANSE_EXT_BACKTRACE");
  if (bt != nullptr && std::string(bt) == "1") {
    std::signal(SIGSEGV, print_native_stack);
    std::signal(SIGABRT, print_native_stack);
  }
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  TORCH_CHECK(h != nullptr, "expanse: cannot load ", path, ": ", dlerror());
  load_sym(h, "expanse_alloc", api.alloc);
  load_sym(h, "expanse_free", api.free);
  load_sym(h, "expanse_empty_cache", api.empty_cache);
  load_sym(h, "expanse_record_stream", api.record_stream);
  load_sym(h, "expanse_set_memory_fraction", api.set_memory_fraction);
  load_sym(h, "expanse_begin_allocate_to_pool", api.begin_pool);
  load_sym(h, "expanse_alloc_in_pool", api.alloc_in_pool);
  load_sym(h, "expanse_end_allocate_to_pool", api.end_pool);
  load_sym(h, "expanse_release_pool", api.release_pool);
  load_sym(h, "expanse_last_error", api.last_error);
  load_sym(h, "expanse_clear_last_error", api.clear_last_error);

  namespace pa = torch::cuda::CUDAPluggableAllocator;
  auto base = pa::createCustomAllocator(ext_alloc, ext_free);
  auto a = std::dynamic_pointer_cast<pa::CUDAPluggableAllocator>(base);
  TORCH_CHECK(a != nullptr, "expanse: createCustomAllocator did not return a CUDAPluggableAllocator");
  a->set_reset_fn([] {
    RelaxedCapture relaxed(capturing());
    api.empty_cache();
  });
  a->set_memory_fraction_fn([](double f, int device) {
    api.clear_last_error();
    api.set_memory_fraction(f, device);
    const char* e = api.last_error();
    TORCH_CHECK(e == nullptr, fmt("expanse set_memory_fraction(%g, %d): %s", f, device, e ? e : ""));
  });
  // EXPANSE_RECORD_STREAM=0 leaves the hook unset: the control of
  // scripts/gpu/record_stream_test.py (everything else the same).
  const char* rs = std::getenv("EXPANSE_RECORD_STREAM");
  if (rs == nullptr || std::string(rs) != "0") {
    a->set_record_stream_fn([](void* ptr, cudaStream_t stream) {
      RelaxedCapture relaxed(capturing());
      api.record_stream(ptr, stream);
    });
  }
  a->set_begin_allocate_to_pool(begin_pool);
  a->set_end_allocate_to_pool_fn(end_pool);
  a->set_release_pool(release_pool);
  pa::changeCurrentAllocator(base);
}

// For the host test (scripts/gpu/ext_host_check.py) and the GPU driver's
// diagnosis: call PyTorch's CUDAPluggableAllocator::malloc directly, which
// needs no CUDA device (the stream is only passed on), so that the
// allocation path, including an out-of-memory exception thrown through
// PyTorch's frames, runs without a GPU.
int64_t probe_malloc(int64_t size, int64_t device) {
  auto base = torch::cuda::CUDAPluggableAllocator::getCurrentAllocator();
  auto a = std::dynamic_pointer_cast<torch::cuda::CUDAPluggableAllocator::CUDAPluggableAllocator>(base);
  TORCH_CHECK(a != nullptr, "expanse: not installed");
  return reinterpret_cast<int64_t>(a->malloc(static_cast<size_t>(size), static_cast<c10::DeviceIndex>(device), nullptr));
}

void probe_free(int64_t ptr) {
  auto base = torch::cuda::CUDAPluggableAllocator::getCurrentAllocator();
  TORCH_CHECK(base != nullptr, "expanse: not installed");
  base->raw_delete(reinterpret_cast<void*>(ptr));
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("install", &install, "Make expanse (libexpanse.so at path) PyTorch's CUDA allocator, with every hook");
  m.def("probe_malloc", &probe_malloc, "CUDAPluggableAllocator::malloc(size, device, null stream), for tests");
  m.def("probe_free", &probe_free, "CUDAPluggableAllocator::raw_delete(ptr), for tests");
}

// expanse as PyTorch's allocator, with the hooks PyTorch's Python
// pluggable-allocator path does not forward: empty_cache, memory fraction,
// record_stream, and CUDA graph private pools (begin/end allocate to pool,
// release pool). Built on first use by python/expanse_compat.py through
// torch.utils.cpp_extension; it dlopens libexpanse.so (the same handle the
// ctypes side uses, so both see one allocator) and calls its C ABI
// (crates/expanse-capi/include/expanse.h).
#include <torch/extension.h>
#include <torch/csrc/cuda/CUDAPluggableAllocator.h>

#include <dlfcn.h>

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

std::string last_error() {
  const char* e = api.last_error ? api.last_error() : nullptr;
  return e ? std::string(e) : std::string("unknown error");
}

void* ext_alloc(size_t size, int device, cudaStream_t stream) {
  bool in_pool = false;
  c10::cuda::MempoolId_t id{0, 0};
  {
    std::lock_guard<std::mutex> lock(captures_mutex);
    for (auto& c : captures) {
      if (c.device == device && c.filter(stream)) {
        in_pool = true;
        id = c.id;
        break;
      }
    }
  }
  void* p = in_pool ? api.alloc_in_pool(size, device, stream, id.first, id.second)
                    : api.alloc(size, device, stream);
  if (p == nullptr && size > 0) {
    TORCH_CHECK_WITH(OutOfMemoryError, false, "expanse: allocating ", size, " bytes on device ", device,
                     in_pool ? " (CUDA graph pool)" : "", ": ", last_error());
  }
  return p;
}

void ext_free(void* ptr, size_t size, int device, cudaStream_t stream) {
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

// Make expanse PyTorch's CUDA allocator, with every hook set.
void install(const std::string& path) {
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

  namespace pa = torch::cuda::CUDAPluggableAllocator;
  auto base = pa::createCustomAllocator(ext_alloc, ext_free);
  auto a = std::dynamic_pointer_cast<pa::CUDAPluggableAllocator>(base);
  TORCH_CHECK(a != nullptr, "expanse: createCustomAllocator did not return a CUDAPluggableAllocator");
  a->set_reset_fn([] { api.empty_cache(); });
  a->set_memory_fraction_fn([](double f, int device) { api.set_memory_fraction(f, device); });
  a->set_record_stream_fn([](void* ptr, cudaStream_t stream) { api.record_stream(ptr, stream); });
  a->set_begin_allocate_to_pool(
      [](int device, c10::cuda::MempoolId_t id, std::function<bool(cudaStream_t)> filter) {
        check(api.begin_pool(device, id.first, id.second), "begin_allocate_to_pool");
        std::lock_guard<std::mutex> lock(captures_mutex);
        captures.push_back(Capture{device, id, std::move(filter)});
      });
  a->set_end_allocate_to_pool_fn([](int device, c10::cuda::MempoolId_t id) {
    {
      std::lock_guard<std::mutex> lock(captures_mutex);
      std::vector<Capture> keep;
      for (auto& c : captures) {
        if (!(c.device == device && c.id == id)) keep.push_back(std::move(c));
      }
      captures.swap(keep);
    }
    check(api.end_pool(device, id.first, id.second), "end_allocate_to_pool");
  });
  a->set_release_pool([](int device, c10::cuda::MempoolId_t id) {
    check(api.release_pool(device, id.first, id.second), "release_pool");
  });
  pa::changeCurrentAllocator(base);
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("install", &install, "Make expanse (libexpanse.so at path) PyTorch's CUDA allocator, with every hook");
}

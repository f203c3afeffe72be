/* expanse: a device caching allocator with expandable segments.
 *
 * C ABI of libexpanse.so. The first two functions have the signatures of
 * PyTorch's torch.cuda.memory.CUDAPluggableAllocator.
 *
 * Backend: EXPANSE_BACKEND = cuda | host (default: cuda when a CUDA device
 * is present, else host). Config: EXPANSE_ALLOC_CONF, PyTorch's syntax.
 *
 * No function panics or aborts: a failure returns NULL / -1 / 0 and leaves
 * a message for expanse_last_error() on the calling thread.
 */
#ifndef EXPANSE_H
#define EXPANSE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Allocate size bytes on device for use on stream (a cudaStream_t; NULL is
 * the default stream). The stream must be live and belong to device while
 * memory allocated for it is in use (on CUDA it is used as a real stream).
 * NULL on failure (out of memory: see last error). */
void *expanse_alloc(size_t size, int device, void *stream);

/* Free ptr on the device that owns it. An unknown pointer or a double free
 * sets the last error and changes nothing. size and stream are accepted for
 * PyTorch's signature; the allocator knows them already. device is checked:
 * another valid device is accepted, one that does not exist (negative, out
 * of range) sets the last error, and ptr is freed all the same. */
void expanse_free(void *ptr, size_t size, int device, void *stream);

/* Return every wholly free cached segment and page to the device. */
void expanse_empty_cache(void);

/* Write the device's statistics as one flat JSON object keyed like
 * PyTorch's memory_stats() ("reserved_bytes.all.current", ...), NUL
 * terminated, into buf. Returns the JSON's length (without the NUL); if
 * that is >= len, nothing is written: call again with a larger buffer.
 * Returns 0 on error (bad device). */
size_t expanse_memory_stats_json(int device, char *buf, size_t len);

/* Reset peak statistics of device. Returns 0, or -1 on error. */
int expanse_reset_peak_stats(int device);

/* Mark ptr as used on stream too: its reuse waits for that stream's work.
 * stream: NULL or a live cudaStream_t of ptr's device. */
void expanse_record_stream(void *ptr, void *stream);

/* Limit device to fraction (0..1) of its memory. */
void expanse_set_memory_fraction(double fraction, int device);

/* PyTorch's XPUPluggableAllocator signatures (queue: a sycl::queue*, used
 * as an opaque stream id). Same allocator as expanse_alloc / expanse_free;
 * pick the Level Zero backend with EXPANSE_BACKEND=ze. Not yet verified on
 * Intel hardware. */
void *expanse_xpu_alloc(size_t size, int device, void *queue);
void expanse_xpu_free(void *ptr, size_t size, int device, void *queue);

/* Let device access peer's memory: driver-level peer access, and access on
 * every page of peer's expandable segments, now and later. 0 on success,
 * -1 on error. */
int expanse_enable_peer_access(int device, int peer);

/* Name of the backend in use ("cuda", "ze", "host"), or NULL if it failed. */
const char *expanse_backend(void);

/* The message of the most recent failure on this thread, or NULL if none
 * since the start or expanse_clear_last_error(). Valid until the next
 * failure or clear on this thread. */
const char *expanse_last_error(void);

/* Forget this thread's last error message. */
void expanse_clear_last_error(void);

/* Private pools (CUDA graphs), as PyTorch's beginAllocateToPool /
 * endAllocateToPool / releasePool; a pool is named by MempoolId_t's two
 * integers. Allocations of a pool come from segments of its own, never
 * handed to anyone else while the pool lives; at the last release its
 * memory returns to the shared cache. Each begin takes one use of the
 * pool (created at its first), each release gives one back. Functions
 * returning int give 0, or -1 and the last error. */

/* Begin allocating to pool (id0, id1); the caller names the pool at each
 * expanse_alloc_in_pool (PyTorch's stream filter decides which). */
int expanse_begin_allocate_to_pool(int device, unsigned long long id0, unsigned long long id1);

/* Begin allocating every expanse_alloc on stream from pool (id0, id1). */
int expanse_begin_allocate_stream_to_pool(int device, unsigned long long id0, unsigned long long id1, void *stream);

/* size bytes from pool (id0, id1), which is being allocated to; NULL on
 * failure. Freed with expanse_free. */
void *expanse_alloc_in_pool(size_t size, int device, void *stream, unsigned long long id0, unsigned long long id1);

/* Stop allocating to pool (id0, id1); its memory stays private. */
int expanse_end_allocate_to_pool(int device, unsigned long long id0, unsigned long long id1);

/* Give back one use of pool (id0, id1). */
int expanse_release_pool(int device, unsigned long long id0, unsigned long long id1);

/* PyTorch's ~MemPool (releasePool, then emptyCache of the pool): give
 * back one use of pool (id0, id1), and at the last return its wholly free
 * segments to the device now; its segments with live blocks join the
 * shared cache as they are freed. */
int expanse_release_pool_and_empty_cache(int device, unsigned long long id0, unsigned long long id1);

/* Uses of pool (id0, id1) not yet given back (PyTorch's getPoolUseCount;
 * 0 for a released pool still holding live blocks), or -1 and the last
 * error for an unknown pool. */
int expanse_pool_use_count(int device, unsigned long long id0, unsigned long long id1);

/* Record the allocation history of every device (enabled != 0) in a ring
 * buffer of at most max_entries entries per device (0: no bound), or stop
 * recording and forget it (enabled == 0). Off by default. 0, or -1 on
 * error. */
int expanse_record_history(int enabled, size_t max_entries);

/* Write a snapshot of every device (segments, blocks and the recorded
 * history) to the file path, as the pickle PyTorch's memory viewer reads
 * (torch.cuda._memory_viz, pytorch.org/memory_viz). 0, or -1 on error. */
int expanse_dump_snapshot(const char *path);

/* An out-of-memory observer: the device, the bytes the request needed, the
 * memory the process may use (memory fraction applied, else the device's
 * total), the device's free memory, and the user pointer given with it. */
typedef void (*expanse_oom_observer)(int device, size_t alloc_size, size_t allowed, size_t device_free,
                                     void *user);

/* Call observer(..., user) on every out-of-memory failure of any device,
 * after the failing allocation released the allocator's lock (the observer
 * may call expanse, e.g. expanse_dump_snapshot) and before it returns NULL.
 * The observer must be callable from any allocating thread for the life of
 * the process and must not throw. Never removed. 0, or -1 on error (a null
 * observer). */
int expanse_attach_oom_observer(expanse_oom_observer observer, void *user);

#ifdef __cplusplus
}
#endif

#endif /* EXPANSE_H */

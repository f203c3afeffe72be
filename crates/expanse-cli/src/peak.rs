//! `replay --peak-snapshot`: the allocator's state when its reserved bytes
//! peaked, and where the memory that was not live sat then (issue 8 asks
//! a policy to read "where free space sits at each high-water mark"; this
//! shows it for the one that counts).

use expanse_core::snapshot::BlockState;
use expanse_core::{PoolKind, Snapshot};

/// Where the reserved bytes of a snapshot sat.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// Segments (classic segments and mapped runs of expandable ones).
    pub segments: usize,
    /// Bytes in them.
    pub reserved: u64,
    /// Bytes of blocks handed to users.
    pub allocated: u64,
    /// Bytes freed by users, waiting for other streams' work.
    pub pending_free: u64,
    /// Cached bytes: free blocks of reserved memory.
    pub free: u64,
    /// How many free blocks, and the largest.
    pub free_blocks: usize,
    pub largest_free_block: u64,
    /// Cached bytes of the small pool (requests of at most 1 MiB), which
    /// large requests never use.
    pub free_small_pool: u64,
}

impl Layout {
    /// The layout of `snapshot`'s segments.
    pub fn of(snapshot: &Snapshot) -> Layout {
        let mut l = Layout { segments: snapshot.segments.len(), ..Layout::default() };
        for seg in &snapshot.segments {
            l.reserved += seg.total_size;
            for b in &seg.blocks {
                match b.state {
                    BlockState::ActiveAllocated => l.allocated += b.size,
                    BlockState::ActivePendingFree => l.pending_free += b.size,
                    BlockState::Inactive => {
                        l.free += b.size;
                        l.free_blocks += 1;
                        l.largest_free_block = l.largest_free_block.max(b.size);
                        if seg.pool == PoolKind::Small {
                            l.free_small_pool += b.size;
                        }
                    }
                }
            }
        }
        l
    }

    /// The layout as a JSON object, with the event it was taken after.
    pub fn to_json(self, file: &str, event: usize, line: usize) -> serde_json::Value {
        self.json_with(serde_json::json!({ "file": file, "event": event, "line": line }))
    }

    /// The layout just before the event that raised reserved memory to
    /// its peak (`event` events replayed), with that event's request.
    pub fn to_json_before(self, event: usize, request: Option<u64>) -> serde_json::Value {
        self.json_with(serde_json::json!({ "event": event, "request_bytes": request }))
    }

    /// `head`'s fields followed by the layout's.
    fn json_with(self, mut head: serde_json::Value) -> serde_json::Value {
        let figures = serde_json::json!({
            "segments": self.segments,
            "reserved_bytes": self.reserved,
            "allocated_bytes": self.allocated,
            "pending_free_bytes": self.pending_free,
            "free_bytes": self.free,
            "free_blocks": self.free_blocks,
            "largest_free_block_bytes": self.largest_free_block,
            "free_small_pool_bytes": self.free_small_pool,
        });
        if let (Some(h), serde_json::Value::Object(f)) = (head.as_object_mut(), figures) {
            h.extend(f);
        }
        head
    }

    /// What the request of `bytes` that raised reserved memory to its
    /// peak found, this being the layout just before it: whether the free
    /// memory would have held it in one block, in all its blocks together,
    /// or not at all. (A request no larger than the largest free block can
    /// still raise the peak: that block may be of the other pool or of a
    /// stream it may not be lent from yet.)
    pub fn describe_request(self, bytes: u64) -> String {
        if self.free == 0 {
            return format!("; the peak came with a request of {} and nothing free before it", mib(bytes));
        }
        let fit = if bytes <= self.largest_free_block {
            "no larger than the largest free block"
        } else if bytes <= self.free {
            "more than any one free block but not more than all of them"
        } else {
            "more than all of them"
        };
        format!(
            "; the peak came with a request of {} when {} was free in {} blocks, the largest {}: {fit}",
            mib(bytes),
            mib(self.free),
            self.free_blocks,
            mib(self.largest_free_block)
        )
    }

    /// One line for people.
    pub fn describe(self) -> String {
        format!(
            "reserved {} in {} segments: allocated {}, free {} in {} blocks (largest {}, small pool {}), waiting for streams {}",
            mib(self.reserved),
            self.segments,
            mib(self.allocated),
            mib(self.free),
            self.free_blocks,
            mib(self.largest_free_block),
            mib(self.free_small_pool),
            mib(self.pending_free)
        )
    }
}

/// Bytes as MiB with one decimal.
fn mib(b: u64) -> String {
    format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
}

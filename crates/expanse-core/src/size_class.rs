//! Size classes: rounding of requests, pool choice and segment sizes, with
//! PyTorch's constants.

use crate::config::{Config, MIB};

/// Every block size is a multiple of this.
pub const MIN_BLOCK_SIZE: u64 = 512;
/// Requests up to this size go to the small pool.
pub const SMALL_SIZE: u64 = MIB;
/// Segment size of the small pool.
pub const SMALL_BUFFER: u64 = 2 * MIB;
/// Segment size of the large pool for requests below [`MIN_LARGE_ALLOC`].
pub const LARGE_BUFFER: u64 = 20 * MIB;
/// Requests from this size get a segment of their own size, rounded.
pub const MIN_LARGE_ALLOC: u64 = 10 * MIB;
/// Rounding of large segments.
pub const ROUND_LARGE: u64 = 2 * MIB;
/// Requests above this are refused outright (1 EiB).
pub const MAX_REQUEST: u64 = 1 << 60;

/// Round up to the next of `divisions` equal steps between the powers of
/// two around `size` (PyTorch's `roundup_power2_next_division`).
/// 1200 with 4 divisions gives 1280.
pub fn roundup_power2_next_division(size: u64, divisions: u64) -> u64 {
    if size <= 4 || size.is_power_of_two() || divisions < 2 {
        return size;
    }
    let floor = 1u64 << (63 - size.leading_zeros());
    let step = floor >> (63 - divisions.leading_zeros());
    if step == 0 {
        return floor << 1;
    }
    let down = size & !(step - 1);
    if down == size {
        size
    } else {
        down + step
    }
}

/// Round a request the way PyTorch's `round_size` does: at least 512 B,
/// power-of-two divisions above `512 * divisions` where configured,
/// otherwise a multiple of 512.
pub fn round_size(size: u64, config: &Config) -> u64 {
    if size < MIN_BLOCK_SIZE {
        return MIN_BLOCK_SIZE;
    }
    let divisions = config.divisions_for(size);
    // Saturating: any power of two is accepted (as PyTorch does), and
    // 512 * 2^63 must not wrap to a small bound.
    if divisions > 1 && size > MIN_BLOCK_SIZE.saturating_mul(divisions) {
        roundup_power2_next_division(size, divisions)
    } else {
        size.div_ceil(MIN_BLOCK_SIZE) * MIN_BLOCK_SIZE
    }
}

/// Size of a new classic segment for a rounded request.
pub fn allocation_size(size: u64) -> u64 {
    if size <= SMALL_SIZE {
        SMALL_BUFFER
    } else if size < MIN_LARGE_ALLOC {
        LARGE_BUFFER
    } else {
        size.div_ceil(ROUND_LARGE) * ROUND_LARGE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power2_divisions() {
        assert_eq!(roundup_power2_next_division(1200, 4), 1280);
        assert_eq!(roundup_power2_next_division(1024, 4), 1024);
        assert_eq!(roundup_power2_next_division(1280, 4), 1280);
        assert_eq!(roundup_power2_next_division(1281, 4), 1536);
        assert_eq!(roundup_power2_next_division(21 * MIB * 4, 4), 96 * MIB);
        assert_eq!(roundup_power2_next_division(5000, 1), 5000);
    }

    #[test]
    fn rounding_follows_pytorch() {
        let c = Config::default();
        assert_eq!(round_size(1, &c), 512);
        assert_eq!(round_size(513, &c), 1024);
        let c4 = Config::parse("roundup_power2_divisions:4").unwrap();
        // Below 512 * divisions PyTorch keeps plain 512-byte rounding.
        assert_eq!(round_size(1200, &c4), 1536);
        assert_eq!(round_size(3000, &c4), 3072);
        assert_eq!(round_size(84 * MIB + 1, &c4), 96 * MIB);
    }

    #[test]
    fn segment_sizes() {
        assert_eq!(allocation_size(512), SMALL_BUFFER);
        assert_eq!(allocation_size(MIB), SMALL_BUFFER);
        assert_eq!(allocation_size(MIB + 512), LARGE_BUFFER);
        assert_eq!(allocation_size(10 * MIB), 10 * MIB);
        assert_eq!(allocation_size(11 * MIB - 512), 12 * MIB);
    }
}

//! The input buffering every block-oriented hash written here shares: whole blocks go
//! straight from the caller's slice to the compression function, a partial block waits
//! in a fixed buffer, and the total length is counted for the final padding.

/// Buffers input into `N`-byte blocks.
#[derive(Clone)]
pub(super) struct BlockBuffer<const N: usize> {
    block: [u8; N],
    filled: usize,
    /// Bytes fed so far.
    total: u64,
}

impl<const N: usize> BlockBuffer<N> {
    pub(super) const fn new() -> Self {
        BlockBuffer { block: [0; N], filled: 0, total: 0 }
    }

    /// Feeds `data`, handing every completed block (in order, several at a time where
    /// they lie whole in `data`) to `compress`.
    pub(super) fn update(&mut self, mut data: &[u8], mut compress: impl FnMut(&[[u8; N]])) {
        self.total = self.total.wrapping_add(data.len() as u64);
        if self.filled > 0 {
            let take = (N - self.filled).min(data.len());
            self.block[self.filled..self.filled + take].copy_from_slice(&data[..take]);
            self.filled += take;
            data = &data[take..];
            if self.filled < N {
                return;
            }
            compress(std::slice::from_ref(&self.block));
            self.filled = 0;
        }
        let (blocks, rest) = data.as_chunks::<N>();
        if !blocks.is_empty() {
            compress(blocks);
        }
        self.block[..rest.len()].copy_from_slice(rest);
        self.filled = rest.len();
    }

    /// The bytes of the partial block not yet compressed (fewer than `N`).
    pub(super) fn pending(&self) -> &[u8] {
        &self.block[..self.filled]
    }

    /// The number of bytes fed so far.
    pub(super) fn total(&self) -> u64 {
        self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_come_out_in_order_whatever_the_split() {
        let data: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        for split in [1, 3, 7, 8, 9, 64, 999, 1000] {
            let mut buf = BlockBuffer::<8>::new();
            let mut seen = Vec::new();
            for piece in data.chunks(split) {
                buf.update(piece, |blocks| seen.extend(blocks.iter().flatten()));
            }
            seen.extend_from_slice(buf.pending());
            assert_eq!(seen, data, "split {split}");
            assert_eq!(buf.total(), 1000);
            assert_eq!(buf.pending().len(), 1000 % 8);
        }
    }
}

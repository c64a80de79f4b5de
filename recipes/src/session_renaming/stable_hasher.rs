//! The hash the symmetry reduction tells states apart by: fast, well mixed (two states it
//! confuses are one to the checker), and fixed, so deterministic.

use std::hash::Hasher;

/// `Hasher` methods that write a whole number as one word, each `name(type as unsigned)`.
macro_rules! whole_numbers {
    ($($name:ident($type:ty as $unsigned:ty)),*) => {
        $(
            #[inline]
            fn $name(&mut self, i: $type) {
                self.write_u64(i as $unsigned as u64);
            }
        )*
    };
}

/// A word-at-a-time hash by folded multiplication (each word is mixed into the state by a
/// full 64-by-64-bit product whose halves are xored), with a fixed seed: the same value hashes
/// the same in every run and on every thread.
#[derive(Clone, Copy, Debug)]
pub struct StableHasher(u64);

impl Default for StableHasher {
    fn default() -> Self {
        // Not zero, which a word equal to it would keep.
        StableHasher(0x243f_6a88_85a3_08d3)
    }
}

/// The high and low halves of the full product, xored.
#[inline]
fn folded_multiply(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

impl StableHasher {
    /// Writes a collection whose order a renaming may change (the members of a set, the entries
    /// of a map): its length and the sum of its members' own hashes, the same in any order.
    pub fn write_unordered<T>(
        &mut self,
        members: impl ExactSizeIterator<Item = T>,
        hash: impl Fn(T, &mut StableHasher),
    ) {
        self.write_usize(members.len());
        let sum = members.fold(0u64, |sum, member| {
            let mut hasher = StableHasher::default();
            hash(member, &mut hasher);
            sum.wrapping_add(hasher.finish())
        });
        self.write_u64(sum);
    }
}

impl Hasher for StableHasher {
    /// Eight bytes at a time, the last word padded with zeros.
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            self.write_u64(u64::from_le_bytes(word.try_into().expect("eight bytes")));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut word = [0; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u64(&mut self, word: u64) {
        self.0 = folded_multiply(self.0 ^ word, 0x5851_f42d_4c95_7f2d);
    }

    // A whole number is one word: its bytes, padded with zeros, as `write` takes them (so the
    // hash is the same), without the loop. A signed number is first taken as the unsigned one of
    // its width, whose bytes are the same.
    whole_numbers!(
        write_u8(u8 as u8),
        write_u16(u16 as u16),
        write_u32(u32 as u32),
        write_usize(usize as u64),
        write_i8(i8 as u8),
        write_i16(i16 as u16),
        write_i32(i32 as u32),
        write_i64(i64 as u64),
        write_isize(isize as u64)
    );

    /// Mixed once more, so that the hashes a set sums do not add up by a pattern of their words.
    fn finish(&self) -> u64 {
        folded_multiply(self.0, 0x9e37_79b9_7f4a_7c15).rotate_left(23)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hashed(write: &dyn Fn(&mut StableHasher)) -> u64 {
        let mut hasher = StableHasher(7);
        write(&mut hasher);
        hasher.finish()
    }

    #[test]
    fn a_whole_number_hashes_as_its_bytes() {
        type Write<'a> = &'a dyn Fn(&mut StableHasher);
        let cases: [(Write, Vec<u8>); 9] = [
            (&|h| h.write_u8(0xab), vec![0xab]),
            (&|h| h.write_i8(-2), (-2i8).to_le_bytes().to_vec()),
            (&|h| h.write_u16(0xabcd), 0xabcd_u16.to_le_bytes().to_vec()),
            (&|h| h.write_i16(-3), (-3i16).to_le_bytes().to_vec()),
            (
                &|h| h.write_u32(7 << 20),
                (7u32 << 20).to_le_bytes().to_vec(),
            ),
            (&|h| h.write_i32(-5), (-5i32).to_le_bytes().to_vec()),
            (&|h| h.write_i64(-9), (-9i64).to_le_bytes().to_vec()),
            (&|h| h.write_usize(99), 99usize.to_le_bytes().to_vec()),
            (&|h| h.write_isize(-1), (-1isize).to_le_bytes().to_vec()),
        ];
        for (number, bytes) in cases {
            assert_eq!(hashed(number), hashed(&|h| h.write(&bytes)), "{bytes:?}");
        }
        let words = |h: &mut StableHasher| {
            h.write_u64(u64::from_le_bytes(*b"01234567"));
            h.write_u64(u64::from_le_bytes(*b"89\0\0\0\0\0\0"));
        };
        assert_eq!(hashed(&|h| h.write(b"0123456789")), hashed(&words));
    }

    #[test]
    fn an_unordered_collection_hashes_the_same_in_any_order() {
        let write = |members: &[u64]| {
            hashed(&|h| h.write_unordered(members.iter(), |m, h| h.write_u64(*m)))
        };
        assert_eq!(write(&[1, 2, 3]), write(&[3, 1, 2]));
        assert_ne!(write(&[1, 2, 3]), write(&[1, 2, 4]));
        assert_ne!(write(&[1, 2]), write(&[1, 2, 0]));
        // Members' hashes are mixed before they are summed: sums of words do not collide.
        assert_ne!(write(&[1, 4]), write(&[2, 3]));
    }
}

//! The hash the symmetry reduction picks representatives by: fast, and fixed (so deterministic).

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

/// A word-at-a-time multiplicative hash with a fixed seed: the same value hashes the same in
/// every run and on every thread.
#[derive(Clone, Copy, Debug, Default)]
pub struct FxHasher(u64);

impl FxHasher {
    /// The hash of one value.
    pub fn one(value: &(impl std::hash::Hash + ?Sized)) -> u64 {
        let mut hasher = FxHasher::default();
        value.hash(&mut hasher);
        hasher.finish()
    }

    /// Starts writing a text given in pieces: the same words whatever the pieces.
    pub fn text(&mut self) -> TextWriter<'_> {
        TextWriter {
            hasher: self,
            word: [0; 8],
            filled: 0,
            length: 0,
        }
    }

    /// Writes a collection whose order a renaming may change (the members of a set, the entries
    /// of a map): its length and the sum of its members' own hashes, the same in any order.
    pub fn write_unordered<T>(
        &mut self,
        members: impl ExactSizeIterator<Item = T>,
        hash: impl Fn(T, &mut FxHasher),
    ) {
        self.write_usize(members.len());
        let sum = members.fold(0u64, |sum, member| {
            let mut hasher = FxHasher::default();
            hash(member, &mut hasher);
            sum.wrapping_add(hasher.finish())
        });
        self.write_u64(sum);
    }
}

/// A text being written in pieces (see [`FxHasher::text`]).
pub struct TextWriter<'a> {
    hasher: &'a mut FxHasher,
    /// Bytes not yet written, waiting for a whole word.
    word: [u8; 8],
    filled: usize,
    length: usize,
}

impl TextWriter<'_> {
    /// The next piece of the text.
    pub fn push(&mut self, piece: &str) {
        let mut bytes = piece.as_bytes();
        self.length += bytes.len();
        if self.filled > 0 {
            let taken = bytes.len().min(8 - self.filled);
            self.word[self.filled..self.filled + taken].copy_from_slice(&bytes[..taken]);
            self.filled += taken;
            bytes = &bytes[taken..];
            if self.filled < 8 {
                return;
            }
            self.hasher.write_u64(u64::from_le_bytes(self.word));
        }
        let mut words = bytes.chunks_exact(8);
        for whole in &mut words {
            self.hasher
                .write_u64(u64::from_le_bytes(whole.try_into().expect("eight bytes")));
        }
        let rest = words.remainder();
        self.word[..rest.len()].copy_from_slice(rest);
        self.filled = rest.len();
    }

    /// Ends the text: its last bytes, padded with zeros, and its length (so that `"ab"` and
    /// `"ab\0"`, or `"ab", "c"` and `"a", "bc"` as two texts, differ).
    pub fn finish(self) {
        if self.filled > 0 {
            let mut word = self.word;
            word[self.filled..].fill(0);
            self.hasher.write_u64(u64::from_le_bytes(word));
        }
        self.hasher.write_usize(self.length);
    }
}

impl Hasher for FxHasher {
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
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
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

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hashed(write: &dyn Fn(&mut FxHasher)) -> u64 {
        let mut hasher = FxHasher(7);
        write(&mut hasher);
        hasher.finish()
    }

    #[test]
    fn a_whole_number_hashes_as_its_bytes() {
        type Write<'a> = &'a dyn Fn(&mut FxHasher);
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
        let words = |h: &mut FxHasher| {
            h.write_u64(u64::from_le_bytes(*b"01234567"));
            h.write_u64(u64::from_le_bytes(*b"89\0\0\0\0\0\0"));
        };
        assert_eq!(hashed(&|h| h.write(b"0123456789")), hashed(&words));
    }

    #[test]
    fn a_text_hashes_the_same_however_it_is_cut() {
        let text = "/locks/0000000000000001-lock-0000000002";
        let write = |pieces: &[&str]| {
            hashed(&|h| {
                let mut writer = h.text();
                pieces.iter().for_each(|piece| writer.push(piece));
                writer.finish();
            })
        };
        let whole = write(&[text]);
        for first in 0..=text.len() {
            for second in first..=text.len() {
                let pieces = [&text[..first], &text[first..second], &text[second..]];
                assert_eq!(write(&pieces), whole, "{pieces:?}");
            }
        }
        assert_ne!(write(&["ab"]), write(&["ab\0"]));
        assert_eq!(write(&[""]), write(&[]));
        let two = |first: &str, second: &str| {
            hashed(&|h| {
                for text in [first, second] {
                    let mut writer = h.text();
                    writer.push(text);
                    writer.finish();
                }
            })
        };
        assert_ne!(two("ab", "c"), two("a", "bc"));
    }

    #[test]
    fn an_unordered_collection_hashes_the_same_in_any_order() {
        let write = |members: &[u64]| {
            hashed(&|h| h.write_unordered(members.iter(), |m, h| h.write_u64(*m)))
        };
        assert_eq!(write(&[1, 2, 3]), write(&[3, 1, 2]));
        assert_ne!(write(&[1, 2, 3]), write(&[1, 2, 4]));
        assert_ne!(write(&[1, 2]), write(&[1, 2, 0]));
    }
}

//! 20-byte chunk addresses, the two hash profiles that produce them, and Dolt's base32 text form.

use std::fmt;

use crate::error::AddressParseError;

mod blake3x8;
mod sha512x4;

/// Width of a chunk address in bytes (Dolt's `hash.ByteLen`).
pub const ADDRESS_LEN: usize = 20;

/// The content address of a chunk: 20 bytes, ordered bytewise.
///
/// The all-zero address is Dolt's "empty hash": it names no chunk and means "absent"
/// (for example an empty out-of-band value).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Address(pub [u8; ADDRESS_LEN]);

/// Dolt's base32 alphabet (RFC 4648 "base32hex", lower case, no padding).
const BASE32_ALPHABET: &[u8; 32] = b"0123456789abcdefghijklmnopqrstuv";

impl Address {
    /// The all-zero address ("no chunk").
    pub const ZERO: Address = Address([0; ADDRESS_LEN]);

    /// Reads an address from exactly 20 bytes; `None` for any other length.
    #[inline]
    pub fn from_slice(bytes: &[u8]) -> Option<Address> {
        let arr: [u8; ADDRESS_LEN] = bytes.try_into().ok()?;
        Some(Address(arr))
    }

    /// The raw bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8; ADDRESS_LEN] {
        &self.0
    }

    /// True for the all-zero address.
    #[inline]
    pub fn is_zero(&self) -> bool {
        self.0 == [0; ADDRESS_LEN]
    }

    /// Dolt's 32-character base32 spelling (what the `dolt` CLI prints).
    pub fn to_base32(&self) -> String {
        let mut out = String::with_capacity(32);
        // 160 bits = 32 groups of 5 bits, most significant first.
        let mut acc: u64 = 0;
        let mut bits = 0u32;
        for &b in &self.0 {
            acc = (acc << 8) | u64::from(b);
            bits += 8;
            while bits >= 5 {
                bits -= 5;
                let idx = ((acc >> bits) & 0x1f) as usize;
                out.push(char::from(BASE32_ALPHABET[idx]));
            }
        }
        out
    }

    /// Parses Dolt's base32 spelling (`^[0-9a-v]{32}$`).
    pub fn from_base32(text: &str) -> Result<Address, AddressParseError> {
        let bytes = text.as_bytes();
        if bytes.len() != 32 {
            return Err(AddressParseError::Length { len: bytes.len() });
        }
        let mut out = [0u8; ADDRESS_LEN];
        let mut acc: u64 = 0;
        let mut bits = 0u32;
        let mut pos = 0usize;
        for (i, &c) in bytes.iter().enumerate() {
            let v = match c {
                b'0'..=b'9' => c - b'0',
                b'a'..=b'v' => c - b'a' + 10,
                _ => return Err(AddressParseError::Character { index: i, byte: c }),
            };
            acc = (acc << 5) | u64::from(v);
            bits += 5;
            if bits >= 8 {
                bits -= 8;
                out[pos] = (acc >> bits) as u8;
                pos += 1;
            }
        }
        Ok(Address(out))
    }

    /// Lower-case hex spelling (as used by the golden vectors).
    pub fn to_hex(&self) -> String {
        let mut s = String::with_capacity(40);
        for b in self.0 {
            s.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
            s.push(char::from(b"0123456789abcdef"[usize::from(b & 0xf)]));
        }
        s
    }

    /// Parses 40 hex digits (either case).
    pub fn from_hex(text: &str) -> Result<Address, AddressParseError> {
        let bytes = text.as_bytes();
        if bytes.len() != 40 {
            return Err(AddressParseError::Length { len: bytes.len() });
        }
        let mut out = [0u8; ADDRESS_LEN];
        for (i, pair) in bytes.chunks_exact(2).enumerate() {
            let hi = hex_digit(pair[0]).ok_or(AddressParseError::Character {
                index: 2 * i,
                byte: pair[0],
            })?;
            let lo = hex_digit(pair[1]).ok_or(AddressParseError::Character {
                index: 2 * i + 1,
                byte: pair[1],
            })?;
            out[i] = (hi << 4) | lo;
        }
        Ok(Address(out))
    }
}

fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_base32())
    }
}

impl fmt::Debug for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Address({})", self.to_base32())
    }
}

impl std::str::FromStr for Address {
    type Err = AddressParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Address::from_base32(s)
    }
}

/// Which hash function turns chunk bytes into an [`Address`].
///
/// A store uses exactly one profile for all of its chunks. Native stores use [`HashProfile::Blake3`]
/// (fast); [`HashProfile::Dolt`] reproduces Dolt's addresses (SHA-512, first 20 bytes) so that
/// chunks and roots equal the ones Dolt writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum HashProfile {
    /// BLAKE3, first 20 bytes of the 32-byte digest. The native default.
    #[default]
    Blake3 = 1,
    /// SHA-512, first 20 bytes: Dolt's `hash.Of`.
    Dolt = 2,
}

impl HashProfile {
    /// The address of `chunk` (the whole chunk, message prefix included).
    pub fn address_of(self, chunk: &[u8]) -> Address {
        match self {
            HashProfile::Blake3 => blake3x8::address_of(chunk),
            HashProfile::Dolt => {
                use sha2::Digest;
                let digest = sha2::Sha512::digest(chunk);
                let mut out = [0u8; ADDRESS_LEN];
                out.copy_from_slice(&digest[..ADDRESS_LEN]);
                Address(out)
            }
        }
    }

    /// Writes the address of `chunks[i]` into `out[i]`, for as many as both hold: the same
    /// addresses as [`HashProfile::address_of`] one by one, but faster on x86-64 with AVX2
    /// once there are several chunks: the Dolt profile hashes four chunks side by side, the
    /// blake3 profile the 1 KiB pieces of all of them eight at a time, so the vector lanes that
    /// one chunk alone leaves idle do work.
    pub fn addresses_of(self, chunks: &[&[u8]], out: &mut [Address]) {
        match self {
            HashProfile::Dolt => sha512x4::addresses_of(chunks, out),
            HashProfile::Blake3 => blake3x8::addresses_of(chunks, out),
        }
    }

    /// Checks that `chunks[i]` hashes to `addresses[i]` for every `i` (as many as both hold),
    /// hashing them side by side ([`HashProfile::addresses_of`]) without allocating: the first
    /// mismatch, as its index and the address that chunk hashes to, or `None`.
    pub fn first_mismatch(
        self,
        addresses: &[Address],
        chunks: &[&[u8]],
    ) -> Option<(usize, Address)> {
        const GROUP: usize = 64;
        let mut actual = [Address::ZERO; GROUP];
        for (g, (want, group)) in addresses
            .chunks(GROUP)
            .zip(chunks.chunks(GROUP))
            .enumerate()
        {
            self.addresses_of(group, &mut actual);
            if let Some(i) = want.iter().zip(&actual).position(|(a, b)| a != b) {
                return Some((g * GROUP + i, actual[i]));
            }
        }
        None
    }

    /// A stable one-byte tag, for recording the profile in a store.
    pub fn tag(self) -> u8 {
        self as u8
    }

    /// Inverse of [`HashProfile::tag`].
    pub fn from_tag(tag: u8) -> Option<HashProfile> {
        match tag {
            1 => Some(HashProfile::Blake3),
            2 => Some(HashProfile::Dolt),
            _ => None,
        }
    }

    /// Lower-case name (`blake3` or `dolt`).
    pub fn name(self) -> &'static str {
        match self {
            HashProfile::Blake3 => "blake3",
            HashProfile::Dolt => "dolt",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base32_round_trip_and_known_values() {
        // Dolt's journal file name is the base32 of twenty 0xFF bytes.
        let ff = Address([0xff; 20]);
        assert_eq!(ff.to_base32(), "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv");
        let empty_leaf = Address::from_hex("28b54630276b35d5d58955aa4e6053de31eb8c68").unwrap();
        assert_eq!(empty_leaf.to_base32(), "52qkcc17dcqtblc9aml4so2jrooun338");
        assert_eq!(
            Address::from_base32("52qkcc17dcqtblc9aml4so2jrooun338").unwrap(),
            empty_leaf
        );
        assert!(Address::from_base32("52qkcc17dcqtblc9aml4so2jrooun33w").is_err());
        assert!(Address::from_base32("short").is_err());
    }

    #[test]
    fn dolt_profile_hashes_the_empty_leaf() {
        let chunk = hex_bytes("1b000048180000005455504d100018001400100007000c0008000600100000000000010110000000140000001400000018000000010000000000000000000000010000000000000000000000");
        assert_eq!(
            HashProfile::Dolt.address_of(&chunk).to_base32(),
            "52qkcc17dcqtblc9aml4so2jrooun338"
        );
    }

    #[test]
    fn addresses_of_matches_address_of() {
        let chunks: Vec<Vec<u8>> = (0..6u8).map(|i| vec![i; 70 * usize::from(i)]).collect();
        let chunks: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
        for profile in [HashProfile::Blake3, HashProfile::Dolt] {
            let mut out = vec![Address::ZERO; chunks.len()];
            profile.addresses_of(&chunks, &mut out);
            for (c, a) in chunks.iter().zip(&out) {
                assert_eq!(*a, profile.address_of(c), "{profile:?}, length {}", c.len());
            }
        }
    }

    /// `first_mismatch` finds the first wrong address wherever it is (in the first group of
    /// 64 or a later one) with the address its chunk does hash to, and none when all are right.
    #[test]
    #[cfg_attr(
        miri,
        ignore = "hashes hundreds of chunks (70 s under Miri); no unsafe code of its own"
    )]
    fn first_mismatch_finds_the_first_wrong_address() {
        let chunks: Vec<Vec<u8>> = (0..70u32).map(|i| i.to_le_bytes().repeat(9)).collect();
        let chunks: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
        for profile in [HashProfile::Blake3, HashProfile::Dolt] {
            let mut right: Vec<Address> = chunks.iter().map(|c| profile.address_of(c)).collect();
            assert_eq!(profile.first_mismatch(&right, &chunks), None);
            for wrong in [0, 64, 69] {
                let mut addresses = right.clone();
                addresses[wrong] = Address::ZERO;
                assert_eq!(
                    profile.first_mismatch(&addresses, &chunks),
                    Some((wrong, right[wrong])),
                    "{profile:?}, wrong at {wrong}"
                );
            }
            right.truncate(10);
            assert_eq!(
                profile.first_mismatch(&right, &chunks),
                None,
                "shorter list"
            );
        }
    }

    fn hex_bytes(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }
}

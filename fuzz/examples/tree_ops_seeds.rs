//! Writes the `tree_ops` seed corpus (`fuzz/seeds/tree_ops/`): a few scenarios written as
//! operations and encoded in the byte form `arbitrary` decodes, each checked by decoding it back.
//!
//! ```sh
//! cd fuzz && cargo run --example tree_ops_seeds
//! ```

#[path = "../fuzz_targets/tree_ops/input.rs"]
mod input;

use arbitrary::{Arbitrary, Unstructured};
use input::{Bnd, Input, Op, Val};

/// Config bits: key shapes and the Dolt hash profile.
const I64: u8 = 0;
const I64_I64: u8 = 1;
const I32_U16: u8 = 2;
const NULL_I64_BYTES: u8 = 3;
const DOLT: u8 = 4;

/// The bytes `arbitrary` decodes as `self` (its derive's encoding: integers little-endian,
/// booleans as one byte, an enum's variant as a `u32` scaled over the variant count, each
/// element of a trailing `Vec` after a continue byte).
trait Encode {
    fn encode(&self, out: &mut Vec<u8>);
}

macro_rules! le {
    ($($t:ty),*) => {$(
        impl Encode for $t {
            fn encode(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}
le!(u8, u16, i8);

impl Encode for bool {
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self));
    }
}

impl<T: Encode> Encode for Option<T> {
    fn encode(&self, out: &mut Vec<u8>) {
        self.is_some().encode(out);
        if let Some(x) = self {
            x.encode(out);
        }
    }
}

/// Variant `index` of an enum with `count` variants.
fn variant(out: &mut Vec<u8>, index: u64, count: u64) {
    let tag = u32::try_from((index << 32).div_ceil(count)).expect("variant index");
    out.extend_from_slice(&tag.to_le_bytes());
}

impl Encode for Val {
    fn encode(&self, out: &mut Vec<u8>) {
        self.len.encode(out);
        self.big.encode(out);
        self.seed.encode(out);
        self.int.encode(out);
    }
}

impl Encode for Bnd {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Bnd::Unbounded => variant(out, 0, 3),
            Bnd::Included(k) => {
                variant(out, 1, 3);
                k.encode(out);
            }
            Bnd::Excluded(k) => {
                variant(out, 2, 3);
                k.encode(out);
            }
        }
    }
}

impl Encode for Op {
    fn encode(&self, out: &mut Vec<u8>) {
        const N: u64 = 13;
        match *self {
            Op::Put { key, val } => {
                variant(out, 0, N);
                key.encode(out);
                val.encode(out);
            }
            Op::Delete { key } => {
                variant(out, 1, N);
                key.encode(out);
            }
            Op::PutRun { key, n, val } => {
                variant(out, 2, N);
                key.encode(out);
                n.encode(out);
                val.encode(out);
            }
            Op::DeleteRun { key, n } => {
                variant(out, 3, N);
                key.encode(out);
                n.encode(out);
            }
            Op::Flush { editor } => {
                variant(out, 4, N);
                editor.encode(out);
            }
            Op::Get { key } => {
                variant(out, 5, N);
                key.encode(out);
            }
            Op::Ordinal { i } => {
                variant(out, 6, N);
                i.encode(out);
            }
            Op::Range { lo, hi, rev, batch } => {
                variant(out, 7, N);
                lo.encode(out);
                hi.encode(out);
                rev.encode(out);
                batch.encode(out);
            }
            Op::Seek { key, steps } => {
                variant(out, 8, N);
                key.encode(out);
                steps.encode(out);
            }
            Op::Prefix { key } => {
                variant(out, 9, N);
                key.encode(out);
            }
            Op::Diff { back } => {
                variant(out, 10, N);
                back.encode(out);
            }
            Op::Checkout { back } => {
                variant(out, 11, N);
                back.encode(out);
            }
            Op::Merge {
                base,
                right,
                resolve,
            } => {
                variant(out, 12, N);
                base.encode(out);
                right.encode(out);
                resolve.encode(out);
            }
        }
    }
}

impl Encode for Input {
    fn encode(&self, out: &mut Vec<u8>) {
        self.config.encode(out);
        for op in &self.ops {
            true.encode(out);
            op.encode(out);
        }
    }
}

fn small(len: u8, seed: u8) -> Val {
    Val {
        len,
        big: false,
        seed,
        int: Some(seed as i8),
    }
}

fn big(len: u8, seed: u8) -> Val {
    Val {
        len,
        big: true,
        seed,
        int: None,
    }
}

/// Reads over the whole key space of a few hundred keys from `k`.
fn reads(k: u16) -> Vec<Op> {
    vec![
        Op::Get { key: k + 3 },
        Op::Get { key: k + 9000 },
        Op::Ordinal { i: 100 },
        Op::Ordinal { i: 0xffff },
        Op::Range {
            lo: Bnd::Included(k + 10),
            hi: Bnd::Excluded(k + 300),
            rev: false,
            batch: 0,
        },
        Op::Range {
            lo: Bnd::Excluded(k + 10),
            hi: Bnd::Included(k + 700),
            rev: true,
            batch: 7,
        },
        Op::Range {
            lo: Bnd::Unbounded,
            hi: Bnd::Unbounded,
            rev: true,
            batch: 0,
        },
        Op::Seek {
            key: k + 50,
            steps: 100,
        },
        Op::Seek {
            key: k + 200,
            steps: -100,
        },
        Op::Prefix { key: k + 40 },
    ]
}

fn seeds() -> Vec<(&'static str, Input)> {
    let mut out = Vec::new();

    // Three levels: about 2500 rows of 500-750 bytes, then edits spread over the tree.
    let mut ops: Vec<Op> = (0..10)
        .map(|i| Op::PutRun {
            key: i * 255,
            n: 255,
            val: big(100 + i as u8 * 15, i as u8),
        })
        .collect();
    ops.push(Op::Flush { editor: true });
    ops.extend(reads(0));
    ops.extend([
        Op::Put {
            key: 77,
            val: small(3, 1),
        },
        Op::DeleteRun { key: 1000, n: 200 },
        Op::Put {
            key: 2000,
            val: big(255, 9),
        },
        Op::Flush { editor: false },
        Op::Diff { back: 1 },
        Op::Seek {
            key: 990,
            steps: 30,
        },
    ]);
    out.push(("deep_i64", Input { config: I64, ops }));

    // Two int64 fields with Dolt's hash profile: grow, change values, shrink.
    let mut ops = vec![
        Op::PutRun {
            key: 0,
            n: 250,
            val: small(20, 3),
        },
        Op::PutRun {
            key: 250,
            n: 250,
            val: big(40, 4),
        },
        Op::Flush { editor: false },
    ];
    ops.extend(reads(100));
    ops.extend([
        Op::PutRun {
            key: 30,
            n: 100,
            val: small(21, 5),
        },
        Op::Delete { key: 31 },
        Op::Put {
            key: 31,
            val: small(0, 1),
        },
        Op::Flush { editor: true },
        Op::DeleteRun { key: 0, n: 255 },
        Op::Flush { editor: false },
        Op::Diff { back: 2 },
    ]);
    out.push((
        "two_int64_dolt",
        Input {
            config: I64_I64 | DOLT,
            ops,
        },
    ));

    // Diverging versions merged three ways, once per resolver.
    for resolve in 0..3u8 {
        let ops = vec![
            Op::PutRun {
                key: 0,
                n: 200,
                val: big(10, 1),
            },
            Op::Flush { editor: false },
            // Left: change 20..80, delete 150..170.
            Op::PutRun {
                key: 20,
                n: 60,
                val: small(7, 2),
            },
            Op::DeleteRun { key: 150, n: 20 },
            Op::Flush { editor: true },
            // Right, from the base: change 50..110, delete 160..190, add 300..340.
            Op::Checkout { back: 1 },
            Op::PutRun {
                key: 50,
                n: 60,
                val: small(9, 3),
            },
            Op::DeleteRun { key: 160, n: 30 },
            Op::PutRun {
                key: 300,
                n: 40,
                val: big(0, 4),
            },
            Op::Flush { editor: false },
            Op::Merge {
                base: 3,
                right: 2,
                resolve,
            },
            Op::Diff { back: 1 },
            Op::Range {
                lo: Bnd::Included(40),
                hi: Bnd::Included(120),
                rev: false,
                batch: 3,
            },
        ];
        let name = ["merge_right_wins", "merge_conflicts", "merge_delete"][usize::from(resolve)];
        out.push((
            name,
            Input {
                config: I32_U16,
                ops,
            },
        ));
    }

    // NULL-able first field and byte-string second field: general comparator, prefix scans.
    let mut ops = vec![Op::PutRun {
        key: 0,
        n: 255,
        val: small(30, 7),
    }];
    for k in [0u16, 31, 32, 0x1f00, 0x1f1f, 0xffff] {
        ops.push(Op::Put {
            key: k,
            val: small(5, k as u8),
        });
    }
    ops.push(Op::Flush { editor: true });
    ops.extend(reads(0));
    ops.extend([
        Op::Prefix { key: 0 },
        Op::Prefix { key: 0x1f20 },
        Op::Range {
            lo: Bnd::Included(0),
            hi: Bnd::Excluded(33),
            rev: true,
            batch: 1,
        },
    ]);
    out.push((
        "nullable_bytes_keys",
        Input {
            config: NULL_I64_BYTES,
            ops,
        },
    ));

    // Everything deleted again: reads and cursors on the empty map.
    let mut ops = vec![
        Op::PutRun {
            key: 500,
            n: 255,
            val: big(80, 2),
        },
        Op::Flush { editor: false },
        Op::DeleteRun { key: 500, n: 255 },
        Op::Flush { editor: true },
    ];
    ops.extend(reads(500));
    ops.push(Op::Diff { back: 1 });
    out.push((
        "grow_then_empty",
        Input {
            config: I64 | DOLT,
            ops,
        },
    ));
    out
}

fn main() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/tree_ops");
    std::fs::create_dir_all(&dir).expect("create the seed directory");
    for (name, input) in seeds() {
        let mut bytes = Vec::new();
        input.encode(&mut bytes);
        let back = Input::arbitrary_take_rest(Unstructured::new(&bytes)).expect("decodes");
        assert_eq!(back, input, "{name}: the bytes decode to other operations");
        std::fs::write(dir.join(name), &bytes).expect("write a seed");
        println!("{name}: {} ops, {} bytes", input.ops.len(), bytes.len());
    }
}

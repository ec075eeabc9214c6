"""Damage cases for a chunk journal, shared by make_journal_damage.sh (which runs Dolt on them)
and crates/dolt/tests/journal_damage.rs (which applies the same lines itself).

  python3 journal_damage.py cases BASE_DB      -> prints the cases, one per line:
      NAME OP ARG [OP ARG ...]
  python3 journal_damage.py apply DB NAME < cases.txt   -> applies case NAME to DB in place

Ops: `none -` nothing; `cut N` truncate the journal to N bytes; `xor N` flip bit 5 of byte N;
`append HEX` append bytes; `root B32` set the manifest's root field.
"""
import os
import struct
import sys

JOURNAL = ".dolt/noms/vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv"
MANIFEST = ".dolt/noms/manifest"
B32 = "0123456789abcdefghijklmnopqrstuv"


def b32(raw):
    bits = int.from_bytes(raw, "big")
    return "".join(B32[(bits >> (5 * (31 - i))) & 31] for i in range(32))


def records(data):
    out, p = [], 0
    while p + 4 <= len(data):
        n = struct.unpack(">I", data[p:p + 4])[0]
        if n == 0:
            break
        out.append((p, n, data[p + 5]))
        p += n
    return out


def cases(db):
    data = open(os.path.join(db, JOURNAL), "rb").read()
    recs = records(data)
    roots = [r for r in recs if r[2] == 1]
    last_root = roots[-1]
    root_addr = lambda r: b32(data[r[0] + 16:r[0] + 36])
    last_chunk = [r for r in recs if r[2] == 2 and r[0] < last_root[0]][-1]
    chunks = [r for r in recs if r[2] == 2]
    middle_chunk = chunks[len(chunks) // 2]
    middle_root = roots[len(roots) // 2]
    x = 12345
    garbage = bytearray()
    for _ in range(64):
        x = (x * 1103515245 + 12345) % (1 << 31)
        garbage.append((x >> 16) & 0xFF)
    lr = data[last_root[0]:last_root[0] + last_root[1]]
    lc = data[last_chunk[0]:last_chunk[0] + last_chunk[1]]
    print("clean none -")
    print("cut_mid_last_root cut %d" % (last_root[0] + 20))
    print("cut_before_last_root cut %d" % last_root[0])
    print("cut_mid_last_chunk cut %d" % (last_chunk[0] + last_chunk[1] // 2))
    print("crc_last_chunk xor %d" % (last_chunk[0] + last_chunk[1] - 2))
    print("crc_last_root xor %d" % (last_root[0] + 20))
    print("len_last_root xor %d" % last_root[0])
    print("crc_last_root_manifest_before xor %d root %s" % (last_root[0] + 20, root_addr(roots[-2])))
    print("garbage_after_end append %s" % garbage.hex())
    print("zeros_after_end append %s" % ("00" * 4096))
    print("records_after_garbage append %s" % (garbage[:10] + lr + lc).hex())
    print("one_root_after_garbage append %s" % (garbage[:10] + lr).hex())
    print("middle_chunk xor %d" % (middle_chunk[0] + middle_chunk[1] // 2))
    print("middle_root xor %d" % (middle_root[0] + 20))
    print("manifest_older root %s" % root_addr(roots[0]))


def apply(db, name):
    for line in sys.stdin:
        fields = line.split()
        if not fields or fields[0] != name:
            continue
        ops = fields[1:]
        for op, arg in zip(ops[0::2], ops[1::2]):
            path = os.path.join(db, JOURNAL)
            if op == "cut":
                with open(path, "r+b") as f:
                    f.truncate(int(arg))
            elif op == "xor":
                with open(path, "r+b") as f:
                    f.seek(int(arg))
                    b = f.read(1)[0]
                    f.seek(int(arg))
                    f.write(bytes([b ^ 0x20]))
            elif op == "append":
                with open(path, "ab") as f:
                    f.write(bytes.fromhex(arg))
            elif op == "root":
                m = os.path.join(db, MANIFEST)
                fs = open(m).read().split(":")
                fs[3] = arg
                open(m, "w").write(":".join(fs))
            elif op != "none":
                sys.exit("unknown op " + op)
        return
    sys.exit("no case " + name)


if __name__ == "__main__":
    if sys.argv[1] == "cases":
        cases(sys.argv[2])
    else:
        apply(sys.argv[2], sys.argv[3])

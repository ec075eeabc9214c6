"""MySQL's Chinese collation (`utf8mb4_zh_0900_as_cs`, pinyin order), for
scripts/gen_collations.py.

Source: CLDR's zh collation rules (common/collation/zh.xml, `$Revision: 14130 $`, as shipped in
the npm package `cldr` 4.13.0 at 3rdparty/cldr/common/collation/zh.xml): the `pinyin` type's
list of Han characters in pinyin order (`&[last regular] <* ...`, 41,336 code points including
Unicode 10's U+9FEB..U+9FED), its `&X <<< Y` rules for radicals and compatibility forms, and
the imported `private-pinyin` type (tone letters ā á ǎ à ... at the second level).

How MySQL applies them, checked against Dolt for every BMP code point and a sample of the
others (crates/format/tests/collation_ranks.rs):

* `[reorder Hani]`: every Han character comes right after the digits. The listed ones take
  one primary weight each in list order, in single-code-point entries only (a DUCET expansion
  that contains a listed Han character, such as ㈠, weighs it by its list position too); the
  unlisted Han characters (implicit weights) follow them, then Latin and the other scripts.
* The other rules run as for the other UCA 9.0.0 tailorings (collation_tailorings.tailor900),
  over those weights, except that consecutive rules with the same reset continue one chain
  (`&一<<<⼀ &一<<<㆒` puts ㆒ after ⼀, not beside it) and the `private-pinyin` rules are read
  in NFC (`&e<<ê̄<<<Ê̄<<ế` tailors the precomposed ế; ê̄ stays a contraction and weighs nothing).
* One rule differs from CLDR: MySQL sorts ㊩ right after ⼖ (as if `&匸<<<⼖<<<㊩`), not after 医.
"""

import unicodedata

import collation_tailorings

# First primary weight of DUCET 9.0.0's Latin letters; everything from here on moves behind
# the Han characters.
FIRST_LATIN = 0x1C47
# Offsets that put the reordered groups apart: listed Han at FIRST_LATIN + position, the
# unlisted (implicit) Han after them, then every other primary from FIRST_LATIN on.
UNLISTED_HAN = 60000
OTHERS = 100000


def cdata(xml, collation_type):
    """The rule text of `<collation type='TYPE'>` in zh.xml."""
    start = xml.index("<collation type='%s'>" % collation_type)
    begin = xml.index("<![CDATA[", start) + len("<![CDATA[")
    return xml[begin:xml.index("]]>", begin)]


def parse(xml):
    """zh.xml -> (the listed Han code points in pinyin order, the remaining rule text)."""
    order = []
    chains = []
    for line in cdata(xml, "pinyin").split("\n"):
        line = line.split("#")[0].strip()
        if line.startswith("<*"):
            order += [ord(c) for c in line[2:].strip()]
        elif line.startswith("&") and not line.startswith("&[last regular]"):
            line = line.replace("'", "")
            if "<<<" not in line:
                continue  # compounds such as 重庆/庆: contractions weigh no code point
            reset, rest = line[1:].split("<<<", 1)
            items = rest.split("<<<")
            if reset == "医" and items == ["㊩"]:
                assert chains[-1] == ("匸", ["⼖"]), chains[-1]
                reset = "匸"  # MySQL's order, see the module doc
            if chains and chains[-1][0] == reset:
                chains[-1][1].extend(items)
            else:
                chains.append((reset, items))
    private = " ".join(line.strip() for line in cdata(xml, "private-pinyin").split("\n"))
    rules = unicodedata.normalize("NFC", private) + " " + " ".join(
        "&%s%s" % (reset, "".join("<<<" + s for s in items)) for reset, items in chains)
    return order, rules


def han_code_point(ces, k):
    """The Han code point whose implicit weights start at element k, or None."""
    p = ces[k][0]
    if not 0xFB40 <= p <= 0xFBBF or k + 1 >= len(ces):
        return None
    base = 0xFB40 if p < 0xFB80 else 0xFB80
    return ((p - base) << 15) | (ces[k + 1][0] & 0x7FFF)


def reorder(ces, position):
    """Collation elements with the Han characters first: a listed one (position(cp) is not
    None) becomes one element, the unlisted ones keep their pair after all listed ones."""
    out = []
    k = 0
    while k < len(ces):
        p, s, t = ces[k]
        pair = 0xFB00 <= p <= 0xFBFF and k + 1 < len(ces) and ces[k + 1][1] == 0
        if pair and 0xFB40 <= p <= 0xFBBF:
            i = position(han_code_point(ces, k))
            if i is not None:
                out.append((FIRST_LATIN + i, s, t))
            else:
                out += [(FIRST_LATIN + UNLISTED_HAN + p - 0xFB40, s, t), ces[k + 1]]
            k += 2
        elif pair:  # other implicit weights (unassigned code points, Tangut) stay last
            out += [(p + OTHERS, s, t), ces[k + 1]]
            k += 2
        else:
            out.append((p + OTHERS if p >= FIRST_LATIN else p, s, t))
            k += 1
    return out


def zh_elements(xml, elements, table):
    """(elements(cp) of utf8mb4_zh_0900_as_cs, elements(cp) with only the reordering, the
    position of each listed code point)."""
    order, rules = parse(xml)
    position = {}
    for cp in order:
        position.setdefault(cp, len(position))

    def reordered(cp):
        return reorder(elements(cp), lambda c: None)

    def untailored(cp):
        if cp in position:
            return [(FIRST_LATIN + position[cp], 0x20, 0x02)]
        return reorder(elements(cp), position.get)
    tailored = collation_tailorings.tailor900(untailored, rules)
    closure_table = {cp: untailored(cp) for cp in table}
    tailored.update(collation_tailorings.canonical_closure(tailored, closure_table))

    def zh(cp):
        return tailored.get(cp) or untailored(cp)
    return zh, reordered, position

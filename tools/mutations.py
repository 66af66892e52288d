#!/usr/bin/env python3
"""One genuine mistake per hold-out page in corpus/isa-correct (for a validator test).

    python3 tools/mutations.py --write DIR     # DIR/<arch>/<page>.txt: each page with its mistake
    python3 tools/mutations.py --markdown      # the table in corpus/isa-correct/MUTATIONS.md

A mutation edits one line of a page: either cells of a layout row (cell k = bit k of that
row's half) or a whole table line. The mutated page still parses; nvdisasm disagrees.
"""
import argparse
import os

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus", "isa-correct")

# (file, line, cells {cell: (old, new)} or None, whole-line (old, new) or None, mistake, what the validator should report)
MUTATIONS = [
    ("sm90/ffma.txt", 20, {8: ("cNEG", "cABS"), 9: ("cABS", "cNEG")}, None,
     "FFMA_R_R_R_R: cNEG/cABS of operand 1 swapped (bits 72/73)",
     "flag_operand cABS at bit 72 (actual `-R0`) and cNEG at bit 73 (actual `|R0|`)"),
    ("sm90/fadd.txt", 18, {23: ("", "0")}, None,
     "FADD_R_R_R: operand 0 narrowed to 7 bits (bit 23 written fixed 0)",
     "unexpressible at bit 23 (actual `@P0 FADD R128, R0, R0;`)"),
    ("sm90/dmul.txt", 26, None, ("01\tRM", "01\tRN"),
     "DMUL_R_R_R: Modifier Group 1 row 01 named RN (nvdisasm: RM)",
     "table_row modi 1 at bit 78 (expected `.RN`, actual `.RM`)"),
    ("sm90/viadd.txt", 44, {58: ("", "0")}, None,
     "VIADD_R_R_I_I: constant bank narrowed to 4 bits (bit 58 written fixed 0)",
     "unexpressible at bit 58 (actual `c[0x10][0x0]`)"),
    ("sm100/ffma.txt", 105, {62: ("cABS", "cNEG"), 63: ("cNEG", "cABS")}, None,
     "FFMA_R_R_UR_R: cABS/cNEG of the UR operand swapped (bits 62/63)",
     "flag_operand cNEG at bit 62 (actual `|UR0|`) and cABS at bit 63 (actual `-UR0`), plus an interaction finding operand 2 + cNEG"),
    ("sm100/fadd.txt", 62, {27: ("1", "0")}, None,
     "FADD_R_R_UR: fixed bit 91 written 0 (nvdisasm needs 1: with 0 the word is illegal)",
     "legality findings for every probe of FADD_R_R_UR (`Unrecognized operation for functional unit 'uC'`): the zero word itself is illegal"),
    ("sm100/dadd.txt", 20, {13: ("0", "modi 1"), 14: ("modi 1", ""), 15: ("", "0")}, None,
     "DADD_R_R_R: Modifier Group 1 moved one bit down (bits 77..78; nvdisasm reads 78..79)",
     "table_row modi 1 at bits 77, 78, 77+78 (actual: nothing, `.RM`, `.RM`) and unexpressible at bit 79 (actual `.RP`)"),
    ("sm100/prmt.txt", 28, None, ("011\tRC8", "011\tRC4"),
     "PRMT_R_R_R_R: Modifier Group 1 row 011 named RC4 (nvdisasm: RC8)",
     "table_row modi 1 at bits 72+73 (expected `.RC4`, actual `.RC8`)"),
    ("sm100/viadd.txt", 44, {38: ("", "0"), 39: ("", "0")}, None,
     "VIADD_R_R_UR: uniform register narrowed to 6 bits, the SM90 width (bits 38, 39 written fixed 0); SM100 reads 8 (URZ = UR255)",
     "unexpressible at bits 38 and 39 (actual `UR64`, `UR128`)"),
]


def mutate(text, line, cells, whole):
    lines = text.split("\n")
    l = lines[line - 1]
    if cells:
        cs = l.split("\t")
        for k, (old, new) in cells.items():
            assert cs[k] == old, f"line {line} cell {k}: expected {old!r}, found {cs[k]!r}"
            cs[k] = new
        lines[line - 1] = "\t".join(cs)
    else:
        old, new = whole
        assert l == old, f"line {line}: expected {old!r}, found {l!r}"
        lines[line - 1] = new
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    for f, line, cells, whole, mistake, expect in MUTATIONS:
        text = open(os.path.join(ROOT, f)).read()
        out = mutate(text, line, cells, whole)
        if a.write:
            p = os.path.join(a.write, f)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            open(p, "w").write(out)
        if a.markdown:
            if cells:
                lines = text.split("\n")
                key = max(i + 1 for i in range(line) if lines[i].startswith("key:"))
                bit0 = {3: 0, 5: 64}[line - key]
                change = ", ".join(f"cell {k} (bit {bit0 + k}) {o!r} → {n!r}" for k, (o, n) in sorted(cells.items()))
            else:
                change = f"`{whole[0]!r}` → `{whole[1]!r}`"
            print(f"| `{f}` | {line} | {change} | {mistake} | {expect} |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Solve one variant's layout from a seed word with nvdisasm, and write it as an ISA-viewer page.

    python3 tools/discover.py --arch 90 --word 0x...223 [--word ...] --name FFMA \
        --description "FP32 Fused Multiply and Add" --out corpus/isa-correct/sm90/ffma.txt

Every non-control bit (0..104, 126, 127) of the seed is flipped singly (one nvdisasm
process for all flips of all seeds), then every modifier group is enumerated and every
operand field is checked with multi-value probes; the page says what nvdisasm does.
`--check PAGE` re-derives every variant of an existing page from its zero word and
diffs the layout and tables (exit 1 on a difference).
"""
import argparse
import random
import re
import struct
import sys

import os

from nvd import disasm, split_text

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

CONTROL = [("stall", 105, 4), ("y", 109, 1), ("r-bar", 110, 3), ("w-bar", 113, 3), ("b-mask", 116, 6), ("reuse", 122, 4)]
CONTROL_BITS = set(range(105, 126))
PROBE_BITS = [b for b in range(128) if b not in CONTROL_BITS]

REG = re.compile(r"^(U?)R(\d+|Z)$")
CONST = re.compile(r"^c\[(0x[0-9a-f]+)\]\[(-?0x[0-9a-f]+)\]$")
CONSTX = re.compile(r"^cx\[(URZ|UR\d+)\]\[(-?0x[0-9a-f]+)\]$")
INT = re.compile(r"^-?0x[0-9a-f]+$")


# ---------------------------------------------------------------- operand text

def strip_decor(s):
    """'-|R0|.reuse' -> (neg, abs, body)."""
    s = s.replace(".reuse", "")
    if s[:1] in "~!":
        return False, False, "NOT:" + s[1:]
    neg = s.startswith("-") and not INT.match(s) and not _is_float(s)
    if neg:
        s = s[1:]
    ab = s.startswith("|") and s.endswith("|")
    if ab:
        s = s[1:-1]
    return neg, ab, s


def _is_float(s):
    if s in ("+INF", "-INF", "+QNAN", "-QNAN", "+SNAN", "-SNAN", "INF", "QNAN"):
        return True
    try:
        float(s)
        return not s.startswith("0x") and not s.startswith("-0x")
    except ValueError:
        return False


def kind_of(body):
    if CONST.match(body):
        return "c[I][I]"
    if CONSTX.match(body):
        return "cx[UR][I]"
    m = REG.match(body)
    if m:
        return "UR" if m.group(1) else "R"
    if INT.match(body):
        return "I"
    if _is_float(body):
        return "F"
    return None


def reg_num(s, zero):
    m = REG.match(s)
    return zero if m.group(2) == "Z" else int(m.group(2))


def float_bits(s, double):
    specials = {"+INF": float("inf"), "-INF": float("-inf")}
    if "NAN" in s:
        return None
    x = specials.get(s, None)
    if x is None:
        x = float(s)
    if double:
        return struct.unpack("<Q", struct.pack("<d", x))[0] >> 32
    try:
        return struct.unpack("<I", struct.pack("<f", x))[0]
    except OverflowError:
        return None


def values(kind, body, ctx):
    """Integer sub-values of an operand body: (v,) or (bank/ureg, offset in bytes)."""
    if kind == "R":
        return (reg_num(body, 255),)
    if kind == "UR":
        return (reg_num(body, ctx["urz"]),)
    if kind == "I":
        return (int(body, 16),)
    if kind == "F":
        return (float_bits(body, ctx["double"]),)
    if kind == "c[I][I]":
        m = CONST.match(body)
        return (int(m.group(1), 16), int(m.group(2), 16))
    m = CONSTX.match(body)
    return (reg_num(m.group(1), ctx["urz"]), int(m.group(2), 16))


# ---------------------------------------------------------------- single flips

def classify(base, text, kinds, ctx):
    """What one flipped bit did: ('fixed', why) | ('pred',) | ('mod', tokens) | ('op', i, sub, weight) | ('flag', i, 'cABS'|'cNEG')."""
    if text is None:
        return ("fixed", "illegal")
    if text == "":
        return ("fixed", "silent")
    if text == base["text"]:
        return ("fixed", "ignored")
    p, mn, mods, ops, _ = split_text(text)
    if mn != base["mn"] or len(ops) != len(base["ops"]):
        return ("fixed", "other instruction: " + text)
    changes = []
    if p != base["pred"]:
        changes.append(("pred",))
    if mods != base["mods"]:
        changes.append(("mod", tuple(mods)))
    for i, (a, b) in enumerate(zip(base["ops"], ops)):
        if a == b:
            continue
        na, aa, ba = strip_decor(a)
        nb, ab, bb = strip_decor(b)
        if ba.startswith("NOT:") != bb.startswith("NOT:") and ba.replace("NOT:", "") == bb.replace("NOT:", ""):
            return ("multi", f"operand {i} gets a '~'/'!' (no page flag can say this): {text}")
        if ba == bb:
            if na != nb:
                changes.append(("flag", i, "cNEG"))
            if aa != ab:
                changes.append(("flag", i, "cABS"))
            continue
        if kind_of(bb) != kinds[i]:
            return ("fixed", "operand kind changed: " + text)
        va, vb = values(kinds[i], ba, ctx), values(kinds[i], bb, ctx)
        for j, (x, y) in enumerate(zip(va, vb)):
            if x != y:
                changes.append(("op", i, j, y ^ x if y is not None and x is not None else None))
    if len(changes) != 1:
        return ("multi", text)
    return changes[0]


def seed_info(arch, text):
    p, mn, mods, ops, term = split_text(text)
    kinds = [kind_of(strip_decor(o)[2]) for o in ops]
    ctx = {"urz": 63 if arch < 100 else 255, "double": mn.startswith("D")}
    return {"text": text, "pred": p, "mn": mn, "mods": mods, "ops": ops, "kinds": kinds, "ctx": ctx}


# ---------------------------------------------------------------- fields

def slot_numbers(kinds):
    """Page operand numbers of each form operand (c[I][I], cx[UR][I] take two)."""
    out, n = [], 0
    for k in kinds:
        w = 2 if k in ("c[I][I]", "cx[UR][I]") else 1
        out.append(list(range(n, n + w)))
        n += w
    return out


def unit(kind, sub):
    return 4 if kind in ("c[I][I]", "cx[UR][I]") and sub == 1 else 1


def build_fields(info, flips):
    """Fields from classified flips: list of dicts {name, bits (value order), kind...}."""
    kinds, slots = info["kinds"], slot_numbers(info["kinds"])
    fields, opbits, modbits, notes = [], {}, [], []
    for b, c in flips.items():
        if c[0] == "pred":
            opbits.setdefault("pred", []).append((b, b))
        elif c[0] == "op":
            i, j, w = c[1], c[2], c[3]
            wv = abs(w) // unit(kinds[i], j) if w is not None else None
            k = wv.bit_length() - 1 if wv and wv & (wv - 1) == 0 else None
            if k is None:
                notes.append(f"bit {b}: operand {i} changed by a non-power-of-two step {w}")
            opbits.setdefault(f"operand {slots[i][j]}", []).append((k if k is not None else 99, b))
        elif c[0] == "flag":
            fields.append({"name": c[2], "bits": [b], "operand": c[1]})
        elif c[0] == "mod":
            modbits.append(b)
        elif c[0] == "multi" and split_text(c[1])[:4] != split_text(info["text"])[:4]:
            notes.append(f"bit {b}: several changes: {c[1]}")
    for name, kb in opbits.items():
        kb.sort()
        bits = [b for _, b in kb]
        if [k for k, _ in kb] != list(range(len(kb))) and name != "pred":
            notes.append(f"{name}: value weights {[k for k, _ in kb]} at bits {bits}")
        if bits != sorted(bits):
            notes.append(f"{name}: value order is not bit order: {bits}")
        fields.append({"name": name, "bits": sorted(bits)})
    return fields, modbits, notes


def mod_components(arch, info, seed, modbits, single):
    """Modifier bits joined into groups: two bits are one field when their joint text is not
    the union of their single effects (one nvdisasm batch for all pairs)."""
    modbits = sorted(modbits)
    pairs = [(a, b) for i, a in enumerate(modbits) for b in modbits[i + 1:]]
    texts = disasm(arch, [seed ^ (1 << a) ^ (1 << b) for a, b in pairs])
    parent = {b: b for b in modbits}

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x
    base = set(info["mods"])
    for (a, b), t in zip(pairs, texts):
        ma = set(split_text(single[a])[2]) - base
        mb = set(split_text(single[b])[2]) - base
        if t is None or set(split_text(t)[2]) != (base | ma | mb):
            parent[find(a)] = find(b)
    comps = {}
    for b in modbits:
        comps.setdefault(find(b), []).append(b)
    return sorted(comps.values())


def print_order(arch, info, seed, gfields):
    """Groups sorted by where nvdisasm prints them: one word with every group at its first named row."""
    w, names = seed, []
    for bits, rows in gfields:
        v = next((v for v, n in sorted(rows.items()) if v and n != "(default)"), None)
        names.append(rows.get(v, "").split(".")[0] if v else None)
        for k, b in enumerate(bits):
            if v and v >> k & 1:
                w |= 1 << b
    t = disasm(arch, [w])[0]
    mods = split_text(t)[2] if t else []
    pos = [mods.index(n) if n in mods else 99 for n in names]
    return [g for _, g in sorted(zip(pos, gfields), key=lambda x: x[0])]


# ---------------------------------------------------------------- the solver

def pair_interacts(arch, info, seed, a, b, single):
    """Do modifier bits a and b interact (their joint text is not the union of their effects)?"""
    t = disasm(arch, [seed ^ (1 << a) ^ (1 << b)])[0]
    if t is None:
        return True
    mods = split_text(t)[2]
    ma = set(split_text(single[a])[2]) - set(info["mods"])
    mb = set(split_text(single[b])[2]) - set(info["mods"])
    return set(mods) != (set(info["mods"]) | ma | mb)


def enumerate_group(arch, info, seed, bits):
    """Rows of a modifier group: {value: name}; illegal values are left out."""
    words = []
    for v in range(1 << len(bits)):
        w = seed
        for k, b in enumerate(bits):
            if v >> k & 1:
                w |= 1 << b
        words.append(w)
    texts = disasm(arch, words)
    parsed = {v: (split_text(t)[2] if t else None) for v, t in enumerate(texts)}
    legal = [m for m in parsed.values() if m is not None]
    common = set(legal[0]).intersection(*map(set, legal[1:])) if legal else set()
    rows = {}
    for v, mods in parsed.items():
        if mods is None:
            continue
        own = [m for m in mods if m not in common]
        rows[v] = ".".join(own) if own else "(default)"
    return rows, texts


def solve(arch, seed):
    """One variant from its seed word: dict with fields, tables, distilled, notes."""
    words = [seed] + [seed ^ (1 << b) for b in PROBE_BITS]
    texts = disasm(arch, words)
    if not texts[0]:
        raise SystemExit(f"seed {seed:#034x} does not disassemble on SM{arch}")
    info = seed_info(arch, texts[0])
    single = dict(zip(PROBE_BITS, texts[1:]))
    flips = {b: classify(info, t, info["kinds"], info["ctx"]) for b, t in single.items()}
    fields, modbits, notes = build_fields(info, flips)
    for b, c in flips.items():
        if c[0] == "multi" and split_text(c[1])[:4] == split_text(info["text"])[:4]:
            notes.append(f"bit {b}: only the terminator changes ({c[1]!r}); kept fixed")
    groups = mod_components(arch, info, seed, modbits, single)
    tables, gfields = [], []
    for g in groups:
        if len(g) == 1:
            name = "".join(sorted(set(split_text(single[g[0]])[2]) - set(info["mods"])))
            if name and re.match(r"^[A-Za-z0-9_]+$", name) and info["mods"] == [m for m in split_text(single[g[0]])[2] if m != name]:
                fields.append({"name": name, "bits": g})
                continue
        rows, _ = enumerate_group(arch, info, seed, g)
        gfields.append((g, rows))
    for n, (g, rows) in enumerate(print_order(arch, info, seed, gfields)):
        tables.append(rows)
        fields.append({"name": f"modi {n + 1}", "bits": g})
    fmask = 0
    for f in fields:
        for b in f["bits"]:
            fmask |= 1 << b
    zero = seed & ~fmask
    distilled = disasm(arch, [zero])[0] if zero != seed else info["text"]
    ignored = [b for b, c in flips.items() if c == ("fixed", "ignored")]
    return {"arch": arch, "seed": seed, "zero": zero, "ignored": ignored, "info": info, "fields": fields, "tables": tables,
            "distilled": distilled, "notes": notes, "flips": flips}


# ---------------------------------------------------------------- multi-value probes

def verify_operands(r, rng, n=4):
    """Each operand field at all-ones and n random values must print that value; returns notes."""
    arch, info, zero = r["arch"], r["info"], r["zero"]
    slots = slot_numbers(info["kinds"])
    cases = []
    for f in r["fields"]:
        if not f["name"].startswith("operand "):
            continue
        po = int(f["name"].split()[1])
        i = next(i for i, s in enumerate(slots) if po in s)
        j = slots[i].index(po)
        w = len(f["bits"])
        for v in [(1 << w) - 1] + [rng.getrandbits(w) for _ in range(n)]:
            word = zero
            for k, b in enumerate(f["bits"]):
                if v >> k & 1:
                    word |= 1 << b
            cases.append((f["name"], i, j, w, v, word))
    texts = disasm(arch, [c[-1] for c in cases])
    notes = []
    for (name, i, j, w, v, word), t in zip(cases, texts):
        if not t:
            notes.append(f"{name} = {v:#x}: {'illegal' if t is None else 'silent'} ({word:#034x})")
            continue
        ops = split_text(t)[3]
        body = strip_decor(ops[i])[2]
        if kind_of(body) != info["kinds"][i]:
            notes.append(f"{name} = {v:#x}: prints {ops[i]!r}")
            continue
        got = values(info["kinds"][i], body, info["ctx"])[j]
        u = unit(info["kinds"][i], j)
        if got is not None and (got // u) % (1 << w) != v:
            notes.append(f"{name} = {v:#x}: prints {ops[i]!r} ({word:#034x})")
    return notes


def random_word(r, rng):
    """The zero word with every field random (groups: a listed row), control bits zero."""
    w = r["zero"]
    for f in r["fields"]:
        if f["name"].startswith("modi "):
            v = rng.choice(sorted(r["tables"][int(f["name"].split()[1]) - 1]))
        else:
            v = rng.getrandbits(len(f["bits"]))
        for k, b in enumerate(f["bits"]):
            if v >> k & 1:
                w |= 1 << b
    return w


def verify_random(r, rng, n=100):
    """Random words with all fields set: the bits the page calls ignored must stay ignored,
    and every operand must print its field values; returns notes."""
    slots = slot_numbers(r["info"]["kinds"])
    ws = [random_word(r, rng) for _ in range(n)]
    noise = [sum(1 << b for b in r["ignored"] if rng.getrandbits(1)) for _ in ws]
    texts = disasm(r["arch"], ws + [w | x for w, x in zip(ws, noise)])
    notes = []
    for k, w in enumerate(ws):
        t, u = texts[k], texts[n + k]
        if t is None or u is None:
            notes.append(f"random word {w:#034x}: illegal ({t!r}, {u!r})")
            continue
        if split_text(t)[:4] != split_text(u)[:4]:
            notes.append(f"ignored bits matter in context: {w:#034x} {t!r} vs {w | noise[k]:#034x} {u!r}")
        ops = split_text(t)[3]
        for f in r["fields"]:
            if not f["name"].startswith("operand "):
                continue
            po = int(f["name"].split()[1])
            i = next(i for i, s in enumerate(slots) if po in s)
            j = slots[i].index(po)
            v = sum((w >> b & 1) << q for q, b in enumerate(f["bits"]))
            body = strip_decor(ops[i])[2]
            got = values(r["info"]["kinds"][i], body, r["info"]["ctx"])[j] if kind_of(body) == r["info"]["kinds"][i] else "?"
            if got is None or got != "?" and (got // unit(r["info"]["kinds"][i], j)) % (1 << len(f["bits"])) == v:
                continue
            notes.append(f"{f['name']} = {v:#x} in {w:#034x} prints {ops[i]!r}")
    return notes


# ---------------------------------------------------------------- the page

FORM_KEY = {"R": "R", "UR": "UR", "I": "I", "F": "F", "c[I][I]": "I_I", "cx[UR][I]": "UR_I"}
INDEX_ROW = "\t".join(str(i % 8) for i in range(64))


def layout_cells(r):
    cells = [None] * 128
    for f in r["fields"]:
        for k, b in enumerate(f["bits"]):
            cells[b] = f["name"] if k == 0 or f["bits"][k - 1] != b - 1 else ""
    for name, lo, w in CONTROL:
        for b in range(lo, lo + w):
            cells[b] = name if b == lo else ""
    for b in range(128):
        if cells[b] is None:
            cells[b] = str(r["zero"] >> b & 1)
    return cells


def render_variant(r):
    info = r["info"]
    form = ",".join(info["kinds"])
    key = info["mn"] + "_" + "_".join(FORM_KEY[k] for k in info["kinds"])
    cells = layout_cells(r)
    out = [info["mn"], form, f"distilled: {r['distilled']}", f"key: {key}",
           "\n".join([INDEX_ROW, "\t".join(cells[:64]), INDEX_ROW, "\t".join(cells[64:])])]
    for n, rows in enumerate(r["tables"]):
        width = len(next(f for f in r["fields"] if f["name"] == f"modi {n + 1}")["bits"])
        body = "\n".join(f"{v:0{width}b}\t{name}" for v, name in sorted(rows.items()))
        out += [f"Modifier Group {n + 1}", "Binary\tValue\n" + body]
    return "\n\n".join(out) + "\n"


def render_page(arch, name, description, variants):
    gpu = "H100" if arch == 90 else "B200"
    head = ["NVIDIA ISA Viewer", name] + ([description] if description else [])
    head.append(f"{len(variants)} variants on SM{arch} ({gpu})")
    return "\n\n".join(head) + "\n\n" + "\n".join(render_variant(r) for r in variants)


# ---------------------------------------------------------------- reading a page back (for --check)

def page_zero_words(text):
    """(arch, name, description, [zero word per variant]) of a page: fixed cells, fields zero."""
    lines = [l for l in text.split("\n") if l.strip()]
    i = 1 if lines[0].strip() == "NVIDIA ISA Viewer" else 0
    name = lines[i].strip()
    m = re.match(r"(\d+) variants? on SM(\d+)", lines[i + 1].strip())
    desc = None
    if not m:
        desc = lines[i + 1].strip()
        m = re.match(r"(\d+) variants? on SM(\d+)", lines[i + 2].strip())
    arch, words = int(m.group(2)), []
    for k, l in enumerate(lines):
        if l.startswith("0\t1\t2") and k + 3 < len(lines) and lines[k + 2].startswith("0\t1\t2") and (k == 0 or not lines[k - 2].startswith("0\t1\t2")):
            cells = lines[k + 1].split("\t") + [""] * 64
            cells = cells[:64] + (lines[k + 3].split("\t") + [""] * 64)[:64]
            words.append(sum(1 << b for b, c in enumerate(cells) if c.strip() == "1"))
    return arch, name, desc, words


def parser_flag_operands(path):
    """{(key, bit): page operand} as our Rust parser assigns cABS/cNEG flags (None if the binary is absent)."""
    import json
    import os
    import subprocess
    exe = os.path.join(ROOT, "target/release/sass-harness")
    if not os.path.exists(exe):
        return None
    p = subprocess.run([exe, "parse", path, "--json"], capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": p.stdout + p.stderr}
    out = {}
    for page in json.loads(p.stdout)["pages"]:
        for v in page["variants"]:
            for f in v["fields"]:
                if f["kind"]["kind"] == "flag" and f["name"] in ("cABS", "cNEG"):
                    out[(v["key"], f["bits"][0])] = f["kind"]["page_operand"]
    return out


def flag_disagreements(path, rs):
    """Flags whose operand (per nvdisasm) differs from the parser's assumption."""
    got = parser_flag_operands(path)
    if got is None:
        return ["(release binary absent: parser flag assignment not checked)"]
    if "error" in got:
        return ["parser error: " + got["error"]]
    notes = []
    for r in rs:
        info = r["info"]
        key = info["mn"] + "_" + "_".join(FORM_KEY[k] for k in info["kinds"])
        slots = slot_numbers(info["kinds"])
        for f in r["fields"]:
            if f["name"] in ("cABS", "cNEG"):
                want = slots[f["operand"]][0]
                have = got.get((key, f["bits"][0]))
                if have != want:
                    notes.append(f"{key}: {f['name']} at bit {f['bits'][0]} modifies operand {want} (nvdisasm) but the parser assigns it to {have}")
    return notes


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arch", type=int)
    ap.add_argument("--word", action="append", default=[], help="seed word, hex (bit 127 first)")
    ap.add_argument("--name")
    ap.add_argument("--description")
    ap.add_argument("--out")
    ap.add_argument("--check", nargs="+", help="pages to re-derive and compare")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    if a.check:
        bad = 0
        for path in a.check:
            text = open(path).read()
            arch, name, desc, words = page_zero_words(text)
            rs = [solve(arch, w) for w in words]
            want = render_page(arch, name, desc, rs)
            notes = [n for r in rs for n in r["notes"] + verify_operands(r, rng) + verify_random(r, rng)] + flag_disagreements(path, rs)
            same = want.strip() == text.strip()
            print(f"{path}: {len(words)} variants, {'same as nvdisasm' if same else 'DIFFERS from nvdisasm'}")
            for n in notes:
                print("   note:", n)
            if not same:
                bad += 1
                import difflib
                sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), want.splitlines(True), path, "nvdisasm"))
        sys.exit(1 if bad else 0)
    rs = [solve(a.arch, int(w, 16)) for w in a.word]
    for r in rs:
        print(f"{r['info']['mn']} {','.join(r['info']['kinds'])}: {r['distilled']}", file=sys.stderr)
        for n in r["notes"] + verify_operands(r, rng) + verify_random(r, rng):
            print("   note:", n, file=sys.stderr)
    page = render_page(a.arch, a.name or rs[0]["info"]["mn"], a.description, rs)
    if a.out:
        open(a.out, "w").write(page)
    else:
        sys.stdout.write(page)


if __name__ == "__main__":
    main()

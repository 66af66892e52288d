#!/usr/bin/env python3
"""Writes corpus/ptx-cvt/cvt_*.ptx: every cvt (and cvt.pack) ptxas accepts, per target.

Candidates are every type pair with every rounding and .ftz/.sat/.relu/.satfinite
combination, the packed forms (f16x2/bf16x2 from f32 pairs, fp8/fp6/fp4/ue8m0 x2 and x4
packs and their upconverts, tf32) and the integer packs, each with every register width an
operand may take. ptxas decides which are legal: all candidates of a tier go into one
kernel, the lines ptxas names in an error are dropped, and it compiles again until it
compiles clean (nothing is guessed). Each target's file holds what it accepts and no file
it also compiles holds (`TIERS`), so every form ptxas accepts for an architecture is
compiled for it once. Every result is stored, so ptxas keeps it; each form is converted once from
per-thread registers and once from kernel parameters (uniform values).

Usage: tools/gen_cvt_ptx.py [OUT_DIR]  (default corpus/ptx-cvt; ptxas from .tools/cuda or PATH)
"""
import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VERSION = "9.5"  # the newest PTX ISA ptxas 13.5 reads: newer cvt forms need it
# Each target with the targets whose files it also compiles (ptxas compiles a plain
# target for any later -arch, an `a` target for its own architecture only).
TIERS = [
    ("sm_90", []),
    ("sm_90a", ["sm_90"]),
    ("sm_100", ["sm_90"]),
    ("sm_100a", ["sm_90", "sm_100"]),
    ("sm_120", ["sm_90", "sm_100"]),
    ("sm_120a", ["sm_90", "sm_100", "sm_120"]),
]

INTS = ["s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"]
FLOATS = ["f16", "bf16", "f32", "f64"]
ROUNDINGS = ["", "rn", "rz", "rm", "rp", "rna", "rs", "rni", "rzi", "rmi", "rpi"]
NARROW = ["e4m3x2", "e5m2x2", "e2m1x2", "e2m3x2", "e3m2x2", "ue8m0x2", "s2f6x2"]
WIDE = ["f16x2", "bf16x2"]
X4 = ["e4m3x4", "e5m2x4", "e2m1x4", "e2m3x4", "e3m2x4"]


def widths(t):
    """Register widths (bits) an operand of PTX type t may be held in."""
    if t in ("s8", "u8"):
        return [8, 16, 32]
    if t in ("s16", "u16", "f16", "bf16"):
        return [16]
    if t in ("s64", "u64", "f64"):
        return [64]
    if t in NARROW:
        return [8, 16]
    return [32]  # s32, u32, f32, tf32, f16x2, bf16x2, x4 packs


def flag_sets():
    """Every ordered choice of .ftz, .sat, .relu, .satfinite (both orders of the last two)."""
    for ftz, sat, relu, fin in itertools.product(["", "ftz"], ["", "sat"], ["", "relu"], ["", "satfinite"]):
        yield [m for m in (ftz, sat, relu, fin) if m]
        if relu and fin:
            yield [m for m in (ftz, sat, fin, relu) if m]


def opcode(rnd, flags, dst, src):
    return ".".join(["cvt"] + ([rnd] if rnd else []) + flags + [dst, src])


def scalar_candidates():
    types = INTS + FLOATS
    for dst, src in itertools.product(types + ["tf32"], types):
        for rnd, flags in itertools.product(ROUNDINGS, list(flag_sets())):
            for wd, ws in itertools.product(widths(dst), widths(src)):
                yield (opcode(rnd, flags, dst, src), wd, (ws,))


def packed_candidates():
    """(opcode, dst width, source widths; 'x4' is four f32 sources, 'rb' a b32 rbits)."""
    rounds = ["rn", "rz", "rp", "rm", "rs", "rna"]
    flags = [[], ["relu"], ["satfinite"], ["relu", "satfinite"], ["satfinite", "relu"]]
    for rnd, fl in itertools.product(rounds, flags):
        for dst in WIDE + NARROW:
            for wd in widths(dst):
                yield (opcode(rnd, fl, dst, "f32"), wd, (32, 32))
                yield (opcode(rnd, fl, dst, "f32"), wd, (32, 32, "rb"))
        for dst, src in itertools.product(NARROW, WIDE):
            for wd in widths(dst):
                yield (opcode(rnd, fl, dst, src), wd, (32,))
        for dst, src in itertools.product(WIDE, NARROW):
            for ws in widths(src):
                yield (opcode(rnd, fl, dst, src), 32, (ws,))
        for dst in X4:
            for wd in (16, 32):
                yield (opcode(rnd, fl, dst, "f32"), wd, ("x4", "rb"))
    for rnd, fl in itertools.product([""] + rounds, flags):
        yield (opcode(rnd, fl, "f16x2", "bf16x2"), 32, (32,))
        yield (opcode(rnd, fl, "bf16x2", "f16x2"), 32, (32,))
    for dst, src in itertools.product(["s8", "u8", "s16", "u16"], ["s32", "u32"]):
        yield (f"cvt.pack.sat.{dst}.{src}.b32", 32, (32, 32))
        yield (f"cvt.pack.sat.{dst}.{src}.b32", 32, (32, 32, 32))


REG = {8: "q", 16: "h", 32: "r", 64: "d"}


def operands(srcs, uniform):
    """Source operand text: per-thread registers 1.., kernel-parameter registers 5.."""
    base = 5 if uniform else 1
    out, n = [], {8: 0, 16: 0, 32: 0, 64: 0}
    for s in srcs:
        if s == "x4":
            out.append("{%s}" % ", ".join(f"%r{base + i}" for i in range(4)))
        elif s == "rb":
            out.append(f"%r{base + 3}")
        else:
            out.append(f"%{REG[s]}{base + n[s]}")
            n[s] += 1
    return ", ".join(out)


def body(cands):
    """One line per candidate and uniform-ness; returns (lines, candidate of each line)."""
    lines, owner = [], []
    for i, (op, wd, srcs) in enumerate(cands):
        for uniform in (False, True):
            k = 2 * i + uniform
            lines.append(f"\t{op} %{REG[wd]}0, {operands(srcs, uniform)};")
            lines.append(f"\tst.global.b{wd} [%out+{k * 8}], %{REG[wd]}0;")
            owner += [i, i]
    return lines, owner


def kernel(name, target, cands):
    head = [
        f"// Generated by tools/gen_cvt_ptx.py with ptxas 13.5: every cvt ptxas accepts for {target}",
        "// that no other corpus file compiled for it holds.",
        f".version {VERSION}",
        f".target {target}",
        ".address_size 64",
        "",
        f".visible .entry {name}(.param .u64 p_in, .param .u64 p_out, .param .b64 p_d,",
        "\t.param .b32 p_r0, .param .b32 p_r1, .param .b32 p_r2, .param .b32 p_r3,",
        "\t.param .b16 p_h0, .param .b16 p_h1, .param .b8 p_q)",
        "{",
        "\t.reg .b8 %q<7>;",
        "\t.reg .b16 %h<7>;",
        "\t.reg .b32 %r<9>;",
        "\t.reg .b64 %d<7>;",
        "\t.reg .b64 %in, %out, %off;",
        "\t.reg .b32 %tx;",
        "\tld.param.u64 %in, [p_in];",
        "\tld.param.u64 %out, [p_out];",
        "\tcvta.to.global.u64 %in, %in;",
        "\tcvta.to.global.u64 %out, %out;",
        "\tmov.u32 %tx, %tid.x;",
        "\tmul.wide.u32 %off, %tx, 32;",
        "\tadd.s64 %in, %in, %off;",
        "\tadd.s64 %out, %out, %off;",
        # Per-thread sources (registers 1..4).
        "\tld.global.b64 %d1, [%in];",
        "\tld.global.b64 %d2, [%in+8];",
        "\tld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%in+16];",
        "\tld.global.b16 %h1, [%in+2];",
        "\tld.global.b16 %h2, [%in+6];",
        "\tld.global.b8 %q1, [%in+1];",
        "\tld.global.b8 %q2, [%in+5];",
        # Uniform sources (registers 5..8).
        "\tld.param.b64 %d5, [p_d];",
        "\tadd.s64 %d6, %d5, 1;",
        "\tld.param.b32 %r5, [p_r0];",
        "\tld.param.b32 %r6, [p_r1];",
        "\tld.param.b32 %r7, [p_r2];",
        "\tld.param.b32 %r8, [p_r3];",
        "\tld.param.b16 %h5, [p_h0];",
        "\tld.param.b16 %h6, [p_h1];",
        "\tld.param.b8 %q5, [p_q];",
        "\tadd.s16 %h3, %h5, 1;",  # keeps %q6 a distinct uniform value
        "\tcvt.u8.u16 %q6, %h3;",
    ]
    lines, owner = body(cands)
    return head, lines, owner, ["\tret;", "}", ""]


ERROR = re.compile(r"line (\d+); error")


def accepted(ptxas, target, cands, tmp):
    """The candidates ptxas compiles for `target`: drop the lines it names until none."""
    keep = list(cands)
    for _ in range(20):
        head, lines, owner, tail = kernel("probe", target, keep)
        path = os.path.join(tmp, "probe.ptx")
        with open(path, "w") as f:
            f.write("\n".join(head + lines + tail))
        r = subprocess.run([ptxas, f"-arch={target}", path, "-o", os.path.join(tmp, "probe.cubin")], capture_output=True, text=True)
        if r.returncode == 0:
            return keep
        bad = {owner[int(m) - len(head) - 1] for m in ERROR.findall(r.stderr) if int(m) > len(head)}
        if not bad:
            sys.exit(f"ptxas failed for {target} without naming a candidate line:\n{r.stderr[-2000:]}")
        keep = [c for i, c in enumerate(keep) if i not in bad]
    sys.exit(f"{target}: still errors after 20 rounds")


def find_ptxas():
    local = os.path.join(ROOT, ".tools/cuda/nvidia/cu13/bin/ptxas")
    return local if os.path.exists(local) else shutil.which("ptxas") or sys.exit("ptxas not found")


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "corpus/ptx-cvt")
    ptxas = find_ptxas()
    cands = list(dict.fromkeys(itertools.chain(scalar_candidates(), packed_candidates())))
    with tempfile.TemporaryDirectory() as tmp:
        ok = {t: set(accepted(ptxas, t, cands, tmp)) for t, _ in TIERS}
    anywhere = set().union(*ok.values())
    for target, below in TIERS:
        # What `target` accepts that a file it also compiles already holds.
        earlier = set().union(*(ok[t] for t in below))
        forms = [c for c in cands if c in ok[target] and c not in earlier]
        name = f"cvt_{target}"
        path = os.path.join(out_dir, name + ".ptx")
        if not forms:
            if os.path.exists(path):
                os.remove(path)
            print(f"{name}: nothing new")
            continue
        head, lines, _, tail = kernel(name, target, forms)
        with open(path, "w") as f:
            f.write("\n".join(head + lines + tail))
        print(f"{name}.ptx: {len(forms)} forms ({len({c[0] for c in forms})} opcodes)")
    print(f"{len(cands)} candidates, {len(anywhere)} accepted by some target")


if __name__ == "__main__":
    main()

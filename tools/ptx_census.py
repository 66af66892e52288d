#!/usr/bin/env python3
"""Census of the real-code corpus: what ptxas emits for corpus/ptx per architecture.

    python3 tools/ptx_census.py [--ptx corpus/ptx] [--arch sm_90 --arch sm_100 ...]
                                [--spec corpus/isa] [--harness target/release/sass-harness]
                                [--mnemonics]

For each architecture, every corpus/ptx/*.ptx whose `.target sm_NN` allows it is compiled
with `ptxas -arch=<arch>` and listed with `nvdisasm -c -hex`. Printed per architecture:
cubins, instruction words (all occurrences, NOP padding included), distinct 128-bit words,
distinct words with the control bits 105..127 masked to zero, distinct mnemonics (opcode
without modifiers, e.g. LDG) and distinct opcode forms (opcode with its dot-modifiers, e.g.
LDG.E.128). Where the spec (--spec) has pages for that architecture and the harness binary
exists, also how many of the distinct words the pages decode (`sass-harness decode`).
`--mnemonics` prints the mnemonic lists too.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
BIN = os.path.join(ROOT, ".tools/cuda/nvidia/cu13/bin")
INST = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*/\* 0x([0-9a-f]{16}) \*/\s*$")
HIGH = re.compile(r"^\s*/\* 0x([0-9a-f]{16}) \*/\s*$")
PRED = re.compile(r"^@!?U?P[T0-9]+\s+")
CONTROL = ((1 << 23) - 1) << 105


def target_sm(text):
    for line in text.splitlines():
        line = line.split("//")[0].strip()
        if line.startswith(".target"):
            m = re.search(r"sm_(\d+)", line)
            return int(m.group(1)) if m else None
    return None


def listing(cubin):
    """(text, word) per instruction of every code section."""
    out = subprocess.run([os.path.join(BIN, "nvdisasm"), "-c", "-hex", cubin], capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    res = []
    for i, l in enumerate(lines):
        m = INST.match(l)
        if not m:
            continue
        h = HIGH.match(lines[i + 1])
        assert h, f"{cubin}: no high half after {l!r}"
        res.append((m.group(2).rstrip(" ;"), int(m.group(3), 16) | int(h.group(1), 16) << 64))
    return res


def covered(harness, spec, arch, words):
    """How many of `words` the pages under `spec` decode for `arch`."""
    n = 0
    ws = sorted(words)
    for i in range(0, len(ws), 2000):
        # Exits 2 when some word matches no variant; each word gets its own line.
        p = subprocess.run(
            [harness, "decode", "--arch", arch, "--spec", spec] + [f"{w:032x}" for w in ws[i : i + 2000]],
            capture_output=True,
            text=True,
        )
        n += sum(1 for l in p.stdout.splitlines() if l.strip() and "error:" not in l)
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ptx", default=os.path.join(ROOT, "corpus/ptx"))
    ap.add_argument("--arch", action="append")
    ap.add_argument("--spec", default=os.path.join(ROOT, "corpus/isa"))
    ap.add_argument("--harness", default=os.path.join(ROOT, "target/release/sass-harness"))
    ap.add_argument("--mnemonics", action="store_true")
    a = ap.parse_args()
    archs = a.arch or ["sm_90", "sm_100", "sm_120"]
    files = sorted(f for f in os.listdir(a.ptx) if f.endswith(".ptx"))
    spec_archs = {d[2:] for d in os.listdir(a.spec) if d.startswith("sm")} if os.path.isdir(a.spec) else set()
    with tempfile.TemporaryDirectory() as tmp:
        for arch in archs:
            n = int(arch[3:].rstrip("af"))
            words, texts, cubins = [], [], 0
            for f in files:
                path = os.path.join(a.ptx, f)
                sm = target_sm(open(path).read()) or 90
                if n < sm:
                    continue
                cubin = os.path.join(tmp, f"{f[:-4]}.{arch}.cubin")
                subprocess.run([os.path.join(BIN, "ptxas"), f"-arch={arch}", "-o", cubin, path], check=True)
                cubins += 1
                for t, w in listing(cubin):
                    words.append(w)
                    texts.append(t)
            forms = {PRED.sub("", t).split()[0] for t in texts}
            mnems = {f.split(".")[0] for f in forms}
            distinct = set(words)
            masked = {w & ~CONTROL for w in words}
            print(f"{arch}: {cubins} cubins, {len(words)} words ({sum(1 for t in texts if PRED.sub('', t).startswith('NOP'))} NOP), "
                  f"{len(distinct)} distinct words, {len(masked)} distinct with control bits 105..127 masked, "
                  f"{len(mnems)} mnemonics, {len(forms)} opcode forms")
            if str(n) in spec_archs and os.path.exists(a.harness):
                c = covered(a.harness, a.spec, str(n), distinct)
                print(f"  {arch}: pages under {os.path.relpath(a.spec)} decode {c} of the {len(distinct)} distinct words")
            if a.mnemonics:
                print("  mnemonics: " + " ".join(sorted(mnems)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

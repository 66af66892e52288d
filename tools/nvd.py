"""nvdisasm as an oracle for 128-bit SASS words (batched, illegal words isolated).

    from nvd import disasm
    disasm(90, [word, ...]) -> [text | None (illegal) | "" (silent)]

`word` is a Python int, bit 0 = bit 0 of the instruction (little-endian low 64 first).
The text is nvdisasm's, between the address comment and the hex comment, right-stripped.
"""
import os
import re
import struct
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
NVDISASM = os.environ.get("NVDISASM") or os.path.join(HERE, "..", ".tools/cuda/nvidia/cu13/bin/nvdisasm")
NOP = 0x7918 | (0x000FC00000000000 << 64)
LINE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*/\* 0x[0-9a-f]{16} \*/\s*$")
BAD = re.compile(r"at address 0x([0-9a-f]+)")
BATCH = 8000


def _run(arch, words):
    """One nvdisasm process. Returns (texts by index or None, set of bad indices)."""
    with tempfile.NamedTemporaryFile(suffix=".bin", delete=False) as f:
        for w in list(words) + [NOP]:
            f.write(struct.pack("<QQ", w & (2**64 - 1), w >> 64))
        path = f.name
    try:
        p = subprocess.run([NVDISASM, "-b", f"SM{arch}", "-hex", path], capture_output=True, text=True)
    finally:
        os.unlink(path)
    if p.returncode != 0:
        bad = {int(a, 16) // 16 for a in BAD.findall(p.stderr)}
        return None, bad
    out = {}
    for line in p.stdout.splitlines():
        m = LINE.match(line)
        if m:
            out[int(m.group(1), 16) // 16] = m.group(2).rstrip()
    return out, set()


def _chunk(arch, chunk):
    illegal = set()
    while True:
        out, bad = _run(arch, [NOP if i in illegal else w for i, w in enumerate(chunk)])
        if out is not None:
            return [None if i in illegal else out.get(i, "") for i in range(len(chunk))]
        bad = {b for b in bad if b < len(chunk)} - illegal
        if not bad:
            # A failure that names no address: bisect.
            if len(chunk) == 1:
                return [None]
            h = len(chunk) // 2
            return _chunk(arch, [NOP if i in illegal else w for i, w in enumerate(chunk[:h])]) + \
                _chunk(arch, [NOP if i + h in illegal else w for i, w in enumerate(chunk[h:])])
        illegal |= bad


def disasm(arch, words):
    """Texts for `words`: str, "" for a silent word, None for an illegal one."""
    words = list(words)
    res = []
    for s in range(0, len(words), BATCH):
        res += _chunk(arch, words[s:s + BATCH])
    return res


def split_text(t):
    """'@P0 FFMA.RZ R0, -R1, c[0x0][0x4], R2 ;' -> (pred, mnemonic, [mods], [operands], terminator)."""
    term = " ;" if t.endswith(" ;") else ";"
    body = t[: -len(term)] if t.endswith(term) else t
    pred = ""
    if body.startswith("@"):
        pred, body = body.split(" ", 1)
    head, _, ops = body.partition(" ")
    parts = head.split(".")
    operands, depth, cur = [], 0, ""
    for ch in ops:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            operands.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        operands.append(cur.strip())
    return pred, parts[0], parts[1:], operands, term

#!/usr/bin/env python3
"""What a served nvdisasm run costs against a fresh process (docs/measurements.md).

    python3 tools/nvdisasm-server-cost.py [RUNS [WORDS]]     # default 40 runs of 4 words

Builds nothing: it takes the preload library that build.rs compiled for the release
build (`cargo build --release` first) and the nvdisasm on PATH (the pinned one:
bash ci/install-cuda-tools.sh). RUNS runs of WORDS SM90 NOPs, first through one server
(its start included), then as as many processes; wall seconds and CPU seconds of the
children (the server waited for before it is read, so its children count).
"""
import glob, os, resource, shutil, struct, subprocess, sys, tempfile, time

runs = int(sys.argv[1]) if len(sys.argv) > 1 else 40
words = int(sys.argv[2]) if len(sys.argv) > 2 else 4
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
target = os.environ.get("CARGO_TARGET_DIR", os.path.join(root, "target"))
shims = sorted(glob.glob(os.path.join(target, "release/build/sass-harness-*/out/nvdisasm_server.so")), key=os.path.getmtime)
if not shims:
    sys.exit("no nvdisasm_server.so under " + target + ": cargo build --release first")
nvdisasm = shutil.which("nvdisasm") or sys.exit("no nvdisasm on PATH: bash ci/install-cuda-tools.sh")
tmp = tempfile.mkdtemp(prefix="nvd-cost-")
words_file, sentinel = os.path.join(tmp, "in.bin"), os.path.join(tmp, "sentinel.bin")
with open(words_file, "wb") as f:
    f.write(struct.pack("<QQ", 0x7918, 0x000FC00000000000) * words)
with open(sentinel, "wb") as f:
    f.write(bytes(64))


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


c0, t0 = children_cpu(), time.time()
env = dict(os.environ, LD_PRELOAD=shims[-1], SASS_HARNESS_SERVER_SENTINEL=sentinel)
server = subprocess.Popen([nvdisasm, "-b", "SM90", "-hex", sentinel], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
assert server.stdout.readline() == b"ready\n", "the server did not start"
request = f"{words_file}\n{tmp}/out\n{tmp}/err\n".encode()
for _ in range(runs):
    server.stdin.write(request)
    server.stdin.flush()
    assert server.stdout.readline() == b"exit 0\n"
server.stdin.close()
server.wait()
served = (time.time() - t0, children_cpu() - c0)
c0, t0 = children_cpu(), time.time()
for _ in range(runs):
    assert subprocess.run([nvdisasm, "-b", "SM90", "-hex", words_file], capture_output=True).returncode == 0
plain = (time.time() - t0, children_cpu() - c0)
shutil.rmtree(tmp)
print(f"{runs} runs of {words} words: served {served[0]:.2f} s wall, {served[1]:.2f} CPU s (one start included); "
      f"processes {plain[0]:.2f} s wall, {plain[1]:.2f} CPU s; {plain[1] / served[1]:.1f}x the CPU")

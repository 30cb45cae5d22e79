#!/usr/bin/env python3
"""Instructions per operation of the bench's figures, counted by callgrind: figures that do not
drift with the machine.

The speed figures of `make bench` move by up to 2x within a minute on the shared VMs these
benchmarks run on, so a change worth 5% cannot be seen in them. Instruction counts are
deterministic (the same build gives the same count to within a fraction of a percent), so they
are what to compare before and after a change to the server's paths. They are not time: a cache
miss or a page fault is one instruction, so a change that moves memory around must still be
checked with `make bench`.

Each figure counted here is a bench figure whose allocations are counted (`.allocs`): 200 calls
made after the figure's timed run (so after every lazy start-up cost), which the bench marks as
a callgrind region (`examples/bench/callgrind.rs`). This runs the bench under callgrind once per
figure, collecting in that region alone, and prints the instructions per call; then issue 13's
ratios in instructions (the server alone against the client's encode and decode of the pod; the
client alone against the end-to-end UPDATE).

Usage: instructions.py [--bench target/release/examples/bench] [figure ...]
Needs valgrind (`apt-get install valgrind`).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

# Calls in each region (`ALLOC_SAMPLES` in examples/bench/inproc.rs).
CALLS = 200
# The figures and the bench operation that makes each.
FIGURES = {
    "inproc.pod_value_roundtrip": "server_get",
    "inproc.server_only.get": "server_get",
    "inproc.server_only.update": "server_update",
    "inproc.server_only.merge": "server_merge",
    "inproc.server_only.strategic": "server_strategic",
    "inproc.server_only.create": "server_create",
    "inproc.server_only.create_named": "server_create_named",
    "inproc.update": "update",
    "inproc.client_only.update": "ceiling",
}
REFERENCE = "inproc.pod_value_roundtrip"


def instructions(bench, figure, out):
    """Instructions per call of `figure`, by callgrind."""
    env = dict(os.environ, BENCH_CALLGRIND_COLLECT=figure)
    command = [
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={out}",
        "--collect-atstart=no",
        bench,
        "--only",
        "inproc",
        "--op",
        FIGURES[figure],
    ]
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1]) / CALLS
    raise ValueError(f"no totals in the callgrind output for {figure}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", default="target/release/examples/bench")
    parser.add_argument("figures", nargs="*", default=list(FIGURES))
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (apt-get install valgrind)")
    if not os.path.exists(args.bench):
        sys.exit(f"{args.bench} is not built (cargo build --release -p fake-apiserver --example bench)")
    unknown = [f for f in args.figures if f not in FIGURES]
    if unknown:
        sys.exit(f"no counted figure {', '.join(unknown)} (one of {', '.join(FIGURES)})")
    counted = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        print(f"{'figure':44} {'value':>10} unit")
        for figure in args.figures:
            counted[figure] = instructions(args.bench, figure, out)
            print(f"{'instructions.' + figure[len('inproc.'):]:44} {counted[figure]:10.0f} instr/op")
    reference = counted.get(REFERENCE)
    for figure, value in counted.items():
        if reference and figure.startswith("inproc.server_only."):
            op = figure.rsplit(".", 1)[1]
            name = f"instructions.ratio.server_{op}_vs_roundtrip"
            print(f"{name:44} {value / reference:10.3f} ratio")
    if "inproc.update" in counted and "inproc.client_only.update" in counted:
        ratio = counted["inproc.client_only.update"] / counted["inproc.update"]
        print(f"{'instructions.ratio.client_only_vs_update':44} {ratio:10.3f} ratio")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""A Llama-3-8B-shaped model (32 layers, hidden 4096, 32 query and 8 key/value heads, MLP 14336)
at 2048 tokens, compiled and simulated timing-only on a trn2 logical core (one core, or the two
of an LNC=2 pair with --lnc 2) by ``trnsim graph run``: the
graph compiler's scale benchmark (issue 19: under 60 s of host time, identical layers compiled
once). The model is exported without weights by scripts/export_llama3_8b_shape.py (not timed);
the benchmark times the whole command, import to report, over several runs, and prints the wall
and CPU time of each with the command's own summary (kernels, instructions, simulated time).

Run from the source tree against a release build:
  /usr/bin/python3 bench/llama3_8b_timing.py [--trnsim build/release/tools/trnsim/trnsim]
      [--runs 3] [--auto-cast none|matmult|all] [--lnc 1|2]
"""
import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET_SECONDS = 60.0


def child_cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trnsim", default=os.path.join(HERE, "..", "build", "release", "tools",
                                                         "trnsim", "trnsim"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=2048)
    parser.add_argument("--auto-cast", default="none", choices=["none", "matmult", "all"])
    parser.add_argument("--lnc", type=int, default=1, choices=[1, 2])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="trnsim-llama8b-") as directory:
        model = os.path.join(directory, "llama3_8b_shape.onnx")
        subprocess.run([sys.executable, os.path.join(HERE, "..", "scripts",
                                                     "export_llama3_8b_shape.py"), model, "32"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        command = [args.trnsim, "graph", "run", model, "--dim", f"seq={args.tokens}",
                   "--mode", "timing-only", "--auto-cast", args.auto_cast, "--lnc", str(args.lnc)]
        walls = []
        for run in range(args.runs):
            cpu_before, start = child_cpu_seconds(), time.perf_counter()
            done = subprocess.run(command, check=True, capture_output=True, text=True)
            wall, cpu = time.perf_counter() - start, child_cpu_seconds() - cpu_before
            walls.append(wall)
            summary = [line for line in done.stdout.splitlines()
                       if re.match(r"(compiled|\d+ kernels|simulated time|compute|chip:)", line)]
            print(f"run {run + 1}: {wall:.2f} s wall, {cpu:.2f} s CPU")
            if run == 0:
                print("\n".join("  " + line for line in summary))
    best = min(walls)
    print(f"llama3-8b shape, {args.tokens} tokens, timing-only: {best:.2f} s host time at best "
          f"(target < {TARGET_SECONDS:.0f} s): {'met' if best < TARGET_SECONDS else 'NOT met'}")
    return 0 if best < TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())

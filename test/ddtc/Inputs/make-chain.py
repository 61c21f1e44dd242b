"""Prints a spec of N bindings, each one a contiguous of the binding before.

Usage: make-chain.py N
"""
import sys

n = int(sys.argv[1])
print("t0 = contiguous(3, double)")
for i in range(1, n):
    print(f"t{i} = contiguous(1, t{i - 1})")

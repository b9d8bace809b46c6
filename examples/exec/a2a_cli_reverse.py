#!/usr/bin/env python3
"""An agent written for the `a2a-cli serve --exec` contract, which knows
nothing about A2A: the message's text arrives on stdin, whatever it prints is
the answer, exit 0 completes the task and any other exit fails it with what
it wrote on stderr.

    [[agents]]
    name = "reverse"
    path = "/reverse"
    runtime = "exec"
    command = "python3"
    args = ["-u", "examples/exec/a2a_cli_reverse.py"]
"""
import sys

text = sys.stdin.read()
if not text.strip():
    print("nothing to reverse: send some text", file=sys.stderr)
    sys.exit(2)
for line in text.splitlines():
    print(line[::-1])

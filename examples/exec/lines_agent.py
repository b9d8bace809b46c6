#!/usr/bin/env python3
"""A switchboard exec agent in JSON-lines mode (`mode = "lines"`).

It reads one JSON object per stdin line (first the message, later the
answers to its questions) and writes one JSON object per stdout line:
statuses, artifact chunks, progress trackers, a question, the end.

Send it some words: it streams them back upper-cased as artifact chunks with
a progress tracker, asks for your name (the task turns input-required; answer
on the same task) and greets you.
"""
import json
import sys


def send(**line):
    # One object per line, flushed at once: the agent streams what it reads.
    print(json.dumps(line), flush=True)


def read():
    line = sys.stdin.readline()
    if not line:  # the server stopped waiting for us
        sys.exit(0)
    return json.loads(line)


message = read()
words = message["text"].split()
if not words:
    send(type="fail", text="send some words")
    sys.exit(0)

send(type="status", text=f"shouting {len(words)} words")
send(type="progress", tracker="words", total=len(words), progress=0, message="starting")
for i, word in enumerate(words, 1):
    send(type="artifact", name="shout", text=word.upper() + " ")
    send(type="progress", tracker="words", progress=i, message=f"{i} of {len(words)}")
send(type="artifact", name="shout", text="!", last=True)
send(type="progress", tracker="words", state="completed")

send(type="ask", text="What is your name?")
answer = read()
name = answer["text"].strip() or "stranger"
send(type="artifact", name="greeting", text=f"Hello, {name}! You sent {len(words)} words.", last=True)
send(type="complete")

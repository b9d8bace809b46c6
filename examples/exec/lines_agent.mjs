#!/usr/bin/env node
// A switchboard exec agent in JSON-lines mode (`mode = "lines"`), in Node:
// the same conversation as lines_agent.py. One JSON object per line both
// ways: the message (then the answers) on stdin, what the agent says on
// stdout.
import { createInterface } from "node:readline";

const send = (line) => process.stdout.write(JSON.stringify(line) + "\n");
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const read = async () => {
  const { value, done } = await lines.next();
  if (done) process.exit(0); // the server stopped waiting for us
  return JSON.parse(value);
};

const message = await read();
const words = message.text.split(/\s+/).filter(Boolean);
if (words.length === 0) {
  send({ type: "fail", text: "send some words" });
  process.exit(0);
}
send({ type: "status", text: `shouting ${words.length} words` });
send({ type: "progress", tracker: "words", total: words.length, progress: 0, message: "starting" });
for (const [i, word] of words.entries()) {
  send({ type: "artifact", name: "shout", text: word.toUpperCase() + " " });
  send({ type: "progress", tracker: "words", progress: i + 1, message: `${i + 1} of ${words.length}` });
}
send({ type: "artifact", name: "shout", text: "!", last: true });
send({ type: "progress", tracker: "words", state: "completed" });

send({ type: "ask", text: "What is your name?" });
const answer = await read();
const name = answer.text.trim() || "stranger";
send({ type: "artifact", name: "greeting", text: `Hello, ${name}! You sent ${words.length} words.`, last: true });
send({ type: "complete" });
process.exit(0);

// The official protobuf binding (@ag-ui/proto 1.0.0) as a filter, for tests/test_proto.py.
//
//   node proto.mjs decode   stdin: length-prefixed frames; stdout: each event as one JSON line
//   node proto.mjs encode   stdin: one event's JSON per line; stdout: one frame per event
//
// A frame is a 4-byte big-endian length and that many bytes of one ag_ui.Event message. Anything
// the package reports on the way (a console.warn or console.error: an event its schema rejects,
// a content part it drops) is written to stderr and fails the run with exit status 1.

import { readFileSync } from "node:fs";

import { decode, encode } from "@ag-ui/proto";

const complaints = [];
console.warn = (...args) => complaints.push(`warn: ${args.map(String).join(" ")}`);
console.error = (...args) => complaints.push(`error: ${args.map(String).join(" ")}`);

function decodeFrames(body) {
  const lines = [];
  let offset = 0;
  while (offset < body.length) {
    if (body.length - offset < 4) throw new Error(`the body ends mid-frame at byte ${offset}`);
    const size = body.readUInt32BE(offset);
    const end = offset + 4 + size;
    if (end > body.length) throw new Error(`frame at byte ${offset} declares ${size} bytes`);
    lines.push(JSON.stringify(decode(new Uint8Array(body.subarray(offset + 4, end)))));
    offset = end;
  }
  return Buffer.from(lines.map((line) => `${line}\n`).join(""));
}

function encodeLines(text) {
  const frames = text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const payload = encode(JSON.parse(line));
      const length = Buffer.alloc(4);
      length.writeUInt32BE(payload.length);
      return Buffer.concat([length, Buffer.from(payload)]);
    });
  return Buffer.concat(frames);
}

const mode = process.argv[2];
const input = readFileSync(0);
let output;
if (mode === "decode") {
  output = decodeFrames(input);
} else if (mode === "encode") {
  output = encodeLines(input.toString("utf8"));
} else {
  throw new Error(`usage: node proto.mjs decode|encode, not ${mode}`);
}
if (complaints.length > 0) {
  process.stderr.write(`${complaints.join("\n")}\n`);
  process.exit(1);
}
process.stdout.write(output);

// The official TypeScript client (@ag-ui/client 1.0.0) against a live agui server.
//
// Started by tests/test_server.py, which serves the "showcase" agent and passes:
//   AGUI_URL          the endpoint to POST runs to
//   AGUI_RESULT_FILE  where to write what the client ends with, as JSON
//   AGUI_TRANSPORT    "sse" (the default), or "proto" to ask for the protobuf binding: the agent
//                     then sends `Accept: application/vnd.ag-ui.event+proto`, and the client
//                     reads the length-prefixed frames with @ag-ui/proto instead of SSE
//
// HttpAgent runs its whole 1.0 pipeline on our bytes: SSE parsing, the compatibility boundary,
// enforcement, chunk expansion, verifyEvents and defaultApplyEvents. Any error fails the run; any
// console.warn or console.error (the client's way of reporting stripped or converted material,
// patches that do not apply, version mismatches) fails this test.
//
// Run it by hand: AGUI_URL=http://127.0.0.1:8000/ AGUI_RESULT_FILE=/tmp/out.json node --test
// (add AGUI_TRANSPORT=proto for the binary transport)

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { test } from "node:test";

import { HttpAgent } from "@ag-ui/client";
import { AGUI_MEDIA_TYPE } from "@ag-ui/proto";

const url = process.env.AGUI_URL;
const resultFile = process.env.AGUI_RESULT_FILE;
const transport = process.env.AGUI_TRANSPORT ?? "sse";

// HttpAgent always asks for SSE; asking for protobuf is a matter of the request's headers.
class ProtobufHttpAgent extends HttpAgent {
  requestInit(input) {
    const init = super.requestInit(input);
    return { ...init, headers: { ...init.headers, Accept: AGUI_MEDIA_TYPE } };
  }
}

const initialMessages = [{ id: "user-1", role: "user", content: "What is the weather in Seoul?" }];
const tools = [
  {
    name: "confirm_booking",
    description: "Ask the user to confirm a hotel booking",
    parameters: { type: "object", properties: { hotel: { type: "string" } } },
  },
];

test("HttpAgent runs a full agui run without an error or a warning", async () => {
  assert.ok(url, "AGUI_URL must name the agui test server's endpoint");
  assert.ok(resultFile, "AGUI_RESULT_FILE must name the file to write the result to");

  const complaints = [];
  const saved = { warn: console.warn, error: console.error };
  console.warn = (...args) => complaints.push(["warn", args.map(String).join(" ")]);
  console.error = (...args) => complaints.push(["error", args.map(String).join(" ")]);

  assert.ok(["sse", "proto"].includes(transport), `AGUI_TRANSPORT must be sse or proto`);

  const events = [];
  const failures = [];
  const contentTypes = [];
  let outcome = null;
  const Agent = transport === "proto" ? ProtobufHttpAgent : HttpAgent;
  const agent = new Agent({
    url,
    threadId: "thread-ts",
    initialMessages,
    initialState: {},
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      contentTypes.push(response.headers.get("content-type"));
      return response;
    },
  });
  let result;
  try {
    result = await agent.runAgent(
      { runId: "run-ts", tools, context: [], forwardedProps: {} },
      {
        onEvent: ({ event }) => {
          events.push(event.type);
        },
        onRunFinishedEvent: (params) => {
          outcome = params.outcome ?? null;
        },
        onRunFailed: ({ error }) => {
          failures.push(String(error));
        },
      },
    );
  } finally {
    console.warn = saved.warn;
    console.error = saved.error;
  }

  assert.deepEqual(failures, [], "the client reported the run as failed");
  assert.deepEqual(complaints, [], "the client warned or logged an error");
  assert.equal(events[0], "RUN_STARTED");
  assert.equal(events.at(-1), "RUN_FINISHED");

  writeFileSync(
    resultFile,
    JSON.stringify({
      messages: agent.messages,
      state: agent.state,
      pendingInterrupts: agent.pendingInterrupts,
      newMessageIds: result.newMessages.map((message) => message.id),
      events,
      outcome,
      contentTypes,
    }),
  );
});

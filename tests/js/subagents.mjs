// Subagents with the official TypeScript client's HttpAgent, current (1.0.0) and legacy (0.0.59).
//
// Started by tests/test_profile.py, which serves the supervisor example (and small agents of its
// own) on uvicorn and passes:
//   AGUI_URL          the endpoint
//   AGUI_CLIENT       "current" (@ag-ui/client 1.0.0) or "legacy" (0.0.59, what CopilotKit pins)
//   AGUI_MESSAGES     a JSON list of user messages: one run each, on one thread, in order
//   AGUI_RESULT_FILE  where to write what the client ends with, as JSON
//
// For each run it records every event the client applied (type and subagentRunId), how the run
// ended (outcome or error) and, at the end, the client's messages and every console.warn or
// console.error. The legacy client parses each event with its strict schema: an event it does
// not know (SUBAGENT_*) or a shape it refuses (a cancelled outcome, a tool result of parts)
// fails the run, which shows up here as an error.
//
// Run it by hand: AGUI_URL=http://127.0.0.1:8000/ AGUI_CLIENT=legacy
//   AGUI_MESSAGES='["How tall is the Eiffel Tower?"]' AGUI_RESULT_FILE=/tmp/out.json node subagents.mjs

import { writeFileSync } from "node:fs";

import { HttpAgent as CurrentHttpAgent } from "@ag-ui/client";
import { HttpAgent as LegacyHttpAgent } from "@ag-ui/client-legacy";

const CLIENTS = { current: CurrentHttpAgent, legacy: LegacyHttpAgent };
const env = process.env;
const HttpAgent = CLIENTS[env.AGUI_CLIENT ?? "current"];

const complaints = [];
for (const level of ["warn", "error"]) {
  console[level] = (...args) => complaints.push(`${level}: ${args.map(String).join(" ")}`);
}

const agent = new HttpAgent({ url: env.AGUI_URL, threadId: "thread-sub", initialMessages: [] });
const runs = [];
const texts = JSON.parse(env.AGUI_MESSAGES ?? "[]");

for (const [index, text] of texts.entries()) {
  agent.addMessage({ id: `user-${index + 1}`, role: "user", content: text });
  const record = { events: [], outcome: null, metadata: null, error: null, failed: null };
  try {
    await agent.runAgent(
      { runId: `run-${index + 1}`, tools: [], context: [], forwardedProps: {} },
      {
        onEvent: ({ event }) => {
          record.events.push([event.type, event.subagentRunId ?? null]);
          if (event.type === "RUN_FINISHED") {
            record.outcome = event.outcome ?? null;
            record.metadata = event.metadata ?? null;
          }
        },
        onRunFailed: ({ error }) => {
          record.failed = String(error);
        },
      },
    );
  } catch (error) {
    record.error = String(error?.stack ?? error);
  }
  runs.push(record);
}

writeFileSync(
  env.AGUI_RESULT_FILE,
  JSON.stringify({ runs, messages: agent.messages, complaints }),
);

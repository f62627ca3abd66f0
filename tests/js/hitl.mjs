// Human in the loop with the official TypeScript client's HttpAgent, on agui's live examples.
//
// Started by tests/test_hitl_clients.py, which serves the task board and the travel examples on
// uvicorn and passes:
//   AGUI_BOARD_URL    the task board's endpoint
//   AGUI_TRAVEL_URL   the travel assistant's endpoint
//   AGUI_SHOPPING_URL the pydantic-ai shopping list (tests/test_bridges_clients.py)
//   AGUI_DESK_URL     the OpenAI Agents SDK front desk (tests/test_bridges_clients.py)
//   AGUI_BRIDGE_URL   an adapter's stream served by from_events, or by remote in front of it
//                     (tests/test_bridges_clients.py)
//   AGUI_GRAPH_URL    the LangGraph booking desk (tests/test_bridges_langgraph.py)
//   AGUI_CLIENT       "current" (@ag-ui/client 1.0.0) or "legacy" (0.0.59, what CopilotKit pins)
//   AGUI_SCENARIO     one of the names in SCENARIOS below
//   AGUI_RESULT_FILE  where to write what the client ends with, as JSON
//
// The script only drives the client, the way an app would: it adds the user's messages, sends
// the resume entries and tool messages each way of answering an approval sends, and records
// every run (the events, the outcome, the interrupts left pending), the client's messages and
// state, and every console.warn or console.error (the client's way of reporting a call it
// overwrote, a patch it could not apply, material it stripped). The Python test asserts on it.
//
// Run it by hand: AGUI_BOARD_URL=http://127.0.0.1:8000/ AGUI_CLIENT=current
//   AGUI_SCENARIO=approve-plain-resume AGUI_RESULT_FILE=/tmp/out.json node hitl.mjs

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

// The board tools the app offers: it renders their calls, and the agent answers them.
const BOARD_TOOLS = ["add_task", "complete_task", "rename_task", "delete_task"].map((name) => ({
  name,
  description: `The app's ${name.replace("_", " ")} card`,
  parameters: { type: "object", properties: {} },
}));

const runs = [];
let users = 0;

async function run(agent, parameters) {
  const record = { runId: parameters.runId, events: [], outcome: null, error: null };
  try {
    await agent.runAgent(
      { tools: BOARD_TOOLS, context: [], forwardedProps: {}, ...parameters },
      {
        onEvent: ({ event }) => {
          record.events.push(event.type);
          if (event.type === "RUN_FINISHED") record.outcome = event.outcome ?? null;
        },
      },
    );
  } catch (error) {
    record.error = String(error?.stack ?? error);
  }
  record.pendingInterrupts = agent.pendingInterrupts.map(({ id, toolCallId }) => ({
    id,
    toolCallId,
  }));
  runs.push(record);
}

async function ask(agent, text, runId) {
  users += 1;
  agent.addMessage({ id: `user-${users}`, role: "user", content: text });
  await run(agent, { runId });
}

function board() {
  return new HttpAgent({
    url: env.AGUI_BOARD_URL,
    threadId: "board",
    initialMessages: [],
    initialState: { tasks: [] },
  });
}

// Two tasks, then "delete 1": the run ends on the approval's interrupt.
async function askToDelete() {
  const agent = board();
  await ask(agent, "add buy milk, call mum", "run-add");
  await ask(agent, "delete 1", "run-delete");
  return { agent, question: agent.pendingInterrupts[0] };
}

function answer(question, approved) {
  return [{ interruptId: question.id, status: "resolved", payload: { approved } }];
}

// What CopilotKit gives a call it has no result for before it resumes: a tool message of its own.
function toolMessage(agent, question, content) {
  agent.addMessage({ id: "app-tool-1", role: "tool", toolCallId: question.toolCallId, content });
}

// Each settles the approval one way, then asks once more: nothing may be asked again.
const SCENARIOS = {
  async travel() {
    const agent = new HttpAgent({ url: env.AGUI_TRAVEL_URL, threadId: "travel" });
    await ask(agent, "What's the weather like in Paris and suggest some Italian restaurants?", "run-1");
    return agent;
  },
  async "board-add-complete"() {
    const agent = board();
    await ask(agent, "add buy milk, call mum", "run-add");
    await ask(agent, "complete 1", "run-complete");
    return agent;
  },
  async "approve-plain-resume"() {
    const { agent, question } = await askToDelete();
    await run(agent, { runId: "run-approve", resume: answer(question, true) });
    await ask(agent, "list", "run-list");
    return agent;
  },
  async "approve-same-run-id"() {
    const { agent, question } = await askToDelete();
    await run(agent, { runId: "run-delete", resume: answer(question, true) });
    await ask(agent, "list", "run-list");
    return agent;
  },
  async "approve-same-run-id-and-tool-result"() {
    const { agent, question } = await askToDelete();
    toolMessage(agent, question, "");
    await run(agent, { runId: "run-delete", resume: answer(question, true) });
    await ask(agent, "list", "run-list");
    return agent;
  },
  async "approve-handler-output-then-resume"() {
    const { agent, question } = await askToDelete();
    toolMessage(agent, question, "The delete card was shown.");
    await run(agent, { runId: "run-approve", resume: answer(question, true) });
    await ask(agent, "list", "run-list");
    return agent;
  },
  // The bridges' examples: an approval answered in resume[], which the framework settles.
  async shopping() {
    const agent = new HttpAgent({
      url: env.AGUI_SHOPPING_URL, threadId: "shopping", initialState: { items: [] },
    });
    await ask(agent, "add milk", "run-add");
    await ask(agent, "clear", "run-clear");
    await run(agent, { runId: "run-approve", resume: answer(agent.pendingInterrupts[0], true) });
    return agent;
  },
  async desk() {
    const agent = new HttpAgent({ url: env.AGUI_DESK_URL, threadId: "desk" });
    await ask(agent, "hotels in Lisbon", "run-find");
    await ask(agent, "book Lumen", "run-book");
    await run(agent, { runId: "run-approve", resume: answer(agent.pendingInterrupts[0], true) });
    return agent;
  },
  // An adapter's own approval, relayed by a bridge: ask, then answer its interrupt each way.
  async "bridge-approve"() {
    const agent = new HttpAgent({ url: env.AGUI_BRIDGE_URL, threadId: "bridge" });
    await ask(agent, "delete task 1", "run-ask");
    await run(agent, { runId: "run-answer", resume: answer(agent.pendingInterrupts[0], true) });
    return agent;
  },
  async "bridge-decline"() {
    const agent = new HttpAgent({ url: env.AGUI_BRIDGE_URL, threadId: "bridge" });
    await ask(agent, "delete task 1", "run-ask");
    await run(agent, { runId: "run-answer", resume: answer(agent.pendingInterrupts[0], false) });
    return agent;
  },
  async graph() {
    const agent = new HttpAgent({ url: env.AGUI_GRAPH_URL, threadId: "graph" });
    await ask(agent, "hotels in Lisbon", "run-find");
    await ask(agent, "book Lumen", "run-book");
    await run(agent, { runId: "run-approve", resume: answer(agent.pendingInterrupts[0], true) });
    return agent;
  },
  async decline() {
    const { agent, question } = await askToDelete();
    await run(agent, { runId: "run-decline", resume: answer(question, false) });
    await ask(agent, "list", "run-list");
    return agent;
  },
};

const result = { complaints, runs, messages: null, state: null, error: null };
try {
  const scenario = SCENARIOS[env.AGUI_SCENARIO];
  if (HttpAgent === undefined) throw new Error(`AGUI_CLIENT must be one of ${Object.keys(CLIENTS)}`);
  if (scenario === undefined) throw new Error(`AGUI_SCENARIO must be one of ${Object.keys(SCENARIOS)}`);
  const agent = await scenario();
  result.messages = agent.messages;
  result.state = agent.state;
} catch (error) {
  result.error = String(error?.stack ?? error);
}
writeFileSync(env.AGUI_RESULT_FILE, JSON.stringify(result, null, 2));

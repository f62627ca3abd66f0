// CopilotKit (runtime and core 1.75.0) in front of live agui servers, driven headless.
//
// Started by tests/test_copilotkit.py, once per scenario, with:
//   AGUI_SCENARIO     what to do (see SCENARIOS below)
//   AGUI_TRAVEL_URL   the travel example's endpoint
//   AGUI_BOARD_URL    the task board example's endpoint
//   AGUI_SLOW_URL     an agent that streams until it is cancelled (for "stop")
//   AGUI_RESULT_FILE  where to write what the app ends with, as JSON
//
// It does what an app does: a CopilotRuntime (the server half, on 127.0.0.1, port 0) whose
// agents are HttpAgents on the agui endpoints, and CopilotKitCore (the browser half) connected
// to that runtime, with the app's tools registered on it. CopilotKitCore connects only where a
// `window` exists; the global object stands in for it. The approvals are answered the way
// CopilotKit's React `useInterrupt` hook answers them (its state machine, `ɵInterruptState`,
// ships in @copilotkit/core): tool messages for the interrupted calls, then a run carrying the
// `resume` entries and the interrupted run's own run id.
//
// Every console.warn and console.error is recorded in the result, and so is every error
// CopilotKitCore reports: the Python side decides what they mean.
//
// Run it by hand: AGUI_SCENARIO=travel AGUI_TRAVEL_URL=http://127.0.0.1:8000/ \
//   AGUI_RESULT_FILE=/tmp/out.json node copilotkit.mjs

import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";

import { HttpAgent } from "@ag-ui/client-legacy";
import { CopilotKitCore, ɵInterruptState as InterruptState } from "@copilotkit/core";
import { CopilotRuntime } from "@copilotkit/runtime/v2";
import { createCopilotNodeListener } from "@copilotkit/runtime/v2/node";

const STEP_MS = 20_000;

// The few lines that make the runtime's /info list an agui agent's capabilities: agui serves
// them at `<endpoint>/capabilities`, and the runtime asks every agent's getCapabilities().
class AguiAgent extends HttpAgent {
  async getCapabilities() {
    const response = await fetch(`${this.url.replace(/\/$/, "")}/capabilities`, {
      headers: this.headers,
    });
    if (!response.ok) throw new Error(`capabilities: HTTP ${response.status}`);
    return response.json();
  }
}

const complaints = [];
for (const level of ["warn", "error"]) {
  console[level] = (...args) => complaints.push({ level, text: args.map(String).join(" ") });
}

function within(promise, what, ms = STEP_MS) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function startRuntime(agents) {
  const runtime = new CopilotRuntime({ agents });
  const listener = createCopilotNodeListener({
    runtime,
    basePath: "/api/copilotkit",
    activateChannels: false,
  });
  const server = createServer(listener);
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return { server, url: `http://127.0.0.1:${port}/api/copilotkit` };
}

async function startCore(runtimeUrl) {
  globalThis.window ??= globalThis;
  const errors = [];
  const core = new CopilotKitCore({ runtimeUrl });
  core.subscribe({
    onError: ({ error, code }) => errors.push({ code, message: String(error?.message ?? error) }),
  });
  await within(
    new Promise((resolve, reject) => {
      const check = () => {
        const status = core.runtimeConnectionStatus;
        if (status === "connected") resolve();
        else if (status === "error") reject(new Error("CopilotKitCore could not reach /info"));
        else setTimeout(check, 10);
      };
      check();
    }),
    "connecting to the runtime",
  );
  return { core, errors };
}

// Calls of the agent's messages, and what the app answered them with.
function summary(agent) {
  const calls = [];
  const results = {};
  for (const message of agent.messages) {
    for (const call of message.toolCalls ?? []) {
      calls.push({ id: call.id, name: call.function.name, arguments: call.function.arguments });
    }
    if (message.role === "tool") (results[message.toolCallId] ??= []).push(message.content);
  }
  const ids = agent.messages.map((message) => message.id);
  return {
    messages: agent.messages.map(({ id, role, content, toolCallId }) => ({
      id,
      role,
      content: typeof content === "string" ? content : null,
      ...(toolCallId ? { toolCallId } : {}),
    })),
    duplicateMessageIds: ids.filter((id, index) => ids.indexOf(id) !== index),
    calls,
    results,
    state: agent.state,
    pendingInterrupts: agent.pendingInterrupts ?? [],
  };
}

// What `useInterrupt` keeps: the interrupts of the last run that ended with some, and its run id.
function watchInterrupts(agent) {
  const watched = { state: new InterruptState(), runIds: new Map(), outcomes: [] };
  agent.subscribe({
    onRunStartedEvent: () => watched.state.clear(),
    onRunFinishedEvent: (params) => {
      watched.outcomes.push({ runId: params.input.runId, outcome: params.outcome ?? null });
      if (params.outcome === "interrupt") {
        for (const interrupt of params.interrupts) {
          watched.runIds.set(interrupt.id, params.input.runId);
        }
        watched.state.setStandard(params.interrupts);
      }
    },
  });
  return watched;
}

// `useInterrupt().resolve(payload)`: the tool results, then resume with the interrupted run id.
async function resolveInterrupt(core, agent, watched, payload, { toolResults = true } = {}) {
  const decision = watched.state.resolve(payload);
  if (decision.kind !== "resume") throw new Error(`no interrupt to resolve (${decision.kind})`);
  const runId = decision.resume
    .map((entry) => watched.runIds.get(entry.interruptId))
    .find((candidate) => candidate !== undefined);
  if (toolResults) {
    for (const result of decision.toolResults) {
      agent.addMessage({
        id: randomUUID(),
        role: "tool",
        toolCallId: result.toolCallId,
        content: result.content,
      });
    }
  }
  const sent = { resume: decision.resume, runId, toolResults: toolResults ? decision.toolResults : [] };
  await within(core.runAgent({ agent, resume: decision.resume, runId }), "the resumed run");
  return sent;
}

async function say(core, agent, text) {
  agent.addMessage({ id: randomUUID(), role: "user", content: text });
  await within(core.runAgent({ agent }), `the run for ${JSON.stringify(text)}`);
}

// A tool's parameters as CopilotKit takes them, a Standard Schema, here with its JSON Schema
// given as it is (an app would write a zod object).
function parameters(properties) {
  const schema = { type: "object", properties, required: Object.keys(properties) };
  return {
    "~standard": {
      version: 1,
      vendor: "agui-tests",
      validate: (value) => ({ value }),
      jsonSchema: { input: () => schema, output: () => schema },
    },
  };
}

const BOARD_TOOLS = {
  add_task: { title: { type: "string" } },
  complete_task: { id: { type: "integer" } },
  rename_task: { id: { type: "integer" }, title: { type: "string" } },
  delete_task: { id: { type: "integer" } },
};

// The board's tools, as an app registers them to render their calls. `followUp: false`: the
// agent answers them itself, so there is nothing to run again for. With a handler for
// delete_task, CopilotKitCore runs it on the call the agent leaves without a result.
function boardTools(core, { deleteHandler } = {}) {
  for (const [name, properties] of Object.entries(BOARD_TOOLS)) {
    core.addTool({
      name,
      description: `The board's ${name}`,
      parameters: parameters(properties),
      followUp: false,
      ...(name === "delete_task" && deleteHandler ? { handler: deleteHandler } : {}),
    });
  }
}

// A board with two tasks, then "delete 1": the run ends waiting for the approval.
async function boardAwaitingDelete(core, agent) {
  await say(core, agent, "add buy milk, call mum");
  await say(core, agent, "delete 1");
}

const SCENARIOS = {
  async info({ runtimeUrl }) {
    const response = await fetch(`${runtimeUrl}/info`);
    return { status: response.status, info: await response.json() };
  },

  async travel({ core }) {
    const agent = core.getAgent("travel");
    await say(core, agent, "What's the weather like in Paris and suggest some Italian restaurants?");
    return summary(agent);
  },

  async board({ core }) {
    boardTools(core);
    const agent = core.getAgent("task_board");
    await say(core, agent, "add buy milk, call mum");
    await say(core, agent, "complete 2");
    return summary(agent);
  },

  // useInterrupt().resolve() on an interrupt without tool results: the resume entry alone.
  async "approve-resume"({ core }) {
    boardTools(core);
    const agent = core.getAgent("task_board");
    const watched = watchInterrupts(agent);
    await boardAwaitingDelete(core, agent);
    const asked = summary(agent);
    const sent = await resolveInterrupt(core, agent, watched, { approved: true }, { toolResults: false });
    return { asked, sent, outcomes: watched.outcomes, ...summary(agent) };
  },

  // useInterrupt().resolve() as it is: a tool message for the call, then resume, same run id.
  async "approve-tool-result"({ core }) {
    boardTools(core);
    const agent = core.getAgent("task_board");
    const watched = watchInterrupts(agent);
    await boardAwaitingDelete(core, agent);
    const asked = summary(agent);
    const sent = await resolveInterrupt(core, agent, watched, { approved: true });
    return { asked, sent, outcomes: watched.outcomes, ...summary(agent) };
  },

  // delete_task registered with a handler: CopilotKitCore runs it on the call left without a
  // result and adds its output as the tool message; then useInterrupt().resolve() adds its own
  // and resumes.
  async "approve-handler"({ core }) {
    const handled = [];
    boardTools(core, {
      deleteHandler: async (args) => {
        handled.push(args);
        return { approved: true };
      },
    });
    const agent = core.getAgent("task_board");
    const watched = watchInterrupts(agent);
    await boardAwaitingDelete(core, agent);
    const asked = summary(agent);
    const sent = await resolveInterrupt(core, agent, watched, { approved: true });
    return { asked, handled, sent, outcomes: watched.outcomes, ...summary(agent) };
  },

  async decline({ core }) {
    boardTools(core);
    const agent = core.getAgent("task_board");
    const watched = watchInterrupts(agent);
    await boardAwaitingDelete(core, agent);
    const sent = await resolveInterrupt(core, agent, watched, { approved: false });
    return { sent, outcomes: watched.outcomes, ...summary(agent) };
  },

  // Stop while the agent streams: core.stopAgent, as the chat's stop button does.
  async stop({ core }) {
    const agent = core.getAgent("slow");
    let stopped = false;
    agent.subscribe({
      onTextMessageContentEvent: () => {
        if (!stopped) {
          stopped = true;
          setTimeout(() => core.stopAgent({ agent }), 0);
        }
      },
    });
    agent.addMessage({ id: randomUUID(), role: "user", content: "talk until I stop you" });
    await within(core.runAgent({ agent }), "the stopped run");
    return { stopped, ...summary(agent) };
  },
};

async function main() {
  const scenario = process.env.AGUI_SCENARIO;
  const resultFile = process.env.AGUI_RESULT_FILE;
  if (!resultFile || !(scenario in SCENARIOS)) {
    throw new Error(
      `AGUI_RESULT_FILE must be set and AGUI_SCENARIO one of ${Object.keys(SCENARIOS).join(", ")}`,
    );
  }
  const agents = {};
  for (const [name, variable] of [
    ["travel", "AGUI_TRAVEL_URL"],
    ["task_board", "AGUI_BOARD_URL"],
    ["slow", "AGUI_SLOW_URL"],
  ]) {
    const url = process.env[variable];
    if (url) agents[name] = new AguiAgent({ url, description: `agui's ${name}` });
  }
  const { server, url: runtimeUrl } = await startRuntime(agents);
  let result;
  try {
    const { core, errors } = await startCore(runtimeUrl);
    const outcome = await SCENARIOS[scenario]({ core, runtimeUrl });
    result = { scenario, ...outcome, errors, complaints };
  } finally {
    server.closeAllConnections();
    server.close();
  }
  writeFileSync(resultFile, JSON.stringify(result, null, 2));
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`${error?.stack ?? error}\n`);
    process.exit(1);
  },
);

// What the CopilotKit scripts share: CopilotKit's runtime (1.75.0) in front of live agui
// endpoints, and CopilotKitCore (the browser half) connected to it, driven headless.
//
// The runtime listens on 127.0.0.1, port 0; its agents are HttpAgents (`@ag-ui/client` 0.0.59,
// the version CopilotKit pins) on the agui endpoints. CopilotKitCore connects only where a
// `window` exists; the global object stands in for it. Interrupts are answered the way
// CopilotKit's React `useInterrupt` hook answers them (its state machine, `ɵInterruptState`,
// ships in @copilotkit/core): tool messages for the interrupted calls, then a run carrying the
// `resume` entries and the interrupted run's own run id. Every console.warn and console.error
// is recorded in `complaints`, for the Python side to judge.

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
export class AguiAgent extends HttpAgent {
  async getCapabilities() {
    const response = await fetch(`${this.url.replace(/\/$/, "")}/capabilities`, {
      headers: this.headers,
    });
    if (!response.ok) throw new Error(`capabilities: HTTP ${response.status}`);
    return response.json();
  }
}

export const complaints = [];
for (const level of ["warn", "error"]) {
  console[level] = (...args) => complaints.push({ level, text: args.map(String).join(" ") });
}

export function within(promise, what, ms = STEP_MS) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export async function startRuntime(agents, options = {}) {
  const runtime = new CopilotRuntime({ agents, ...options });
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

export async function startCore(runtimeUrl) {
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
export function summary(agent) {
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
    messages: agent.messages.map(({ id, role, content, toolCallId, activityType }) => ({
      id,
      role,
      content: typeof content === "string" || role === "activity" ? content : null,
      ...(toolCallId ? { toolCallId } : {}),
      ...(activityType ? { activityType } : {}),
    })),
    duplicateMessageIds: ids.filter((id, index) => ids.indexOf(id) !== index),
    calls,
    results,
    state: agent.state,
    pendingInterrupts: agent.pendingInterrupts ?? [],
  };
}

// What `useInterrupt` keeps: the interrupts of the last run that ended with some, and its run id.
export function watchInterrupts(agent) {
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
export async function resolveInterrupt(core, agent, watched, payload, { toolResults = true } = {}) {
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

export async function say(core, agent, text) {
  agent.addMessage({ id: randomUUID(), role: "user", content: text });
  await within(core.runAgent({ agent }), `the run for ${JSON.stringify(text)}`);
}

// A tool's parameters as CopilotKit takes them, a Standard Schema, here with its JSON Schema
// given as it is (an app would write a zod object).
export function parameters(properties) {
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


// Run the scenario AGUI_SCENARIO names against a runtime serving `agents`; write what the app
// ends with, and every error CopilotKitCore reported, to AGUI_RESULT_FILE; exit.
export function runScenario(scenarios, agents, runtimeOptions = {}) {
  main(scenarios, agents, runtimeOptions).then(
    () => process.exit(0),
    (error) => {
      process.stderr.write(`${error?.stack ?? error}\n`);
      process.exit(1);
    },
  );
}

async function main(scenarios, agents, runtimeOptions) {
  const scenario = process.env.AGUI_SCENARIO;
  const resultFile = process.env.AGUI_RESULT_FILE;
  if (!resultFile || !(scenario in scenarios)) {
    throw new Error(
      `AGUI_RESULT_FILE must be set and AGUI_SCENARIO one of ${Object.keys(scenarios).join(", ")}`,
    );
  }
  const { server, url: runtimeUrl } = await startRuntime(agents, runtimeOptions);
  let result;
  try {
    const { core, errors } = await startCore(runtimeUrl);
    const outcome = await scenarios[scenario]({ core, runtimeUrl });
    result = { scenario, ...outcome, errors, complaints };
  } finally {
    server.closeAllConnections();
    server.close();
  }
  writeFileSync(resultFile, JSON.stringify(result, null, 2));
}

// CopilotKit (runtime and core 1.75.0) in front of live agui servers, driven headless.
//
// Started by tests/test_copilotkit.py, once per scenario, with:
//   AGUI_SCENARIO     what to do (see SCENARIOS below)
//   AGUI_TRAVEL_URL   the travel example's endpoint
//   AGUI_BOARD_URL    the task board example's endpoint
//   AGUI_SLOW_URL     an agent that streams until it is cancelled (for "stop")
//   AGUI_SHOPPING_URL the pydantic-ai bridge's example (tests/test_bridges_copilotkit.py)
//   AGUI_DESK_URL     the OpenAI Agents SDK bridge's example (tests/test_bridges_copilotkit.py)
//   AGUI_RESULT_FILE  where to write what the app ends with, as JSON
//
// It does what an app does (copilotkit-harness.mjs): a CopilotRuntime whose agents are
// HttpAgents on the agui endpoints, and CopilotKitCore connected to it, with the app's tools
// registered on it; approvals are answered as CopilotKit's `useInterrupt` answers them.
//
// Run it by hand: AGUI_SCENARIO=travel AGUI_TRAVEL_URL=http://127.0.0.1:8000/ \
//   AGUI_RESULT_FILE=/tmp/out.json node copilotkit.mjs

import { randomUUID } from "node:crypto";

import {
  AguiAgent,
  parameters,
  resolveInterrupt,
  runScenario,
  say,
  summary,
  watchInterrupts,
  within,
} from "./copilotkit-harness.mjs";

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

// A framework's approval through a bridge: what comes first, the request the agent asks
// about, then useInterrupt().resolve() with the user's answer.
async function bridgedApproval(core, name, first, request, approved) {
  const agent = core.getAgent(name);
  const watched = watchInterrupts(agent);
  await say(core, agent, first);
  await say(core, agent, request);
  const asked = summary(agent);
  const sent = await resolveInterrupt(core, agent, watched, { approved });
  return { asked, sent, outcomes: watched.outcomes, ...summary(agent) };
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

  "shopping-approve": ({ core }) => bridgedApproval(core, "shopping", "add milk", "clear", true),
  "shopping-decline": ({ core }) => bridgedApproval(core, "shopping", "add milk", "clear", false),
  "desk-approve": ({ core }) => bridgedApproval(core, "desk", "hotels in Lisbon", "book Lumen", true),
  "desk-decline": ({ core }) => bridgedApproval(core, "desk", "hotels in Lisbon", "book Lumen", false),

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

const agents = {};
for (const [name, variable] of [
  ["travel", "AGUI_TRAVEL_URL"],
  ["task_board", "AGUI_BOARD_URL"],
  ["slow", "AGUI_SLOW_URL"],
  ["shopping", "AGUI_SHOPPING_URL"],
  ["desk", "AGUI_DESK_URL"],
]) {
  const url = process.env[variable];
  if (url) agents[name] = new AguiAgent({ url, description: `agui's ${name}` });
}
runScenario(SCENARIOS, agents);

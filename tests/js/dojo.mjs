// The AG-UI dojo's pages, as CopilotKit drives them, on agui's dojo example (examples/dojo).
//
// Started by tests/test_dojo.py, once per scenario, with:
//   AGUI_DOJO_URL     the dojo app's root; each feature's agent is at <root>/<feature>
//   AGUI_SCENARIO     the page to play (see SCENARIOS below)
//   AGUI_RESULT_FILE  where to write what the page ends with, as JSON
//
// Each scenario registers what its page registers (frontend tools, human-in-the-loop tools,
// context, state) on CopilotKitCore and talks to the page's agent through CopilotKit's runtime,
// with A2UI on for the a2ui_* agents as the dojo's runtime has it; the page's own answers
// (a confirm, a time picked) are given as its buttons give them. Every request the runtime's
// HttpAgent sends agui is also replayed through the official client, `@ag-ui/client` 1.0.0,
// with its verifier on: its failures land in `replayed`.
//
// Run it by hand: AGUI_SCENARIO=agentic_chat AGUI_DOJO_URL=http://127.0.0.1:8000 \
//   AGUI_RESULT_FILE=/tmp/out.json node dojo.mjs

import { HttpAgent as CurrentHttpAgent } from "@ag-ui/client";

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

const FEATURES = [
  "agentic_chat",
  "backend_tool_rendering",
  "human_in_the_loop",
  "agentic_generative_ui",
  "tool_based_generative_ui",
  "shared_state",
  "predictive_state_updates",
  "agentic_chat_reasoning",
  "agentic_chat_multimodal",
  "interrupt",
  "a2ui_fixed_schema",
];

// Every request sent to agui, to replay through the 1.0.0 client.
const sent = [];

class RecordedAgent extends AguiAgent {
  requestInit(input) {
    sent.push({ url: this.url, input: structuredClone(input) });
    return super.requestInit(input);
  }
}

async function replay() {
  const replayed = [];
  for (const { url, input } of sent) {
    const failures = [];
    const events = [];
    const agent = new CurrentHttpAgent({
      url,
      threadId: input.threadId,
      initialMessages: input.messages,
      initialState: input.state,
    });
    try {
      await agent.runAgent(
        {
          runId: input.runId,
          tools: input.tools,
          context: input.context,
          forwardedProps: input.forwardedProps,
          ...(input.resume ? { resume: input.resume } : {}),
        },
        {
          onEvent: ({ event }) => events.push(event.type),
          onRunFailed: ({ error }) => failures.push(String(error)),
        },
      );
    } catch (error) {
      failures.push(String(error?.stack ?? error));
    }
    replayed.push({ url, failures, last: events.at(-1) ?? null });
  }
  return replayed;
}

// The page's run: its summary, every event type each run sent, and the 1.0.0 replays.
function watchEvents(agent) {
  const seen = [];
  agent.subscribe({ onEvent: ({ event }) => seen.push(event) });
  return seen;
}

async function finish(agent, seen, extra = {}) {
  return {
    ...summary(agent),
    events: seen.map((event) => event.type),
    ...extra,
    replayed: await replay(),
  };
}

// A tool as a page registers it; the handler is what the page does when the call arrives.
function pageTool(core, name, properties, handler, extra = {}) {
  core.addTool({ name, description: `The page's ${name}`, parameters: parameters(properties), handler, ...extra });
}

const RECIPE = {
  recipe: {
    title: "Make Your Recipe",
    skill_level: "Intermediate",
    cooking_time: "45 min",
    special_preferences: ["Low Carb", "Spicy"],
    ingredients: [
      { icon: "🥕", name: "Carrots", amount: "3 large, grated" },
      { icon: "🌾", name: "All-Purpose Flour", amount: "2 cups" },
    ],
    instructions: ["Preheat oven to 350°F (175°C)"],
  },
};

const PIXEL =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

const SCENARIOS = {
  async agentic_chat({ core }) {
    const backgrounds = [];
    pageTool(core, "change_background", { background: { type: "string" } }, async ({ background }) => {
      backgrounds.push(background);
      return { status: "success", message: `Background changed to ${background}` };
    });
    core.addContext({ description: "Name of the user", value: "duaa" });
    const agent = core.getAgent("agentic_chat");
    const seen = watchEvents(agent);
    await say(core, agent, "Hi!");
    await say(core, agent, "Change the background to blue");
    return finish(agent, seen, { backgrounds });
  },

  async backend_tool_rendering({ core }) {
    const agent = core.getAgent("backend_tool_rendering");
    const seen = watchEvents(agent);
    await say(core, agent, "What's the weather in San Francisco?");
    return finish(agent, seen);
  },

  async human_in_the_loop({ core }) {
    const proposed = [];
    const steps = { type: "array", items: { type: "object" } };
    pageTool(
      core,
      "generate_task_steps",
      { steps },
      async ({ steps: given }) => {
        proposed.push(given);
        // The user unticks the second step and confirms.
        const kept = given.map((step, index) => ({ ...step, status: index === 1 ? "disabled" : "enabled" }));
        return { accepted: true, steps: kept };
      },
      { type: "human-in-the-loop" },
    );
    const agent = core.getAgent("human_in_the_loop");
    const seen = watchEvents(agent);
    await say(core, agent, "Plan a trip to Mars.");
    return finish(agent, seen, { proposed });
  },

  async agentic_generative_ui({ core }) {
    const agent = core.getAgent("agentic_generative_ui");
    const progress = [];
    agent.subscribe({
      onStateChanged: ({ state }) => progress.push((state.steps ?? []).map((step) => step.status)),
    });
    const seen = watchEvents(agent);
    await say(core, agent, "Go to Mars");
    return finish(agent, seen, { progress });
  },

  async tool_based_generative_ui({ core }) {
    const haikus = [];
    const lines = { type: "array", items: { type: "string" } };
    pageTool(
      core,
      "generate_haiku",
      { japanese: lines, english: lines, image_name: { type: "string" }, gradient: { type: "string" } },
      async (haiku) => {
        haikus.push(haiku);
        return "Haiku generated.";
      },
    );
    const agent = core.getAgent("tool_based_generative_ui");
    const seen = watchEvents(agent);
    await say(core, agent, "Write a haiku about the sea");
    return finish(agent, seen, { haikus });
  },

  async shared_state({ core }) {
    const agent = core.getAgent("shared_state");
    agent.setState(structuredClone(RECIPE));
    const seen = watchEvents(agent);
    await say(core, agent, "Give me all the ingredients");
    // The user adds an ingredient in the page, then asks again and asks for a better recipe.
    agent.setState({
      recipe: {
        ...agent.state.recipe,
        ingredients: [...agent.state.recipe.ingredients, { icon: "🥔", name: "Potatoes", amount: "2" }],
      },
    });
    await say(core, agent, "Give me all the ingredients");
    await say(core, agent, "Improve the recipe");
    return finish(agent, seen);
  },

  async predictive_state_updates({ core }) {
    return predictive(core, true);
  },

  async "predictive_state_updates-reject"({ core }) {
    return predictive(core, false);
  },

  async agentic_chat_reasoning({ core }) {
    const agent = core.getAgent("agentic_chat_reasoning");
    agent.setState({ model: "OpenAI" });
    const seen = watchEvents(agent);
    await say(core, agent, "Why is the sky blue?");
    return finish(agent, seen);
  },

  async agentic_chat_multimodal({ core }) {
    const agent = core.getAgent("agentic_chat_multimodal");
    const seen = watchEvents(agent);
    agent.addMessage({
      id: "user-image",
      role: "user",
      content: [
        { type: "text", text: "What do you see in this image?" },
        { type: "image", source: { type: "data", value: PIXEL, mimeType: "image/png" } },
      ],
    });
    await within(core.runAgent({ agent }), "the multimodal run");
    return finish(agent, seen);
  },

  async interrupt({ core }) {
    return meeting(core, { chosen_time: "2027-01-05T10:00:00.000Z", chosen_label: "Tue, Jan 5, 10:00 AM" });
  },

  async "interrupt-cancel"({ core }) {
    return meeting(core, { cancelled: true });
  },

  async a2ui_fixed_schema({ core }) {
    const agent = core.getAgent("a2ui_fixed_schema");
    const seen = watchEvents(agent);
    await say(core, agent, "Find flights from SFO to JFK");
    return finish(agent, seen);
  },
};

// The editor's page: state `document`, its two tools, the confirm modal answered one way.
async function predictive(core, accepted) {
  const asked = [];
  const timeline = [];
  pageTool(core, "confirm_changes", {}, async () => {
    asked.push(agent.state.document ?? "");
    return { accepted };
  }, { type: "human-in-the-loop" });
  pageTool(core, "write_document", { document: { type: "string" } }, async () => ({ accepted }), {
    type: "human-in-the-loop",
  });
  const agent = core.getAgent("predictive_state_updates");
  // What the editor shows, each time it changes, between the calls it sees start.
  agent.subscribe({
    onStateChanged: ({ state }) => {
      const document = state.document ?? "";
      const last = timeline.findLast((entry) => "document" in entry);
      if (last?.document !== document) timeline.push({ document });
    },
    onToolCallStartEvent: ({ event }) => timeline.push({ call: event.toolCallName }),
  });
  const seen = watchEvents(agent);
  await say(core, agent, "Write a story about a dragon");
  return finish(agent, seen, { asked, timeline });
}

// The interrupt page: a meeting asked for, its time picker answered through useInterrupt.
async function meeting(core, payload) {
  const agent = core.getAgent("interrupt");
  const watched = watchInterrupts(agent);
  const seen = watchEvents(agent);
  await say(core, agent, "Book an intro call with the sales team to discuss pricing.");
  const asked = summary(agent).pendingInterrupts;
  const resumed = await resolveInterrupt(core, agent, watched, payload);
  return finish(agent, seen, { asked, resumed, outcomes: watched.outcomes });
}

const base = (process.env.AGUI_DOJO_URL ?? "").replace(/\/$/, "");
const agents = Object.fromEntries(
  FEATURES.map((name) => [name, new RecordedAgent({ url: `${base}/${name}`, description: name })]),
);
runScenario(SCENARIOS, agents, { a2ui: { agents: ["a2ui_fixed_schema"] } });

// CopilotKit (runtime and core 1.75.0) in front of the LangGraph bridge's example, headless.
//
// Started by tests/test_bridges_langgraph.py with:
//   AGUI_GRAPH_URL    the LangGraph booking desk (examples/bridges/langgraph_app.py)
//   AGUI_SCENARIO     what to do (see SCENARIOS below)
//   AGUI_RESULT_FILE  where to write what the app ends with, as JSON
//
// It does what an app does (copilotkit-harness.mjs): a CopilotRuntime whose agent is an
// HttpAgent on the agui endpoint, CopilotKitCore connected to it, and the graph's interrupt
// answered as CopilotKit's `useInterrupt` answers it.

import {
  AguiAgent,
  resolveInterrupt,
  runScenario,
  say,
  summary,
  watchInterrupts,
} from "./copilotkit-harness.mjs";

const SCENARIOS = {
  // Look hotels up, ask to book one: the graph's interrupt() ends the run; approve it.
  async approve({ core }) {
    const agent = core.getAgent("booking_desk");
    const watched = watchInterrupts(agent);
    await say(core, agent, "hotels in Lisbon");
    await say(core, agent, "book Lumen");
    const asked = summary(agent);
    const sent = await resolveInterrupt(core, agent, watched, { approved: true });
    return { asked, sent, outcomes: watched.outcomes, ...summary(agent) };
  },
};

const url = process.env.AGUI_GRAPH_URL;
runScenario(SCENARIOS, {
  booking_desk: new AguiAgent({ url, description: "a LangGraph graph served by agui" }),
});

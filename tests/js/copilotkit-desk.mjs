// CopilotKit (runtime and core 1.75.0) in front of the OpenAI Agents SDK front desk that agui's
// bridge serves (examples/bridges/openai_agents_app.py), driven headless through its approval.
//
// Started by tests/test_bridges_openai_agents.py, once per scenario, with:
//   AGUI_SCENARIO     what to do (see SCENARIOS below)
//   AGUI_DESK_URL     the front desk's endpoint
//   AGUI_RESULT_FILE  where to write what the app ends with, as JSON
//
// The app asks for hotels, then books one: the run ends on the booking's approval, which is
// answered as CopilotKit's `useInterrupt` answers it (copilotkit-harness.mjs).

import {
  AguiAgent,
  resolveInterrupt,
  runScenario,
  say,
  summary,
  watchInterrupts,
} from "./copilotkit-harness.mjs";

function answering(payload, options) {
  return async ({ core }) => {
    const agent = core.getAgent("desk");
    const watched = watchInterrupts(agent);
    await say(core, agent, "hotels in Lisbon");
    await say(core, agent, "book Lumen");
    const asked = summary(agent);
    const sent = await resolveInterrupt(core, agent, watched, payload, options);
    await say(core, agent, "hotels in Porto");
    return { asked, sent, outcomes: watched.outcomes, ...summary(agent) };
  };
}

const SCENARIOS = {
  // useInterrupt().resolve() as it is: a tool message for the call, then resume, same run id.
  "approve-tool-result": answering({ approved: true }),
  // The resume entry alone.
  "approve-resume": answering({ approved: true }, { toolResults: false }),
  decline: answering({ approved: false }),
};

runScenario(SCENARIOS, {
  desk: new AguiAgent({ url: process.env.AGUI_DESK_URL, description: "agui's front desk" }),
});

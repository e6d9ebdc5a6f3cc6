// Consumes a session's AG-UI stream with @ag-ui/client's HttpAgent (its SSE parser, its event
// verifier and its state reducer) and prints the state it reconstructed and the event types; then
// runs again with the first run's RUN_FINISHED `result.lastEventId` as `Last-Event-ID` (what a
// client that reads only `data:` lines resumes with) and prints that run's event types too.
// argv: <url> <bearer token>
import { HttpAgent } from "@ag-ui/client";

const [url, token] = process.argv.slice(2);

async function run(headers) {
  const agent = new HttpAgent({ url, headers: { Authorization: `Bearer ${token}`, ...headers } });
  const types = [];
  let cursor = null;
  await agent.runAgent({}, {
    onEvent: ({ event }) => {
      types.push(event.type === "CUSTOM" ? `CUSTOM:${event.name}` : event.type);
      if (event.type === "RUN_FINISHED") cursor = event.result?.lastEventId ?? null;
    },
  });
  return { state: agent.state, types, cursor };
}

const first = await run({});
const resumed = await run(first.cursor ? { "Last-Event-ID": first.cursor } : {});
process.stdout.write(JSON.stringify({ state: first.state, types: first.types, cursor: first.cursor,
                                      resumed: resumed.types, resumedState: resumed.state }));

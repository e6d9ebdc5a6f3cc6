// Consumes a session's AG-UI stream with @ag-ui/client's HttpAgent (its SSE parser, its event
// verifier and its state reducer) and prints the state it reconstructed and the event types.
// argv: <url> <bearer token>
import { HttpAgent } from "@ag-ui/client";

const [url, token] = process.argv.slice(2);
const agent = new HttpAgent({ url, headers: { Authorization: `Bearer ${token}` } });
const types = [];
await agent.runAgent({}, {
  onEvent: ({ event }) => { types.push(event.type); },
});
process.stdout.write(JSON.stringify({ state: agent.state, types }));

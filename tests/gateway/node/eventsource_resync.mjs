// Reads a session's native event stream with the `eventsource` package from a cursor (the
// `last_event_id` query parameter) until its first `resync`, then prints the resync's reason, the
// uiId of each of its frames, the length of its data and the data's SHA-256 (hex).
// argv: <url with ?last_event_id=...> <bearer token>
import { createHash } from "node:crypto";
import { EventSource } from "eventsource";

const [url, token] = process.argv.slice(2);
const source = new EventSource(url, {
  fetch: (input, init) => fetch(input, { ...init, headers: { ...init.headers, Authorization: `Bearer ${token}` } }),
});
source.addEventListener("resync", (event) => {
  const resync = JSON.parse(event.data);
  source.close();
  process.stdout.write(JSON.stringify({
    reason: resync.reason,
    uiIds: resync.frames.map((frame) => frame.uiId),
    length: event.data.length,
    sha256: createHash("sha256").update(event.data, "utf8").digest("hex"),
  }));
  process.exit(0);
});
setTimeout(() => { process.stdout.write(JSON.stringify({ timeout: true })); process.exit(0); }, 60000);

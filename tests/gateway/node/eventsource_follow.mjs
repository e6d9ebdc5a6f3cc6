// Follows a session's native event stream with the `eventsource` package (a real, non-Python
// EventSource: its own reconnection, with Last-Event-ID and the server's retry), until `count`
// frames arrived, then prints their seq numbers and how often it (re)connected. It writes "live"
// to standard error when its first frame came (its caller may then begin to crash the gateway).
// argv: <url> <bearer token> <count>
import { EventSource } from "eventsource";

const [url, token, count] = process.argv.slice(2);
const seqs = [];
let opens = 0;
const source = new EventSource(url, {
  fetch: (input, init) => fetch(input, { ...init, headers: { ...init.headers, Authorization: `Bearer ${token}` } }),
});
source.addEventListener("open", () => { opens += 1; });
source.addEventListener("frame", (event) => {
  seqs.push(JSON.parse(event.data).seq);
  if (seqs.length === 1) process.stderr.write("live\n");
  if (seqs.length >= Number(count)) {
    source.close();
    process.stdout.write(JSON.stringify({ seqs, opens }));
    process.exit(0);
  }
});
setTimeout(() => { process.stdout.write(JSON.stringify({ seqs, opens, timeout: true })); process.exit(0); }, 60000);

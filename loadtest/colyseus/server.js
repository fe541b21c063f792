// Colyseus 0.16.5 as a target of `grand-melee-loadtest bench`: one process, the default
// WebSocket transport (@colyseus/ws-transport, on the `ws` package), one room type, "fanout",
// that does what the bench's relay does: every message a client sends is broadcast to every
// client of its room, the sender included (the sender's copy is its acknowledgement).
//
// One room per bench table: the bots join with `joinOrCreate("fanout", { table, seats })`, the
// room type is filtered by `table`, and a room takes `seats` clients.
//
// Install: npm ci --no-audit --no-fund --legacy-peer-deps (`colyseus` names the uWebSockets
// transport as a peer, which comes from GitHub; the ws transport is a direct dependency here).
// Usage: node server.js [--port N] [--duration-secs S]   (or PORT / DURATION_SECS; port 0: any)
// Prints "colyseus listening on 127.0.0.1:PORT" when ready; exits by itself after the duration,
// on SIGTERM / SIGINT, and when its standard input closes.
"use strict";

const { Server, Room } = require("colyseus");
const { WebSocketTransport } = require("@colyseus/ws-transport");

function flag(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

const port = Number(flag("--port", process.env.PORT ?? "0"));
const durationSecs = Number(flag("--duration-secs", process.env.DURATION_SECS ?? "0"));
// The transport's ping sweep (its `pingInterval`): every PING_MS it pings every client at once.
// 3000 is Colyseus's default; 0 turns it off.
const pingMs = Number(process.env.PING_MS ?? "3000");

class Fanout extends Room {
  onCreate(options) {
    const seats = Number(options.seats);
    this.maxClients = Number.isInteger(seats) && seats > 0 && seats <= 1000 ? seats : 40;
    // What a Colyseus user writes: the message's type and payload, broadcast as received.
    this.onMessage("a", (client, message) => {
      this.broadcast("a", message);
    });
  }
}

async function main() {
  // The ws transport (`colyseus`'s default) with its defaults but the ping sweep; no banner, and
  // shutdown is ours.
  const transport = new WebSocketTransport({ pingInterval: pingMs });
  const server = new Server({ greet: false, gracefullyShutdown: false, transport });
  server.define("fanout", Fanout).filterBy(["table"]);
  await server.listen(port, "127.0.0.1");
  const address = server.transport.server.address();
  process.stdout.write(`colyseus listening on 127.0.0.1:${address.port}\n`);

  const stop = () => process.exit(0);
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  process.stdin.on("end", stop);
  process.stdin.on("error", stop);
  process.stdin.resume();
  if (durationSecs > 0) {
    setTimeout(stop, durationSecs * 1000).unref();
  }
}

main().catch((error) => {
  process.stderr.write(`colyseus: ${error && error.stack ? error.stack : error}\n`);
  process.exit(1);
});

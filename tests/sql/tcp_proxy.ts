// A database server that goes away and comes back, or stops answering, on loopback: a proxy in
// front of the real one, refusing connections while down (nothing listens on its port) and
// cutting those it carried; while held, it keeps every socket open and forwards nothing (a
// frozen server, a network that drops everything), and forwards what waited once let go.
import { Buffer } from "node:buffer";
import { connect, createServer, type Server, type Socket } from "node:net";
import { freePort } from "../free_port.ts";

/** A proxy to `target`, down until `up()`. */
export interface TcpProxy {
  /** Its loopback port, the same down and up. */
  readonly port: number;
  /** Listens, and carries each connection to the target. */
  up(): Promise<void>;
  /** Stops listening and cuts every connection it carried. */
  down(): Promise<void>;
  /**
   * Forwards nothing either way from now on, on the connections it carries and on those it
   * accepts, which stay open: a database that stops answering.
   */
  hold(): void;
  /** Forwards again, what waited first. */
  release(): void;
  /**
   * Cuts the server's side of every connection it carries now and leaves the client's open,
   * answering nothing: connections a firewall dropped, or a server that went away without a
   * word. Connections accepted later are carried as before.
   */
  sever(): void;
  /** How many connections it carries now whose client's side is open. */
  carried(): number;
  /**
   * Sends `to` in place of the next `from` a client sends (in one chunk, as a short statement
   * comes), once: `to` of the same length, a statement the server then refuses, on a connection
   * that stays up. Gives whether that was done yet.
   */
  rewrite(from: string, to: string): () => boolean;
}

/** A proxy to `host:port`, down; taken down after the caller is done (`down()`). */
export async function tcpProxy(host: string, port: number): Promise<TcpProxy> {
  const own = await freePort();
  const sockets = new Set<Socket>();
  // What came while held, per destination, in order.
  const waiting = new Map<Socket, Buffer[]>();
  // The server's side of each connection carried, by its client's side.
  const upstreams = new Map<Socket, Socket>();
  const severed = new WeakSet<Socket>();
  let held = false;
  let server: Server | undefined;
  // The next client bytes to put another text in place of, and whether that was done.
  let replace: { from: Buffer; to: Buffer; done: boolean } | undefined;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => {
      sockets.delete(socket);
      waiting.delete(socket);
    });
    socket.on("error", () => socket.destroy());
  };
  const carry = (from: Socket, to: Socket, fromClient: boolean) =>
    from.on("data", (chunk: Buffer) => {
      const at = fromClient && replace !== undefined ? chunk.indexOf(replace.from) : -1;
      if (at >= 0 && replace !== undefined) {
        chunk = Buffer.concat([chunk]);
        replace.to.copy(chunk, at);
        replace.done = true;
        replace = undefined;
      }
      const queued = waiting.get(to);
      if (held || queued !== undefined) {
        if (queued === undefined) waiting.set(to, [chunk]);
        else queued.push(chunk);
      } else if (!to.destroyed && !severed.has(from)) to.write(chunk);
    });
  return {
    port: own,
    async up() {
      if (server !== undefined) return;
      const listening = createServer((client) => {
        const upstream = connect(port, host);
        track(client);
        track(upstream);
        upstreams.set(client, upstream);
        client.on("close", () => {
          upstreams.delete(client);
          upstream.destroy();
        });
        upstream.on("close", () => {
          if (!severed.has(client)) client.destroy();
        });
        carry(client, upstream, true);
        carry(upstream, client, false);
      });
      server = listening;
      await new Promise<void>((resolve, reject) => {
        listening.once("error", reject);
        listening.listen(own, "127.0.0.1", resolve);
      });
    },
    async down() {
      const listening = server;
      server = undefined;
      if (listening === undefined) return;
      const closed = new Promise((resolve) => listening.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    hold() {
      held = true;
    },
    carried() {
      return upstreams.size;
    },
    rewrite(from, to) {
      if (Buffer.byteLength(from) !== Buffer.byteLength(to)) {
        throw new RangeError("rewrite: the two texts must be of the same length");
      }
      const made = { from: Buffer.from(from), to: Buffer.from(to), done: false };
      replace = made;
      return () => made.done;
    },
    sever() {
      for (const [client, upstream] of upstreams) {
        severed.add(client);
        upstream.destroy();
      }
    },
    release() {
      held = false;
      for (const [to, chunks] of waiting) {
        waiting.delete(to);
        if (!to.destroyed) { for (const chunk of chunks) to.write(chunk); }
      }
    },
  };
}

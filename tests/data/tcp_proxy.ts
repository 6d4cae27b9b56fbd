// A database server that goes away and comes back, on loopback: a proxy in front of the real one,
// refusing connections while down (nothing listens on its port) and cutting those it carried.
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
}

/** A proxy to `host:port`, down; taken down after the caller is done (`down()`). */
export async function tcpProxy(host: string, port: number): Promise<TcpProxy> {
  const own = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };
  return {
    port: own,
    async up() {
      if (server !== undefined) return;
      const listening = createServer((client) => {
        const upstream = connect(port, host);
        track(client);
        track(upstream);
        client.on("close", () => upstream.destroy());
        upstream.on("close", () => client.destroy());
        client.pipe(upstream).pipe(client);
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
  };
}

import type { BroadcastTransport } from "./broadcast_transport.ts";

/** The transport of one replica: what is published is received at once, in the process. */
export class MemoryTransport implements BroadcastTransport {
  readonly name = "the process (thaw.broadcast.transport: memory)";
  #receive: ((text: string) => void) | undefined;

  start(receive: (text: string) => void): Promise<void> {
    this.#receive = receive;
    return Promise.resolve();
  }

  publish(_channel: string, text: string): Promise<void> {
    this.#receive?.(text);
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.#receive = undefined;
    return Promise.resolve();
  }
}

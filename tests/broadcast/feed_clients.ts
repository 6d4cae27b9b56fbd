// Clients of a live feed over real sockets: an EventSource-like reader of an SSE answer (fetch),
// and a raw connection that asks for a stream and then reads nothing.
import { connect, type Socket } from "node:net";
import { request, until } from "../runtime/raw_client.ts";

/** A client of an SSE answer that reads every event's data as it comes. */
export interface SseClient {
  /** The data of each event received so far, in order. */
  readonly data: string[];
  /** Resolves once `count` events came; rejects when the stream ends before, or after 60 s. */
  received(count: number): Promise<string[]>;
  /** Resolves once the server ended the stream. */
  readonly ended: Promise<void>;
  /** Leaves: the connection is dropped. */
  leave(): void;
}

/** Opens `url` as an SSE stream and reads it until it ends or the client leaves. */
export async function sseClient(url: string): Promise<SseClient> {
  const controller = new AbortController();
  const answer = await fetch(url, { signal: controller.signal });
  if (answer.status !== 200 || answer.body === null) {
    throw new Error(`${url} answered ${answer.status}: ${await answer.text()}`);
  }
  const data: string[] = [];
  const waiters = new Set<() => void>();
  let over = false;
  const reader = answer.body.pipeThrough(new TextDecoderStream()).getReader();
  const ended = (async () => {
    let buffer = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const lines = frame.split("\n").filter((line) => line.startsWith("data: "));
          if (lines.length > 0) data.push(lines.map((line) => line.slice(6)).join("\n"));
        }
        for (const wake of [...waiters]) wake();
      }
    } catch {
      // Left, or cut: the stream is over either way.
    } finally {
      over = true;
      for (const wake of [...waiters]) wake();
    }
  })();
  return {
    data,
    ended,
    received: (count) =>
      new Promise((resolve, reject) => {
        // A give-up, paid only when the events never come.
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`not within 60 s: ${count} events, ${data.length} came`));
        }, 60_000);
        const check = () => {
          if (data.length >= count) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(data.slice(0, count));
          } else if (over) {
            waiters.delete(check);
            clearTimeout(timer);
            reject(new Error(`the stream ended after ${data.length} of ${count} events`));
          }
        };
        waiters.add(check);
        check();
      }),
    leave: () => {
      void reader.cancel().catch(() => {});
      controller.abort();
    },
  };
}

/** A connection that sends `GET path` and reads nothing until it is destroyed. */
export function silentClient(port: number, path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => {
      socket.pause();
      socket.write(request("GET", path));
      resolve(socket);
    });
    socket.once("error", reject);
  });
}

/** Waits until `check` holds: a state of the server's (a subscriber count), asked again and again. */
export function untilHolds(check: () => boolean, what: string): Promise<void> {
  return until(() => Promise.resolve(check()), what);
}

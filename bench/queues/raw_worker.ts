// The baseline of bench/jobs_workerd.ts: a worker that calls the Queues API itself for the same
// work, `POST /enqueue/{n}` sending n messages in turn and its `queue` handler acknowledging each.

/** The producer binding, as the worker uses it. */
interface Producer {
  send(body: unknown, options: { contentType: string }): Promise<unknown>;
}

/** A message of a batch, as the worker uses it. */
interface Message {
  readonly body: unknown;
  ack(): void;
}

let ran = 0;

export default {
  async fetch(request: Request, env: { Q: Producer }): Promise<Response> {
    const { pathname } = new URL(request.url);
    if (pathname === "/ran") return Response.json({ ran });
    const n = Number(pathname.slice("/enqueue/".length));
    for (let i = 0; i < n; i++) await env.Q.send({ n: i }, { contentType: "json" });
    return Response.json({ sent: n });
  },
  queue(batch: { messages: readonly Message[] }): Promise<void> {
    for (const message of batch.messages) {
      ran++;
      message.ack();
    }
    return Promise.resolve();
  },
};

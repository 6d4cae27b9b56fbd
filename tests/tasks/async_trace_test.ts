// An @Async run has a trace of its own: the caller's span, in OpenTelemetry's context, does not
// reach it (a file of its own: it sets the process's context manager).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import * as api from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { bootstrap, Service } from "../../mod.ts";
import { Async, tasks } from "../../tasks.ts";

describe("@Async and the caller's trace", () => {
  before(() => {
    api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  });
  after(() => api.context.disable());

  it("the run begins outside the caller's span", async () => {
    @Service()
    class Mailer {
      seen: (api.SpanContext | undefined)[] = [];
      @Async()
      async send(): Promise<void> {
        this.seen.push(api.trace.getSpanContext(api.context.active()));
        await Promise.resolve();
      }
    }
    const app = await bootstrap({ components: [Mailer], tasks: tasks() });
    const mailer = app.getBean(Mailer);
    const caller = api.trace.wrapSpanContext({
      traceId: "0af7651916cd43dd8448eb211c80319c",
      spanId: "b7ad6b7169203331",
      traceFlags: api.TraceFlags.SAMPLED,
    });
    await api.context.with(api.trace.setSpan(api.context.active(), caller), async () => {
      // The caller's context is there, as the check below needs it to be.
      assert.equal(api.trace.getSpanContext(api.context.active())?.spanId, "b7ad6b7169203331");
      await mailer.send();
    });
    assert.deepEqual(mailer.seen, [undefined]);
    await app.close();
  });
});

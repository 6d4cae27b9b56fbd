// The actuator's `jobs` endpoint, an `@Endpoint` bean `jobs()` registers: each queue's counts and
// the dead jobs (`GET`), a dead job made to wait again (`POST {id}/retry`), a job deleted
// (`DELETE {id}`). Served where the app has the actuator and exposes `jobs`, behind the guards of
// every actuator endpoint; a bean nobody serves otherwise.
import {
  DeleteOperation,
  Endpoint,
  ReadOperation,
  Selector,
  WriteOperation,
} from "../actuator/endpoint.ts";
import type { Class } from "../context/class.ts";
import { DataError } from "../sql/data_error.ts";
import { queueCounts } from "./jobs_health.ts";
import type { JobStore } from "./job_store.ts";

// The dead jobs the list shows, the latest to die first.
const DEAD_SHOWN = 100;

// A dead job retried while another job of its queue holds its key.
const UNIQUE = new Set(["23505", "ER_DUP_ENTRY", "SQLITE_CONSTRAINT_UNIQUE"]);

const answer = (status: number, body: object) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });

/** The endpoint class over the app's job store, which `jobs()` registers. */
export function jobsEndpoint(store: () => JobStore): Class {
  @Endpoint("jobs")
  class JobsEndpoint {
    @ReadOperation()
    async list(): Promise<object> {
      const [counts, dead] = await Promise.all([store().counts(), store().dead(DEAD_SHOWN)]);
      return { queues: queueCounts(counts), dead };
    }

    @WriteOperation()
    @Selector("id", "action")
    async act(id: string, action: string): Promise<object> {
      if (action !== "retry" || !store().ids.test(id)) {
        return answer(404, {
          error: `no operation ${JSON.stringify(action)} on job ${JSON.stringify(id)}`,
        });
      }
      let queue: string | undefined;
      try {
        queue = await store().revive(id);
      } catch (error) {
        if (!(error instanceof DataError && UNIQUE.has(error.code ?? ""))) throw error;
        return answer(409, {
          error:
            `job ${id}: another job of its queue holds its key now; retry it once that one ended`,
        });
      }
      if (queue === undefined) return answer(404, { error: `no dead job ${id}` });
      return { id, queue, state: "waiting" };
    }

    @DeleteOperation()
    @Selector("id")
    async remove(id: string): Promise<object | undefined> {
      if (!store().ids.test(id) || !await store().remove(id)) {
        return answer(404, { error: `no job ${JSON.stringify(id)} that is not running` });
      }
      return undefined;
    }
  }
  return JobsEndpoint;
}

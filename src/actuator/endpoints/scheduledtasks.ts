// `scheduledtasks`: the `@Scheduled` jobs, when each runs next and how its latest run went.
import type { ActuatorEndpoint } from "../actuator_endpoint.ts";
import { jsonAnswer } from "../actuator_endpoint.ts";
import { endpointRoute } from "../endpoint_route.ts";
import { scheduledTasks } from "../scheduled_tasks.ts";
import { publishedJobs } from "../../scheduling/published_jobs.ts";

/** The `scheduledtasks` endpoint: the jobs of the app's scheduler (none without one). */
export const scheduledtasksEndpoint: ActuatorEndpoint<"scheduledtasks"> = {
  id: "scheduledtasks",
  routes: ({ base, context, mask }) => ({
    routes: [
      endpointRoute(
        "GET",
        `${base}/scheduledtasks`,
        () => jsonAnswer(JSON.stringify(scheduledTasks(publishedJobs(context), mask))),
      ),
    ],
  }),
};

/**
 * The keys of `@thaw/thaw/jobs` (`jobs.*`), declared by its own modules rather than in the core's
 * table, as the tasks' are: an app that does not import it neither carries them nor has them
 * checked.
 *
 * @module
 */
import { declareKeys, type KeyDeclaration } from "./thaw_keys.ts";

/** The job queue's keys. */
export const JOB_KEYS = {
  "jobs.store": {
    type: "choice",
    choices: ["datasource", "sqs", "cloudflare"],
    default: "datasource",
  },
  "jobs.datasource": {
    type: "string",
  },
  // Durations, read by the feature (`7d`, `PT1H`; a number is ms).
  "jobs.retention": {
    type: "feature",
  },
  "jobs.poll-interval": {
    type: "feature",
  },
  // SQS (`jobs.store: sqs`): the endpoint when not AWS's own (ElasticMQ, LocalStack), the region,
  // and credentials when not the SDK's default chain.
  "jobs.sqs.endpoint": {
    type: "string",
  },
  "jobs.sqs.region": {
    type: "string",
  },
  "jobs.sqs.access-key-id": {
    type: "string",
  },
  "jobs.sqs.secret-access-key": {
    type: "string",
  },
  // How long a receive waits for a job to come (long polling), up to 20 s.
  "jobs.sqs.wait-time": {
    type: "feature",
  },
  // Cloudflare Queues (`jobs.store: cloudflare`): a mapping of queue names to producer bindings.
  "jobs.cloudflare.bindings": {
    type: "feature",
  },
} as const satisfies Readonly<Record<string, KeyDeclaration>>;

declareKeys(JOB_KEYS);

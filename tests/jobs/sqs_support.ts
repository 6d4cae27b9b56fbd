// What the SQS job tests share: the ElasticMQ of the test set-up (tools/elasticmq.sh start), a
// client of its own for a test to look at the queues, and queue names of a run's own.
import process from "node:process";
import { SQSClient } from "@aws-sdk/client-sqs";

/** Where tools/elasticmq.sh serves. */
export const ELASTICMQ = "http://127.0.0.1:9324";

/** A client of ElasticMQ's, as another sender on its queues (`destroy()` it after the tests). */
export function elasticMqClient(): SQSClient {
  return new SQSClient({
    endpoint: ELASTICMQ,
    region: "us-east-1",
    credentials: { accessKeyId: "x", secretAccessKey: "x" },
  });
}

let made = 0;

/** A queue name of this run's own: ElasticMQ keeps queues for as long as it runs. */
export function queueName(what: string): string {
  return `${what}-${process.pid}-${Date.now()}-${made++}`;
}

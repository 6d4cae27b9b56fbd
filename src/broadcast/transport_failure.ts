// A transport's failure as the broadcaster reports it: what it could not do, on which transport
// (its name says the server and the topic or channel the user configured), and why, with the
// client's error kept as the cause.
import { messageOf } from "../context/message_of.ts";

/**
 * The error for a transport that could not `doing` (`"publish on"`, `"subscribe on"`, ...) on the
 * transport `name`, because of `error`.
 */
export function transportFailure(doing: string, name: string, error: unknown): Error {
  return new Error(`Broadcaster: could not ${doing} ${name}: ${messageOf(error)}`, {
    cause: error,
  });
}

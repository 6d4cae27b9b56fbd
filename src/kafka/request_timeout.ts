// Whether a request of the client timed out, however deep its tries bury the error: after one the
// producer drops its connections, which the client would misread on. Pure, and never throws.
import { TimeoutError } from "@platformatic/kafka";

// The errors a walk reads at the most: a hostile error (a cycle, a huge tree) ends the walk.
const MOST = 1000;

/** Whether `error` (the client's, however deep: its `errors`, its `cause`) holds a timeout. */
export function holdsTimeout(error: unknown): boolean {
  const stack: unknown[] = [error];
  try {
    for (let seen = 0; stack.length > 0 && seen < MOST; seen++) {
      const node = stack.pop();
      if (node instanceof TimeoutError) return true;
      if (typeof node !== "object" || node === null) continue;
      const { errors, cause } = node as { errors?: unknown; cause?: unknown };
      if (Array.isArray(errors)) stack.push(...errors);
      stack.push(cause);
    }
  } catch {
    // An error that cannot be read holds nothing this can act on.
  }
  return false;
}

import { HTTPException } from "hono/http-exception";
import type { HttpRequest } from "../http/http_request.ts";
import { HttpException, ValidationException } from "../http/http_exception.ts";
import type { HttpStatus } from "../http/http_status.ts";
import type { ResponseEntity } from "../http/response_entity.ts";

/**
 * Receives every error a request ends in: unhandled errors from handlers (500, or an
 * `HttpException`'s own status) and the framework's own (400, 404, 405, 413, 415). It fills the
 * response it is given; the status is already set. Register one bean named `errorController`,
 * with `@Component("errorController")` or `@Bean("errorController")`.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/errors.md#errorcontroller
 */
export interface ErrorController {
  /**
   * Fills `response` for a request that failed.
   *
   * @param request the request that failed
   * @param response the response to fill; its status is `status` already
   * @param status the status the error maps to
   * @param error what was thrown: any value, not only an `Error`
   */
  handleError(
    request: HttpRequest,
    response: ResponseEntity,
    status: HttpStatus,
    error?: unknown,
  ): void | Promise<void>;
}

/** The body the default error controller writes. */
export interface DefaultErrorBody {
  timestamp: string;
  status: number;
  message: string;
  error: string | null;
  issues?: readonly { message: string; path: readonly PropertyKey[] }[];
}

/** Used when no `errorController` bean exists. */
export class DefaultErrorController implements ErrorController {
  handleError(
    _request: HttpRequest,
    response: ResponseEntity,
    status: HttpStatus,
    error?: unknown,
  ): void {
    response.withJson(defaultErrorBody(status, error));
  }
}

// An `HttpException`'s message is meant for the client, as is that of Hono's `HTTPException` of
// an error status (what its middleware throws); any other error's message is internal.
function clientMessage(error: unknown): string | null {
  if (error instanceof HttpException) return error.message;
  if (
    error instanceof HTTPException && error.status >= 400 && error.status <= 599 &&
    error.message !== ""
  ) {
    return error.message;
  }
  return null;
}

/**
 * `{timestamp, status, message, error}`. `error` carries an `HttpException`'s message (or that of
 * a Hono `HTTPException`), which is meant for the client; any other error's message is internal
 * and never sent.
 */
export function defaultErrorBody(status: HttpStatus, error: unknown): DefaultErrorBody {
  const body: DefaultErrorBody = {
    timestamp: new Date().toISOString(),
    status: status.getValue(),
    message: status.getReasonPhrase(),
    error: clientMessage(error),
  };
  if (error instanceof ValidationException) {
    body.issues = error.issues.map((i) => ({ message: i.message, path: i.path }));
  }
  return body;
}

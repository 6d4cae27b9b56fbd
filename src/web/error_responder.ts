import { awaitedForm } from "../context/awaited_form.ts";
import { printable } from "../shown_value.ts";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { withKnownBody } from "../http/body_length.ts";
import { HttpException } from "../http/http_exception.ts";
import { HttpRequest } from "../http/http_request.ts";
import { HttpStatus } from "../http/http_status.ts";
import { answeredErrors } from "../observe/request_observer.ts";
import { ResponseEntity } from "../http/response_entity.ts";
import { defaultErrorBody, type ErrorController } from "./error_controller.ts";

/** Where Thaw reports errors that no client should see, and the line `listen(app)` starts with. */
export interface Logger {
  /** Reports a failure; `details` are the thrown value and context. */
  error(message: string, ...details: unknown[]): void;
  /** Takes the start line of `listen(app)`; a logger without it prints none. */
  info?(message: string, ...details: unknown[]): void;
  /**
   * Takes warnings: a top-level key of the configuration that looks like a misspelt section
   * (`managment:`). A logger without it gets them at `error`.
   */
  warn?(message: string, ...details: unknown[]): void;
}

/** A 405: the path exists, for other methods. Carries them for the `Allow` header. */
export class MethodNotAllowedException extends HttpException {
  readonly allow: string;

  constructor(method: string, path: string, allow: string) {
    super(HttpStatus.METHOD_NOT_ALLOWED, `${method} is not supported for ${path}; use ${allow}`);
    this.allow = allow;
  }
}

/** Turns anything thrown while serving a request into the response the error controller makes. */
export type ErrorResponder = (
  error: unknown,
  c: Context,
  request?: HttpRequest,
  route?: string,
) => Promise<Response>;

function pathVariablesOf(c: Context): Record<string, string> {
  try {
    return c.req.param();
  } catch {
    return {}; // no route matched
  }
}

/** The `HttpRequest` an error path hands on: the route's own, or one made for the failure. */
export function requestOf(c: Context, maxBodySize: number): HttpRequest {
  return new HttpRequest(c.req.raw, { pathVariables: pathVariablesOf(c), maxBodySize });
}

/** `GET /path` as a log line may quote it. */
export function requestLabel(c: Context): string {
  return loggable(`${c.req.method} ${c.req.path}`);
}

/**
 * The status an error maps to: an `HttpException`'s, that of Hono's `HTTPException` (what
 * `bearerAuth`, `jwt` and other Hono middleware throw) when it is an error status (400 or 500 for
 * a code without a name), else 500.
 */
export function statusOf(error: unknown): HttpStatus {
  if (error instanceof HttpException) return error.status;
  if (error instanceof HTTPException && error.status >= 400 && error.status <= 599) {
    // A code Thaw has no name for (499) answers as its class does.
    return HttpStatus.resolve(error.status) ??
      (error.status < 500 ? HttpStatus.BAD_REQUEST : HttpStatus.INTERNAL_SERVER_ERROR);
  }
  return HttpStatus.INTERNAL_SERVER_ERROR;
}

// Headers of Hono's own answer to an HTTPException that the errorController's answer keeps
// (`WWW-Authenticate` from bearerAuth): all but those describing its body.
function challengeHeaders(error: HTTPException, response: ResponseEntity): void {
  const own = response.getHeaders();
  for (const [name, value] of error.getResponse().headers) {
    if (name === "content-type" || name === "content-length" || own.has(name)) continue;
    response.withHeader(name, value);
  }
}

/**
 * The default error body as a response, with no error controller involved: the answer when the
 * error path itself fails (500), and a server's own answer to a request it refuses before the app
 * runs. Built from constants, so that building it cannot fail.
 */
export function lastResortResponse(
  status: HttpStatus = HttpStatus.INTERNAL_SERVER_ERROR,
): Response {
  const body = JSON.stringify(defaultErrorBody(status, undefined));
  return withKnownBody(
    new Response(body, {
      status: status.getValue(),
      // A fresh object: @hono/node-server writes Content-Length into the one it is given.
      headers: { "content-type": "application/json" },
    }),
    body,
  );
}

/**
 * Builds the one place every failed request goes through. Its promise never rejects: a logger or
 * an errorController that throws (or answers with what cannot be sent) ends in
 * {@linkcode lastResortResponse}, so nothing escapes `app.fetch` for a server to answer with a
 * page of its own.
 */
export function createErrorResponder(
  controller: ErrorController,
  logger: Logger,
  maxBodySize: number,
): ErrorResponder {
  // A logger that throws must not turn one failure into two.
  const log = (message: string, detail: unknown): void => {
    try {
      logger.error(message, detail);
    } catch {
      // Nowhere left to report it.
    }
  };

  return async (error, c, request, route) => {
    let where = "a request";
    try {
      where = route ?? requestLabel(c);
      const status = statusOf(error);
      const hono = error instanceof HTTPException;
      if (!(error instanceof HttpException) && !hono) {
        log(`[thaw] ${where} failed:`, error);
        // For the server span's `exception` event, whatever the answer turns out to be.
        answeredErrors.set(c.req.raw, error);
      }
      const req = request ?? requestOf(c, maxBodySize);
      const response = ResponseEntity.status(status);
      // Awaited: the controller's interceptors may answer its value with a promise.
      await awaitedForm(controller.handleError).call(controller, req, response, status, error);
      if (error instanceof MethodNotAllowedException && !response.getHeaders().has("Allow")) {
        response.withHeader("Allow", error.allow);
      }
      if (hono) challengeHeaders(error, response);
      return response.toResponse();
    } catch (failure) {
      // The errorController read what the client sent and found it unusable (a query parameter
      // that is not UTF-8): the client's error, answered as such, and nothing to log.
      if (failure instanceof HttpException && failure.status.getValue() < 500) {
        return lastResortResponse(failure.status);
      }
      log(`[thaw] the errorController failed while handling ${where}:`, failure);
      return lastResortResponse();
    }
  };
}

// A request's method and path as a log line may quote them: a path decodes to any character, and
// a line break or terminal escape in it would forge or hide log lines. Those are escaped as
// JSON escapes them, and a long path is cut.
function loggable(text: string): string {
  return printable(text.length > 200 ? `${text.slice(0, 200)}...` : text);
}

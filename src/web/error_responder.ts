import type { Context } from "hono";
import { HttpException } from "../http/http_exception.ts";
import { HttpRequest } from "../http/http_request.ts";
import { HttpStatus } from "../http/http_status.ts";
import { ResponseEntity } from "../http/response_entity.ts";
import { defaultErrorBody, type ErrorController } from "./error_controller.ts";

/** Where Thaw reports errors that no client should see. */
export interface Logger {
  /** Reports a failure; `details` are the thrown value and context. */
  error(message: string, ...details: unknown[]): void;
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
  request: HttpRequest | undefined,
  route: string | undefined,
) => Promise<Response>;

function pathVariablesOf(c: Context): Record<string, string> {
  try {
    return c.req.param();
  } catch {
    return {}; // no route matched
  }
}

/** Builds the one place every failed request goes through. */
export function createErrorResponder(
  controller: ErrorController,
  logger: Logger,
  maxBodySize: number,
): ErrorResponder {
  // A broken error controller must not leave the client without an answer.
  const lastResort = (): Response =>
    new Response(JSON.stringify(defaultErrorBody(HttpStatus.INTERNAL_SERVER_ERROR, undefined)), {
      status: 500,
      // A fresh object: @hono/node-server writes Content-Length into the one it is given.
      headers: { "content-type": "application/json" },
    });

  return async (error, c, request, route) => {
    const status = error instanceof HttpException ? error.status : HttpStatus.INTERNAL_SERVER_ERROR;
    const where = route ?? `${c.req.method} ${c.req.path}`;
    if (!(error instanceof HttpException)) logger.error(`[thaw] ${where} failed:`, error);
    const req = request ??
      new HttpRequest(c.req.raw, { pathVariables: pathVariablesOf(c), maxBodySize });
    const response = ResponseEntity.status(status);
    try {
      await controller.handleError(req, response, status, error);
      if (error instanceof MethodNotAllowedException && !response.getHeaders().has("Allow")) {
        response.withHeader("Allow", error.allow);
      }
      return response.toResponse();
    } catch (failure) {
      logger.error(`[thaw] the errorController failed while handling ${where}:`, failure);
      return lastResort();
    }
  };
}

import type { ApplicationContext } from "../context/application_context.ts";
import type { Class } from "../context/class.ts";
import { DefinitionError } from "../context/errors.ts";
import type { HandlerBean } from "./exception_resolver.ts";
import { controllerRecordChain } from "./route_record.ts";

/**
 * The controllers and advice beans, checked: middleware and exception handlers on a class that is
 * neither would never run, so that is a startup error naming it.
 */
export function webBeans(
  context: ApplicationContext,
): { controllers: HandlerBean[]; advice: HandlerBean[] } {
  const controllers: HandlerBean[] = [];
  const advice: HandlerBean[] = [];
  for (const bean of context.beans()) {
    if (bean.type === undefined) continue;
    const type = bean.type as Class;
    const records = controllerRecordChain(type);
    if (bean.stereotype === "controller") controllers.push({ type, instance: bean.instance });
    else if (records.some((r) => r.advice === true)) advice.push({ type, instance: bean.instance });
    else if (records.some((r) => r.exceptionHandlers.length > 0)) {
      throw new DefinitionError(
        `${type.name} has @ExceptionHandler methods but is neither a @RestController nor a ` +
          "@ControllerAdvice: they would never run",
      );
    }
    if (
      bean.stereotype !== "controller" &&
      records.some((r) => r.middleware.length > 0 || r.methodMiddleware.size > 0)
    ) {
      throw new DefinitionError(
        `${type.name} has @UseMiddleware but is not a @RestController: it would never run; ` +
          "use bootstrap({ middleware }) for middleware around every request",
      );
    }
  }
  return { controllers, advice };
}

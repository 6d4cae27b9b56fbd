/**
 * What security reports through OpenTelemetry's API: `thaw.security.authentications`, a counter
 * of the requests whose credentials were checked, by `scheme`, `outcome` (`success`, `failure`)
 * and, for a failure, `reason`; and `thaw.security.access.denials`, a counter of the calls method
 * security refused, by `reason`. Named after Spring Security's observations
 * (`spring.security.authentications`, `spring.security.authorizations`) under Thaw's own prefix,
 * as Thaw names its other metrics. Loaded only where the API is installed (`optionalApi()`); while
 * no meter provider is registered, a request costs one look-up here. A provider registered after
 * bootstrap is followed at the next event.
 *
 * @module
 */
import type { Attributes, Counter, MeterProvider } from "@opentelemetry/api";
import type { OtelApi } from "../actuator/opentelemetry.ts";
import { VERSION } from "../version.ts";
import type { AccessDenial, AuthenticationEvent, SecurityEvents } from "./authentication_events.ts";

interface Instruments {
  readonly authentications: Counter;
  readonly denials: Counter;
}

/** The attributes of an event: one frozen object per kind of event, made once, then reused. */
const attributesOf = new Map<string, Attributes>();

function attributes(key: string, make: () => Attributes): Attributes {
  let found = attributesOf.get(key);
  if (found === undefined) attributesOf.set(key, found = Object.freeze(make()));
  return found;
}

/**
 * The events of `security()` as OpenTelemetry counters of the registered meter provider.
 *
 * @param api OpenTelemetry's API
 */
export function securityMetrics(api: OtelApi): SecurityEvents {
  const noop = api.createNoopMeter().createCounter("thaw.security.authentications");
  let provider: MeterProvider | undefined;
  let made: Instruments | undefined;
  const instruments = (): Instruments | undefined => {
    const current = api.metrics.getMeterProvider();
    if (current === provider) return made;
    provider = current;
    const meter = current.getMeter("thaw", VERSION);
    const authentications = meter.createCounter("thaw.security.authentications", {
      unit: "{authentication}",
      description: "Requests whose credentials were checked, by scheme, outcome and reason.",
    });
    made = authentications === noop ? undefined : {
      authentications,
      denials: meter.createCounter("thaw.security.access.denials", {
        unit: "{call}",
        description: "Calls method security refused, by reason.",
      }),
    };
    return made;
  };
  return Object.freeze({
    authentication(event: AuthenticationEvent): void {
      const counters = instruments();
      if (counters === undefined) return;
      const { scheme, outcome, reason } = event;
      counters.authentications.add(
        1,
        attributes(
          `${scheme} ${outcome} ${reason ?? ""}`,
          () => reason === undefined ? { scheme, outcome } : { scheme, outcome, reason },
        ),
      );
    },
    denied(reason: AccessDenial): void {
      instruments()?.denials.add(1, attributes(`denied ${reason}`, () => ({ reason })));
    },
  });
}

import { type Event, EVENT_ID, getScalarValue, parseEvents } from "js-yaml";

interface Frame {
  readonly path: string;
  readonly mapping: boolean;
  /** In a mapping: the key whose value comes next, or `undefined` when a key comes next. */
  key: string | undefined;
  index: number;
}

/**
 * The 1-based line of every key and list item of a YAML document, by dotted path
 * (`search[0].hosts[1]`), so a configuration error can point at the line to fix.
 * Parsing is js-yaml's own event stream; a syntax error is left to `load` to report.
 */
export function yamlLines(text: string): Map<string, number> {
  const lines = new Map<string, number>();
  let events: Event[];
  try {
    events = parseEvents(text, {});
  } catch {
    return lines;
  }
  const starts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  const lineOf = (offset: number): number => {
    let lo = 0, hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  const stack: Frame[] = [];
  // The path a value at this point of the stream has, or undefined when it is a mapping key.
  const childPath = (): string | undefined => {
    const top = stack.at(-1);
    if (top === undefined) return "";
    if (top.mapping) {
      return top.key === undefined ? undefined : top.path ? `${top.path}.${top.key}` : top.key;
    }
    return `${top.path}[${top.index++}]`;
  };
  const valueDone = () => {
    const top = stack.at(-1);
    if (top?.mapping) top.key = undefined;
  };
  for (const event of events) {
    switch (event.type) {
      case EVENT_ID.SCALAR: {
        const top = stack.at(-1);
        // A mapping's key: the value that follows has its path.
        if (top?.mapping === true && top.key === undefined) {
          top.key = getScalarValue(text, event);
          const full = top.path ? `${top.path}.${top.key}` : top.key;
          if (!lines.has(full)) lines.set(full, lineOf(event.valueStart));
        } else {
          const path = childPath();
          if (path && !lines.has(path)) lines.set(path, lineOf(event.valueStart));
          valueDone();
        }
        break;
      }
      case EVENT_ID.ALIAS:
        if (childPath() !== undefined) valueDone();
        break;
      case EVENT_ID.MAPPING:
      case EVENT_ID.SEQUENCE: {
        const path = childPath() ?? "";
        if (path && !lines.has(path)) lines.set(path, lineOf(event.start));
        stack.push({ path, mapping: event.type === EVENT_ID.MAPPING, key: undefined, index: 0 });
        break;
      }
      case EVENT_ID.POP:
        if (stack.pop() !== undefined) valueDone();
        break;
    }
  }
  return lines;
}

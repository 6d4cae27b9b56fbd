import { ncName } from "xml-naming";

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

// Characters XML 1.0 cannot hold at all, escaped or not: C0 controls other than tab, LF and CR,
// lone surrogates (in a `u` pattern a surrogate range matches only unpaired ones), U+FFFE and
// U+FFFF. Written out, the document would not parse.
// deno-lint-ignore no-control-regex -- the control characters are what this refuses
const NOT_XML = /[\0-\x08\x0B\x0C\x0E-\x1F\uD800-\uDFFF\uFFFE\uFFFF]/u;
const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&apos;",
  // A parser turns a raw CR into LF; written as a reference it reads back as it was.
  "\r": "&#13;",
};

function text(value: string, where: string): string {
  if (NOT_XML.test(value)) {
    throw new TypeError(`Cannot write ${where} as XML: it holds a character XML 1.0 forbids`);
  }
  return value.replace(/[&<>"'\r]/g, (c) => ESCAPES[c]);
}

function checkName(name: string): string {
  // Property names become element names; an invalid one would make the document unparseable, so
  // it is refused rather than written. A colon is refused too: it would name a namespace prefix
  // that nothing declares, which namespace-aware parsers (browsers, Java, ElementTree) reject.
  // JSON-quoted and cut: the name may be a client's key, on its way to a log.
  if (!ncName(name)) {
    const shown = name.length > 64 ? `${name.slice(0, 64)}...` : name;
    throw new TypeError(`Cannot write ${jsonQuoted(shown)} as an XML element name`);
  }
  return name;
}

/**
 * A value as `JSON.stringify` sees it: `toJSON` applied (a `Date` becomes its ISO string), boxed
 * primitives unboxed, and numbers that are not finite turned into `null`. Unlike JSON, a `bigint`
 * is written as its digits.
 */
function jsonView(value: unknown, key: string): unknown {
  if (value !== null && typeof value === "object" && "toJSON" in value) {
    const toJSON = (value as { toJSON: unknown }).toJSON;
    if (typeof toJSON === "function") value = toJSON.call(value, key);
  }
  if (value instanceof Number || value instanceof String || value instanceof Boolean) {
    value = value.valueOf();
  }
  if (typeof value === "number" && !Number.isFinite(value)) return null;
  return value;
}

/** What `JSON.stringify` leaves out of an object (and writes as `null` in an array). */
function skipped(value: unknown): boolean {
  return value === undefined || typeof value === "function" || typeof value === "symbol";
}

/** The properties of an object as they are written: viewed as JSON sees them, skipped ones out. */
function fields(value: object): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const [key, raw] of Object.entries(value)) {
    const child = jsonView(raw, key);
    if (!skipped(child)) out.push([key, child]);
  }
  return out;
}

/**
 * Writes `<name>value</name>` for a value already viewed as JSON sees it. An array as a property's
 * value repeats the property's element once per item, as XML lists usually are; an array anywhere
 * else (the root, or an item of an array) gets `<item>` children, so the document always has
 * exactly one root.
 */
function element(name: string, value: unknown, open: Set<object>, out: string[]): void {
  if (value === null || skipped(value)) {
    out.push(`<${name}/>`);
    return;
  }
  if (typeof value !== "object") {
    out.push(`<${name}>${text(String(value), `<${name}>`)}</${name}>`);
    return;
  }
  if (open.has(value)) throw new TypeError(`Cannot write a circular structure as XML (<${name}>)`);
  open.add(value);
  out.push(`<${name}>`);
  if (Array.isArray(value)) {
    value.forEach((item, i) => element("item", jsonView(item, String(i)), open, out));
  } else {
    for (const [key, child] of fields(value)) {
      const childName = checkName(key);
      if (Array.isArray(child)) {
        if (open.has(child)) throw new TypeError(`Cannot write a circular structure as XML`);
        open.add(child);
        child.forEach((item, i) => element(childName, jsonView(item, String(i)), open, out));
        open.delete(child);
      } else {
        element(childName, child, open, out);
      }
    }
  }
  out.push(`</${name}>`);
  open.delete(value);
}

/**
 * Serialises a value as an XML document. An object with exactly one key, whose value is not an
 * array, gives the root element; anything else (several keys, an array, a scalar) is wrapped in
 * `<response>`. A string is taken to be XML already and sent as it is. Values are read as
 * `JSON.stringify` reads them: `toJSON` is applied, `undefined` properties are left out, `null`
 * and what JSON writes as `null` is an empty element.
 */
export function toXml(body: unknown): string {
  if (typeof body === "string") return body;
  const out = [DECLARATION];
  const value = jsonView(body, "");
  const entries = value !== null && typeof value === "object" && !Array.isArray(value)
    ? fields(value)
    : [];
  if (entries.length === 1 && !Array.isArray(entries[0][1])) {
    element(checkName(entries[0][0]), entries[0][1], new Set(), out);
  } else {
    element("response", value, new Set(), out);
  }
  return out.join("");
}

// JSON.stringify, with the line and paragraph separators it leaves raw escaped too.
function jsonQuoted(text: string): string {
  return JSON.stringify(text).replace(
    /[\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16)}`,
  );
}

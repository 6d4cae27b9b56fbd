import { qName } from "xml-naming";

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
};

function text(value: string, where: string): string {
  if (NOT_XML.test(value)) {
    throw new TypeError(`Cannot write ${where} as XML: it holds a character XML 1.0 forbids`);
  }
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

function checkName(name: string): string {
  // Property names become element names; an invalid one would make the document unparseable, so
  // it is refused rather than written.
  if (!qName(name)) throw new TypeError(`Cannot write "${name}" as an XML element name`);
  return name;
}

/** A value as `JSON.stringify` sees it: `toJSON` applied (a `Date` becomes its ISO string). */
function jsonView(value: unknown, key: string): unknown {
  if (value !== null && typeof value === "object" && "toJSON" in value) {
    const toJSON = (value as { toJSON: unknown }).toJSON;
    if (typeof toJSON === "function") return toJSON.call(value, key);
  }
  return value;
}

/** What `JSON.stringify` leaves out of an object. */
function skipped(value: unknown): boolean {
  return value === undefined || typeof value === "function" || typeof value === "symbol";
}

/**
 * Writes `<name>value</name>`. An array as a property's value repeats the property's element once
 * per item, as XML lists usually are; an array anywhere else (the root, or an item of an array)
 * gets `<item>` children, so the document always has exactly one root.
 */
function element(name: string, raw: unknown, open: Set<object>, out: string[]): void {
  const value = jsonView(raw, name);
  if (skipped(value)) return;
  if (value === null) {
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
    for (const item of value) element("item", item ?? null, open, out);
  } else {
    for (const [key, child] of Object.entries(value)) {
      const childName = checkName(key);
      if (Array.isArray(child)) {
        if (open.has(child)) throw new TypeError(`Cannot write a circular structure as XML`);
        open.add(child);
        for (const item of child) element(childName, item ?? null, open, out);
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
 * is an empty element.
 */
export function toXml(body: unknown): string {
  if (typeof body === "string") return body;
  const out = [DECLARATION];
  const value = jsonView(body, "");
  const entries = value !== null && typeof value === "object" && !Array.isArray(value)
    ? Object.entries(value).filter(([, v]) => !skipped(v))
    : [];
  if (entries.length === 1 && !Array.isArray(entries[0][1])) {
    element(checkName(entries[0][0]), entries[0][1], new Set(), out);
  } else {
    element("response", value ?? null, new Set(), out);
  }
  return out.join("");
}

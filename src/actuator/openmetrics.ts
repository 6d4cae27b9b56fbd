// `/actuator/prometheus` in OpenMetrics 1.0 for a scraper that asks for it (Prometheus does, first),
// made from the text format OpenTelemetry's serializer writes: the two say the same samples, but
// OpenMetrics names a counter's family without `_total`, has a UNIT line, writes timestamps in
// seconds and `le` as canonical numbers, allows no comment nor blank line, and ends with `# EOF`.
// A scraper's strict parser refuses the whole exposition for one of these, so the text is read
// line by line and written again rather than patched.
import { mediaTypeEssence, mediaTypeParameter } from "../http/media_type.ts";
import { PER_UNITS, UNITS } from "./prometheus_names.ts";

/** The content type of OpenMetrics 1.0's text format. */
export const OPENMETRICS_CONTENT_TYPE =
  "application/openmetrics-text; version=1.0.0; charset=utf-8";

/** The content type of Prometheus's text format, served unless OpenMetrics is asked for. */
export const PROMETHEUS_TEXT_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

interface MediaRange {
  readonly type: string;
  readonly subtype: string;
  readonly version: string | undefined;
  readonly q: number;
}

const TOKEN = "[!#$%&'*+.^_`|~0-9a-z-]+";
const RANGE = new RegExp(`^(${TOKEN})/(${TOKEN})$`);
// RFC 9110's qvalue: at most three decimals, and no more than 1.
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

// The comma-separated elements of a header, a comma inside a quoted string no separator.
function elements(header: string): string[] {
  const out: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < header.length; i++) {
    const c = header[i];
    if (quoted && c === "\\") i++;
    else if (c === '"') quoted = !quoted;
    else if (c === "," && !quoted) {
      out.push(header.slice(start, i));
      start = i + 1;
    }
  }
  out.push(header.slice(start));
  return out;
}

// The ranges of an `Accept` value; one that is malformed, or whose weight is, says nothing.
function mediaRanges(accept: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const element of elements(accept)) {
    const match = RANGE.exec(mediaTypeEssence(element));
    if (match === null || (match[1] === "*" && match[2] !== "*")) continue;
    const q = mediaTypeParameter(element, "q");
    if (q !== undefined && !QVALUE.test(q)) continue;
    ranges.push({
      type: match[1],
      subtype: match[2],
      version: mediaTypeParameter(element, "version"),
      q: q === undefined ? 1 : Number(q),
    });
  }
  return ranges;
}

// The weight `ranges` give a type Thaw writes, by the most specific range that matches it (RFC
// 9110, 12.5.1): a range naming another version of the format does not match it.
function quality(ranges: readonly MediaRange[], type: string, subtype: string, version: string) {
  let specificity = -1;
  let q = 0;
  for (const range of ranges) {
    const rank = range.type === "*"
      ? 0
      : range.type !== type
      ? -1
      : range.subtype === "*"
      ? 1
      : range.subtype !== subtype
      ? -1
      : range.version === undefined
      ? 2
      : range.version === version
      ? 3
      : -1;
    if (rank > specificity) [specificity, q] = [rank, range.q];
    else if (rank === specificity && rank >= 0) q = Math.max(q, range.q);
  }
  return q;
}

/**
 * Whether `accept` (a request's `Accept`) weighs OpenMetrics 1.0.0 above the text format 0.0.4,
 * as Prometheus's own does. Equal weights (an `Accept` of any type, or none) give the text format.
 */
export function prefersOpenMetrics(accept: string | null | undefined): boolean {
  if (accept === null || accept === undefined || accept.trim() === "") return false;
  const ranges = mediaRanges(accept.toLowerCase());
  return quality(ranges, "application", "openmetrics-text", "1.0.0") >
    quality(ranges, "text", "plain", "0.0.4");
}

// OpenMetrics' realnumber (its ABNF's `e` in either case), which Go's ParseFloat reads alike.
const REAL = /^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/;

// A number as the text format writes it (Go's ParseFloat reads it), or undefined.
function readNumber(text: string): number | undefined {
  const lower = text.toLowerCase();
  if (lower === "nan") return NaN;
  if (/^\+?inf(?:inity)?$/.test(lower)) return Infinity;
  if (/^-inf(?:inity)?$/.test(lower)) return -Infinity;
  const value = Number(text);
  return Number.isNaN(value) || text.trim() === "" ? undefined : value;
}

/**
 * `value` as OpenMetrics' canonical numbers write `le` and `quantile`: Go's `%g` (the shortest
 * digits; an exponent below 1e-4 and from 1e+6, of two digits at least), with `.0` where it would
 * read as an integer; `+Inf`, `-Inf`, `NaN`.
 */
export function canonicalNumber(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  if (value === 0) return Object.is(value, -0) ? "-0.0" : "0.0";
  const [digits, exponentText] = value.toExponential().split("e");
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 6) {
    const sign = exponent < 0 ? "-" : "+";
    return `${digits}e${sign}${String(Math.abs(exponent)).padStart(2, "0")}`;
  }
  // From 1e-4 to below 1e6, JavaScript writes the shortest digits without an exponent, as Go does.
  const plain = String(value);
  return plain.includes(".") ? plain : `${plain}.0`;
}

// A value of the text format as OpenMetrics writes it, or undefined for one it cannot.
function omValue(text: string): string | undefined {
  if (REAL.test(text)) return text;
  const value = readNumber(text);
  if (value === undefined) return undefined;
  return Number.isFinite(value) ? String(value) : canonicalNumber(value);
}

// Milliseconds (the text format's timestamps) as seconds, exactly.
function seconds(millis: string): string | undefined {
  const match = /^([-+]?)(\d+)$/.exec(millis);
  if (match === null) return undefined;
  const padded = match[2].replace(/^0+/, "").padStart(4, "0");
  const whole = padded.slice(0, -3).replace(/^0+(?=\d)/, "");
  const fraction = padded.slice(-3).replace(/0+$/, "");
  const sign = match[1] === "-" && /[1-9]/.test(padded) ? "-" : "";
  return `${sign}${whole}${fraction === "" ? "" : `.${fraction}`}`;
}

interface TextSample {
  readonly name: string;
  readonly labels: [string, string][];
  readonly value: string;
  readonly timestamp: string | undefined;
}

interface TextFamily {
  readonly name: string;
  type: string | undefined;
  help: string | undefined;
  readonly samples: TextSample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
// `s`: a HELP's text may hold a carriage return or U+2028, which `.` would not match.
const HELP = /^#[ \t]*HELP[ \t]+([a-zA-Z_:][a-zA-Z0-9_:]*)(?:[ \t]+(.*))?$/s;
const TYPE = /^#[ \t]*TYPE[ \t]+([a-zA-Z_:][a-zA-Z0-9_:]*)[ \t]+([a-zA-Z]+)[ \t]*$/;

// A sample line of the text format (blanks between its tokens, a comma after the last label),
// its label values unescaped; undefined for a line the format does not allow.
function readSample(line: string): TextSample | undefined {
  const name = NAME.exec(line)?.[0];
  if (name === undefined) return undefined;
  let i = name.length;
  const blanks = () => {
    while (line[i] === " " || line[i] === "\t") i++;
  };
  blanks();
  const labels: [string, string][] = [];
  if (line[i] === "{") {
    i++;
    for (;;) {
      blanks();
      if (line[i] === "}") break;
      const label = LABEL_NAME.exec(line.slice(i))?.[0];
      if (label === undefined) return undefined;
      i += label.length;
      blanks();
      if (line[i] !== "=") return undefined;
      i++;
      blanks();
      if (line[i] !== '"') return undefined;
      let value = "";
      for (i++;; i++) {
        const c = line[i];
        if (c === undefined) return undefined;
        if (c === '"') break;
        if (c === "\\") {
          const next = line[++i];
          if (next === undefined) return undefined;
          // The text format's escapes; Prometheus keeps any other backslash as it is.
          value += next === "n" ? "\n" : next === "\\" || next === '"' ? next : `\\${next}`;
        } else value += c;
      }
      i++;
      if (labels.some(([known]) => known === label)) return undefined;
      labels.push([label, value]);
      blanks();
      if (line[i] === ",") i++;
      else if (line[i] !== "}") return undefined;
    }
    i++;
  }
  const rest = line.slice(i).trim().split(/[ \t]+/);
  if (rest.length > 2 || rest[0] === "" || i === name.length && !/^[ \t]/.test(line.slice(i))) {
    return undefined;
  }
  return { name, labels, value: rest[0], timestamp: rest[1] };
}

// The sample names a family of the text format holds.
function holds(family: TextFamily, name: string): boolean {
  if (family.type === "histogram") {
    return ["_bucket", "_count", "_sum"].some((suffix) => name === `${family.name}${suffix}`);
  }
  if (family.type === "summary") {
    return ["", "_count", "_sum"].some((suffix) => name === `${family.name}${suffix}`);
  }
  return name === family.name;
}

// The families of a text exposition, in its order: HELP and TYPE start one (or describe the one
// they follow, before its samples), a sample its family cannot hold starts an untyped one.
function readText(text: string): TextFamily[] {
  const families: TextFamily[] = [];
  let current: TextFamily | undefined;
  const start = (name: string) => {
    current = { name, type: undefined, help: undefined, samples: [] };
    families.push(current);
    return current;
  };
  for (const raw of text.split("\n")) {
    const line = raw.replace(/^[ \t]+/, "");
    if (line === "") continue;
    if (line.startsWith("#")) {
      const help = HELP.exec(line);
      const type = TYPE.exec(line);
      const name = help?.[1] ?? type?.[1];
      if (name === undefined) continue; // a comment
      // A HELP or TYPE the family it follows lacks, before its samples, describes that one.
      const family = current !== undefined && current.name === name &&
          current.samples.length === 0 &&
          (help === null ? current.type : current.help) === undefined
        ? current
        : start(name);
      if (help !== null) family.help = help[2] ?? "";
      else if (type !== null) family.type = type[2].toLowerCase();
      continue;
    }
    const sample = readSample(line);
    if (sample === undefined) continue;
    const family = current !== undefined && holds(current, sample.name)
      ? current
      : start(sample.name);
    family.samples.push(sample);
  }
  return families;
}

// The sample names a family of each type may write, by suffix; the empty one is its own name.
const SUFFIXES: Readonly<Record<string, readonly string[]>> = {
  counter: ["_total", "_created"],
  gauge: [""],
  histogram: ["_bucket", "_count", "_sum", "_created"],
  summary: ["", "_count", "_sum", "_created"],
  unknown: [""],
};

const UNIT_WORDS = new Set(Object.values(UNITS));
const PER_WORDS = new Set(Object.values(PER_UNITS));

// The unit the end of a family's name says, with a name before it (`wait_seconds` is in
// `seconds`, `sent_bytes_per_second` in `bytes_per_second`): the words of OpenTelemetry's
// Prometheus rules alone, so that a name ending in another word is not taken for a unit.
function unitOf(name: string): string | undefined {
  const words = name.split("_");
  const n = words.length;
  let unit: string | undefined;
  if (n >= 3 && words[n - 2] === "per" && PER_WORDS.has(words[n - 1])) {
    unit = n >= 4 && UNIT_WORDS.has(words[n - 3])
      ? `${words[n - 3]}_per_${words[n - 1]}`
      : `per_${words[n - 1]}`;
  } else if (n >= 2 && UNIT_WORDS.has(words[n - 1])) unit = words[n - 1];
  return unit !== undefined && name.length > unit.length + 1 ? unit : undefined;
}

const escapeOm = (text: string) =>
  text.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n");

// The text format's HELP escapes are `\\` and `\n` alone; Prometheus keeps any other backslash.
const unescapeHelp = (text: string) =>
  text.replace(/\\([\\n])/g, (_, c: string) => (c === "n" ? "\n" : "\\"));

function sampleLine(sample: TextSample, canonical: string | undefined): string | undefined {
  const value = omValue(sample.value);
  const timestamp = sample.timestamp === undefined ? undefined : seconds(sample.timestamp);
  if (value === undefined || (sample.timestamp !== undefined && timestamp === undefined)) {
    return undefined;
  }
  const labels = sample.labels.map(([name, text]) => {
    const number = name === canonical ? readNumber(text) : undefined;
    return `${name}="${escapeOm(number === undefined ? text : canonicalNumber(number))}"`;
  });
  return `${sample.name}${labels.length === 0 ? "" : `{${labels.join(",")}}`} ${value}${
    timestamp === undefined ? "" : ` ${timestamp}`
  }`;
}

/**
 * A text exposition (Prometheus's format 0.0.4, as OpenTelemetry's serializer writes it) as
 * OpenMetrics 1.0 text, ending `# EOF\n`; `undefined` where OpenMetrics cannot say all of it, so
 * that the caller serves the text format, which can. Each family keeps its samples: a counter
 * `x_total` is the family `x`, its samples still `x_total`; an untyped family is `unknown`; a name
 * ending in a unit's word (`_seconds`) has that UNIT. OpenMetrics takes a name once, samples'
 * names included (a histogram `x` writes `x_count`): the other families take their names first,
 * then each counter, in the order of their names, takes its stem or, where that is taken, keeps
 * its `_total` name as an `unknown` family. So the order in which meters were made changes
 * nothing; a clash no renaming resolves (a gauge `x_count` beside a histogram `x`) gives
 * `undefined`. A line the text
 * format does not allow is left out.
 */
export function toOpenMetrics(text: string): string | undefined {
  const taken = new Set<string>();
  const claim = (name: string, type: string): boolean => {
    const names = [name, ...SUFFIXES[type].map((suffix) => `${name}${suffix}`)];
    if (names.some((n) => taken.has(n))) return false;
    for (const n of names) taken.add(n);
    return true;
  };
  const families = readText(text);
  const named: ({ name: string; type: string } | undefined)[] = [];
  // A counter named `_total` can take two names, its stem or, as `unknown`, its own; every other
  // family one. Those take theirs first, then these, in the order of their names rather than the
  // exposition's: what OpenMetrics can say then depends on the names alone.
  const twoNames = (family: TextFamily) =>
    family.type === "counter" && family.name.endsWith("_total") && family.name !== "_total";
  families.forEach((family, i) => {
    if (twoNames(family)) return;
    const type = family.type ?? "untyped";
    // OpenMetrics' counter samples end `_total`: a counter's that do not are of no type it knows.
    const omType = ["gauge", "histogram", "summary"].includes(type) ? type : "unknown";
    named[i] = claim(family.name, omType) ? { name: family.name, type: omType } : undefined;
  });
  const counters = [...families.keys()].filter((i) => twoNames(families[i]));
  counters.sort((a, b) => (families[a].name < families[b].name ? -1 : 1));
  for (const i of counters) {
    const name = families[i].name;
    const stem = name.slice(0, -"_total".length);
    named[i] = claim(stem, "counter")
      ? { name: stem, type: "counter" }
      : claim(name, "unknown")
      ? { name, type: "unknown" }
      : undefined;
  }
  const out: string[] = [];
  for (const [i, family] of families.entries()) {
    const as = named[i];
    if (as === undefined) return undefined;
    const { name, type: omType } = as;
    const canonical = omType === "histogram" ? "le" : omType === "summary" ? "quantile" : "";
    out.push(`# TYPE ${name} ${omType}`);
    const unit = unitOf(name);
    if (unit !== undefined) out.push(`# UNIT ${name} ${unit}`);
    // A carriage return ending a HELP would read as a CRLF line ending, which OpenMetrics refuses.
    const help = family.help === undefined ? "" : unescapeHelp(family.help).replace(/\r+$/, "");
    if (help !== "") out.push(`# HELP ${name} ${escapeOm(help)}`);
    for (const sample of family.samples) {
      const point = omType === "histogram"
        ? sample.name === `${name}_bucket`
        : omType === "summary" && sample.name === name;
      const line = sampleLine(sample, point ? canonical : undefined);
      if (line !== undefined) out.push(line);
    }
  }
  out.push("# EOF", "");
  return out.join("\n");
}

export type Redactor = (text: string) => string;

const TOKEN_PATTERNS: RegExp[] = [
  /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}\b/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}\b/g,
  /\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}\b/g,
  /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g,
  /(?<=x-access-token:)[^@\s]+(?=@)/g,
];

/** Removes the known secret values and anything shaped like a common token. */
export function createRedactor(secrets: Array<string | undefined | null>): Redactor {
  const known = [...new Set(secrets.filter((s): s is string => typeof s === "string" && s.length >= 8))].sort(
    (a, b) => b.length - a.length,
  );
  return (text) => {
    let out = text;
    for (const secret of known) out = out.split(secret).join("[redacted]");
    out = redactPrivateKeys(out);
    for (const pattern of TOKEN_PATTERNS) out = out.replace(pattern, "[redacted]");
    return out;
  };
}

const KEY_BEGIN = /-----BEGIN [A-Z ]*PRIVATE KEY-----/g;
const KEY_END = /-----END [A-Z ]*PRIVATE KEY-----/g;
/** What follows a BEGIN line in a PEM block: headers (`Proc-Type: …`) and base64 lines. */
const PEM_LINE = /^(?:[A-Za-z-]+: .*|[A-Za-z0-9+/]{8,}={0,2}|[A-Za-z0-9+/]*={1,2})$/;

/**
 * PEM private keys, BEGIN to END; a key cut off before its END line (truncated output) loses its
 * body lines too. One forward scan: a lazy BEGIN…END pattern is quadratic on repeated BEGIN lines.
 */
function redactPrivateKeys(text: string): string {
  if (!text.includes("PRIVATE KEY-----")) return text;
  let out = "";
  let last = 0;
  let endsLeft = true; // once no END follows some point, none follows any later point
  KEY_BEGIN.lastIndex = 0;
  for (let begin = KEY_BEGIN.exec(text); begin; begin = KEY_BEGIN.exec(text)) {
    KEY_END.lastIndex = KEY_BEGIN.lastIndex;
    const end = endsLeft ? KEY_END.exec(text) : null;
    let stop: number;
    if (end) {
      stop = end.index + end[0].length;
    } else {
      endsLeft = false;
      stop = KEY_BEGIN.lastIndex;
      while (stop < text.length && text[stop] === "\n") {
        const next = text.indexOf("\n", stop + 1);
        const lineEnd = next === -1 ? text.length : next;
        if (!PEM_LINE.test(text.slice(stop + 1, lineEnd))) break;
        stop = lineEnd;
      }
    }
    out += `${text.slice(last, begin.index)}[redacted]`;
    last = stop;
    KEY_BEGIN.lastIndex = stop;
  }
  return out + text.slice(last);
}

export type Redactor = (text: string) => string;

const TOKEN_PATTERNS: RegExp[] = [
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
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
    for (const pattern of TOKEN_PATTERNS) out = out.replace(pattern, "[redacted]");
    return out;
  };
}

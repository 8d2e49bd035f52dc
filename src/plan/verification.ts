/**
 * The plan's `verification` holds shell commands that Blueprint runs after the last step; checks for
 * people go in `manual_checks`. A plan saved before that split (or a model that ignores it) may hold
 * prose there: such an entry is refused when the plan is submitted and shown as not run when built.
 */

/** Why an entry of `verification` reads as prose rather than a shell command, or null when it reads as a command. */
export function whyNotACommand(entry: string): string | null {
  const text = entry.trim();
  if (/^[A-Za-z][\w -]{0,30}:\s/.test(text))
    return `it starts with a label ("${text.slice(0, text.indexOf(":") + 1)}"), as a note for people does`;
  if (/\p{L}{2,}[.!?]$/u.test(text)) return "it ends like a sentence";
  if (/^[A-Z][a-z]+\s+(?:[a-z]+\b[\s,]*){2,}/.test(text) && !/[-=/'"$|&;<>]/.test(text))
    return "it reads as an English sentence";
  if (text.includes("\n")) return "it spans several lines; give one command per entry";
  return null;
}

/** The message a refused entry gets, for the model. */
export function proseVerificationError(index: number, entry: string, why: string): string {
  const shown = entry.length > 80 ? `${entry.slice(0, 80)}…` : entry;
  return `verification.${index} ("${shown}") is not a shell command: ${why}. verification holds only commands Blueprint runs in bash at the repository root (e.g. "npm test"); put checks for people in manual_checks`;
}

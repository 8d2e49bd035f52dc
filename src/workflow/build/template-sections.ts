/**
 * A pull request template's structure, for checking what the model made of it: its headings (the
 * sections reviewers expect, in order) and its checkboxes (which only a person may tick).
 */

export interface TemplateHeading {
  level: number;
  text: string;
}

const ATX_HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const HTML_COMMENT = /<!--[\s\S]*?(?:-->|$)/g;
const CHECKBOX = /^(\s*(?:[-*+]|\d+[.)])\s+)\[([ xX])\](.*)$/;

/** Lines outside fenced code blocks and HTML comments (GitHub renders no heading in either), with their index. */
export function renderedLines(markdown: string): Array<{ line: string; index: number }> {
  // Comments are blanked line by line so that indexes still point into the original text.
  const blanked = markdown.replace(HTML_COMMENT, (comment) => comment.replace(/[^\n]/g, " "));
  const out: Array<{ line: string; index: number }> = [];
  let fence: string | null = null;
  blanked.split("\n").forEach((line, index) => {
    const marker = FENCE.exec(line)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = null;
      return;
    }
    if (marker) {
      fence = marker;
      return;
    }
    out.push({ line, index });
  });
  return out;
}

/** The ATX headings (`## Testing`) of a Markdown text, in order; whitespace inside a heading is collapsed. */
export function templateHeadings(markdown: string): Array<TemplateHeading & { line: number }> {
  return renderedLines(markdown).flatMap(({ line, index }) => {
    const match = ATX_HEADING.exec(line);
    if (!match?.[1]) return [];
    return [{ level: match[1].length, text: (match[2] ?? "").replace(/\s+/g, " ").trim(), line: index }];
  });
}

/**
 * The template's headings missing from the answer, or out of order there (extra headings are allowed); empty when all
 * are kept.
 */
export function lostHeadings(template: string, answer: string): TemplateHeading[] {
  const kept = templateHeadings(answer);
  let from = 0;
  const lost: TemplateHeading[] = [];
  for (const heading of templateHeadings(template)) {
    const at = kept.findIndex(
      (candidate, index) => index >= from && candidate.level === heading.level && candidate.text === heading.text,
    );
    if (at < 0) lost.push({ level: heading.level, text: heading.text });
    else from = at + 1;
  }
  return lost;
}

/**
 * Unticks every checkbox the answer ticked that the template did not already have ticked: the
 * model writing a description cannot vouch for a checklist ("I tested this by hand"); people do.
 */
export function untickNewCheckboxes(template: string, answer: string): string {
  const tickedInTemplate = new Set(
    template.split("\n").flatMap((line) => {
      const match = CHECKBOX.exec(line);
      return match && match[2] !== " " ? [(match[3] ?? "").trim()] : [];
    }),
  );
  return answer
    .split("\n")
    .map((line) => {
      const match = CHECKBOX.exec(line);
      if (!match || match[2] === " " || tickedInTemplate.has((match[3] ?? "").trim())) return line;
      return `${match[1]}[ ]${match[3]}`;
    })
    .join("\n");
}

/** The template as written, with `text` under its first heading (or on top when it has none). */
export function withTextUnderFirstHeading(template: string, text: string): string {
  const lines = template.split("\n");
  const first = templateHeadings(template)[0];
  if (!first) return `${text}\n\n${template}`;
  lines.splice(first.line + 1, 0, "", text);
  return lines.join("\n");
}

const MENTION = /(^|[^\w`@/.-])@([A-Za-z0-9][A-Za-z0-9-]{0,38}(?:\/[A-Za-z0-9_.-]+)?)/g;
const CLOSING_KEYWORD =
  /\b(clos|fix|resolv)(es?|ed|e)?(\s*:?\s+)(?=(?:[\w.-]+\/[\w.-]+)?#\d|https?:\/\/\S+\/(?:issues|pull)\/\d)/gi;

/**
 * Model-written text in a pull request body can neither ping people nor close issues: an `@name` the
 * template does not itself have is no mention (a zero-width space follows the `@`), and a closing
 * keyword before an issue reference (`Fixes #12`, `closes o/r#3`, an issue URL) is broken the same
 * way, so merging the pull request closes only the issue Blueprint names itself (`Closes #n`).
 */
export function quietReferences(description: string, template = ""): string {
  // Code blocks ping no one and close nothing: their text (a decorator's `@name`) is left as written.
  const prose = new Set(renderedLines(description).map(({ index }) => index));
  return description
    .split("\n")
    .map((line, index) =>
      prose.has(index)
        ? line
            .replace(MENTION, (whole, before: string, name: string) =>
              template.includes(`@${name}`) ? whole : `${before}@\u200b${name}`,
            )
            .replace(
              CLOSING_KEYWORD,
              (_whole, stem: string, ending: string | undefined, gap: string) =>
                `${stem.slice(0, 1)}\u200b${stem.slice(1)}${ending ?? ""}${gap}`,
            )
        : line,
    )
    .join("\n");
}

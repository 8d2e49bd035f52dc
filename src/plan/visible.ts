/** One task-list line of a plan comment, as a person may have edited it on GitHub. */
export interface VisibleStep {
  id: string;
  ticked: boolean;
  title: string;
  deps: string[];
}

const TASK_LINE = /^\s*[-*] \[( |x|X)\] \*\*(S\d{1,3})\*\*\s*(.*)$/;
const SEGMENT = [/^`[^`]*`(, `[^`]*`)*$/, /^after S\d+(, S\d+)*$/, /^✅ /, /^ticked by hand$/, /^failed: /];

/** Reads the steps section of a plan comment: ids, ticks, titles and "after" dependencies. */
export function readVisibleSteps(body: string): VisibleStep[] {
  const section = stepsSection(body);
  const steps: VisibleStep[] = [];
  for (const line of section.split("\n")) {
    const match = TASK_LINE.exec(line);
    if (!match) continue;
    const [, tick = " ", id = "", rest = ""] = match;
    const { title, segments } = splitMeta(rest.replace(/^(❌|⏳)\s*/u, ""));
    const after = segments.find((segment) => segment.startsWith("after "));
    steps.push({
      id,
      ticked: tick.toLowerCase() === "x",
      title: title.trim(),
      deps: after ? after.slice("after ".length).split(",").map((dep) => dep.trim()) : [],
    });
  }
  return steps;
}

function stepsSection(body: string): string {
  const start = body.indexOf("### Steps");
  if (start === -1) return body;
  const end = body.indexOf("\n### ", start + 1);
  const mermaid = body.indexOf("```mermaid", start);
  const stops = [end, mermaid].filter((index) => index !== -1);
  return body.slice(start, stops.length > 0 ? Math.min(...stops) : undefined);
}

/** Splits "title — seg · seg" at the last " — " whose tail is made only of known segments. */
function splitMeta(text: string): { title: string; segments: string[] } {
  let index = text.lastIndexOf(" — ");
  while (index !== -1) {
    const segments = text.slice(index + 3).split(" · ").map((segment) => segment.trim());
    if (segments.every((segment) => SEGMENT.some((pattern) => pattern.test(segment)))) {
      return { title: text.slice(0, index), segments };
    }
    index = text.lastIndexOf(" — ", index - 1);
  }
  return { title: text, segments: [] };
}

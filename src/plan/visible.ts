import { STEPS_END, STEPS_START, unescapeTaskTitle } from "./render.js";

/** One task-list line of a plan comment, as a person may have edited it on GitHub. */
export interface VisibleStep {
  id: string;
  ticked: boolean;
  title: string;
  deps: string[];
  /** The file names the line shows (as code spans show them: see inlineCode). */
  files: string[];
}

const TASK_LINE = /^\s*[-*] \[( |x|X)\] \*\*(S\d{1,3})\*\*[ \t]*(.*)$/s;
/** The task list's opening as renderPlanBody writes it: the heading line, then the hidden marker. */
const STEPS_OPENING = new RegExp(`^### Steps[ \\t]*\\r?\\n(?:[ \\t]*\\r?\\n)*${STEPS_START}`, "m");
const STEPS_HEADING = /^### Steps[ \t]*\r?$/m;
/** Where the task list ends when its closing marker is gone: the next heading or code fence. */
const NEXT_BLOCK = /^(?:#{1,6} |```)/m;
/** "`files` · after S1, S2 · status", each part optional, in this order; the status runs to the end. */
const META =
  /^(`[^`]*`(?:, `[^`]*`)*)?(?:(?:^| · )after (S\d+(?:, S\d+)*))?(?:(?:^| · )(?:✅ .*|ticked by hand|failed: .*))?$/su;

/** Reads the steps section of a plan comment: ids, ticks, titles and "after" dependencies. */
export function readVisibleSteps(body: string): VisibleStep[] {
  const steps: VisibleStep[] = [];
  for (const line of stepsSection(body).split(/\r?\n/)) {
    const match = TASK_LINE.exec(line);
    if (!match) continue;
    const [, tick = " ", id = "", rest = ""] = match;
    const { title, deps, files } = splitMeta(rest.replace(/^(?:❌|⏳)[ \t]*/u, ""));
    steps.push({ id, ticked: tick.toLowerCase() === "x", title: unescapeTaskTitle(title.trim()), deps, files });
  }
  return steps;
}

/**
 * The task list: between the hidden markers renderPlanBody writes after the "### Steps" heading
 * (a summary or a step cannot forge them). Comments from before the markers, or whose closing
 * marker was cut or deleted, are read from the heading to the next heading or code fence.
 */
function stepsSection(body: string): string {
  const opening = STEPS_OPENING.exec(body);
  if (opening) {
    const from = opening.index + opening[0].length;
    const end = body.indexOf(STEPS_END, from);
    return end !== -1 ? body.slice(from, end) : untilNextBlock(body.slice(from));
  }
  const heading = STEPS_HEADING.exec(body);
  return heading ? untilNextBlock(body.slice(heading.index + heading[0].length)) : body;
}

function untilNextBlock(text: string): string {
  const next = NEXT_BLOCK.exec(text);
  return next ? text.slice(0, next.index) : text;
}

/**
 * Splits "title — `files` · after S1 · status" at the " — " that starts the metadata. Rendered
 * titles never hold "—" (see escapeTaskTitle), so that is the first one; a title a person typed
 * "—" into may still end in metadata after the last one. Only these two are tried, so a line full
 * of dashes is read in linear time.
 */
function splitMeta(text: string): { title: string; deps: string[]; files: string[] } {
  const first = text.indexOf(" — ");
  const last = text.lastIndexOf(" — ");
  for (const index of first === last ? [first] : [first, last]) {
    if (index === -1) break;
    const meta = META.exec(text.slice(index + 3));
    if (!meta || meta[0] === "") continue;
    const [, files = "", after] = meta;
    return {
      title: text.slice(0, index),
      deps: after ? after.split(", ") : [],
      files: [...files.matchAll(/`([^`]*)`/g)].map((file) => file[1] ?? ""),
    };
  }
  return { title: text, deps: [], files: [] };
}

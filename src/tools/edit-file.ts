import { promises as fs } from "node:fs";
import { z } from "zod";
import { defineTool, toolError } from "./tool.js";
import { resolveForWrite } from "./write-file.js";
import { formatBytes, openRegularFile, readUpTo, WRITE_FLAGS } from "./regular-file.js";

/** Files above this are refused: the whole file is held in the App's memory while it is edited. */
export const MAX_EDIT_BYTES = 8 * 1024 * 1024;

export const editFileTool = defineTool({
  name: "edit_file",
  description:
    "Replace an exact piece of text in a file. old_string must match exactly once (including whitespace) unless replace_all is true.",
  schema: z.object({
    path: z.string().min(1),
    old_string: z.string().min(1, "old_string must not be empty; use write_file to create a file"),
    new_string: z.string(),
    replace_all: z.boolean().nullish(),
  }),
  modes: ["build"],
  async run(args, context) {
    const target = await resolveForWrite(context, args.path);
    if (typeof target === "string") return toolError(target);
    const opened = await openRegularFile(target.absolute, target.relative);
    if (opened.kind === "missing") return toolError(`${target.relative} does not exist; use write_file to create it`);
    if (opened.kind === "directory") return toolError(`${target.relative} is a directory`);
    if (opened.kind === "not-regular") return toolError(opened.message);
    let text: string;
    try {
      if (opened.size > MAX_EDIT_BYTES) {
        return toolError(
          `${target.relative} is ${formatBytes(opened.size)}, more than edit_file handles (${formatBytes(MAX_EDIT_BYTES)}). Change a file this large with run_command (e.g. sed), or replace it with write_file.`,
        );
      }
      text = (await readUpTo(opened.handle, opened.size)).toString("utf8");
    } finally {
      await opened.handle.close();
    }
    if (args.old_string === args.new_string)
      return toolError("old_string and new_string are the same; nothing would change");

    const positions = findAll(text, args.old_string);
    if (positions.length === 0) {
      return toolError(`old_string was not found in ${target.relative}. ${closestLinesHint(text, args.old_string)}`);
    }
    if (positions.length > 1 && !args.replace_all) {
      const lines = positions.map((index) => lineOf(text, index)).join(", ");
      return toolError(
        `old_string matches ${positions.length} times in ${target.relative} (lines ${lines}). Include more surrounding text to make it unique, or pass replace_all: true.`,
      );
    }
    const updated = args.replace_all
      ? text.split(args.old_string).join(args.new_string)
      : text.replace(args.old_string, () => args.new_string);
    await fs.writeFile(target.absolute, updated, { flag: WRITE_FLAGS });
    context.audit.push({ action: "edit", target: target.relative, detail: `${positions.length} replacement(s)` });
    return {
      content: `Edited ${target.relative}: ${args.replace_all ? positions.length : 1} replacement(s) at line ${lineOf(text, positions[0] ?? 0)}.`,
    };
  },
});

function findAll(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let index = text.indexOf(needle); index !== -1; index = text.indexOf(needle, index + needle.length))
    found.push(index);
  return found;
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** Points the model at the lines most like the first line it searched for. */
function closestLinesHint(text: string, needle: string): string {
  const wanted = needle
    .split("\n")
    .find((line) => line.trim() !== "")
    ?.trim();
  if (!wanted) return "Read the file again and copy the text exactly.";
  const lines = text.split("\n");
  const scored = lines
    .map((line, index) => ({ index, score: similarity(line.trim(), wanted) }))
    .filter((entry) => entry.score > 0.5)
    .sort((a, b) => b.score - a.score)
    .slice(0, 3);
  if (scored.length === 0) return "No similar line exists; read the file again and copy the text exactly.";
  const shown = scored.map((entry) => `${entry.index + 1}: ${lines[entry.index]}`).join("\n");
  return `The closest lines are:\n${shown}\nCopy the text exactly, including whitespace.`;
}

/** Dice coefficient over character bigrams: cheap and good enough to find a near miss. */
function similarity(a: string, b: string): number {
  if (a === b) return 1;
  if (a.length < 2 || b.length < 2) return 0;
  const grams = new Map<string, number>();
  for (let i = 0; i < a.length - 1; i++) {
    const gram = a.slice(i, i + 2);
    grams.set(gram, (grams.get(gram) ?? 0) + 1);
  }
  let shared = 0;
  for (let i = 0; i < b.length - 1; i++) {
    const gram = b.slice(i, i + 2);
    const count = grams.get(gram) ?? 0;
    if (count > 0) {
      grams.set(gram, count - 1);
      shared++;
    }
  }
  return (2 * shared) / (a.length + b.length - 2);
}

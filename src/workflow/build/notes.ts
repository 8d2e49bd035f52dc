import { sanitiseUntrusted } from "../../agent/untrusted.js";
import type { BuildNote, ThreadState } from "../state.js";

/** Notes longer than this are cut: they ride in every step's first message and in the hidden state. */
const MAX_NOTE_CHARS = 4_000;

/** Adds an approver's note to the revision's notes (once: a repeated `/build` with the same words adds nothing). */
export function recordBuildNote(state: ThreadState, note: BuildNote | undefined): void {
  const text = note?.text.trim().slice(0, MAX_NOTE_CHARS) ?? "";
  if (!note || text === "") return;
  if (state.buildNotes.some((entry) => entry.author === note.author && entry.text === text)) return;
  state.buildNotes.push({ ...note, text });
}

/**
 * The notes as lines of the build report (each rendered as a quote). Hidden HTML comments and
 * invisible characters are dropped from what the report shows, so a note cannot hide part of the comment.
 */
export function buildNoteLines(notes: BuildNote[]): string[] {
  return notes.map((note) => {
    const how = note.source === "review" ? "approving review" : "`/build`";
    const text = sanitiseUntrusted(note.text).trim().replace(/\n/g, "\n> ");
    return `**Notes from @${note.author}** (with the ${how}), given to every step:\n> ${text}`;
  });
}

import { renderAuthored } from "../../agent/untrusted.js";
import { oneLine } from "../../plan/render.js";
import type { ReviewThread, ReviewThreadComment } from "../ports.js";
import type { FollowUpState, FollowUpStep } from "../state.js";

/** Whether a person may command Blueprint on this repository (the App's minimum and the repository's). */
export type MayCommand = (login: string) => Promise<boolean>;

/** A review thread that is work for this follow-up, with the comments of it that count. */
export interface ThreadWork {
  thread: ReviewThread;
  /** Its comments by people, oldest first (bots' — Blueprint's own replies too — left out). */
  people: Array<ReviewThreadComment & { trusted: boolean }>;
  /** The newest comment by a person who may command Blueprint: the one a later follow-up compares with. */
  newest: number;
  /** It has a step already, not built yet (`follow_up: plan`, or a follow-up that stopped): no new step. */
  planned: boolean;
}

/**
 * The threads a follow-up takes up: unresolved and not outdated, started by someone who may command Blueprint, with a
 * comment by such a person that no follow-up has handled yet (a reviewer's answer to Blueprint's reply counts anew).
 */
export async function threadsToFollow(
  threads: ReviewThread[],
  followUp: FollowUpState | null,
  mayCommand: MayCommand,
): Promise<ThreadWork[]> {
  const work: ThreadWork[] = [];
  for (const thread of threads) {
    if (thread.resolved || thread.outdated) continue;
    const people = thread.comments.filter((comment) => !comment.authorIsBot);
    const starter = thread.comments[0];
    if (!starter || starter.authorIsBot || !(await mayCommand(starter.author))) continue;
    const marked = await Promise.all(
      people.map(async (comment) => ({ ...comment, trusted: await mayCommand(comment.author) })),
    );
    const newest = marked.filter((comment) => comment.trusted).at(-1)?.id ?? starter.id;
    const seen = followUp?.threads[thread.id];
    const handled = seen !== undefined && seen.lastComment >= newest;
    if (handled && seen.outcome !== "pending") continue;
    work.push({ thread, people: marked, newest, planned: handled });
  }
  return work;
}

/** Where a thread is, as people read it: `src/a.ts:12` or `src/a.ts:10-12`. */
export function threadPlace(thread: ReviewThread): string {
  const lines =
    thread.line === null ? "" : thread.startLine ? `:${thread.startLine}-${thread.line}` : `:${thread.line}`;
  return `${thread.path}${lines}`;
}

/** A fix-up step the model builds: one review thread, with the whole conversation and the diff it is on. */
export function threadStep(id: string, work: ThreadWork, context: string): FollowUpStep {
  const { thread } = work;
  const said = oneLine(work.people[0]?.body.replace(/```[\s\S]*?```/g, "") ?? "").slice(0, 80);
  const conversation = work.people.map((comment) =>
    renderAuthored({ author: comment.author, trusted: comment.trusted, text: comment.body, label: "Review comment" }),
  );
  const details = [
    `Address this review thread on \`${threadPlace(thread)}\` (${thread.side === "LEFT" ? "the old file's lines" : "the pull request's lines"}). Change what the reviewer asks for, and nothing else. If it cannot or should not be done (it asks a question, or is out of this pull request's scope), end with complete_step and outcome "blocked", saying why in words for the reviewer.`,
    "```diff",
    thread.diffHunk.replaceAll("```", "'''"),
    "```",
    ...conversation,
    context,
  ];
  return {
    id,
    title: `Review on ${threadPlace(thread)}${said ? `: ${said}` : ""}`.slice(0, 200),
    details: details.filter(Boolean).join("\n\n"),
    files: [thread.path],
    deps: [],
    threads: [thread.id],
    kind: "model",
  };
}

/** A fix-up step from words alone: a review's body without threads, or `/fix`'s notes. */
export function notesStep(id: string, author: string, source: string, text: string): FollowUpStep {
  return {
    id,
    title: `${source} by @${author}: ${oneLine(text).slice(0, 120)}`.slice(0, 200),
    details: `Do what the maintainer asks of the pull request's code:\n\n${renderAuthored({ author, trusted: true, text, label: source })}`,
    files: [],
    deps: [],
    threads: [],
    kind: "model",
  };
}

/** A review's body or `/fix`'s notes given with threads: context for each thread's step. */
export function notesContext(author: string, source: string, text: string): string {
  return text.trim() ? renderAuthored({ author, trusted: true, text, label: `${source} (for all threads)` }) : "";
}

import type { FeedbackEntry, QuestionAnswer, ThreadState } from "./state.js";

const MAX_ENTRIES = 20;
const MAX_TEXT = 4000;
const MAX_EXPLORED = 200;

/** The thread's memory, as carried from one state to the next (bounded to fit in a comment). */
export interface ThreadMemory {
  instructions: string;
  requestedBy: string;
  feedback: FeedbackEntry[];
  answers: QuestionAnswer[];
  explored: string[];
}

export function memoryOf(state: ThreadState): ThreadMemory;
export function memoryOf(state: ThreadState | null | undefined): ThreadMemory | null;
export function memoryOf(state: ThreadState | null | undefined): ThreadMemory | null {
  if (!state) return null;
  return {
    instructions: state.instructions,
    requestedBy: state.requestedBy,
    feedback: state.feedback,
    answers: state.answers,
    explored: state.explored,
  };
}

const clip = (text: string) => (text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)} …[cut]` : text);

export function withFeedback(memory: ThreadMemory, entry: FeedbackEntry): ThreadMemory {
  return { ...memory, feedback: [...memory.feedback, { ...entry, text: clip(entry.text) }].slice(-MAX_ENTRIES) };
}

export function withAnswer(memory: ThreadMemory, entry: QuestionAnswer): ThreadMemory {
  return {
    ...memory,
    answers: [...memory.answers, { ...entry, question: clip(entry.question), answer: clip(entry.answer) }].slice(
      -MAX_ENTRIES,
    ),
  };
}

export function withExplored(memory: ThreadMemory, files: Iterable<string>): ThreadMemory {
  return { ...memory, explored: [...new Set([...memory.explored, ...files])].slice(-MAX_EXPLORED) };
}

/** GitHub rejects comment bodies over 65,536 characters. */
export const COMMENT_LIMIT = 65_536;
const HEADROOM = 536;

const MARKER = /<!-- blueprint:state [^>]*-->\s*$/;

/**
 * Makes a body fit GitHub's limit without losing the state: the hidden marker at the end is
 * kept whole, the visible part is cut at a paragraph boundary, open code fences and
 * `<details>` are closed, and a note says what was cut.
 */
export function fitComment(body: string, limit = COMMENT_LIMIT): string {
  if (body.length <= limit) return body;
  const marker = MARKER.exec(body)?.[0] ?? "";
  const visible = marker ? body.slice(0, body.length - marker.length) : body;
  const note = (cut: number) =>
    `\n\n> ✂️ ${cut.toLocaleString("en-US")} characters were cut to fit GitHub's comment limit.\n\n`;
  const budget = limit - HEADROOM - marker.length;
  if (budget < 1000) throw new Error("the comment's state marker alone exceeds GitHub's comment limit");

  let kept = visible.slice(0, budget);
  const paragraph = kept.lastIndexOf("\n\n");
  if (paragraph > budget / 2) kept = kept.slice(0, paragraph);
  kept += closeOpenBlocks(kept);
  return kept + note(visible.length - kept.length) + marker;
}

/** What to append so fences and `<details>` opened in `text` are closed again. */
export function closeOpenBlocks(text: string): string {
  let closing = "";
  const fences = text.match(/^\s*```/gm)?.length ?? 0;
  if (fences % 2 === 1) closing += "\n```";
  const open = (text.match(/<details[\s>]/g)?.length ?? 0) - (text.match(/<\/details>/g)?.length ?? 0);
  for (let i = 0; i < open; i++) closing += "\n\n</details>";
  return closing;
}

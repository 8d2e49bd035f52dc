import { collectTags } from "./collect-tags.js";
import { focusTerms, MAX_FOCUS_TERMS, noMentions, type Mentions } from "./focus.js";
import { rankDefinitions } from "./rank.js";

/** The model's first look: about what the old 8,000-character map held. */
export const DEFAULT_MAP_TOKENS = 2048;
export const MIN_MAP_TOKENS = 256;
export const MAX_MAP_TOKENS = 16_384;

export interface RepoMapOptions {
  focus?: string | string[] | null | undefined;
  /** Token budget of the whole map (gpt-tokenizer, o200k_base). */
  tokens?: number | undefined;
  /** What the thread (issue, comments, plan) mentions; tilts the ranking without being named. */
  mentions?: Mentions | undefined;
  signal?: AbortSignal | undefined;
  /** Where parsed tags persist between processes (beside the repository's mirror, never in the worktree). */
  tagCacheDir?: string | undefined;
}

export interface RepoMap {
  text: string;
  tokens: number;
  budget: number;
  files: number;
  /** Files parsed now rather than taken from the cache. */
  parsed: number;
  parsersUnavailable: boolean;
}

/**
 * Starts collecting the tags of the tree at `root` ahead of its first repo_map call (a planning run
 * starts it while the model reads the request): that call then waits for it, or finds the tags
 * cached, instead of parsing from the start. It ends early when `signal` aborts (the job is
 * cancelled). Returns how to stop it: what is left is abandoned (an abandoned collection caches
 * nothing), and it resolves once nothing reads the tree any more, so call it before the tree goes away.
 */
export function prefetchRepoMap(root: string, tagCacheDir?: string, signal?: AbortSignal): () => Promise<void> {
  const controller = new AbortController();
  // A failure shows when the tool is called (it collects again); here it only means no head start.
  const work = collectTags(
    root,
    signal ? AbortSignal.any([controller.signal, signal]) : controller.signal,
    tagCacheDir,
  ).then(
    () => undefined,
    () => undefined,
  );
  return async () => {
    controller.abort();
    await work;
  };
}

/**
 * The repository map: tags of every tracked file (tree-sitter where we have a grammar, the regex
 * outline elsewhere), ranked by personalised PageRank over who uses whose definitions, fitted to
 * a token budget. Same tree, focus and budget: the same bytes.
 */
export async function buildRepoMap(root: string, options: RepoMapOptions = {}): Promise<RepoMap> {
  const budget = Math.min(MAX_MAP_TOKENS, Math.max(MIN_MAP_TOKENS, Math.floor(options.tokens ?? DEFAULT_MAP_TOKENS)));
  const focus = focusTerms(options.focus);
  const collected = await collectTags(root, options.signal, options.tagCacheDir);
  const { files } = collected;
  if (files.length === 0) {
    return {
      text: "The repository has no tracked files yet. Use list_files to see untracked ones.",
      tokens: 0,
      budget,
      files: 0,
      parsed: 0,
      parsersUnavailable: false,
    };
  }
  // Only as many items as tokens can ever be shown: the rest need not be sorted.
  const ranking = rankDefinitions(files, focus, options.mentions ?? noMentions(), budget);

  const focusText = focus.terms.length > 0 ? ` (focus: ${focus.terms.join(", ")})` : "";
  const head = [
    `Repository map: ${files.length} tracked file${files.length === 1 ? "" : "s"}, the definitions most used by the rest of the code first${focusText}. Each file lists definitions as "line│source"; ⋮ marks lines left out. Read the code with read_file.`,
  ];
  if (focus.dropped > 0) head.push(`Only the first ${MAX_FOCUS_TERMS} focus terms were used.`);
  if (focus.keys.length > 0 && !ranking.focusMatched)
    head.push(`Nothing matched the focus (${focus.terms.join(", ")}); showing the whole repository.`);
  if (collected.parsersUnavailable)
    head.push(
      "Parsers are not available here: every file is outlined by regular expressions (regex outline), and references are guessed from words.",
    );
  else if (files.some((file) => file.tags?.source === "regex"))
    head.push(
      "Files marked (regex outline) are in languages without a parser here: their definitions were found by regular expressions.",
    );

  if (collected.cacheError)
    head.push(
      `The parsed tags could not be saved for the next process (${collected.cacheError}); this map is complete.`,
    );
  if (collected.generated > 0)
    head.push(
      `${collected.generated} file${collected.generated === 1 ? " looks" : "s look"} minified or generated (very long lines, named *.min.*, compiled output, marked generated, or tables of literal values): listed by name only, not outlined.`,
    );

  // Loaded here, not at the top: its tokenizer's tables (68 MB, 0.24 s) are for processes that build a
  // map, not the intake and workers that only import this module's callers.
  const { fitToBudget } = await import("./render.js");
  const rendered = fitToBudget(files, ranking.items, head, budget);
  return {
    text: rendered.text,
    tokens: rendered.tokens,
    budget,
    files: files.length,
    parsed: collected.parsed,
    parsersUnavailable: collected.parsersUnavailable,
  };
}

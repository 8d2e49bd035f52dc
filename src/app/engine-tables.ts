/**
 * Loaded at start by the processes that triage or run lane work (the local worker, the queue worker,
 * the job runner), not by the intake: the repository map's renderer and the template's diff budget,
 * which bring gpt-tokenizer's tables (68 MB, 0.24 s). Their users import them with import(); loading
 * them here keeps a fresh burst's first 👀 where it was: without it, six alternated local-queue runs had
 * the first 👀 per installation p99 about 0.1 s later (mean 0.96 s against 0.85 s; why, we did not find).
 */
import "../tools/repo-map/render.js";
import "../workflow/build/diff-for-model.js";

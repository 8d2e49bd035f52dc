import { LABELED_STATES, type LabeledState, type RepoConfig } from "../../config/repo-config.js";
import type { Logger } from "../deps.js";
import type { LabelSpec, ThreadPort } from "../ports.js";
import type { ThreadState } from "../state.js";

/** Each state's label as Blueprint creates it on first use, so that people can filter issues by state. */
export const DEFAULT_LABELS: Readonly<Record<LabeledState, LabelSpec>> = {
  planned: {
    name: "blueprint: planned",
    color: "1d76db",
    description: "Blueprint posted a plan; it waits for /build or a revision.",
  },
  approved: {
    name: "blueprint: approved",
    color: "5319e7",
    description: "The plan is approved; Blueprint's build starts.",
  },
  building: { name: "blueprint: building", color: "fbca04", description: "Blueprint is building the approved plan." },
  built: { name: "blueprint: built", color: "0e8a16", description: "Blueprint built the plan and its checks passed." },
  failed: {
    name: "blueprint: failed",
    color: "d73a4a",
    description: "Blueprint's plan, build or its verification failed; the plan comment says why.",
  },
};

/** Each state's label under `.github/blueprint.yml`'s `labels:`, or null where it is switched off. */
export function labelSpecs(config: Pick<RepoConfig, "labels">): Record<LabeledState, LabelSpec | null> {
  const setting = config.labels ?? true;
  const named = (state: LabeledState): LabelSpec | null => {
    if (setting === false) return null;
    const name = setting === true ? undefined : setting[state];
    if (name === false) return null;
    return name === undefined ? DEFAULT_LABELS[state] : { ...DEFAULT_LABELS[state], name };
  };
  return Object.fromEntries(LABELED_STATES.map((state) => [state, named(state)])) as Record<
    LabeledState,
    LabelSpec | null
  >;
}

/**
 * The label a saved state shows, or null when its label stays as it is (planning, a question while
 * planning). A build whose checks failed is not shown as built.
 */
export function labeledState(state: ThreadState): LabeledState | null {
  switch (state.status) {
    case "pending":
      return state.plan ? "planned" : null;
    case "building":
      return "building";
    case "awaiting_answer":
      return state.questionMode === "build" ? "building" : null;
    case "built":
      return state.error ? "failed" : "built";
    case "failed":
      return "failed";
    case "cancelled":
      // Stopped (by /cancel, or a pull request closed unmerged): the plan waits for another /build.
      return state.plan ? "planned" : null;
    default:
      return null;
  }
}

/**
 * The one Blueprint label a thread carries, moved at each state change of one job: the new one is
 * added (created in the repository on first use), the other states' ones are taken off, and labels
 * that are not Blueprint's are never touched. A label write never fails a plan or build: it is logged.
 */
export class ThreadLabels {
  private shown: LabeledState | null = null;
  /** The repository's labels (lower case), read once per job: reads are not paced like writes are. */
  private existing: Promise<Set<string>> | null = null;
  private readonly specs: Record<LabeledState, LabelSpec | null>;

  constructor(
    private readonly port: ThreadPort,
    config: Pick<RepoConfig, "labels">,
    private readonly log: Pick<Logger, "warn">,
    private readonly deliveryId: string,
  ) {
    this.specs = labelSpecs(config);
  }

  /** Shows the label of a saved state (see labeledState). */
  async follow(state: ThreadState): Promise<void> {
    const labeled = labeledState(state);
    if (labeled) await this.show(labeled);
  }

  async show(state: LabeledState): Promise<void> {
    if (state === this.shown) return;
    this.shown = state;
    try {
      await this.move(this.specs[state]);
    } catch (error) {
      // Asked again at the next state change.
      this.shown = null;
      this.log.warn(
        { err: error, deliveryId: this.deliveryId, label: state },
        "could not move the thread's Blueprint label",
      );
    }
  }

  private async move(target: LabelSpec | null): Promise<void> {
    const ours = new Set(Object.values(this.specs).flatMap((spec) => (spec ? [spec.name.toLowerCase()] : [])));
    if (ours.size === 0) return;
    const carried = await this.port.threadLabels();
    const wanted = target?.name.toLowerCase();
    if (target && !carried.some((name) => name.toLowerCase() === wanted)) {
      await this.ensureLabel(target);
      await this.port.addThreadLabel(target.name);
    }
    for (const name of carried)
      if (ours.has(name.toLowerCase()) && name.toLowerCase() !== wanted) await this.port.removeThreadLabel(name);
  }

  /** Created with its colour and description on first use (adding a missing label would make a plain grey one). */
  private async ensureLabel(label: LabelSpec): Promise<void> {
    this.existing ??= this.port.repositoryLabels().then((names) => new Set(names.map((name) => name.toLowerCase())));
    const existing = await this.existing.catch((error: unknown) => {
      this.existing = null;
      throw error;
    });
    if (existing.has(label.name.toLowerCase())) return;
    // Another job may have made it since the list was read: GitHub's "already exists" is as good.
    await this.port.createLabel(label);
    existing.add(label.name.toLowerCase());
  }
}

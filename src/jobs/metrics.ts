import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { TokenUsage } from "../shared/model-usage.js";

/** Prometheus metrics for one process: what /metrics serves. */
export class JobMetrics {
  readonly registry = new Registry();
  readonly webhooks = new Counter({
    name: "blueprint_webhooks_total",
    help: "Webhooks received, by event and what intake did with them (accepted, duplicate, ignored, refused: its repository is not on the configured GitHub)",
    labelNames: ["event", "outcome"] as const,
    registers: [this.registry],
  });
  readonly jobs = new Counter({
    name: "blueprint_jobs_total",
    help: "Jobs finished, by kind and outcome (done, failed, cancelled, dropped, handed_over: put back in the queue at shutdown, refused: a build whose approval GitHub did not confirm)",
    labelNames: ["kind", "outcome"] as const,
    registers: [this.registry],
  });
  readonly jobSeconds = new Histogram({
    name: "blueprint_job_duration_seconds",
    help: "Time a job ran, by kind",
    labelNames: ["kind"] as const,
    buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 1200],
    registers: [this.registry],
  });
  readonly queueWaitSeconds = new Histogram({
    name: "blueprint_queue_wait_seconds",
    help: "Time from the webhook's arrival until its job started (triage: acknowledged; work: the use case began)",
    labelNames: ["phase"] as const,
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120, 600],
    registers: [this.registry],
  });

  readonly modelTokens = new Counter({
    name: "blueprint_model_tokens_total",
    help: "Model tokens used, by the run's kind (plan, build) and type (prompt, completion, cached: the part of prompt the provider served from its cache)",
    labelNames: ["kind", "type"] as const,
    registers: [this.registry],
  });
  readonly stepSeconds = new Histogram({
    name: "blueprint_step_duration_seconds",
    help: "Time one build step took, from its agent run to its push",
    buckets: [1, 5, 15, 60, 180, 600, 1800],
    registers: [this.registry],
  });

  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: "blueprint_" });
  }

  /** Times `work` as a job of `kind`, counting its outcome. */
  async time(
    kind: string,
    work: () => Promise<"done" | "failed" | "cancelled" | "dropped" | "handed_over">,
  ): Promise<void> {
    const stop = this.jobSeconds.startTimer({ kind });
    let outcome: string = "failed";
    try {
      outcome = await work();
    } finally {
      stop();
      this.jobs.inc({ kind, outcome });
    }
  }
}

/** What the engine reports while it works (WorkflowDeps' `telemetry`), recorded as this process's metrics. */
export interface JobTelemetry {
  modelUsage(kind: "plan" | "build", usage: TokenUsage): void;
  stepSeconds(seconds: number): void;
}

export function telemetryFor(metrics: JobMetrics): JobTelemetry {
  return {
    modelUsage(kind, usage) {
      for (const type of ["prompt", "completion", "cached"] as const)
        if (usage[type] > 0) metrics.modelTokens.inc({ kind, type }, usage[type]);
    },
    stepSeconds: (seconds) => metrics.stepSeconds.observe(seconds),
  };
}

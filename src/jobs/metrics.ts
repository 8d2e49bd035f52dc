import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** Prometheus metrics for one process: what /metrics serves. */
export class JobMetrics {
  readonly registry = new Registry();
  readonly webhooks = new Counter({
    name: "blueprint_webhooks_total",
    help: "Webhooks received, by event and what intake did with them (accepted, duplicate, ignored)",
    labelNames: ["event", "outcome"] as const,
    registers: [this.registry],
  });
  readonly jobs = new Counter({
    name: "blueprint_jobs_total",
    help: "Jobs finished, by kind and outcome (done, failed, cancelled, dropped)",
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

  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: "blueprint_" });
  }

  /** Times `work` as a job of `kind`, counting its outcome. */
  async time(kind: string, work: () => Promise<"done" | "cancelled" | "dropped">): Promise<void> {
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

import type { ApplicationFunctionOptions, Probot } from "probot";
import { startIntake } from "./app/intake.js";

export { createBlueprintApp, type BlueprintApp } from "./app/intake.js";

/**
 * The intake, as Probot loads it (`npm start` → `probot run ./lib/index.js`): webhooks become jobs,
 * which a forked worker runs. The composition is in app/intake.ts. Wiring only.
 */
export default function blueprint(app: Probot, options: ApplicationFunctionOptions): void {
  startIntake(app, options);
}

export { MAX_ANNOTATIONS, annotationsFrom } from "./check-annotations.js";
export { postPlanCheck, settlePlanCheck, writeCheckRun } from "./checks.js";
export { ThreadLabels } from "./labels.js";
export { TrackingComment, modelRetryLine, showingRetries } from "./tracking-comment.js";

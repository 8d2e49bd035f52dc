export { checkApproval, editedAfterApproval, STALE_WHILE_WAITING, type Approval } from "./approval.js";
export { describeApprovals } from "./code-owner-coverage.js";
export { codeOwnersRefusal } from "./codeowners.js";
export { approvalMismatch, isApprovingJob, type ApprovingJob } from "./on-github.js";
export { renderOutsidePlan } from "./outside-plan.js";
export { dropApprovalsBefore, recordApproval } from "./recorded.js";
export { repoMinimumRefusal } from "./repo-permission.js";
export { writtenFilesApproval, type WrittenFilesApproval } from "./written-files.js";

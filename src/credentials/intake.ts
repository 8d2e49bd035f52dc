/** The intake's door to credentials/ (see index.ts): minting each job's token with the App's key. */
export { intakeTokens, type IntakeTokens } from "./intake-tokens.js";

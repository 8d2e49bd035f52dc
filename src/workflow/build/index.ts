export { buildThread } from "./build.js";

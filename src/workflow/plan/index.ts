export { planThread } from "./plan.js";

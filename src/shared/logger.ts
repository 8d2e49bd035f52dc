/**
 * What every part logs through (pino in the processes, a quiet stand-in in tests). Here, below every
 * folder, so the job runtime and the GitHub adapter need not import the use cases for a type.
 */
export interface Logger {
  info(object: object, message?: string): void;
  warn(object: object, message?: string): void;
  error(object: object, message?: string): void;
}

export const PERMISSION_LEVELS = ["none", "read", "triage", "write", "maintain", "admin"] as const;
export type PermissionLevel = (typeof PERMISSION_LEVELS)[number];

export function atLeast(level: PermissionLevel, minimum: PermissionLevel): boolean {
  return PERMISSION_LEVELS.indexOf(level) >= PERMISSION_LEVELS.indexOf(minimum);
}

/**
 * Reads the collaborator-permission answer. `role_name` carries maintain/triage, which the
 * legacy `permission` field folds into write/read.
 */
export function toPermissionLevel(answer: { permission?: string | null; role_name?: string | null }): PermissionLevel {
  const role = (answer.role_name ?? "").toLowerCase();
  if ((PERMISSION_LEVELS as readonly string[]).includes(role)) return role as PermissionLevel;
  const legacy = (answer.permission ?? "").toLowerCase();
  if ((PERMISSION_LEVELS as readonly string[]).includes(legacy)) return legacy as PermissionLevel;
  return "none";
}

/** Whether `version` ("20.20.2") satisfies an engines range such as "^20.18.1 || >=22". */
export function satisfiesEngines(version: string, range: string): boolean;

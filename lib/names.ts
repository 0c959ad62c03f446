/** Prefix of every named resource of a stage, so two stages can live in one account. */
export function namePrefix(stage: string): string {
  return `${stage}-ai-usage-proxy-`;
}

export function stackName(stage: string): string {
  return `${stage}-ai-usage-proxy`;
}

/** `usage-logs` / `usageLogs` → `UsageLogs`, for construct ids and output names. */
export function pascalCase(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_m, _dash: string, c: string) => c.toUpperCase());
}

/** Output name of a table's physical name, e.g. `TableUsageLogsName`. */
export function tableOutputName(logicalName: string): string {
  return `Table${pascalCase(logicalName)}Name`;
}

/** This process's working folder, or undefined when it has been removed (getcwd fails then). */
export function workingFolder(): string | undefined {
  try {
    return process.cwd();
  } catch {
    return undefined;
  }
}

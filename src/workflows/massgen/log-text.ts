// Ingestion: everything refinery reads from MassGen logs is cleaned of secrets here, once, as it is
// read (parsed JSON and YAML values, answer texts, what the streamed logs keep), so an `sk-…` key in
// a vote's reason or the question never reaches analysis.json, ANALYSIS_REPORT.md,
// runs-summary.json, the digest cache, a bundle or the dashboard.
import { redactSecrets, redactSecretsDeep } from '../../security/known-secrets.ts';
import { readCapped, type ReadResult } from './fs-safe.ts';

/** A parsed value from a log (JSON, YAML, a streamed log's summary), secrets replaced. */
export function cleanLogValue<T>(value: T): T {
  return redactSecretsDeep(value);
}

/** At most `maxBytes` of a log's text file (an answer, a trace), secrets replaced. */
export async function readLogText(file: string, maxBytes: number): Promise<ReadResult> {
  const read = await readCapped(file, maxBytes);
  return read.ok ? { ...read, text: redactSecrets(read.text) } : read;
}

import type { LlmRequest } from './types.ts';

/**
 * The answer schema written into the prompt, for backends that cannot take it natively (or refused it):
 * the same schema the answer is checked against afterwards.
 */
export function promptWithSchema(request: LlmRequest): string {
  if (!request.jsonSchema) return request.prompt;
  return [
    request.prompt,
    '',
    '## Answer schema',
    '',
    'Your answer must be exactly one JSON object valid against this JSON Schema (no prose, no code fence):',
    '',
    JSON.stringify(request.jsonSchema.schema),
  ].join('\n');
}

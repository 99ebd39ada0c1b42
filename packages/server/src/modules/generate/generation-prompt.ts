import type { GenerationContext } from '@codeloom/protocol';
import type { ChatMessage } from '../../providers/provider.js';

/** System prompts of requests without context, one per language: the same string every time (built once). */
const plainSystems = new Map<string, string>();

/** What real models are told; the sandbox model reads the same hints directly. */
export function buildGenerationMessages(prompt: string, language: string, context: GenerationContext | undefined): ChatMessage[] {
  if (!context) {
    let system = plainSystems.get(language);
    if (system === undefined) {
      system = systemPrompt(language, undefined);
      if (plainSystems.size < 256) plainSystems.set(language, system);
    }
    return [{ role: 'system', content: system }, { role: 'user', content: prompt }];
  }
  return [{ role: 'system', content: systemPrompt(language, context) }, { role: 'user', content: prompt }];
}

function systemPrompt(language: string, context: GenerationContext | undefined): string {
  const hints = Object.entries(context ?? {}).map(([k, v]) => `- ${k}: ${String(v)}`);
  const system = [
    `You are Codeloom, a code generator. Write complete, runnable ${language} code for the user's request.`,
    'Answer in Markdown. Put every file in its own fenced code block whose info string is the language followed by the file path,',
    'for example ```typescript src/server.ts. Use relative paths. Keep explanations short and outside the code blocks.',
    ...(hints.length ? ['Project context:', ...hints] : []),
    ...(context?.includeTests ? ['Include tests in the language\'s usual test framework.'] : []),
  ].join('\n');
  return system;
}


import type { GenerationContext } from '@codeloom/protocol';
import type { ChatMessage } from '../../providers/provider.js';

/** What real models are told; the sandbox model reads the same hints directly. */
export function buildGenerationMessages(prompt: string, language: string, context: GenerationContext | undefined): ChatMessage[] {
  const hints = Object.entries(context ?? {}).map(([k, v]) => `- ${k}: ${String(v)}`);
  const system = [
    `You are Codeloom, a code generator. Write complete, runnable ${language} code for the user's request.`,
    'Answer in Markdown. Put every file in its own fenced code block whose info string is the language followed by the file path,',
    'for example ```typescript src/server.ts. Use relative paths. Keep explanations short and outside the code blocks.',
    ...(hints.length ? ['Project context:', ...hints] : []),
    ...(context?.includeTests ? ['Include tests in the language\'s usual test framework.'] : []),
  ].join('\n');
  return [{ role: 'system', content: system }, { role: 'user', content: prompt }];
}


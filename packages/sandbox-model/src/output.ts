import { inferLanguage, resolveLanguage } from '@codeloom/protocol';
import { designText, documenterFile, planText, testerFiles, writtenPaths } from './agent-outputs.js';
import { readConversation } from './conversation.js';
import { projectFiles as project } from './languages/index.js';
import { analyzePrompt } from './prompt-analysis.js';
import { KIND_NOUN, buildSpec, fenced, isTestFile, renderFiles } from './project-files.js';
import { label, proseLine } from './request-text.js';
import { lastReviewAskedForChanges, reviewText } from './review.js';
import type { SandboxCall } from './types.js';

/**
 * The sandbox model's whole answer for one call: a deterministic template
 * model, not AI. It depends only on the messages and the hints, never on
 * time or chance, so the same call always yields the same bytes.
 */
export function renderSandboxOutput(options: SandboxCall): string {
  const conversation = readConversation(options.messages);
  const hinted = options.hints?.language;
  // A language the catalog does not know is echoed (README, pseudo-code, prose), so it is only ever a label.
  const language = (typeof hinted === 'string' && (resolveLanguage(hinted) ?? label(hinted))) || inferLanguage(conversation.task) || 'typescript';
  const spec = buildSpec(analyzePrompt(conversation.task), language, options.hints?.context ?? {});
  const about = `${spec.languageName} ${KIND_NOUN[spec.kind]} for ${spec.resource.words}${spec.framework ? ` (${spec.framework})` : ''}`;

  switch (options.hints?.agentType) {
    case 'planner':
      return planText(spec);
    case 'architect': {
      const design = designText(spec, project(spec));
      return `${design}\n${fenced({ path: 'docs/DESIGN.md', lang: 'markdown', content: design })}\n`;
    }
    case 'reviewer':
      return reviewText(conversation, spec);
    case 'tester': {
      const tests = testerFiles(spec, project({ ...spec, includeTests: true }));
      return `Tests for the ${about}.\n\n${renderFiles(tests)}\n`;
    }
    case 'documenter': {
      const written = writtenPaths(conversation);
      const tested = written.length ? written.some(isTestFile) : spec.includeTests;
      return `${fenced(documenterFile(project({ ...spec, includeTests: tested }), written))}\n`;
    }
    default: {
      // A coder answering a review that asked for changes adds the tests the review asks for.
      const findings = lastReviewAskedForChanges(conversation);
      const files = project(findings ? { ...spec, includeTests: true } : spec);
      const intro = findings
        ? ['Revised after the review:', ...findings.map((f) => `- addressed: ${proseLine(f)}`)].join('\n')
        : `Here is a ${about}${spec.includeTests ? ', with tests' : ''}.`;
      return `${intro}\nWritten by the Codeloom sandbox model, a deterministic template model (not AI).\n\n${renderFiles(files)}\n`;
    }
  }
}


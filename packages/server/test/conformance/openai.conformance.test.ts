/** The provider conformance suite on the OpenAI-compatible provider, against recorded OpenAI wire transcripts. */
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { httpProviderSetup } from './http-provider-setup.js';
import { providerConformance } from './provider-cases.js';
import { openAIWire } from './wire-fixtures.js';

providerConformance('OpenAI-compatible', httpProviderSetup(openAIWire, createOpenAIProvider));

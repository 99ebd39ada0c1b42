/** The provider conformance suite on the Anthropic provider, against recorded Messages API wire transcripts. */
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.js';
import { httpProviderSetup } from './http-provider-setup.js';
import { providerConformance } from './provider-cases.js';
import { anthropicWire } from './wire-fixtures.js';

providerConformance('Anthropic', httpProviderSetup(anthropicWire, createAnthropicProvider));

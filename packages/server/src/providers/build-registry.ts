import type { Config } from '../config/load-config.js';
import { ConfigError } from '../errors.js';
import { createAnthropicProvider } from './anthropic/anthropic-provider.js';
import { ModelRegistry } from './model-registry.js';
import { parseFallbacks } from './model-fallbacks.js';
import { parseModelPrices } from '../config/model-prices.js';
import { createOpenAIProvider } from './openai/openai-provider.js';
import { createSandboxProvider } from './sandbox/sandbox-provider.js';
import { createSandboxEmbeddings } from './sandbox/sandbox-embeddings.js';
import { createOpenAIEmbeddings } from './openai/openai-embeddings.js';

/** The sandbox model's longest answer is about 6,000 tokens (a C server with tests): its cap never cuts one. */
const SANDBOX_MAX_OUTPUT_TOKENS = 8192;

/** Every model the configuration names (CONTRACT §7): sandbox always, the others when configured. */
export async function buildModelRegistry(config: Config): Promise<ModelRegistry> {
  const registry = new ModelRegistry();
  registry.register({ id: 'sandbox', upstreamId: 'sandbox', provider: createSandboxProvider(), description: 'Deterministic offline template model (not AI): runnable code skeletons shaped by prompt, language and context.', maxOutputTokens: SANDBOX_MAX_OUTPUT_TOKENS, embeddings: createSandboxEmbeddings() });
  const maxOutputTokens = config.maxOutputTokens;
  const timeoutMs = config.upstreamTimeout * 1000;
  const maxRetries = config.upstreamRetries;
  if (config.openaiBaseUrl && config.openaiModels?.length) {
    const http = { baseUrl: config.openaiBaseUrl, apiKey: config.openaiApiKey ?? '', timeoutMs, maxRetries };
    const provider = createOpenAIProvider(http);
    const embeddings = config.openaiEmbeddingModels?.length ? createOpenAIEmbeddings(http) : undefined;
    for (const id of config.openaiModels) {
      registry.register({
        id, upstreamId: id, provider, description: `OpenAI-compatible model at ${new URL(config.openaiBaseUrl).host}`, maxOutputTokens, fillInMiddle: config.openaiFimModels?.includes(id) ?? false,
        ...(embeddings && config.openaiEmbeddingModels!.includes(id) ? { embeddings } : {}),
      });
    }
  }
  if (config.anthropicApiKey && config.anthropicModels?.length) {
    const provider = createAnthropicProvider({ baseUrl: config.anthropicBaseUrl, apiKey: config.anthropicApiKey, timeoutMs, maxRetries });
    for (const id of config.anthropicModels) registry.register({ id, upstreamId: id, provider, description: 'Anthropic model', maxOutputTokens });
  }
  if (config.llamaModel) {
    const { createLlamaProvider } = await import('./llama/llama-provider.js');
    const provider = await createLlamaProvider({ modelPath: config.llamaModel });
    registry.register({ id: 'local', upstreamId: 'local', provider, description: `Embedded llama.cpp model (${config.llamaModel.split('/').pop()})`, maxOutputTokens });
  }
  applyFallbacks(registry, config.modelFallbacks);
  applyPrices(registry, config.modelPrices);
  if (config.defaultModel) registry.setDefault(config.defaultModel);
  else {
    const configured = registry.ids().find((id) => id !== 'sandbox');
    if (configured) registry.setDefault(configured);
  }
  return registry;
}

/** Links each model to the fallbacks CODELOOM_MODEL_FALLBACKS names; an unknown id stops the server at start. */
function applyFallbacks(registry: ModelRegistry, setting: string | undefined): void {
  const { fallbacks, problems } = parseFallbacks(setting, registry.ids());
  if (problems.length) throw new Error(problems.join('\n'));
  for (const [id, names] of fallbacks) registry.find(id)!.fallbacks = names.map((n) => registry.find(n)!);
}

/** Gives each model its CODELOOM_MODEL_PRICES price (the shape was checked with the other settings); an id that is not a configured model stops the server at start. */
function applyPrices(registry: ModelRegistry, setting: string | undefined): void {
  const { prices, problems } = parseModelPrices(setting);
  const unknown = [...prices.keys()].filter((id) => !registry.find(id));
  if (unknown.length) problems.push(`CODELOOM_MODEL_PRICES: unknown model ${unknown.map((id) => `"${id}"`).join(', ')}; configured: ${registry.ids().join(', ')}`);
  if (problems.length) throw new ConfigError(problems);
  for (const [id, price] of prices) registry.find(id)!.price = price;
}

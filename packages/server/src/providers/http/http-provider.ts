import type { GenerateOutput, ModelCallOptions, ModelProvider, StreamPart } from '../provider.js';
import type { ConversationCapabilities } from '../conversation.js';
import { runGenerate, runStream, type CallSpec, type HttpProviderOptions, type StreamDecoder } from './upstream-http.js';

/** What a vendor adds to this plumbing: its request (`spec`), its stream decoder and the reader of its JSON answer. */
export interface HttpVendor {
  name: string;
  /** Tools and response formats the vendor honours (providers/conversation.ts). */
  conversation?: ConversationCapabilities;
  spec(o: ModelCallOptions, stream: boolean): CallSpec;
  /** The decoder of one stream; `o` is the call (a vendor that translates a response format reads it). */
  decoder(o: ModelCallOptions): StreamDecoder;
  parse(json: unknown, o: ModelCallOptions): GenerateOutput;
}

/** The ModelProvider of an HTTP vendor: each call one runGenerate/runStream with `options`. */
export function httpProvider(options: HttpProviderOptions, vendor: HttpVendor): ModelProvider {
  return {
    name: vendor.name,
    ...(vendor.conversation ? { conversation: vendor.conversation } : {}),
    generate(o) {
      return runGenerate({ options, signal: o.signal, spec: vendor.spec(o, false) }, (json) => vendor.parse(json, o));
    },
    stream(o): AsyncIterable<StreamPart> {
      return runStream({ options, signal: o.signal, spec: vendor.spec(o, true) }, () => vendor.decoder(o), (json) => vendor.parse(json, o));
    },
    async close() {
      // Sockets belong to the shared fetch dispatcher; nothing of ours to release.
    },
  };
}

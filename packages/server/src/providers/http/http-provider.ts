import type { GenerateOutput, ModelCallOptions, ModelProvider, StreamPart } from '../provider.js';
import { runGenerate, runStream, type CallSpec, type HttpProviderOptions, type StreamDecoder } from './upstream-http.js';

/** What a vendor adds to this plumbing: its request (`spec`), its stream decoder and the reader of its JSON answer. */
export interface HttpVendor {
  name: string;
  spec(o: ModelCallOptions, stream: boolean): CallSpec;
  decoder(): StreamDecoder;
  parse(json: unknown): GenerateOutput;
}

/** The ModelProvider of an HTTP vendor: each call one runGenerate/runStream with `options`. */
export function httpProvider(options: HttpProviderOptions, vendor: HttpVendor): ModelProvider {
  return {
    name: vendor.name,
    generate(o) {
      return runGenerate({ options, signal: o.signal, spec: vendor.spec(o, false) }, vendor.parse);
    },
    stream(o): AsyncIterable<StreamPart> {
      return runStream({ options, signal: o.signal, spec: vendor.spec(o, true) }, vendor.decoder, vendor.parse);
    },
    async close() {
      // Sockets belong to the shared fetch dispatcher; nothing of ours to release.
    },
  };
}

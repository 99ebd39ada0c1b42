/**
 * Writes a tiny random-weight llama model as a GGUF v3 file, so the llama
 * provider's test exercises the real loading and decoding path without
 * downloading a model (nothing but the npm registry is reachable in CI).
 *
 * The vocabulary is SentencePiece-style byte fallback: <unk>, <s>, </s> and the
 * 256 `<0xNN>` byte tokens (the layout of the first 259 entries of the Llama 2
 * vocabulary) plus the `▁` space marker, so llama.cpp round-trips any text.
 * Format reference: ggml's docs/gguf.md.
 */
import { writeFile } from 'node:fs/promises';

export interface TinyGgufOptions {
  /** PRNG seed for the weights; the same seed gives a byte-identical file. */
  seed?: number;
}

export const TINY_DIMS = {
  embedding: 64,
  feedForward: 128,
  blocks: 2,
  heads: 4,
  headsKv: 2,
  contextLength: 1024,
  vocab: 260,
} as const;

const ALIGNMENT = 32;
const ValueType = { UINT32: 4, INT32: 5, FLOAT32: 6, BOOL: 7, STRING: 8, ARRAY: 9 } as const;
const GGML_TYPE_F32 = 0;

type Meta =
  | { type: 'u32'; value: number }
  | { type: 'f32'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'str'; value: string }
  | { type: 'str[]'; value: string[] }
  | { type: 'f32[]'; value: number[] }
  | { type: 'i32[]'; value: number[] };

interface Tensor {
  name: string;
  /** ggml order: dims[0] is the contiguous (row) length. */
  dims: number[];
  data: Float32Array;
}

/** Little-endian byte writer growing in chunks; the file is built in memory (it is a few hundred KB). */
class ByteWriter {
  private buf = Buffer.alloc(1 << 16);
  length = 0;
  private ensure(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = Buffer.alloc(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }
  u32(v: number): void { this.ensure(4); this.buf.writeUInt32LE(v, this.length); this.length += 4; }
  i32(v: number): void { this.ensure(4); this.buf.writeInt32LE(v, this.length); this.length += 4; }
  u64(v: number): void { this.ensure(8); this.buf.writeBigUInt64LE(BigInt(v), this.length); this.length += 8; }
  f32(v: number): void { this.ensure(4); this.buf.writeFloatLE(v, this.length); this.length += 4; }
  str(s: string): void {
    const bytes = Buffer.from(s, 'utf8');
    this.u64(bytes.length);
    this.bytes(bytes);
  }
  bytes(b: Uint8Array): void { this.ensure(b.length); this.buf.set(b, this.length); this.length += b.length; }
  pad(alignment: number): void {
    const n = (alignment - (this.length % alignment)) % alignment;
    this.ensure(n);
    this.buf.fill(0, this.length, this.length + n);
    this.length += n;
  }
  result(): Buffer { return this.buf.subarray(0, this.length); }
}

/** mulberry32: tiny, seedable, good enough for weights nobody will read. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function vocabulary(): { tokens: string[]; scores: number[]; types: number[] } {
  // Token types as llama.cpp numbers them: 2 unknown, 3 control, 6 byte.
  const tokens = ['<unk>', '<s>', '</s>'];
  const types = [2, 3, 3];
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
    types.push(6);
  }
  // SentencePiece's space marker as a normal token: without it a space would
  // decode as the three UTF-8 bytes of U+2581 instead of ' '.
  tokens.push('\u2581');
  types.push(1);
  return { tokens, scores: tokens.map(() => 0), types };
}

function tensors(seed: number): Tensor[] {
  const { embedding: e, feedForward: ff, blocks, heads, headsKv, vocab } = TINY_DIMS;
  const kv = (e / heads) * headsKv;
  const rand = prng(seed);
  // Uniform in ±scale with scale ~ 1/sqrt(fan-in) keeps activations finite through the blocks.
  const random = (dims: number[]): Float32Array => {
    const data = new Float32Array(dims.reduce((a, b) => a * b, 1));
    const scale = 1 / Math.sqrt(dims[0]!);
    for (let i = 0; i < data.length; i++) data[i] = (rand() * 2 - 1) * scale;
    return data;
  };
  const ones = (n: number): Float32Array => new Float32Array(n).fill(1);
  const list: Tensor[] = [
    { name: 'token_embd.weight', dims: [e, vocab], data: random([e, vocab]) },
    { name: 'output_norm.weight', dims: [e], data: ones(e) },
    { name: 'output.weight', dims: [e, vocab], data: random([e, vocab]) },
  ];
  for (let i = 0; i < blocks; i++) {
    const p = `blk.${i}.`;
    list.push(
      { name: `${p}attn_norm.weight`, dims: [e], data: ones(e) },
      { name: `${p}attn_q.weight`, dims: [e, e], data: random([e, e]) },
      { name: `${p}attn_k.weight`, dims: [e, kv], data: random([e, kv]) },
      { name: `${p}attn_v.weight`, dims: [e, kv], data: random([e, kv]) },
      { name: `${p}attn_output.weight`, dims: [e, e], data: random([e, e]) },
      { name: `${p}ffn_norm.weight`, dims: [e], data: ones(e) },
      { name: `${p}ffn_gate.weight`, dims: [e, ff], data: random([e, ff]) },
      { name: `${p}ffn_up.weight`, dims: [e, ff], data: random([e, ff]) },
      { name: `${p}ffn_down.weight`, dims: [ff, e], data: random([ff, e]) },
    );
  }
  return list;
}

function metadata(): Array<[string, Meta]> {
  const d = TINY_DIMS;
  const vocab = vocabulary();
  return [
    ['general.architecture', { type: 'str', value: 'llama' }],
    ['general.name', { type: 'str', value: 'codeloom-tiny-random' }],
    ['general.alignment', { type: 'u32', value: ALIGNMENT }],
    ['llama.context_length', { type: 'u32', value: d.contextLength }],
    ['llama.embedding_length', { type: 'u32', value: d.embedding }],
    ['llama.block_count', { type: 'u32', value: d.blocks }],
    ['llama.feed_forward_length', { type: 'u32', value: d.feedForward }],
    ['llama.attention.head_count', { type: 'u32', value: d.heads }],
    ['llama.attention.head_count_kv', { type: 'u32', value: d.headsKv }],
    ['llama.rope.dimension_count', { type: 'u32', value: d.embedding / d.heads }],
    ['llama.rope.freq_base', { type: 'f32', value: 10000 }],
    ['llama.attention.layer_norm_rms_epsilon', { type: 'f32', value: 1e-5 }],
    ['llama.vocab_size', { type: 'u32', value: d.vocab }],
    ['tokenizer.ggml.model', { type: 'str', value: 'llama' }],
    ['tokenizer.ggml.tokens', { type: 'str[]', value: vocab.tokens }],
    ['tokenizer.ggml.scores', { type: 'f32[]', value: vocab.scores }],
    ['tokenizer.ggml.token_type', { type: 'i32[]', value: vocab.types }],
    ['tokenizer.ggml.unknown_token_id', { type: 'u32', value: 0 }],
    ['tokenizer.ggml.bos_token_id', { type: 'u32', value: 1 }],
    ['tokenizer.ggml.eos_token_id', { type: 'u32', value: 2 }],
    ['tokenizer.ggml.add_bos_token', { type: 'bool', value: true }],
    ['tokenizer.ggml.add_eos_token', { type: 'bool', value: false }],
  ];
}

function writeValue(w: ByteWriter, m: Meta): void {
  switch (m.type) {
    case 'u32': w.u32(ValueType.UINT32); w.u32(m.value); break;
    case 'f32': w.u32(ValueType.FLOAT32); w.f32(m.value); break;
    case 'bool': w.u32(ValueType.BOOL); w.bytes(Uint8Array.of(m.value ? 1 : 0)); break;
    case 'str': w.u32(ValueType.STRING); w.str(m.value); break;
    case 'str[]': w.u32(ValueType.ARRAY); w.u32(ValueType.STRING); w.u64(m.value.length); m.value.forEach((s) => w.str(s)); break;
    case 'f32[]': w.u32(ValueType.ARRAY); w.u32(ValueType.FLOAT32); w.u64(m.value.length); m.value.forEach((v) => w.f32(v)); break;
    case 'i32[]': w.u32(ValueType.ARRAY); w.u32(ValueType.INT32); w.u64(m.value.length); m.value.forEach((v) => w.i32(v)); break;
  }
}

/** The GGUF bytes for the tiny model; deterministic for a given seed. */
export function buildTinyGguf(options: TinyGgufOptions = {}): Buffer {
  const meta = metadata();
  const list = tensors(options.seed ?? 1);
  const w = new ByteWriter();
  w.bytes(Buffer.from('GGUF', 'ascii'));
  w.u32(3);
  w.u64(list.length);
  w.u64(meta.length);
  for (const [key, value] of meta) {
    w.str(key);
    writeValue(w, value);
  }
  let offset = 0;
  for (const t of list) {
    w.str(t.name);
    w.u32(t.dims.length);
    t.dims.forEach((d) => w.u64(d));
    w.u32(GGML_TYPE_F32);
    w.u64(offset);
    offset += Math.ceil(t.data.byteLength / ALIGNMENT) * ALIGNMENT;
  }
  w.pad(ALIGNMENT);
  for (const t of list) {
    w.bytes(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    w.pad(ALIGNMENT);
  }
  return w.result();
}

/** Writes the tiny model to `path` and returns its size in bytes. */
export async function writeTinyGguf(path: string, options: TinyGgufOptions = {}): Promise<number> {
  const bytes = buildTinyGguf(options);
  await writeFile(path, bytes);
  return bytes.length;
}

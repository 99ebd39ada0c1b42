// The wire-format codecs (issue 24: "the translation layer costs ≤ 50 µs CPU per call"), from the built server
// (packages/server/dist): a request as Claude Code sends it decoded by the Anthropic Messages API codec and its
// answer encoded as Anthropic's message; the same conversation as OpenAI's chat completions decoded by the OpenAI
// codec, and as the Responses API (decode, and the response object with its output items). Prints CPU µs per
// call (decode + encode; the body as parsed JSON, schema validation not included) for a short request and a
// long one (a Claude Code turn: 20 KB of system prompt, 16 tools, 20 tool calls and their results), the best of
// 5 rounds (on a shared machine other work only ever adds time), against the 50 µs target.
//   BENCH_CODEC_CALLS=5000   calls per round (default 5000)
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { root } from '../scripts/build-if-needed.mjs';

const cpuMicros = () => { const u = process.cpuUsage(); return u.user + u.system; };
const TARGET_US = 50;

/** A Claude Code-sized conversation in Anthropic's wire format: `turns` tool calls and their results after a first question. */
function anthropicBody(turns, tools) {
  const messages = [{ role: 'user', content: [{ type: 'text', text: '<system-reminder>As you answer, use the tools.</system-reminder>' }, { type: 'text', text: 'Find where the todo routes are registered and add a PATCH route.', cache_control: { type: 'ephemeral' } }] }];
  for (let i = 0; i < turns; i++) {
    messages.push({ role: 'assistant', content: [{ type: 'text', text: 'Let me look.' }, { type: 'tool_use', id: `toolu_${i}`, name: `Tool${i % tools}`, input: { command: `grep -rn "todos" src/ # ${i}`, description: 'Search the routes' } }] });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: [{ type: 'text', text: `src/routes/todos.ts:${i}: app.get('/todos', list);\n`.repeat(20) }] }] });
  }
  return {
    model: 'sandbox', max_tokens: 32000, temperature: 1, stream: true, metadata: { user_id: 'user_0123456789abcdef' },
    system: [{ type: 'text', text: 'You are Claude Code, Anthropic\'s official CLI for Claude.', cache_control: { type: 'ephemeral' } }, { type: 'text', text: 'You are an interactive CLI tool. '.repeat(Math.ceil(20_000 / 33) * Math.sign(turns)) || 'Be brief.' }],
    tools: Array.from({ length: tools }, (_, i) => ({
      name: `Tool${i}`, description: 'Executes a given bash command in a persistent shell session with optional timeout. '.repeat(turns ? 25 : 1),
      input_schema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', additionalProperties: false, required: ['command'], properties: { command: { type: 'string' }, timeout: { type: 'number' }, description: { type: 'string' }, run_in_background: { type: 'boolean' } } },
    })),
    messages,
  };
}

/** The same conversation in OpenAI's chat completions format. */
function openaiBody(a) {
  const messages = [{ role: 'system', content: a.system.map((b) => b.text).join('\n\n') }];
  for (const m of a.messages) {
    if (m.role === 'assistant') {
      messages.push({ role: 'assistant', content: m.content.filter((b) => b.type === 'text').map((b) => b.text).join(''), tool_calls: m.content.filter((b) => b.type === 'tool_use').map((b) => ({ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input) } })) });
    } else {
      for (const b of m.content) {
        if (b.type === 'tool_result') messages.push({ role: 'tool', tool_call_id: b.tool_use_id, content: b.content.map((c) => c.text).join('') });
        else messages.push({ role: 'user', content: b.text });
      }
    }
  }
  return { model: 'sandbox', max_tokens: 32000, stream: true, tools: a.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.input_schema } })), messages };
}

/** The same conversation in OpenAI's Responses API format (as the Codex CLI sends it: instructions, input items, function tools). */
function responsesBody(a) {
  const input = [];
  for (const m of a.messages) {
    for (const b of m.content) {
      if (b.type === 'text') input.push(m.role === 'assistant' ? { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: b.text, annotations: [] }] } : { type: 'message', role: 'user', content: [{ type: 'input_text', text: b.text }] });
      else if (b.type === 'tool_use') input.push({ type: 'function_call', call_id: b.id, name: b.name, arguments: JSON.stringify(b.input) });
      else if (b.type === 'tool_result') input.push({ type: 'function_call_output', call_id: b.tool_use_id, output: b.content.map((c) => c.text).join('') });
    }
  }
  return {
    model: 'sandbox', instructions: a.system.map((b) => b.text).join('\n\n'), input, stream: true, store: false, parallel_tool_calls: false,
    tools: a.tools.map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: t.input_schema, strict: false })),
  };
}

/** CPU µs per call of `fn`, the best of 5 rounds of `calls` calls (after a warm-up round). */
function measure(fn, calls) {
  for (let i = 0; i < calls; i++) fn();
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    const start = cpuMicros();
    for (let i = 0; i < calls; i++) fn();
    best = Math.min(best, (cpuMicros() - start) / calls);
  }
  return best;
}

export async function benchCodecs({ calls = Number(process.env.BENCH_CODEC_CALLS ?? 5000) } = {}) {
  const dist = (path) => import(pathToFileURL(join(root, 'packages/server/dist', path)).href);
  const anthropicRequest = await dist('modules/anthropic-compat/anthropic-request.js');
  const anthropicResponse = await dist('modules/anthropic-compat/anthropic-response.js');
  const openaiRequest = await dist('modules/openai-compat/openai-request.js');
  const responsesRequest = await dist('modules/openai-compat/responses-request.js');
  const responsesObject = await dist('modules/openai-compat/responses-object.js');
  // A settled call as the codecs see it: text and one tool call.
  const result = { id: 'gen_x', created: 0, totalMs: 1, text: 'I will add the route.', toolCalls: [{ id: 'call_1', name: 'Tool0', arguments: '{"command":"sed -n 1,40p src/routes/todos.ts"}' }], usage: { promptTokens: 9000, completionTokens: 40 }, finishReason: 'tool-calls', tokens: 9040, costMicros: 0, model: { id: 'sandbox' }, upstreamMs: 0 };
  console.log(`\ncodecs: CPU µs per call (decode + encode), best of 5 rounds of ${calls}; target ≤ ${TARGET_US} µs`);
  for (const [label, turns, tools] of [['short (1 question, 1 tool)', 0, 1], ['Claude Code turn (20 KB system, 16 tools, 20 tool calls and results)', 20, 16]]) {
    const a = anthropicBody(turns, tools);
    const o = openaiBody(a);
    const anthropic = measure(() => { anthropicRequest.fromMessagesBody(a); anthropicResponse.toMessage('msg_x', result); }, calls);
    const openai = measure(() => openaiRequest.fromChatBody(o), calls);
    const r = responsesBody(a);
    const responses = measure(() => {
      const spec = responsesRequest.fromResponsesBody(r);
      responsesObject.responseObject({ id: 'resp_x', createdAt: 0, model: 'sandbox' }, spec, { status: 'completed', output: responsesObject.outputItems(result), usage: responsesObject.toUsage(result.usage) });
    }, calls);
    const bytes = Buffer.byteLength(JSON.stringify(a));
    const over = (us) => `${us.toFixed(1)} µs${us <= TARGET_US ? '' : ' (over target)'}`;
    console.log(`  ${label}, ${(bytes / 1024).toFixed(0)} KB: Anthropic Messages ${over(anthropic)}; OpenAI chat decode ${over(openai)}; OpenAI Responses ${over(responses)}`);
  }
}

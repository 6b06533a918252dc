import type { AssistantMessage, Message, ToolResultMessage } from '@kode/protocol'
import type { ClientConfig, LLMRequest } from '@kode/providers'
import { fitToolCallId, TOOL_CALL_ID_RULES } from '@kode/providers/adapter'
import type { FramedApi } from '@kode/providers/testing'
import { expect, test } from 'vitest'
import { streamOf, testClient, useServer } from './helpers.js'

// One conversation that switches provider every turn: openai-chat, openrouter, anthropic, google
// (aborted), openai-responses, then google again. Each turn is served by the test server in that
// api's wire; the test asserts every request body exactly.

const server = useServer()
const SYSTEM = 'Be brief.'
const PARAMETERS = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }
const TOOLS = [{ name: 'read', description: 'Read a file', parameters: PARAMETERS }]
const MISSING = 'Error: this tool call has no result; it was not run or its result was lost.'
const SENTINEL = 'skip_thought_signature_validator'

let n = 0
const user = (text: string): Message => ({
  role: 'user',
  id: `u${++n}`,
  createdAt: n,
  parts: [{ type: 'text', text }],
})
const output = (toolCallId: string, outputText: string): ToolResultMessage => ({
  role: 'tool',
  id: `t${++n}`,
  createdAt: n,
  toolCallId,
  toolName: 'read',
  status: 'success',
  outputText,
  parts: [],
})

async function turn(
  api: FramedApi,
  model: string,
  history: Message[],
  payloads: string[],
  config: Partial<ClientConfig> = {},
): Promise<{ message: AssistantMessage; body: unknown }> {
  server().enqueue(streamOf(api, payloads))
  const request: LLMRequest = { system: SYSTEM, messages: history, tools: TOOLS }
  const message = await testClient(server(), { api, model, ...config }).complete(request)
  return { message, body: server().requests.at(-1)!.body }
}

test('a conversation passes through all five apis, each request valid for its wire', async () => {
  const history: Message[] = [user('Read a.txt')]

  // 1. openai-chat: reasoning, text and a tool call.
  const t1 = await turn('openai-chat', 'deepseek-reasoner', history, [
    '{"id":"chat-1","choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"User greets."}}]}',
    '{"id":"chat-1","choices":[{"index":0,"delta":{"content":"Let me read it."}}]}',
    '{"id":"chat-1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_chat_1","type":"function","function":{"name":"read","arguments":"{\\"path\\":\\"a.txt\\"}"}}]}}]}',
    '{"id":"chat-1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}',
  ])
  expect(t1.body).toEqual({
    model: 'deepseek-reasoner',
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: 'Read a.txt' },
    ],
    stream: true,
    stream_options: { include_usage: true },
    tools: [
      { type: 'function', function: { name: 'read', description: 'Read a file', parameters: PARAMETERS } },
    ],
  })
  history.push(t1.message, output('call_chat_1', 'alpha'))

  // 2. openrouter: the chat model's reasoning arrives as text; answers with an id Anthropic rejects.
  const t2 = await turn('openrouter', 'anthropic/claude-sonnet-4.5', history, [
    '{"id":"gen-2","choices":[{"index":0,"delta":{"role":"assistant","content":"Now b.txt."}}]}',
    '{"id":"gen-2","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"functions.read:1","type":"function","function":{"name":"read","arguments":"{\\"path\\":\\"b.txt\\"}"}}]}}]}',
    '{"id":"gen-2","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":50,"completion_tokens":10,"cost":0.0001}}',
  ])
  const readA = {
    id: 'call_chat_1',
    type: 'function',
    function: { name: 'read', arguments: '{"path":"a.txt"}' },
  }
  expect(t2.body).toEqual({
    model: 'anthropic/claude-sonnet-4.5',
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: 'Read a.txt' },
      {
        role: 'assistant',
        content: '<thinking>\nUser greets.\n</thinking>\n\nLet me read it.',
        tool_calls: [readA],
      },
      { role: 'tool', tool_call_id: 'call_chat_1', content: 'alpha' },
    ],
    stream: true,
    stream_options: { include_usage: true },
    tools: [
      { type: 'function', function: { name: 'read', description: 'Read a file', parameters: PARAMETERS } },
    ],
    usage: { include: true },
  })
  history.push(t2.message, output('functions.read:1', 'beta'))

  // 3. anthropic: the OpenRouter id is rewritten in the call and its result alike; answers with
  // signed thinking and two calls, of which only the first gets a result.
  const t3 = await turn(
    'anthropic',
    'claude-sonnet-4-5',
    history,
    [
      '{"type":"message_start","message":{"id":"msg_3","usage":{"input_tokens":100,"output_tokens":1}}}',
      '{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}',
      '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Two more."}}',
      '{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig-anthropic"}}',
      '{"type":"content_block_stop","index":0}',
      '{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_A","name":"read","input":{}}}',
      '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"path\\":\\"c.txt\\"}"}}',
      '{"type":"content_block_stop","index":1}',
      '{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_B","name":"read","input":{}}}',
      '{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\\"path\\":\\"d.txt\\"}"}}',
      '{"type":"content_block_stop","index":2}',
      '{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}}',
      '{"type":"message_stop"}',
    ],
    { cacheControl: false },
  )
  const orId = fitToolCallId('functions.read:1', TOOL_CALL_ID_RULES.anthropic)
  expect(orId).toMatch(/^functions_read_1_[0-9a-f]{8}$/)
  const text = (t: string) => ({ type: 'text', text: t })
  expect(t3.body).toEqual({
    model: 'claude-sonnet-4-5',
    max_tokens: 64_000,
    stream: true,
    system: [text(SYSTEM)],
    tools: [{ name: 'read', description: 'Read a file', input_schema: PARAMETERS }],
    messages: [
      { role: 'user', content: [text('Read a.txt')] },
      {
        role: 'assistant',
        content: [
          text('<thinking>\nUser greets.\n</thinking>'),
          text('Let me read it.'),
          { type: 'tool_use', id: 'call_chat_1', name: 'read', input: { path: 'a.txt' } },
        ],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'call_chat_1', content: [text('alpha')] }],
      },
      {
        role: 'assistant',
        content: [text('Now b.txt.'), { type: 'tool_use', id: orId, name: 'read', input: { path: 'b.txt' } }],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: orId, content: [text('beta')] }] },
    ],
  })
  history.push(t3.message, output('toolu_A', 'gamma'), user('Keep going'))

  // 4. google, aborted once the tool call has started: Anthropic's signature is dropped, each
  // foreign turn's first call carries Google's stand-in signature, the missing result is synthetic.
  server().enqueue(
    streamOf('google', [
      '{"candidates":[{"content":{"role":"model","parts":[{"text":"Checking"}]}}],"responseId":"g-4"}',
      '{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"read","args":{"path":"e.txt"}},"thoughtSignature":"c2lnLWc="}]}}],"responseId":"g-4"}',
      '{"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":200,"candidatesTokenCount":10},"responseId":"g-4"}',
    ]),
  )
  const gemini = testClient(server(), { api: 'google', model: 'gemini-2.5-pro' })
  const abort = new AbortController()
  let t4: AssistantMessage | undefined
  for await (const item of gemini.stream(
    { system: SYSTEM, messages: history, tools: TOOLS },
    { signal: abort.signal },
  )) {
    if (item.type === 'tool_call_start') abort.abort()
    if (item.type === 'done') t4 = item.message
  }
  const readCall = (path: string) => ({ functionCall: { name: 'read', args: { path } } })
  const response = (out: { output: string } | { error: string }) => ({
    functionResponse: { name: 'read', response: out },
  })
  const geminiHistory = [
    { role: 'user', parts: [{ text: 'Read a.txt' }] },
    {
      role: 'model',
      parts: [
        { text: '<thinking>\nUser greets.\n</thinking>' },
        { text: 'Let me read it.' },
        { ...readCall('a.txt'), thoughtSignature: SENTINEL },
      ],
    },
    { role: 'user', parts: [response({ output: 'alpha' })] },
    { role: 'model', parts: [{ text: 'Now b.txt.' }, { ...readCall('b.txt'), thoughtSignature: SENTINEL }] },
    { role: 'user', parts: [response({ output: 'beta' })] },
    {
      role: 'model',
      parts: [
        { text: '<thinking>\nTwo more.\n</thinking>' },
        { ...readCall('c.txt'), thoughtSignature: SENTINEL },
        readCall('d.txt'),
      ],
    },
    {
      role: 'user',
      parts: [response({ output: 'gamma' }), response({ error: MISSING }), { text: 'Keep going' }],
    },
  ]
  expect(server().requests.at(-1)!.body).toEqual({
    contents: geminiHistory,
    systemInstruction: { parts: [{ text: SYSTEM }] },
    tools: [
      {
        functionDeclarations: [
          { name: 'read', description: 'Read a file', parametersJsonSchema: PARAMETERS },
        ],
      },
    ],
  })
  expect(t4).toMatchObject({
    stopReason: 'aborted',
    parts: [
      { type: 'text', text: 'Checking' },
      { type: 'tool_call', id: 'call_g-4_0', name: 'read', argumentsJson: '{"path":"e.txt"}' },
      { type: 'thinking_signature', signature: 'c2lnLWc=', format: 'google', model: 'gemini-2.5-pro' },
    ],
  })
  history.push(t4!, user('Continue'))

  // 5. openai-responses: everything foreign goes back as plain items; the aborted call gets a
  // synthetic output.
  const t5 = await turn('openai-responses', 'gpt-5.1', history, [
    '{"type":"response.created","response":{"id":"resp_5","status":"in_progress","output":[]}}',
    '{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_5","type":"reasoning","summary":[]}}',
    '{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":0,"delta":"Wrap up."}',
    '{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_5","type":"reasoning","summary":[{"type":"summary_text","text":"Wrap up."}],"encrypted_content":"enc-5"}}',
    '{"type":"response.output_item.added","output_index":1,"item":{"id":"msg_5","type":"message","role":"assistant","content":[],"phase":"final_answer"}}',
    '{"type":"response.output_text.delta","output_index":1,"delta":"All read."}',
    '{"type":"response.completed","response":{"id":"resp_5","status":"completed","output":[],"usage":{"input_tokens":300,"output_tokens":20}}}',
  ])
  const said = (t: string) => ({ role: 'assistant', content: [{ type: 'output_text', text: t }] })
  const asked = (t: string) => ({ role: 'user', content: [{ type: 'input_text', text: t }] })
  const called = (callId: string, path: string) => ({
    type: 'function_call',
    call_id: callId,
    name: 'read',
    arguments: JSON.stringify({ path }),
  })
  const answered = (callId: string, out: string) => ({
    type: 'function_call_output',
    call_id: callId,
    output: out,
  })
  expect(t5.body).toEqual({
    model: 'gpt-5.1',
    stream: true,
    store: false,
    include: ['reasoning.encrypted_content'],
    instructions: SYSTEM,
    tools: [
      { type: 'function', name: 'read', description: 'Read a file', parameters: PARAMETERS, strict: false },
    ],
    input: [
      asked('Read a.txt'),
      said('<thinking>\nUser greets.\n</thinking>'),
      said('Let me read it.'),
      called('call_chat_1', 'a.txt'),
      answered('call_chat_1', 'alpha'),
      said('Now b.txt.'),
      called('functions.read:1', 'b.txt'),
      answered('functions.read:1', 'beta'),
      said('<thinking>\nTwo more.\n</thinking>'),
      called('toolu_A', 'c.txt'),
      called('toolu_B', 'd.txt'),
      answered('toolu_A', 'gamma'),
      answered('toolu_B', MISSING),
      asked('Keep going'),
      said('Checking'),
      called('call_g-4_0', 'e.txt'),
      answered('call_g-4_0', MISSING),
      asked('Continue'),
    ],
  })
  history.push(t5.message, user('Thanks'))

  // 6. google again, same model as turn 4: its own signature goes back on its own call.
  const t6 = await turn('google', 'gemini-2.5-pro', history, [
    '{"candidates":[{"content":{"role":"model","parts":[{"text":"Welcome."}]},"finishReason":"STOP"}],"responseId":"g-6"}',
  ])
  expect(t6.body).toEqual({
    contents: [
      ...geminiHistory,
      {
        role: 'model',
        parts: [{ text: 'Checking' }, { ...readCall('e.txt'), thoughtSignature: 'c2lnLWc=' }],
      },
      { role: 'user', parts: [response({ error: MISSING }), { text: 'Continue' }] },
      { role: 'model', parts: [{ text: '<thinking>\nWrap up.\n</thinking>' }, { text: 'All read.' }] },
      { role: 'user', parts: [{ text: 'Thanks' }] },
    ],
    systemInstruction: { parts: [{ text: SYSTEM }] },
    tools: [
      {
        functionDeclarations: [
          { name: 'read', description: 'Read a file', parametersJsonSchema: PARAMETERS },
        ],
      },
    ],
  })
  expect(t6.message.parts).toEqual([{ type: 'text', text: 'Welcome.' }])
})

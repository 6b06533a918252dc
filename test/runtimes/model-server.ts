import {
  createSseTestServer,
  frameChat,
  type RecordedRequest,
  type SseTestServer,
} from '@kode/providers/testing'

const chunk = (delta: unknown, finish: string | null = null) =>
  JSON.stringify({
    id: 'chatcmpl-rt',
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, finish_reason: finish }],
  })
const usage = JSON.stringify({
  id: 'chatcmpl-rt',
  object: 'chat.completion.chunk',
  choices: [],
  usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 },
})

/** The model's first answer: call `add` with 2 and 3, its arguments in two pieces. */
const callAdd = frameChat([
  chunk({ role: 'assistant', content: '' }),
  chunk({
    tool_calls: [{ index: 0, id: 'call_add', type: 'function', function: { name: 'add', arguments: '' } }],
  }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":2,' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '"b":3}' } }] }),
  chunk({}, 'tool_calls'),
  usage,
])
/** The second: the sum, a word at a time. */
const sayTheSum = frameChat([
  chunk({ role: 'assistant', content: '' }),
  ...['The ', 'sum ', 'is ', '5.'].map((content) => chunk({ content })),
  chunk({}, 'stop'),
  usage,
])

const hasToolResult = (request: RecordedRequest) =>
  JSON.stringify((request.body as { messages?: unknown }).messages ?? []).includes('"role":"tool"')

/**
 * An OpenAI-compatible model on 127.0.0.1 for the runtime task: it calls `add` until the request
 * carries a tool result, then says the sum. Stateless, so any number of runs can share it.
 */
export function startModelServer(): Promise<SseTestServer> {
  return createSseTestServer({
    handler: (request) => ({ body: hasToolResult(request) ? sayTheSum : callAdd }),
  })
}

import {
  createSseTestServer,
  type RecordedRequest,
  type SseTestServer,
  scriptedResponse,
} from '@kode/providers/testing'

const usage = { inputTokens: 50, outputTokens: 10 }
/** The model's first answer: call `add` with 2 and 3, its arguments in two pieces. */
const callAdd = scriptedResponse('openai-chat', {
  id: 'chatcmpl-rt',
  steps: [{ toolCall: { id: 'call_add', name: 'add', arguments: { a: 2, b: 3 } } }],
  usage,
}).body
/** The second: the sum, a word at a time. */
const sayTheSum = scriptedResponse('openai-chat', {
  id: 'chatcmpl-rt',
  steps: [{ text: 'The sum is 5.' }],
  usage,
}).body

/** Some text, then a stall with the connection open: a model that stopped sending. */
const stall = scriptedResponse('openai-chat', {
  id: 'chatcmpl-rt',
  steps: [{ text: 'Thinking about it' }],
  stallAfter: 1,
})

const hasToolResult = (request: RecordedRequest) =>
  JSON.stringify((request.body as { messages?: unknown }).messages ?? []).includes('"role":"tool"')

/**
 * An OpenAI-compatible model on 127.0.0.1 for the runtime tasks: it calls `add` until the request
 * carries a tool result, then says the sum; under `/stall/` it streams some text and stalls.
 * Stateless, so any number of runs can share it.
 */
export function startModelServer(): Promise<SseTestServer> {
  return createSseTestServer({
    handler: (request) => {
      if (request.url.startsWith('/stall/')) return stall
      return { body: hasToolResult(request) ? sayTheSum : callAdd }
    },
  })
}

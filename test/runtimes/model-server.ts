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

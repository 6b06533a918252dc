// A diagnostic row, not a peer: the floor's loop, but each turn's request goes through
// `@kode/providers` (`client.stream` with Kode's typed messages) instead of fetch and a bare SSE
// reader. Its cost over the floor is the providers layer's; Kode's cost over it is the engine's
// (events, tool dispatch, persistence, the provider view).
import { Unavailable } from '../../providers/clients/unavailable.mjs'
import { PROMPT, SYSTEM, TOOLS } from '../task.mjs'

/** Prepares the task: resolves to the function that runs it. */
export async function prepare({ origin, record, runTool, keyOf, maxTurns }) {
  let providers
  try {
    providers = await import('@kode/providers')
  } catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND') throw error
    throw new Unavailable('@kode/providers is not built (pnpm build)', { cause: error })
  }
  const client = providers.createClient({
    api: 'openai-chat',
    model: 'gpt-4.1',
    apiKey: 'bench',
    baseUrl: `${origin}/v1`,
  })
  const tools = {}
  for (const tool of TOOLS) {
    tools[tool.name] = async (args) => {
      record(keyOf(args))
      return runTool(tool.name, args)
    }
  }
  let ids = 0
  const stamp = () => ({ id: `m${++ids}`, createdAt: 0 })
  return async () => {
    const messages = [{ role: 'user', ...stamp(), parts: [{ type: 'text', text: PROMPT }] }]
    for (let turn = 1; turn <= maxTurns; turn++) {
      let message
      for await (const item of client.stream({ system: SYSTEM, messages, tools: TOOLS })) {
        if (item.type === 'done') message = item.message
      }
      if (!message || message.stopReason === 'error') throw new Error(message?.errorMessage ?? 'no message')
      messages.push(message)
      const calls = message.parts.filter((part) => part.type === 'tool_call')
      if (calls.length === 0) {
        const finalText = message.parts
          .filter((part) => part.type === 'text')
          .map((part) => part.text)
          .join('')
        return { finalText }
      }
      const results = await Promise.all(calls.map((call) => tools[call.name](JSON.parse(call.argumentsJson))))
      for (const [i, call] of calls.entries()) {
        messages.push({
          role: 'tool',
          ...stamp(),
          toolCallId: call.id,
          toolName: call.name,
          status: 'success',
          outputText: results[i],
          parts: [],
        })
      }
    }
    throw new Error(`no answer within ${maxTurns} turns`)
  }
}

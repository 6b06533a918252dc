// @mariozechner/pi-ai: `stream()` with a model object pointing at the bench server.
import { TOOL } from '../scenarios.mjs'
import { apiRoot } from './api-root.mjs'

/** Per wire: pi-ai's api name, its lazily loaded provider module, and its base URL. */
const APIS = {
  'openai-chat': { api: 'openai-completions', provider: 'openai', module: 'openai-completions' },
  'openai-responses': { api: 'openai-responses', provider: 'openai', module: 'openai-responses' },
  // The Anthropic SDK appends `/v1/messages` itself.
  anthropic: {
    api: 'anthropic-messages',
    provider: 'anthropic',
    module: 'anthropic',
    root: (url) => url.replace(/\/v1$/, ''),
  },
  google: { api: 'google-generative-ai', provider: 'google', module: 'google' },
}

/** Prepares one pi-ai request: resolves to the function that runs it. */
export async function prepare({ wire, origin, scenario }) {
  const { Type, stream } = await import('@mariozechner/pi-ai')
  const { api, provider, module, root = (url) => url } = APIS[wire]
  // pi-ai imports a provider's module (and its vendor SDK) on that api's first stream() call.
  // Load it here so the measurement holds streaming only; import time is measured on its own.
  await import(`@mariozechner/pi-ai/${module}`)
  const model = {
    id: 'bench-model',
    name: 'bench-model',
    api,
    provider,
    baseUrl: root(apiRoot(origin, scenario, wire)),
    reasoning: false,
    input: ['text'],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 128_000,
    maxTokens: 8_192,
  }
  const context = {
    messages: [{ role: 'user', content: 'hi', timestamp: 0 }],
    tools: [
      {
        name: TOOL.name,
        description: TOOL.description,
        parameters: Type.Object({ path: Type.String(), content: Type.String() }),
      },
    ],
  }
  return async () => {
    let message
    for await (const event of stream(model, context, { apiKey: 'bench' })) {
      if (event.type === 'done') message = event.message
      else if (event.type === 'error') throw new Error(event.error.errorMessage ?? 'pi-ai stream error')
    }
    if (!message) throw new Error('the stream ended without a done event')
    let text = ''
    const toolCalls = []
    for (const block of message.content) {
      if (block.type === 'text') text += block.text
      else if (block.type === 'toolCall') toolCalls.push({ name: block.name, args: block.arguments })
    }
    return { text, toolCalls }
  }
}

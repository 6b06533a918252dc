// The Vercel AI SDK: `streamText` over each wire's provider package, consuming `fullStream`.
import { TOOL } from '../scenarios.mjs'
import { apiRoot } from './api-root.mjs'

/** Per wire: the language model pointed at `baseURL`. */
const MODELS = {
  'openai-chat': async (baseURL) =>
    (await import('@ai-sdk/openai')).createOpenAI({ baseURL, apiKey: 'bench' }).chat('gpt-4.1'),
  'openai-responses': async (baseURL) =>
    (await import('@ai-sdk/openai')).createOpenAI({ baseURL, apiKey: 'bench' }).responses('gpt-5.1'),
  anthropic: async (baseURL) =>
    (await import('@ai-sdk/anthropic')).createAnthropic({ baseURL, apiKey: 'bench' })('claude-sonnet-4-5'),
  google: async (baseURL) =>
    (await import('@ai-sdk/google')).createGoogleGenerativeAI({ baseURL, apiKey: 'bench' })(
      'gemini-3-pro-preview',
    ),
}

/** Prepares one AI SDK request: resolves to the function that runs it. */
export async function prepare({ wire, origin, scenario }) {
  const { jsonSchema, streamText, tool } = await import('ai')
  // Warnings about unsupported settings would only add console output to the measurement.
  globalThis.AI_SDK_LOG_WARNINGS = false
  const model = await MODELS[wire](apiRoot(origin, scenario, wire))
  const tools = {
    [TOOL.name]: tool({ description: TOOL.description, inputSchema: jsonSchema(TOOL.parameters) }),
  }
  return async () => {
    const result = streamText({ model, prompt: 'hi', tools, maxRetries: 0 })
    let text = ''
    const toolCalls = []
    for await (const part of result.fullStream) {
      switch (part.type) {
        case 'text-delta':
          text += part.text
          break
        case 'tool-call':
          toolCalls.push({ name: part.toolName, args: part.input })
          break
        case 'error':
        case 'tool-error':
          throw part.error
      }
    }
    return { text, toolCalls }
  }
}

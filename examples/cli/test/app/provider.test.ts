import type { LLMClient, LLMRequest } from '@kode/providers'
import { describe, expect, test } from 'vitest'
import { ProviderChoiceError, resolveProvider, withReasoning } from '../../src/provider.js'

describe('resolveProvider', () => {
  test('without a key it falls back to the scripted model and says why', () => {
    expect(resolveProvider({}, {})).toEqual({ kind: 'scripted', why: 'ANTHROPIC_API_KEY is not set' })
  })

  test('picks the api whose key is set, with its default model', () => {
    expect(resolveProvider({}, { GEMINI_API_KEY: 'g' })).toEqual({
      kind: 'real',
      api: 'google',
      model: 'gemini-2.5-flash',
      apiKey: 'g',
      keyEnv: 'GEMINI_API_KEY',
    })
  })

  test('a chosen api uses its own key variable', () => {
    const resolved = resolveProvider(
      { api: 'openai-chat', model: 'gpt-4.1' },
      { OPENAI_API_KEY: 'o', ANTHROPIC_API_KEY: 'a' },
    )
    expect(resolved).toMatchObject({ kind: 'real', api: 'openai-chat', model: 'gpt-4.1', apiKey: 'o' })
  })

  test('apiKeyEnv names another variable', () => {
    const resolved = resolveProvider(
      { api: 'openai-chat', apiKeyEnv: 'DEEPSEEK_API_KEY' },
      { DEEPSEEK_API_KEY: 'd' },
    )
    expect(resolved).toMatchObject({ kind: 'real', apiKey: 'd', keyEnv: 'DEEPSEEK_API_KEY' })
  })

  test('a baseUrl without a key is a local server, not the scripted model', () => {
    expect(
      resolveProvider({ api: 'openai-chat', model: 'llama3.2', baseUrl: 'http://localhost:11434/v1' }, {}),
    ).toEqual({
      kind: 'real',
      api: 'openai-chat',
      model: 'llama3.2',
      baseUrl: 'http://localhost:11434/v1',
      keyEnv: 'OPENAI_API_KEY',
    })
  })

  test('--scripted wins over a key', () => {
    expect(resolveProvider({ scripted: true }, { ANTHROPIC_API_KEY: 'a' })).toMatchObject({
      kind: 'scripted',
    })
  })

  test('an unknown api is refused with the list of available ones', () => {
    expect(() => resolveProvider({ api: 'acme' }, {})).toThrow(ProviderChoiceError)
    expect(() => resolveProvider({ api: 'acme' }, {})).toThrow(/available: .*anthropic/)
  })
})

describe('withReasoning', () => {
  test('adds the effort to every request and keeps the client', async () => {
    const seen: LLMRequest[] = []
    const client = {
      api: 'x',
      provider: 'x',
      model: 'm',
      modelInfo: undefined,
      stream: (request: LLMRequest) => {
        seen.push(request)
        return (async function* () {})()
      },
      complete: async (request: LLMRequest) => {
        seen.push(request)
        return undefined as never
      },
    } satisfies LLMClient
    const wrapped = withReasoning(client, 'low')
    await wrapped.complete({ messages: [] })
    expect(seen[0]?.reasoning).toEqual({ effort: 'low' })
    expect(wrapped.model).toBe('m')
  })
})

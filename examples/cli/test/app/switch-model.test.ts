import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createSseTestServer, type SseTestServer } from '@kode/providers/testing'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type App, openApp } from '../../src/app.js'
import { parseCliArgs } from '../../src/args.js'
import { MissingKeyError, switchChoice } from '../../src/provider.js'
import { tempDir } from '../process/run-kode.js'

const deepseek = {
  api: 'openai-chat',
  model: 'deepseek-chat',
  baseUrl: 'https://api.deepseek.com',
  apiKeyEnv: 'DEEPSEEK_API_KEY',
}

describe('switchChoice', () => {
  test('another api drops the baseUrl and the key variable of the current one', () => {
    expect(switchChoice(deepseek, 'openai-chat', { api: 'anthropic', model: 'claude-sonnet-4-5' })).toEqual({
      api: 'anthropic',
      model: 'claude-sonnet-4-5',
      scripted: false,
    })
  })

  test('the same api keeps them (another model on the same server)', () => {
    expect(switchChoice(deepseek, 'openai-chat', { api: 'openai-chat', model: 'deepseek-reasoner' })).toEqual(
      {
        ...deepseek,
        model: 'deepseek-reasoner',
        scripted: false,
      },
    )
  })

  test('the same api reached without naming it (picked by its key) counts as the same', () => {
    const current = { apiKeyEnv: 'CORP_ANTHROPIC_KEY' }
    expect(switchChoice(current, 'anthropic', { api: 'anthropic', model: 'claude-opus-4-1' })).toMatchObject(
      current,
    )
  })
})

// The app as a user with a DeepSeek config file has it: `/model` goes through `switchModel`.
describe('/model from a DeepSeek config', () => {
  let server: SseTestServer
  let app: App
  let env: NodeJS.ProcessEnv

  beforeAll(async () => {
    server = await createSseTestServer()
    const home = tempDir('kode-switch-')
    mkdirSync(join(home, 'kode'))
    writeFileSync(
      join(home, 'kode/config.json'),
      JSON.stringify({ ...deepseek, baseUrl: `${server.url}/v1` }),
    )
    env = { HOME: home, XDG_CONFIG_HOME: home, DEEPSEEK_API_KEY: 'sk-deepseek-secret' }
    const args = parseCliArgs(['--sessions-dir', join(home, 'sessions')])
    app = await openApp({ args, env, cwd: home })
  })
  afterAll(async () => {
    await app?.close()
    await server?.close()
  })

  test('switching to anthropic does not take the DeepSeek key along: it needs ANTHROPIC_API_KEY', async () => {
    const switching = app.switchModel({ api: 'anthropic', model: 'claude-sonnet-4-5' })
    await expect(switching).rejects.toThrow(MissingKeyError)
    await expect(app.switchModel({ api: 'anthropic', model: 'claude-sonnet-4-5' })).rejects.toThrow(
      'ANTHROPIC_API_KEY is not set, and anthropic claude-sonnet-4-5 needs it: set ANTHROPIC_API_KEY and start kode again (it reads keys when it starts), or switch to a model whose key is set',
    )
    expect(app.model.label).toBe('openai-chat deepseek-chat')
  })

  test('switching to another DeepSeek model keeps its server and key', async () => {
    const model = await app.switchModel({ api: 'openai-chat', model: 'deepseek-reasoner' })
    expect(model.label).toBe('openai-chat deepseek-reasoner')
    server.enqueue({ status: 401, body: '{"error":{"message":"unauthorized"}}' })
    await expect(model.client.complete({ messages: [] })).rejects.toThrow()
    const request = server.requests.at(-1)!
    expect(request.url).toBe('/v1/chat/completions')
    expect(request.headers.authorization).toBe('Bearer sk-deepseek-secret')
    expect(request.body).toMatchObject({ model: 'deepseek-reasoner' })
  })
})

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createSseTestServer, scriptedResponse } from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { openApp } from '../../src/app.js'
import { approveAll, denyAll } from '../../src/approvals/decide.js'
import { parseCliArgs } from '../../src/args.js'
import { runExec } from '../../src/exec.js'
import { MissingKeyError, ProviderChoiceError, realModelHint, resolveProvider } from '../../src/provider.js'
import { tempDir } from '../process/run-kode.js'

describe('resolveProvider', () => {
  test('with nothing chosen and no key it falls back to the scripted model and says why', () => {
    const resolved = resolveProvider({ reasoning: 'low' }, {})
    expect(resolved).toEqual({ kind: 'scripted', reason: 'no-key', why: 'no API key is set' })
    expect(realModelHint({ reason: 'no-key', why: '' })).toContain('set ANTHROPIC_API_KEY, OPENAI_API_KEY')
    // Local servers speak Chat Completions; without --api the CLI would send Anthropic's format.
    expect(realModelHint({ reason: 'no-key', why: '' })).toContain('--api openai-chat --base-url')
  })

  test('an api chosen without its key is refused, naming the missing variable', () => {
    const choose = () =>
      resolveProvider({ api: 'google', model: 'gemini-2.5-pro' }, { ANTHROPIC_API_KEY: 'a' })
    expect(choose).toThrow(MissingKeyError)
    expect(choose).toThrow(/^GEMINI_API_KEY is not set, and google gemini-2.5-pro needs it/)
  })

  test('a key variable set to blanks holds no key', () => {
    expect(resolveProvider({}, { ANTHROPIC_API_KEY: ' ', OPENAI_API_KEY: '\n' })).toMatchObject({
      kind: 'scripted',
      reason: 'no-key',
    })
    // Nor does it decide the api: the one with a key does.
    expect(resolveProvider({}, { ANTHROPIC_API_KEY: '  ', OPENAI_API_KEY: 'sk-o' })).toMatchObject({
      kind: 'real',
      apiKey: 'sk-o',
    })
    expect(() => resolveProvider({ api: 'anthropic' }, { ANTHROPIC_API_KEY: '\t' })).toThrow(MissingKeyError)
  })

  test('a model chosen without an api needs the key of the api it would go to', () => {
    expect(() => resolveProvider({ model: 'claude-opus-4-1' }, {})).toThrow(/^ANTHROPIC_API_KEY is not set/)
  })

  test('a key variable chosen (apiKeyEnv) but not set is refused too', () => {
    const error = (() => {
      try {
        resolveProvider({ apiKeyEnv: 'DEEPSEEK_API_KEY' }, {})
      } catch (caught) {
        return caught
      }
    })()
    expect(error).toBeInstanceOf(MissingKeyError)
    expect(error).toBeInstanceOf(ProviderChoiceError)
    expect((error as MissingKeyError).keyEnv).toBe('DEEPSEEK_API_KEY')
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

  test('--scripted wins over a key and over a chosen api, and says so', () => {
    const resolved = resolveProvider({ scripted: true, api: 'google' }, { ANTHROPIC_API_KEY: 'a' })
    expect(resolved).toEqual({ kind: 'scripted', reason: 'scripted-flag', why: '--scripted was given' })
    expect(realModelHint({ reason: 'scripted-flag', why: '' })).toBe('drop --scripted')
  })

  test('an unknown api is refused with the list of available ones', () => {
    expect(() => resolveProvider({ api: 'acme' }, {})).toThrow(ProviderChoiceError)
    expect(() => resolveProvider({ api: 'acme' }, {})).toThrow(/available: .*anthropic/)
  })
})

describe('--reasoning', () => {
  test("reaches the request body as the runs' model settings", async () => {
    const server = await createSseTestServer()
    const home = tempDir('kode-reasoning-')
    try {
      mkdirSync(join(home, 'kode'))
      writeFileSync(
        join(home, 'kode/config.json'),
        JSON.stringify({ api: 'openai-chat', model: 'gpt-4o', baseUrl: server.url }),
      )
      const args = parseCliArgs(['--reasoning', 'high', '--sessions-dir', join(home, 'sessions')])
      const env = { HOME: home, XDG_CONFIG_HOME: home, OPENAI_API_KEY: 'sk-test' }
      const app = await openApp({ args, env, cwd: home })
      server.enqueue(scriptedResponse('openai-chat', { id: 'r1', steps: [{ text: 'Hi.' }] }))
      const out: string[] = []
      const signal = new AbortController().signal
      const code = await runExec(
        app,
        'Hello',
        { format: 'text', signal, decide: denyAll(() => {}) },
        {
          out: (text) => out.push(text),
          err: (text) => out.push(text),
        },
      )
      await app.close()
      expect({ code, out }).toEqual({ code: 0, out: ['Hi.\n'] })
      expect(server.requests[0]!.body).toMatchObject({ model: 'gpt-4o', reasoning_effort: 'high' })
    } finally {
      await server.close()
    }
  })

  test('also reaches the requests of a task carried on after an approval', async () => {
    const server = await createSseTestServer()
    const home = tempDir('kode-reasoning-')
    try {
      const args = parseCliArgs([
        '--api',
        'openai-chat',
        '--base-url',
        server.url,
        '--reasoning',
        'low',
        '--yes',
        '--sessions-dir',
        join(home, '.kode/sessions'),
      ])
      const env = { HOME: home, XDG_CONFIG_HOME: home }
      const app = await openApp({ args, env, cwd: home })
      server.enqueue(
        scriptedResponse('openai-chat', {
          id: 'r1',
          steps: [
            { toolCall: { id: 'call_1', name: 'write_file', arguments: { path: 'a.txt', content: 'A\n' } } },
          ],
        }),
        scriptedResponse('openai-chat', { id: 'r2', steps: [{ text: 'Written.' }] }),
      )
      const out: string[] = []
      const code = await runExec(
        app,
        'Write a.txt',
        { format: 'text', signal: new AbortController().signal, decide: approveAll() },
        { out: (text) => out.push(text), err: (text) => out.push(text) },
      )
      await app.close()
      expect({ code, out }).toEqual({ code: 0, out: ['Written.\n'] })
      expect(readFileSync(join(home, 'a.txt'), 'utf8')).toBe('A\n')
      expect(server.requests.map((r) => (r.body as { reasoning_effort?: string }).reasoning_effort)).toEqual([
        'low',
        'low',
      ])
    } finally {
      await server.close()
    }
  })
})

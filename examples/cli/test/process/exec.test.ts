import { existsSync, mkdirSync, readdirSync, realpathSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { checkEventOrder, type Event, validateEvent } from '@kode/protocol'
import { createFileSessionStore } from '@kode/session/file'
import { describe, expect, test } from 'vitest'
import { DEMO_PROMPT } from '../../src/scripted/script.js'
import { runKode, tempDir } from './run-kode.js'

describe('kode exec', () => {
  test('--output stream-json prints one valid protocol event per line, in a valid order', async () => {
    const sessions = tempDir('kode-exec-')
    const { code, stdout, stderr } = await runKode([
      'exec',
      '--output',
      'stream-json',
      '--sessions-dir',
      sessions,
      DEMO_PROMPT,
    ])
    expect(code).toBe(0)
    expect(stderr).toContain('scripted model')
    const lines = stdout.trimEnd().split('\n')
    const events: Event[] = lines.map((line) => validateEvent(JSON.parse(line)))
    expect(checkEventOrder(events)).toEqual([])
    expect(events.at(-1)?.type).toBe('end')
    expect(events.some((e) => e.type === 'task_start' && e.subAgentState?.name === 'explore')).toBe(true)
    expect(
      events.filter((e) => e.type === 'tool_result').map((e) => e.type === 'tool_result' && e.toolName),
    ).toContain('explore')
    const main = events[0]!.sessionId
    expect(events.find((e) => e.type === 'task_finish' && e.sessionId === main)).toMatchObject({
      reason: 'completed',
    })
  })

  test('text output prints the final answer and persists the session', async () => {
    const sessions = tempDir('kode-exec-')
    const { code, stdout } = await runKode(['exec', '--sessions-dir', sessions, 'hello there'])
    expect(code).toBe(0)
    expect(stdout).toContain("I am Kode's **scripted offline model**")
    const store = createFileSessionStore({ dir: sessions })
    const [info] = await store.list()
    expect(info?.title).toBe('hello there')
    expect((await store.read(info!.id)).map((e) => ('role' in e ? e.role : e.type))).toEqual([
      'system',
      'user',
      'assistant',
      'task_metadata',
    ])
    await store.close()
  })

  test('--resume continues a session by an id prefix', async () => {
    const sessions = tempDir('kode-exec-')
    await runKode(['exec', '--sessions-dir', sessions, 'first'])
    const store = createFileSessionStore({ dir: sessions })
    const [info] = await store.list()
    const { code } = await runKode([
      'exec',
      '--sessions-dir',
      sessions,
      '--resume',
      info!.id.slice(0, 8),
      'second',
    ])
    expect(code).toBe(0)
    const users = (await store.read(info!.id)).filter((e) => 'role' in e && e.role === 'user')
    expect(users).toHaveLength(2)
    await store.close()
  })

  test('offline with nothing chosen, it says why and how to use a real model', async () => {
    const { code, stderr } = await runKode(['exec', '--sessions-dir', tempDir('kode-exec-'), 'hi'])
    expect(code).toBe(0)
    expect(stderr).toContain('kode: no API key is set; answering with the local scripted model (offline)')
    expect(stderr).toContain('set ANTHROPIC_API_KEY')
  })

  test('--scripted says it was asked for, even with a key set', async () => {
    const { code, stderr } = await runKode(
      ['exec', '--scripted', '--sessions-dir', tempDir('kode-exec-'), 'hi'],
      { ANTHROPIC_API_KEY: 'sk-ant-unused' },
    )
    expect(code).toBe(0)
    expect(stderr).toContain('kode: --scripted was given; answering with the local scripted model')
    expect(stderr).not.toContain('no API key')
  })

  test('an api chosen by flags without its key exits with status 2, naming the variable', async () => {
    const sessions = tempDir('kode-exec-')
    const { code, stdout, stderr } = await runKode([
      'exec',
      '--api',
      'google',
      '--model',
      'gemini-2.5-pro',
      '--sessions-dir',
      sessions,
      'hello',
    ])
    expect(code).toBe(2)
    expect(stderr).toContain('kode: GEMINI_API_KEY is not set, and google gemini-2.5-pro needs it')
    expect(stdout).toBe('')
    expect(readdirSync(sessions)).toEqual([])
  })

  test('a provider chosen in a config file without its key exits with status 2, naming the variable', async () => {
    const xdg = tempDir('kode-exec-config-')
    mkdirSync(join(xdg, 'kode'))
    writeFileSync(join(xdg, 'kode/config.json'), '{ "api": "openai-chat", "apiKeyEnv": "DEEPSEEK_API_KEY" }')
    const { code, stderr } = await runKode(['exec', '--sessions-dir', tempDir('kode-exec-'), 'hello'], {
      XDG_CONFIG_HOME: xdg,
    })
    expect(code).toBe(2)
    expect(stderr).toContain('kode: DEEPSEEK_API_KEY is not set')
  })

  test('`exec -` reads the prompt from stdin; calls that ask are decided as without a terminal', async () => {
    const sessions = tempDir('kode-exec-')
    const { code, stdout, stderr } = await runKode(
      ['exec', '--sessions-dir', sessions, '-'],
      {},
      undefined,
      '  hello from a pipe\n\n',
    )
    expect(code, stderr).toBe(0)
    expect(stdout).toContain("I am Kode's **scripted offline model**")
    const store = createFileSessionStore({ dir: sessions })
    const [info] = await store.list()
    expect(info?.title).toBe('hello from a pipe')
    await store.close()
    // A call that asks: nobody is left to ask once stdin held the prompt.
    const cwd = realpathSync(tempDir('kode-exec-write-'))
    const write = await runKode(['exec', '-'], {}, cwd, 'write notes.txt')
    expect(write.code).toBe(0)
    expect(write.stderr).toContain('kode: denied write_file: no terminal to ask for approval')
    expect(existsSync(join(cwd, 'notes.txt'))).toBe(false)
  })

  test('`exec -` with nothing on stdin, or more than 8 MiB, is a usage error and runs nothing', async () => {
    const sessions = tempDir('kode-exec-')
    const empty = await runKode(['exec', '--sessions-dir', sessions, '-'], {}, undefined, ' \n')
    expect(empty.code).toBe(2)
    expect(empty.stderr).toContain('kode exec -: stdin held no prompt')
    const huge = await runKode(
      ['exec', '--sessions-dir', sessions, '-'],
      {},
      undefined,
      'x'.repeat(8 * 1024 * 1024 + 1),
    )
    expect(huge.code).toBe(2)
    expect(huge.stderr).toContain('kode exec -: the prompt on stdin is over 8 MiB')
    expect(readdirSync(sessions)).toEqual([])
  })

  test('a usage error exits with status 2 and the usage', async () => {
    const { code, stderr } = await runKode(['exec'])
    expect(code).toBe(2)
    expect(stderr).toContain('kode exec needs a prompt')
  })

  test('an empty --sessions-dir, --resume, --model or --api is a usage error, and nothing is written', async () => {
    const cwd = tempDir('kode-empty-flag-')
    for (const flag of ['--sessions-dir', '--resume', '--model', '--api']) {
      const { code, stderr } = await runKode(['exec', '--scripted', flag, '', 'hello'], {}, cwd)
      expect(code, flag).toBe(2)
      expect(stderr, flag).toContain(`${flag} needs a value`)
      expect(readdirSync(cwd), flag).toEqual([])
    }
  })
})

describe('a sessions directory that cannot be made', () => {
  // Node's own recursive mkdir never returns under Linux's /proc: kode hung there.
  test.runIf(process.platform === 'linux')('exits with status 1 and the system error', async () => {
    const { code, stderr } = await runKode(['exec', '--scripted', '--sessions-dir', '/proc/kode-nope', 'hi'])
    expect(code).toBe(1)
    expect(stderr).toContain("kode: ENOENT: no such file or directory, mkdir '/proc/kode-nope'")
  })
})

describe('text that is not kode’s own on stdout and stderr', () => {
  const HIDDEN = ['\x1b', '\x07', '\x9b', '\u202e']

  test('a bash result with escapes stays valid JSON in stream-json, with no raw C1 control or bidi override', async () => {
    const { code, stdout } = await runKode([
      'exec',
      '--yes',
      '--output',
      'stream-json',
      '--sessions-dir',
      tempDir('kode-exec-'),
      "run `printf 'a\\033]0;t\\007b\\302\\233c\\342\\200\\256d'`",
    ])
    expect(code).toBe(0)
    for (const char of HIDDEN) expect(stdout).not.toContain(char)
    const events = stdout
      .trimEnd()
      .split('\n')
      .map((line) => validateEvent(JSON.parse(line)))
    const result = events.find((e) => e.type === 'tool_result')
    expect(result?.type === 'tool_result' && result.result).toBe('a\x1b]0;t\x07b\x9bc\u202ed')
  })

  test('text output shows the answer without its escape sequences', async () => {
    const { code, stdout, stderr } = await runKode([
      'exec',
      '--yes',
      '--sessions-dir',
      tempDir('kode-exec-'),
      "run `printf 'a\\033]0;t\\007b\\302\\233c\\342\\200\\256d'`",
    ])
    expect(code, stderr).toBe(0)
    for (const char of HIDDEN) expect(stdout).not.toContain(char)
    expect(stdout).toContain('bash answered: a]0;tbcd')
  })

  test("a model server's error that ends the task is printed once, not again as the task's end", async () => {
    const server = createServer((_request, response) => {
      response.writeHead(400, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ error: { message: 'model m does not exist' } }))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    try {
      const { code, stdout, stderr } = await runKode(
        ['exec', '--api', 'openai-chat', '--model', 'm', '--base-url', `http://127.0.0.1:${port}/v1`].concat([
          '--sessions-dir',
          tempDir('kode-exec-'),
          'hi',
        ]),
        { OPENAI_API_KEY: 'sk-test-not-a-real-key' },
      )
      expect(code).toBe(1)
      expect(stdout).toBe('')
      expect(stderr.split('\n').filter((line) => line.includes('model m does not exist'))).toHaveLength(1)
    } finally {
      server.close()
    }
  })

  test("a model server's error message reaches stderr without its escape sequences", async () => {
    const server = createServer((_request, response) => {
      response.writeHead(400, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ error: { message: 'bad \x1b]0;pwned\x07request\u202e\x9b2J' } }))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    try {
      const { code, stderr } = await runKode(
        ['exec', '--api', 'openai-chat', '--model', 'm', '--base-url', `http://127.0.0.1:${port}/v1`].concat([
          '--sessions-dir',
          tempDir('kode-exec-'),
          'hi',
        ]),
        { OPENAI_API_KEY: 'sk-test-not-a-real-key' },
      )
      expect(code).toBe(1)
      expect(stderr).toContain(']0;pwnedrequest')
      for (const char of HIDDEN) expect(stderr).not.toContain(char)
    } finally {
      server.close()
    }
  })
})

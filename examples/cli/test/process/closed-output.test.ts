import { execFile } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createFileSessionStore } from '@kode/session/file'
import { afterEach, describe, expect, test } from 'vitest'
import { KODE, offlineEnv, REPO, tempDir } from './run-kode.js'

/** One OpenAI chat-completions chunk, byte for byte as the API streams it. */
function chunk(delta: object): string {
  const body = {
    id: 'chatcmpl-kode-endless',
    object: 'chat.completion.chunk',
    created: 1770000000,
    model: 'gpt-4.1-nano-2025-04-14',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: null }],
  }
  return `data: ${JSON.stringify(body)}\n\n`
}

/**
 * A model server whose one answer never ends: a word every 20 ms until the client goes away, as a
 * long answer streams. `requests` counts the requests, `closed` resolves when the stream's
 * connection closes.
 */
async function endlessModel(): Promise<{
  server: Server
  url: string
  requests: () => number
  closed: Promise<void>
}> {
  let requests = 0
  let streamClosed!: () => void
  const closed = new Promise<void>((resolve) => {
    streamClosed = resolve
  })
  const server = createServer((request, response) => {
    requests += 1
    request.resume()
    response.writeHead(200, { 'content-type': 'text/event-stream' })
    response.write(chunk({ role: 'assistant', content: 'Hello' }))
    const words = setInterval(() => response.write(chunk({ content: ' again' })), 20)
    response.on('close', () => {
      clearInterval(words)
      streamClosed()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return { server, url: `http://127.0.0.1:${port}/v1`, requests: () => requests, closed }
}

/**
 * Runs `kode <args> | <reader>` in bash, a real pipe as a shell makes; resolves with kode's exit
 * status, what the reader printed and kode's stderr.
 */
function pipedKode(
  args: string[],
  reader: string,
  env: NodeJS.ProcessEnv,
): Promise<{ status: string; stdout: string; stderr: string }> {
  const script = `node "$@" | ${reader}; echo "kode exit status \${PIPESTATUS[0]}" >&2`
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['-c', script, 'bash', KODE, ...args],
      { cwd: REPO, env: { ...offlineEnv(), ...env } },
      (_error, stdout, stderr) => {
        const status = /kode exit status (\d+)\n$/.exec(stderr)?.[1] ?? `none in ${JSON.stringify(stderr)}`
        resolve({ status, stdout, stderr: stderr.replace(/kode exit status \d+\n$/, '') })
      },
    )
  })
}

describe('kode exec whose output is closed (`kode exec … | head -1`)', () => {
  let server: Server | undefined
  afterEach(() => {
    server?.close()
    server?.closeAllConnections()
  })

  test('interrupts the task at once, ends it interrupted, and exits 141 without a stack trace', async () => {
    const model = await endlessModel()
    server = model.server
    const sessions = tempDir('kode-closed-output-')
    const args = ['exec', '--output', 'stream-json', '--sessions-dir', sessions]
    const api = ['--api', 'openai-chat', '--model', 'gpt-4.1-nano', '--base-url', model.url]
    // The reader prints the first line of streamed text, then goes away.
    const { status, stdout, stderr } = await pipedKode(
      [...args, ...api, 'write a long answer'],
      `sed -n '/"assistant_text_delta"/{p;q}'`,
      { OPENAI_API_KEY: 'sk-test-not-a-real-key' },
    )
    await model.closed
    expect(stdout).toContain('"content":"Hello"')
    // As a shell reports a process that SIGPIPE ended: 128 + 13.
    expect(status).toBe('141')
    expect(stderr).toBe('')
    expect(model.requests()).toBe(1)
    const [id] = readdirSync(sessions)
    const store = createFileSessionStore({ dir: sessions })
    try {
      // The task ended interrupted, as on Ctrl-C: the partial answer marked aborted, then the
      // task's metadata, and nothing after.
      const history = await store.read(id!)
      expect(history.map((event) => ('role' in event ? event.role : event.type))).toEqual([
        'system',
        'user',
        'assistant',
        'task_metadata',
      ])
      expect(history[2]).toMatchObject({ role: 'assistant', stopReason: 'aborted' })
    } finally {
      await store.close()
    }
  })
})

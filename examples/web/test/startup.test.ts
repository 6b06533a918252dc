import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, onTestFinished, test } from 'vitest'

const server = fileURLToPath(new URL('../dist/server/server.js', import.meta.url))

/** What the built server prints from its start until it is stopped, with `HOST` set to `host`. */
async function startupOutput(host: string | undefined): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'kode-web-start-'))
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
  const child = spawn(process.execPath, [server], {
    cwd: dir,
    env: { PATH: process.env.PATH, PORT: '0', ...(host === undefined ? {} : { HOST: host }) },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let out = ''
  const exited = new Promise((resolve) => child.on('close', resolve))
  // Everything is printed at once when it listens: stop it then, and read to the end.
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString()
    if (out.includes('kode web on')) child.kill('SIGTERM')
  })
  await exited
  return out
}

describe('starting the server', () => {
  test('on every interface, it warns that there is no login', async () => {
    const out = await startupOutput('0.0.0.0')
    expect(out).toContain('kode web on http://0.0.0.0:')
    expect(out).toContain(
      'warning: HOST=0.0.0.0 lets other machines in, and the server has no login: ' +
        'put an authenticating proxy in front of it (see docs/web.md)',
    )
  })

  test('on loopback, the default, it does not', async () => {
    const out = await startupOutput(undefined)
    expect(out).toContain('kode web on http://127.0.0.1:')
    expect(out).not.toContain('warning:')
  })
})

/** The built server run to its end with `env`: its exit status and what it printed on stderr. */
async function failedStart(env: Record<string, string>): Promise<{ status: number | null; stderr: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'kode-web-start-'))
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
  const child = spawn(process.execPath, [server], {
    cwd: dir,
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve))
  return { status, stderr }
}

describe('a server that cannot start', () => {
  test('a port in use is named in one line, without a stack trace', async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    onTestFinished(() => new Promise<void>((resolve) => taken.close(() => resolve())))
    const { port } = taken.address() as { port: number }
    const { status, stderr } = await failedStart({ PORT: String(port) })
    expect(status).toBe(1)
    expect(stderr).toBe(
      `kode web: cannot listen on 127.0.0.1:${port}: the address is in use (EADDRINUSE); ` +
        'stop what uses it, or choose another PORT\n',
    )
  })

  test('a PORT that is not a port number is a usage error naming it', async () => {
    const { status, stderr } = await failedStart({ PORT: 'http' })
    expect(status).toBe(2)
    expect(stderr).toBe('kode web: PORT must be a port number from 0 to 65535 (got "http")\n')
  })
})

import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
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

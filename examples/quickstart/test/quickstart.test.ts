import { execFile } from 'node:child_process'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'

const repo = fileURLToPath(new URL('../../..', import.meta.url))

/** The command docs/getting-started.md gives, run as written (test/docs checks that it is this one). */
const COMMAND = 'pnpm --filter quickstart start'

test('runs offline without a key: a tool call, its result, the answer', async () => {
  const env = { ...process.env }
  delete env.ANTHROPIC_API_KEY
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile('sh', ['-c', COMMAND], { cwd: repo, env }, (error, out, err) =>
      error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out),
    )
  })
  expect(stdout).toContain('(offline: no ANTHROPIC_API_KEY')
  expect(stdout).toContain('→ clock({"timeZone":"Asia/Tokyo"})')
  expect(stdout).toMatch(/← success: .*GMT\+9/)
  expect(stdout).toMatch(/In Tokyo it is .*GMT\+9\./)
  expect(stdout).toContain('[completed]')
}, 60_000) // builds the example first

test('a task that fails (a key the API refuses) prints why and exits with code 1, never the key', async () => {
  const key = 'sk-ant-quickstart-refused-key'
  const requests: string[] = []
  const api = createServer((req, res) => {
    requests.push(`${req.method} ${req.url} ${req.headers['x-api-key']}`)
    res.writeHead(401, { 'content-type': 'application/json', 'request-id': 'req_refused' })
    res.end(
      JSON.stringify({
        type: 'error',
        error: { type: 'authentication_error', message: 'invalid x-api-key' },
      }),
    )
  })
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve))
  const { port } = api.address() as AddressInfo
  const env = { ...process.env, ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}` }
  try {
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile('sh', ['-c', COMMAND], { cwd: repo, env }, (error, stdout, stderr) =>
        resolve({ code: error ? (error.code as number) : 0, stdout, stderr }),
      )
    })
    expect(requests).toEqual([`POST /v1/messages ${key}`])
    expect(result.stdout).toContain('[error]')
    expect(result.stderr).toContain('invalid x-api-key')
    expect(result.stdout + result.stderr).not.toContain(key)
    // pnpm reports the failed script with its own exit code 1.
    expect(result.code).toBe(1)
  } finally {
    await new Promise((resolve) => api.close(resolve))
  }
}, 60_000)

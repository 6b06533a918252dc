import { execFile } from 'node:child_process'
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

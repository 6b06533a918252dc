import { execFile, execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { beforeAll, expect, test } from 'vitest'

const dir = fileURLToPath(new URL('..', import.meta.url))

beforeAll(() => {
  execFileSync('pnpm', ['run', 'build'], { cwd: dir, stdio: 'pipe' })
})

test('runs offline without a key: a tool call, its result, the answer', async () => {
  const env = { ...process.env }
  delete env.ANTHROPIC_API_KEY
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile('node', ['dist/index.js'], { cwd: dir, env }, (error, out, err) =>
      error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out),
    )
  })
  expect(stdout).toContain('(offline: no ANTHROPIC_API_KEY')
  expect(stdout).toContain('→ clock({"timeZone":"Asia/Tokyo"})')
  expect(stdout).toMatch(/← success: .*GMT\+9/)
  expect(stdout).toMatch(/In Tokyo it is .*GMT\+9\./)
  expect(stdout).toContain('[completed]')
})

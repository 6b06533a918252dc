import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { validateEvent } from '@kode/protocol'
import { describe, expect, test } from 'vitest'
import { offlineEnv, REPO, runKode, tempDir } from './run-kode.js'

// The ways docs/cli.md says to run `kode` for machine-readable output, run as a user would: each
// must print nothing on stdout but the NDJSON events. And the command line's contract: the real
// version, and exit status 2 for a usage error.

const manifest = JSON.parse(readFileSync(join(REPO, 'examples/cli/package.json'), 'utf8'))

function run(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const options = { cwd: REPO, env: offlineEnv(), maxBuffer: 64 * 1024 * 1024 }
  return new Promise((resolve) => {
    execFile(cmd, args, options, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr })
    })
  })
}

/** Every stdout line is a valid protocol event, and the last is `end`. */
function expectNdjson(stdout: string) {
  const lines = stdout.trimEnd().split('\n')
  expect(lines.length).toBeGreaterThan(3)
  const events = lines.map((line) => validateEvent(JSON.parse(line)))
  expect(events.at(-1)?.type).toBe('end')
}

describe('forms that print clean NDJSON', () => {
  const exec = (sessions: string) => ['exec', '--output', 'stream-json', '--sessions-dir', sessions, 'hello']

  test('the kode bin the workspace links (pnpm exec kode, node_modules/.bin/kode)', async () => {
    const { code, stdout } = await run(join(REPO, 'node_modules/.bin/kode'), exec(tempDir('kode-forms-')))
    expect(code).toBe(0)
    expectNdjson(stdout)
  })

  test('pnpm -s kode (the root script, silent)', async () => {
    const { code, stdout } = await run('pnpm', ['-s', 'kode', ...exec(tempDir('kode-forms-'))])
    expect(code).toBe(0)
    expectNdjson(stdout)
  })

  test('node examples/cli/dist/kode.js', async () => {
    const { code, stdout } = await runKode(exec(tempDir('kode-forms-')))
    expect(code).toBe(0)
    expectNdjson(stdout)
  })
})

describe('the command line', () => {
  test('kode -v and --version print the package version', async () => {
    expect(manifest.version).not.toBe('0.0.0')
    for (const flag of ['-v', '--version']) {
      const { code, stdout } = await run(join(REPO, 'node_modules/.bin/kode'), [flag])
      expect(code).toBe(0)
      expect(stdout).toBe(`kode ${manifest.version}\n`)
    }
  })

  test.each([
    ['an unknown option', ['--bogus']],
    ['an unknown command', ['frobnicate']],
    ['exec without a prompt', ['exec']],
    ['a bad --output', ['exec', '--output', 'xml', 'hi']],
    ['a bad --base-url', ['exec', '--base-url', 'ftp://example.test', 'hi']],
    ['a --base-url with a user and password', ['exec', '--base-url', 'http://me:pw@127.0.0.1:9/v1', 'hi']],
    ['--resume of no stored session', ['exec', '--resume', 'no-such-session', 'hi']],
  ])('%s exits with status 2, says why on stderr and prints nothing on stdout', async (_what, args) => {
    const { code, stdout, stderr } = await runKode([...args, '--sessions-dir', tempDir('kode-usage-')])
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toMatch(/^kode: /)
  })

  test('a bad --base-url is quoted without its password or key', async () => {
    const url = 'ftp://me:hunter2-secret@example.test/v1?key=AIzaSecretKey123'
    const { code, stderr } = await runKode([
      'exec',
      '--base-url',
      url,
      'hi',
      '--sessions-dir',
      tempDir('kode-usage-'),
    ])
    expect(code).toBe(2)
    expect(stderr).toContain('ftp://[redacted]@example.test/v1?key=[redacted]')
    expect(stderr).not.toContain('hunter2-secret')
    expect(stderr).not.toContain('AIzaSecretKey123')
  })
})

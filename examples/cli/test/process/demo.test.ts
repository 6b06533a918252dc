import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { DEMO_PROMPT } from '../../src/scripted/script.js'
import { type ScriptedModel, startScriptedModel } from '../../src/scripted/server.js'
import { runKode, tempDir } from './run-kode.js'

describe('kode demo', () => {
  test('runs the tour offline, says so, and exports the session to HTML', async () => {
    const dir = tempDir('kode-demo-')
    const { code, stdout } = await runKode(['demo', '--sessions-dir', join(dir, 'sessions')])
    expect(code).toBe(0)
    expect(stdout).toContain('Offline: no API key is set')
    expect(stdout).toContain('set ANTHROPIC_API_KEY')
    expect(stdout).toContain('✓ read_file README.md')
    expect(stdout).toContain('⎿ explore')
    expect(stdout).toContain('A tour of this repository')
    const file = /HTML transcript: (.+)/.exec(stdout)?.[1]
    expect(file).toBe(join(dir, 'exports', `${/Session (\S+) saved/.exec(stdout)?.[1]}.html`))
    expect(existsSync(file!)).toBe(true)
    const html = readFileSync(file!, 'utf8')
    expect(html).toMatch(/^<!doctype html>/i)
    expect(html).toContain('A tour of this repository')
  })

  test('the command it gives to continue the session finds the session in its --sessions-dir', async () => {
    const sessions = join(tempDir('kode-demo-'), 'sessions')
    const demo = await runKode(['demo', '--sessions-dir', sessions])
    expect(demo.code).toBe(0)
    const id = /Session (\S+) saved/.exec(demo.stdout)?.[1]
    const hint = /Continue it with: kode (.+?) {2}\(/.exec(demo.stdout)?.[1]
    expect(hint).toBe(`--resume ${id} --sessions-dir ${sessions}`)
    // Run as given (the temporary path needs no quoting): the REPL replays the demo's session.
    const resumed = await runKode(hint!.split(' '), {}, undefined, '/history\n')
    expect(resumed.stderr).not.toContain('no session')
    expect(resumed.code).toBe(0)
    expect(resumed.stdout).toContain('── resumed ──')
    expect(resumed.stdout).toContain(DEMO_PROMPT.slice(0, 40))
  })

  test('prints the paths it names without their control characters', async () => {
    // A directory name can hold escape sequences (a project's config may name the sessions dir).
    const dir = join(tempDir('kode-demo-'), 'sessions\x1b]0;pwned\x07\x1b[2J\r')
    const { code, stdout } = await runKode(['demo', '--sessions-dir', dir])
    expect(code).toBe(0)
    expect(stdout).toMatch(/saved in .*sessions\]0;pwned\[2J\n/)
    for (const char of ['\x07', '\x1b', '\r']) expect(stdout).not.toContain(char)
  })
})

describe('kode demo with a key', () => {
  let model: ScriptedModel
  beforeAll(async () => {
    model = await startScriptedModel()
  })
  afterAll(() => model.close())

  test('sends the same task to the configured api with the key, and never prints or persists the key', async () => {
    const key = 'sk-ant-test-0123456789-secret'
    const dir = tempDir('kode-demo-key-')
    const { code, stdout, stderr } = await runKode(
      ['demo', '--api', 'anthropic', '--base-url', model.url, '--sessions-dir', join(dir, 'sessions')],
      { ANTHROPIC_API_KEY: key },
    )
    expect(code).toBe(0)
    expect(stdout).toContain('Running the demo task against anthropic claude-sonnet-4-5.')
    expect(stdout).not.toContain('Offline')
    const first = model.requests[0]!
    expect(first.headers['x-api-key']).toBe(key)
    expect(first.body).toMatchObject({ model: 'claude-sonnet-4-5' })
    expect(JSON.stringify(first.body)).toContain(DEMO_PROMPT)
    expect(stdout + stderr).not.toContain(key)
    for (const file of filesUnder(dir)) expect(readFileSync(file, 'utf8')).not.toContain(key)
  })
})

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
}
